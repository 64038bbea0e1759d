#include "CrossCoreOrder.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <queue>
#include <string_view>
#include <unordered_map>

#include "bir/Error.h"
#include "bir/PatternShape.h"

namespace sim {

namespace {

// One DRAM footprint of a core: bytes [lo, hi) of tensor `tensor` (hazard footprints are exact
// ranges, or a strided pattern's bounding range), read or written by instruction `inst`.
struct DramAccess {
  uint32_t tensor = 0;
  uint32_t inst = 0;  // index in the core's instructions: its program order
  bool write = false;
  int64_t lo = 0, hi = 0;
};

// The latest write, in program order, of one core to each byte of one tensor: disjoint segments by
// address, each with the latest write covering it, and a sparse table of the latest over any run
// of segments, so that a query costs two binary searches.
class LatestWrites {
 public:
  LatestWrites(const DramAccess* first, const DramAccess* last) {
    std::vector<const DramAccess*> writes;
    for (const DramAccess* a = first; a != last; ++a)
      if (a->write) writes.push_back(a);
    // (Tiles are mostly written in address order: the sorts are then only checks.)
    const auto byLo = [](const DramAccess* x, const DramAccess* y) { return x->lo < y->lo; };
    if (!std::is_sorted(writes.begin(), writes.end(), byLo)) std::sort(writes.begin(), writes.end(), byLo);
    std::vector<int64_t> los(writes.size()), his(writes.size()), bounds(2 * writes.size());
    for (size_t i = 0; i < writes.size(); ++i) {
      los[i] = writes[i]->lo;
      his[i] = writes[i]->hi;
    }
    if (!std::is_sorted(his.begin(), his.end())) std::sort(his.begin(), his.end());
    std::merge(los.begin(), los.end(), his.begin(), his.end(), bounds.begin());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    // A sweep over the bounds: the writes begun and not yet ended, latest on top (an ended one is
    // dropped when it reaches the top; below the top it changes nothing).
    const auto earlier = [](const DramAccess* x, const DramAccess* y) { return x->inst < y->inst; };
    std::priority_queue<const DramAccess*, std::vector<const DramAccess*>, decltype(earlier)> open(earlier);
    size_t next = 0;
    for (size_t b = 0; b + 1 < bounds.size(); ++b) {
      const int64_t at = bounds[b];
      while (next < writes.size() && writes[next]->lo <= at) open.push(writes[next++]);
      while (!open.empty() && open.top()->hi <= at) open.pop();
      if (open.empty()) continue;
      if (!segments_.empty() && segments_.back().write == open.top() && segments_.back().hi == at)
        segments_.back().hi = bounds[b + 1];
      else
        segments_.push_back({at, bounds[b + 1], open.top()});
    }
    const size_t n = segments_.size();
    if (n == 0) return;
    latest_.emplace_back(n);
    for (uint32_t i = 0; i < n; ++i) latest_[0][i] = i;
    for (size_t k = 1; (size_t{1} << k) <= n; ++k) {
      const size_t half = size_t{1} << (k - 1);
      latest_.emplace_back(n - 2 * half + 1);
      for (size_t i = 0; i + 2 * half <= n; ++i) latest_[k][i] = later(latest_[k - 1][i], latest_[k - 1][i + half]);
    }
  }

  // The latest write overlapping bytes [lo, hi), or null.
  const DramAccess* latest(int64_t lo, int64_t hi) const {
    const auto begin = std::partition_point(segments_.begin(), segments_.end(), [&](const Segment& s) { return s.hi <= lo; });
    const auto end = std::partition_point(begin, segments_.end(), [&](const Segment& s) { return s.lo < hi; });
    if (begin == end) return nullptr;
    const size_t i = static_cast<size_t>(begin - segments_.begin()), n = static_cast<size_t>(end - begin);
    const int k = std::bit_width(n) - 1;
    return segments_[later(latest_[k][i], latest_[k][i + n - (size_t{1} << k)])].write;
  }

