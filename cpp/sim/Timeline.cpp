#include "Timeline.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "Simulator.h"

namespace sim {

const char* dependencyName(Dependency d) {
  switch (d) {
    case Dependency::RAW: return "RAW";
    case Dependency::WAR: return "WAR";
    case Dependency::WAW: return "WAW";
  }
  return "?";
}

std::string laneName(int track, int lane) {
  std::string name = trackName(track);
  if (lane == 1) name += " (pipelined)";
  if (lane > 1) name += " (pipelined " + std::to_string(lane) + ")";
  return name;
}

namespace {

// The records of one core: [first, end) of SimResult::records (they are core by core).
struct CoreSpan {
  uint16_t core;
  size_t first, end;
  const CoreProgram* program;
};

std::vector<CoreSpan> coreSpans(const SimResult& r) {
  std::vector<CoreSpan> spans;
  for (size_t i = 0; i < r.records.size(); ++i) {
    const uint16_t core = r.records[i].core;
    if (spans.empty() || spans.back().core != core) {
      const CoreProgram* cp = nullptr;
      for (const auto& c : r.program->cores)
        if (c.core == core) cp = &c;
      if (!cp) throw SimulationError("record of an unknown core " + std::to_string(core));
      spans.push_back({core, i, i, cp});
    }
    spans.back().end = i + 1;
  }
  return spans;
}

void addSlices(const SimResult& r, Timeline& t, std::vector<uint32_t>& sliceOf, std::vector<uint32_t>& triggerOf) {
  sliceOf.resize(r.records.size());
  triggerOf.assign(r.records.size(), UINT32_MAX);
  t.slices.reserve(r.records.size() + r.records.size() / 4);
  size_t nextDescriptors = 0;  // in r.pool_descriptors, which is by record
  for (size_t i = 0; i < r.records.size(); ++i) {
    const Record& rec = r.records[i];
    Slice s;
    s.record = static_cast<uint32_t>(i);
    s.core = rec.core;
    s.track = rec.track;
    s.start = traceNs(rec.start_ns);
    s.end = traceNs(rec.end_ns);
    s.busyEnd = traceNs(rec.readsDone_ns());
    s.wholeCore = r.decoded(rec).wholeCore;
    sliceOf[i] = static_cast<uint32_t>(t.slices.size());
    t.slices.push_back(s);
    if (rec.track >= kFirstQueueTrack) {
      s.track = rec.issueTrack;
      s.start = traceNs(rec.issue_ns);
      s.end = s.busyEnd = traceNs(rec.issue_end_ns);
      s.trigger = true;
      triggerOf[i] = static_cast<uint32_t>(t.slices.size());
      t.slices.push_back(s);
    }
    // A software-DGE DMA's descriptors on GpSimd, which GpSimd's busy time counts.
    if (nextDescriptors < r.pool_descriptors.size() && r.pool_descriptors[nextDescriptors].first == i) {
      const double from = r.pool_descriptors[nextDescriptors++].second;
      s.track = kTrackPool;
      s.start = traceNs(from);
      s.end = s.busyEnd = traceNs(from + r.decoded(rec).dma_dge_ns);
      s.trigger = false;
      s.descriptors = true;
      t.slices.push_back(s);
    }
  }
}

// Each slice takes the lowest lane of its (core, track) free at its start, in order of start.
void assignLanes(Timeline& t) {
  std::vector<uint32_t> order(t.slices.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Slice &x = t.slices[a], &y = t.slices[b];
    if (x.core != y.core) return x.core < y.core;
    if (x.track != y.track) return x.track < y.track;
    return x.start < y.start;
  });
  std::vector<int64_t> laneEnd;  // of the current (core, track)
  for (size_t k = 0; k < order.size(); ++k) {
    Slice& s = t.slices[order[k]];
    if (k == 0 || t.tracks.back().core != s.core || t.tracks.back().track != s.track) {
      t.tracks.push_back({s.core, s.track, 1});
      laneEnd.clear();
    }
    size_t lane = 0;
    while (lane < laneEnd.size() && laneEnd[lane] > s.start) ++lane;
    if (lane == laneEnd.size()) {
      if (lane == UINT8_MAX) throw SimulationError("trace: more than 255 overlapping slices on one track");
      laneEnd.push_back(s.end);
    }
    laneEnd[lane] = s.end;
    s.lane = static_cast<uint8_t>(lane);
    t.tracks.back().lanes = static_cast<uint8_t>(laneEnd.size());
  }
}

bool conflicts(const Access& waiting, const Access& earlier) {
  return waiting.mem == earlier.mem && (waiting.quadrants & earlier.quadrants) && waiting.lo < earlier.hi &&
         earlier.lo < waiting.hi && (waiting.write || earlier.write);
}

// The flows of one core. The instruction waited for released an access conflicting with one of
// the waiting instruction's at exactly the time the wait ended (the hazards keep those times).
// Ties (two such instructions) go to the later one in program order, which the hazards saw last.
void addFlows(const SimResult& r, const CoreSpan& span, Timeline& t, const std::vector<uint32_t>& sliceOf,
              const std::vector<uint32_t>& triggerOf) {
  struct Release {
    double t;
    uint32_t record;
    bool write;
  };
  const auto& rec = r.records;
  if (std::none_of(rec.begin() + span.first, rec.begin() + span.end, [](const Record& x) { return x.waited; })) return;
  std::vector<Release> releases;
  releases.reserve(2 * (span.end - span.first));
  for (size_t i = span.first; i < span.end; ++i) {
    const DecodedInst& d = span.program->insts[rec[i].inst];
    const Access* acc = span.program->accesses.data() + d.firstAccess;
    bool reads = false, writes = false;
    for (int a = 0; a < d.nAccess; ++a) (acc[a].write ? writes : reads) = true;
    const HazardReleases rel = hazardReleases(rec[i], d, *r.program->config);
    if (writes) releases.push_back({rel.writes, static_cast<uint32_t>(i), true});
    if (reads) releases.push_back({rel.reads, static_cast<uint32_t>(i), false});
  }
  std::sort(releases.begin(), releases.end(), [](const Release& a, const Release& b) {
    return a.t != b.t ? a.t < b.t : a.record > b.record;  // at one time, the latest first
  });
  for (size_t w = span.first; w < span.end; ++w) {
    const Record& waiting = rec[w];
    if (!waiting.waited) continue;
    const DecodedInst& d = span.program->insts[waiting.inst];
    const Access* acc = span.program->accesses.data() + d.firstAccess;
    const double at = waiting.issue_ns;  // the start (a DMA: its trigger's)
    // Its own track's accesses set no WAR / WAW wait (Hazards.h): only another's can be the one.
    const bool ownTrackExempt = !d.wholeCore;
    auto c = std::lower_bound(releases.begin(), releases.end(), at,
                              [](const Release& x, double v) { return x.t < v; });
    bool found = false;
    for (; c != releases.end() && c->t == at && !found; ++c) {
      if (c->record >= w) continue;
      const DecodedInst& e = span.program->insts[rec[c->record].inst];
      const Access* eacc = span.program->accesses.data() + e.firstAccess;
      const bool sameTrack = ownTrackExempt && !e.wholeCore && rec[c->record].track == waiting.track;
      for (int a = 0; a < d.nAccess && !found; ++a)
        for (int b = 0; b < e.nAccess && !found; ++b) {
          if (eacc[b].write != c->write || !conflicts(acc[a], eacc[b])) continue;
          if (sameTrack && acc[a].write) continue;
          const Dependency kind = !acc[a].write ? Dependency::RAW : eacc[b].write ? Dependency::WAW : Dependency::WAR;
          t.flows.push_back({sliceOf[c->record], triggerOf[w] != UINT32_MAX ? triggerOf[w] : sliceOf[w], kind});
          found = true;
        }
    }
    if (!found)
      throw SimulationError("trace: found no instruction that '" + d.inst->name +
                            "' waited for (an inconsistency of the simulator's hazard records)");
  }
}

void addCounters(const SimResult& r, const CoreSpan& span, Timeline& t) {
  const auto& rec = r.records;
  struct Use {
    int64_t first, last;  // the first access's start, the last access's release
  };
  std::unordered_map<const bir::MemoryLocation*, Use> uses;
  std::map<int, Counter> rates;  // by DMA queue track
  for (size_t i = span.first; i < span.end; ++i) {
    const Record& x = rec[i];
    const DecodedInst& d = span.program->insts[x.inst];
    const int64_t start = traceNs(x.start_ns);
    auto use = [&](const bir::AccessPattern& ap, int64_t release) {
      if (!ap.loc || !ap.loc->isOnChip()) return;
      auto [it, fresh] = uses.try_emplace(ap.loc, Use{start, release});
      if (!fresh) {
        it->second.first = std::min(it->second.first, start);
        it->second.last = std::max(it->second.last, release);
      }
    };
    for (const auto& ap : d.inst->ins) use(ap, traceNs(x.readsDone_ns()));
    for (const auto& ap : d.inst->outs) use(ap, traceNs(x.writesDone_ns()));
    // A queue runs its transfers one after another, in program order. The rate is the transfer's
    // over its whole time on the queue, start to end: the DMA engines' (dma_transfer_ns) or, where
    // the core's HBM bandwidth (shared by the queues) holds it back, that longer time's, so the
    // counter never shows more than the model let it move.
    if (x.track >= kFirstQueueTrack && !d.wholeCore && d.bytes > 0) {
      const int64_t from = traceNs(x.start_ns), to = traceNs(x.end_ns);
      if (to <= from) continue;
      auto [it, fresh] = rates.try_emplace(x.track);
      Counter& c = it->second;
      if (fresh) c = Counter{span.core, std::string(trackName(x.track)) + " rate", "GB/s", {{0, 0.0}}};
      if (from < c.samples.back().t)
        throw SimulationError("trace: transfers of DMA queue " + c.name + " overlap (an inconsistency of the simulator)");
      const double rate = static_cast<double>(d.bytes) / (x.end_ns - x.start_ns);  // the model's, not the rounded span's
      if (c.samples.back().t == from)
        c.samples.back().value = rate;
      else
        c.samples.push_back({from, rate});
      c.samples.push_back({to, 0.0});
    }
  }
  for (const bir::MemoryType type : {bir::MemoryType::SB, bir::MemoryType::PSUM}) {
    std::vector<std::pair<int64_t, int64_t>> changes;
    for (const auto& [loc, u] : uses)
      if (loc->type == type) {
        changes.push_back({u.first, loc->sizeBytes()});
        changes.push_back({u.last, -loc->sizeBytes()});
      }
    if (changes.empty()) continue;
    std::sort(changes.begin(), changes.end());
    Counter c{span.core, type == bir::MemoryType::SB ? "SBUF in use" : "PSUM in use", "bytes", {{0, 0.0}}};
    int64_t inUse = 0;
    for (size_t i = 0; i < changes.size();) {
      const int64_t at = changes[i].first;
      for (; i < changes.size() && changes[i].first == at; ++i) inUse += changes[i].second;
      if (at == c.samples.back().t)
        c.samples.back().value = static_cast<double>(inUse);
      else
        c.samples.push_back({at, static_cast<double>(inUse)});
    }
    t.counters.push_back(std::move(c));
  }
  for (auto& [track, c] : rates) t.counters.push_back(std::move(c));
}

}  // namespace

Timeline buildTimeline(const SimResult& r) {
  Timeline t;
  std::vector<uint32_t> sliceOf, triggerOf;
  addSlices(r, t, sliceOf, triggerOf);
  assignLanes(t);
  for (const CoreSpan& span : coreSpans(r)) {
    addFlows(r, span, t, sliceOf, triggerOf);
    addCounters(r, span, t);
  }
  return t;
}

}  // namespace sim
