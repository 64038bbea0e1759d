#include "Timing.h"

#include <algorithm>
#include <bit>

namespace sim {

Scheduler::Scheduler(const bir::MachineConfig& cfg, const std::vector<TensorSpec>& tensors)
    : tracks_(kNumEngines + static_cast<int>(std::min<int64_t>(cfg.dma_queues, 16))),
      hazards_(cfg.sbuf_bytes_per_partition, cfg.psum_bytes_per_partition, tensors) {}

void Scheduler::reset(size_t accesses) {
  std::fill(std::begin(ready_), std::end(ready_), 0.0);
  std::fill(std::begin(dmaEngineFree_), std::end(dmaEngineFree_), 0.0);
  std::fill(std::begin(busy_ns), std::end(busy_ns), 0.0);
  std::fill(std::begin(count), std::end(count), 0);
  end_ns = 0;
  hazards_.reset();
  hints_.assign(accesses, 0);
}

Record Scheduler::schedule(const CoreProgram& p, const DecodedInst& d, double notBefore) {
  const Access* acc = p.accesses.data() + d.firstAccess;
  uint32_t* hint = hints_.data() + d.firstAccess;
  double hazard = 0;  // when the memory it touches is ready (RAW, WAR, WAW)
  for (int i = 0; i < d.nAccess; ++i) hazard = std::max(hazard, hazards_.ready(acc[i], hint[i]));
  const double deps = std::max(notBefore, hazard);

  Record r;
  r.track = d.track;
  r.issueTrack = d.issueTrack;
  double readsDone, end;
  if (d.wholeCore) {
    double free = 0;
    for (int t = 0; t < tracks_; ++t) free = std::max(free, ready_[t]);
    const double start = std::max(deps, free);
    r.waited = hazard > free && hazard >= notBefore;
    end = start + d.busy_ns;
    for (int t = 0; t < tracks_; ++t) {
      ready_[t] = end;
      busy_ns[t] += d.busy_ns;
    }
    r.start_ns = r.issue_ns = start;
    r.end_ns = r.issue_end_ns = readsDone = end;
  } else if (d.track >= kFirstQueueTrack) {
    // DMA: trigger, then the queue, then the shared DMA engines.
    const double issue = std::max(ready_[d.issueTrack], deps);
    r.waited = hazard > ready_[d.issueTrack] && hazard >= notBefore;
    const double issued = issue + d.busy_ns;
    ready_[d.issueTrack] = issued;
    busy_ns[d.issueTrack] += d.busy_ns;
    const double start = std::max(issued, ready_[d.track]);
    double payload = start + d.dma_fixed_ns;
    for (uint32_t m = d.dma_engine_mask; m; m &= m - 1)
      payload = std::max(payload, dmaEngineFree_[std::countr_zero(m)]);
    end = payload + d.dma_transfer_ns;
    for (uint32_t m = d.dma_engine_mask; m; m &= m - 1) dmaEngineFree_[std::countr_zero(m)] = end;
    ready_[d.track] = end;
    busy_ns[d.track] += end - start;
    r.issue_ns = issue;
    r.issue_end_ns = issued;
    r.start_ns = start;
    r.end_ns = readsDone = end;
  } else {
    const double start = std::max(ready_[d.track], deps);
    r.waited = hazard > ready_[d.track] && hazard >= notBefore;
    readsDone = start + d.busy_ns;
    ready_[d.track] = readsDone;
    busy_ns[d.track] += d.busy_ns;
    end = readsDone + d.access_ns;
    r.start_ns = r.issue_ns = start;
    r.end_ns = end;
    r.issue_end_ns = readsDone;
  }
  ++count[d.track];
  // (Record::writesDone_ns / readsDone_ns say the same from the record.)
  for (int i = 0; i < d.nAccess; ++i) hazards_.mark(acc[i], acc[i].write ? end : readsDone, hint[i]);
  end_ns = std::max(end_ns, end);
  return r;
}

}  // namespace sim