 private:
  struct Segment {
    int64_t lo, hi;
    const DramAccess* write;
  };
  uint32_t later(uint32_t a, uint32_t b) const { return segments_[a].write->inst >= segments_[b].write->inst ? a : b; }
  std::vector<Segment> segments_;
  std::vector<std::vector<uint32_t>> latest_;  // [k][i]: the segment of the latest write among [i, i + 2^k)
};

// The lanes of a DRAM footprint: `count` ranges [start + j * stride, + span).
struct Lanes {
  int64_t count = 1, stride = 0, start = 0, span = 0;
};

// The lanes of the operand of I whose footprint `a` is (count 1 when none is: a footprint of the
// whole tensor, which dynamic copies and indirect DMAs take). Recomputed from the operands, which
// timing mode does not keep, for multi-core modules only.
Lanes lanesOf(const bir::Instruction& I, const Access& a, const std::string& tensor) {
  for (const auto* list : {&I.ins, &I.outs}) {
    if (a.write && list == &I.ins) continue;
    for (const bir::AccessPattern& ap : *list) {
      if (ap.isImmediate() || !ap.loc->isDram() || ap.loc->name != tensor) continue;
      Operand op;
      decodeFootprint(ap, bir::patternShape(ap), 0, op);
      if (op.lo != a.lo || op.hi != a.hi) continue;
      // The bounding range less the outer pair's extent is one lane's.
      const int64_t outer = (op.lanes - 1) * op.laneStride;
      return {op.lanes, op.laneStride, a.lo - std::min<int64_t>(outer, 0), a.hi - a.lo - (outer < 0 ? -outer : outer)};
    }
  }
  return {};
}

}  // namespace

void CrossCoreOrder::run() const {
  const size_t nc = cores_.size();
  if (nc < 2) return;
  // Each core's DRAM footprints, by tensor, then in program order (a counting sort: those of
  // tensor t are first[c][t] .. first[c][t + 1]). A footprint whose lanes leave gaps between
  // them is one per lane.
  const size_t nt = tensors_.size();
  std::vector<std::vector<DramAccess>> byCore(nc);
  std::vector<std::vector<uint32_t>> first(nc, std::vector<uint32_t>(nt + 1, 0));
  std::vector<DramAccess> found;
  for (size_t c = 0; c < nc; ++c) {
    const CoreProgram& cp = cores_[c];
    found.clear();
    for (uint32_t i = 0; i < cp.insts.size(); ++i) {
      const DecodedInst& d = cp.insts[i];
      for (uint32_t k = d.firstAccess; k < d.firstAccess + d.nAccess; ++k) {
        const Access& a = cp.accesses[k];
        if (a.mem < kMemFirstDram || a.lo >= a.hi) continue;
        DramAccess x{a.mem - kMemFirstDram, i, a.write, a.lo, a.hi};
        const Lanes l = lanesOf(*d.inst, a, tensors_[x.tensor].name);
        if (l.span > 0 && (l.stride < 0 ? -l.stride : l.stride) > l.span) {
          for (int64_t j = 0; j < l.count; ++j) {
            x.lo = l.start + j * l.stride;
            x.hi = x.lo + l.span;
            found.push_back(x);
          }
        } else {
          found.push_back(x);
        }
      }
    }
    std::vector<uint32_t>& at = first[c];
    for (const DramAccess& x : found) ++at[x.tensor + 1];
    for (size_t t = 0; t < nt; ++t) at[t + 1] += at[t];
    byCore[c].resize(at[nt]);
    std::vector<uint32_t> next(at.begin(), at.end() - 1);
    for (const DramAccess& x : found) byCore[c][next[x.tensor]++] = x;
  }

  // Where each kernel starts on a core (its first instruction), found when first asked.
  std::vector<std::optional<std::unordered_map<std::string_view, uint32_t>>> starts(nc);
  const auto startOn = [&](size_t core, const std::string& kernel) -> std::optional<uint32_t> {
    auto& s = starts[core];
    if (!s) {
      s.emplace();
      const auto& insts = cores_[core].insts;
      const std::string* last = nullptr;
      for (uint32_t i = 0; i < insts.size(); ++i) {
        const std::string& k = insts[i].inst->kernel;
        if (!k.empty() && (!last || *last != k)) s->try_emplace(k, i);
        last = &k;
      }
    }
    const auto it = s->find(kernel);
    return it == s->end() ? std::nullopt : std::optional<uint32_t>(it->second);
  };

  const auto refuse = [&](size_t a, const DramAccess& x, size_t b, const DramAccess& w) {
    const CoreProgram &ca = cores_[a], &cb = cores_[b];
    const DecodedInst &da = ca.insts[x.inst], &db = cb.insts[w.inst];
    const std::string A = std::to_string(ca.core), B = std::to_string(cb.core);
    std::string why;
    if (a < b) {
      why = "the simulator runs core " + A + "'s function first";
    } else if (const std::string& k = da.inst->kernel; k.empty()) {
      why = "core " + A + "'s instruction belongs to no kernel, whose launch would wait for core " + B;
    } else if (const auto start = startOn(b, k); !start) {
      why = "kernel '" + k + "' does not run on core " + B + ", so its launch on core " + A + " waits for nothing there";
    } else {
      const DecodedInst& s = cb.insts[*start];
      why = "kernel '" + k + "' launches on core " + A + " when it starts on core " + B + " (" +
            instructionWhere(cb.core, s.block, s.index, *s.inst) + "), before that write";
    }
    throw SimulationError("DRAM tensor '" + tensors_[w.tensor].name + "' bytes [" + std::to_string(std::max(x.lo, w.lo)) +
                          ", " + std::to_string(std::min(x.hi, w.hi)) + "): core " + B + "'s " +
                          instructionWhere(cb.core, db.block, db.index, *db.inst) + " writes them and core " + A + "'s " +
                          instructionWhere(ca.core, da.block, da.index, *da.inst) + (x.write ? " writes" : " reads") +
                          " them; nothing in the module orders them: the cores run in parallel (" + why + ")");
  };

  std::vector<std::pair<const DramAccess*, const DramAccess*>> range(nc);
  std::vector<bool> writes(nc);
  std::vector<std::optional<LatestWrites>> written(nc);
  for (uint32_t t = 0; t < nt; ++t) {
    int accessing = 0;
    bool anyWrite = false;
    for (size_t c = 0; c < nc; ++c) {
      range[c] = {byCore[c].data() + first[c][t], byCore[c].data() + first[c][t + 1]};
      accessing += range[c].first != range[c].second;
      writes[c] = std::any_of(range[c].first, range[c].second, [](const DramAccess& a) { return a.write; });
      anyWrite = anyWrite || writes[c];
    }
    if (accessing < 2 || !anyWrite) continue;
    for (size_t c = 0; c < nc; ++c) {
      written[c].reset();
      if (writes[c]) written[c].emplace(range[c].first, range[c].second);
    }
    for (size_t a = 0; a < nc; ++a) {
      // The start on each core of the kernel of the access, for the accesses of one kernel in a row.
      const std::string* kernel = nullptr;
      std::vector<std::optional<uint32_t>> start(nc);
      for (const DramAccess* x = range[a].first; x != range[a].second; ++x) {
        if (const std::string& k = cores_[a].insts[x->inst].inst->kernel; !kernel || *kernel != k) {
          kernel = &k;
          for (size_t b = 0; b < a; ++b) start[b] = k.empty() || !written[b] ? std::nullopt : startOn(b, k);
        }
        for (size_t b = 0; b < nc; ++b) {
          if (b == a || !written[b]) continue;
          const DramAccess* w = written[b]->latest(x->lo, x->hi);
          if (w && !(a > b && start[b] && w->inst < *start[b])) refuse(a, *x, b, *w);
        }
      }
    }
  }
}

}  // namespace sim
