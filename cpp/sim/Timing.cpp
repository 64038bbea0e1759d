#include "Timing.h"

#include <algorithm>
#include <bit>

namespace sim {

Scheduler::Scheduler(const bir::MachineConfig& cfg, const std::vector<TensorSpec>& tensors)
    : cfg_(cfg),
      tracks_(kNumEngines + static_cast<int>(std::min<int64_t>(cfg.dma_queues, 16))),
      hazards_(cfg.sbuf_bytes_per_partition, cfg.psum_bytes_per_partition, tensors) {}

void Scheduler::reset(size_t accesses) {
  std::fill(std::begin(ready_), std::end(ready_), 0.0);
  std::fill(std::begin(dmaEngineFree_), std::end(dmaEngineFree_), 0.0);
  std::fill(std::begin(dgeFree_), std::end(dgeFree_), 0.0);
  sbufPortFree_ = 0;
  std::fill(std::begin(psumPortFree_), std::end(psumPortFree_), 0.0);
  hbmFree_ = 0;
  std::fill(std::begin(busy_ns), std::end(busy_ns), 0.0);
  std::fill(std::begin(count), std::end(count), 0);
  end_ns = 0;
  hazards_.reset();
  hints_.assign(accesses, 0);
}

Record Scheduler::schedule(const CoreProgram& p, const DecodedInst& d, double notBefore) {
  const Access* acc = p.accesses.data() + d.firstAccess;
  uint32_t* hint = hints_.data() + d.firstAccess;
  poolDescriptorsStart_ns = -1;
  double hazard = 0;  // when the memory it touches is ready (RAW, WAR, WAW; semaphore included)
  // Its engine or DMA queue runs in order: no WAR / WAW on its own track (Hazards.h). A kernel
  // node occupies every track: none is its own.
  const uint8_t track = d.wholeCore ? kNoTrack : d.track;
  for (int i = 0; i < d.nAccess; ++i) hazard = std::max(hazard, hazards_.ready(acc[i], hint[i], track));
  const double deps = std::max(notBefore, hazard);

  Record r;
  r.track = d.track;
  r.issueTrack = d.issueTrack;
  if (d.wholeCore) {
    double free = 0;
    for (int t = 0; t < tracks_; ++t) free = std::max(free, ready_[t]);
    const double start = std::max(deps, free);
    r.waited = hazard > free && hazard >= notBefore;
    const double end = start + d.busy_ns;
    for (int t = 0; t < tracks_; ++t) {
      ready_[t] = end;
      busy_ns[t] += d.busy_ns;
    }
    r.start_ns = r.issue_ns = start;
    r.end_ns = r.issue_end_ns = end;
  } else if (d.track >= kFirstQueueTrack) {
    // DMA: trigger, descriptors, then the queue, the shared DMA engines and HBM.
    const double issue = std::max(ready_[d.issueTrack], deps);
    r.waited = hazard > ready_[d.issueTrack] && hazard >= notBefore;
    const double issued = issue + d.busy_ns;
    ready_[d.issueTrack] = issued;
    busy_ns[d.issueTrack] += d.busy_ns;
    double start = issued + d.dma_latency_ns;
    if (d.dgeUnit >= 0) {
      double& free = d.dgeUnit == kDgePool ? ready_[kTrackPool] : dgeFree_[d.dgeUnit];
      const double made = std::max(issued, free) + d.dma_dge_ns;
      if (d.dgeUnit == kDgePool) {
        busy_ns[kTrackPool] += d.dma_dge_ns;
        poolDescriptorsStart_ns = made - d.dma_dge_ns;
      }
      free = made;
      start = std::max(start, made);
    }
    start = std::max(start, ready_[d.track]);
    for (uint32_t m = d.dma_engine_mask; m; m &= m - 1)
      start = std::max(start, dmaEngineFree_[std::countr_zero(m)]);
    hbmFree_ = std::max(hbmFree_, start) + d.dma_hbm_ns;
    const double end = std::max(start + d.dma_transfer_ns, hbmFree_);
    for (uint32_t m = d.dma_engine_mask; m; m &= m - 1) dmaEngineFree_[std::countr_zero(m)] = end;
    ready_[d.track] = end;
    busy_ns[d.track] += end - start;
    r.issue_ns = issue;
    r.issue_end_ns = issued;
    r.start_ns = start;
    r.end_ns = end;
  } else {
    const double ready = ready_[d.track];
    const double sbufPort = d.ports & kPortSbufDvePool ? sbufPortFree_ : 0.0;
    double psumPort = 0;
    for (uint32_t m = d.psumPorts; m; m &= m - 1) psumPort = std::max(psumPort, psumPortFree_[std::countr_zero(m)]);
    const double port = std::max(sbufPort, psumPort);
    const double free = std::max(ready, port);
    const double start = std::max(free, deps);
    r.waited = hazard > free && hazard >= notBefore;
    const bool portSetStart = port > ready && port >= deps;
    r.portWait = portSetStart ? (sbufPort >= psumPort ? kPortSbufDvePool : kPortPsumDveAct) : 0;
    const double readsDone = start + d.busy_ns;
    if (d.ports & kPortSbufDvePool) sbufPortFree_ = readsDone;
    for (uint32_t m = d.psumPorts; m; m &= m - 1) psumPortFree_[std::countr_zero(m)] = readsDone;
    ready_[d.track] = readsDone;
    busy_ns[d.track] += d.busy_ns;
    r.start_ns = r.issue_ns = start;
    r.end_ns = readsDone + d.access_ns;
    r.issue_end_ns = readsDone;
  }
  ++count[d.track];
  const HazardReleases rel = hazardReleases(r, d, cfg_);
  for (int i = 0; i < d.nAccess; ++i) hazards_.mark(acc[i], acc[i].write ? rel.writes : rel.reads, hint[i], track);
  end_ns = std::max(end_ns, r.end_ns);
  return r;
}

}  // namespace sim
