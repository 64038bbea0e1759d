#include "ListSchedule.h"

#include <algorithm>
#include <bit>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>

#include "Timing.h"
#include "bir/BlockArena.h"
#include "bir/Error.h"

namespace sim {

namespace {

// The orders of EngineOrder below kOrderWholeBlock.
constexpr int kEngineOrders = 4;

// A dependency of instruction `to` on an earlier one, on its writes being visible (RAW, WAW) or on
// its reads being done (WAR): a link in the earlier one's list of successors.
struct Edge {
  const Edge* next;  // the earlier one's next successor edge, or null
  uint32_t to;
  bool onWrites;
};

// The accesses seen so far on one memory: each entry an access of one instruction. A write drops
// the entries it covers: a later access that conflicts with one of them conflicts with the write,
// which comes after it.
struct Entry {
  int64_t lo, hi;
  uint32_t inst;
  uint8_t quadrants;
  bool write;
};

bool overlaps(const Entry& e, const Access& a) {
  return (e.quadrants & a.quadrants) && e.lo < a.hi && a.lo < e.hi;
}

// A bucket's list starts with room for this many entries: growing one entry at a time from none
// costs a copy at 1, 2 and 4.
constexpr uint32_t kFirstCapacity = 8;

// Where the entry lists of one dependency scan keep their entries, all freed together when the
// scan ends. A scan starts a few hundred lists; as std::vectors they were a malloc and a free
// each, a third of the scan. (Blocks of at most 4096 entries, 96 KiB: under glibc's threshold for
// serving a block by its own mmap, which costs a system call and fresh pages each time.)
using EntryArena = bir::BlockArena<Entry, size_t{1} << 9, size_t{1} << 12>;

// The entries of one list, in an EntryArena (the part of std::vector the scan uses).
class EntryList {
 public:
  const Entry* begin() const { return data_; }
  const Entry* end() const { return data_ + size_; }
  // (inlined, the growth out of line: called for every access of every instruction, per bucket)
  [[gnu::always_inline]] void push_back(const Entry& e, EntryArena& arena) {
    if (size_ == capacity_) grow(arena);
    data_[size_++] = e;
  }
  // Calls visit(e) for every entry in order and keeps those it returns true for, in order: one
  // pass where a write's conflicts and the entries it covers were two (std::erase_if after the
  // loop).
  template <class Visit>
  [[gnu::always_inline]] void visitKeeping(Visit visit) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < size_; ++i) {
      if (!visit(data_[i])) continue;
      if (kept != i) data_[kept] = data_[i];  // (most writes drop none: no stores then)
      ++kept;
    }
    size_ = kept;
  }

 private:
  [[gnu::noinline]] void grow(EntryArena& arena) {
    const uint32_t capacity = capacity_ == 0 ? kFirstCapacity : capacity_ * 2;
    Entry* data = arena.take(capacity);
    std::copy(data_, data_ + size_, data);
    data_ = data;
    capacity_ = capacity;
  }

  Entry* data_ = nullptr;
  uint32_t size_ = 0, capacity_ = 0;
};

// An on-chip memory's buckets: at least 256 bytes (a 192 KiB partition in 768 buckets), at most 64 KiB.
constexpr int kMinShift = 8, kMaxShift = 16;

// The accesses of one memory, in buckets of 2^shift bytes: an entry sits in every bucket its range
// touches, so an access only meets the entries near it. Reads and writes apart: a read only looks
// at the writes (a tile read a thousand times costs a read nothing). The buckets lie in one vector
// (an on-chip memory has a few dozen of 4 KiB, a DRAM tensor at most ~256), so finding one is an
// index; it covers the whole memory from the start (grown one way or the other as the accesses
// went, it was shifted up at each lower bucket, a tenth of a scan that walks a memory downwards),
// and grows only for an access beyond it, which the decoder refuses.
struct Bucket {
  EntryList reads, writes;
};
struct MemEntries {
  int shift = 12;  // (listScheduleBlock sets it per memory)
  int64_t first = 0;  // the number of buckets[0]
  std::vector<Bucket> buckets;

  Bucket& at(int64_t b) {
    if (buckets.empty()) {
      first = b;
      buckets.resize(1);
    } else if (b < first) {
      buckets.insert(buckets.begin(), static_cast<size_t>(first - b), Bucket{});
      first = b;
    } else if (b - first >= static_cast<int64_t>(buckets.size())) {
      // (at least doubled: the accesses of a block climb through a memory a bucket at a time,
      // and growing by one was a call and often a copy each time; unused buckets stay empty)
      buckets.resize(std::max(static_cast<size_t>(b - first + 1), 2 * buckets.size()));
    }
    return buckets[static_cast<size_t>(b - first)];
  }
};

// The dependency graph of one block, block-local indices: one edge per dependent pair (on the
// earlier one's writes if any conflict is with them), in the earlier one's list of successors
// (from first[k] through Edge::next, the latest first; nothing reads that order, see
// listScheduleBlock), and each instruction's number of predecessors. Each instruction's edges are
// linked into those lists once its scan is done: predecessor lists, copied into one vector per
// instruction and then turned into successor lists, cost a tenth of the scheduling. The edges lie
// in an arena, where they never move: a growing vector copied them (some 400 KB for mamba's block).
using EdgeArena = bir::BlockArena<Edge, size_t{1} << 9, size_t{1} << 12>;
struct Graph {
  std::vector<const Edge*> first;  // per instruction: its first successor edge, or null
  std::vector<uint32_t> preds;     // per instruction: its number of predecessors
  EdgeArena edges;
};

Graph dependencies(const CoreProgram& cp, const std::vector<TensorSpec>& tensors, uint32_t first, uint32_t count,
                   const bir::MachineConfig& cfg) {
  Graph g;
  g.first.assign(count, nullptr);
  g.preds.resize(count);
  // Memories some instruction of the block writes: reads of the others order nothing. A DRAM
  // tensor in at most ~256 buckets. An on-chip memory in buckets the size of its typical access,
  // the power of two at or below the length that half its accessed bytes come in: smaller, an
  // access lies in many buckets; larger, it meets the entries of its neighbours (4 KiB for all,
  // matmul_tiled's 1 KiB tiles met three others; 1 KiB, layernorm's 8 KiB rows lay in eight).
  // Which buckets hold an entry changes no edge: two accesses that overlap share a bucket.
  std::vector<int32_t> memIndex;  // by Access::mem: its entry in `mems`, or -1
  std::vector<MemEntries> mems;
  EntryArena arena;  // the entries of the buckets' lists
  int64_t bytesByLength[2][64] = {};  // SBUF, PSUM: bytes accessed by floor(log2(access length))
  for (uint32_t k = 0; k < count; ++k) {
    const DecodedInst& d = cp.insts[first + k];
    for (int a = 0; a < d.nAccess; ++a) {
      const Access& acc = cp.accesses[d.firstAccess + a];
      if (acc.mem < kMemFirstDram && acc.hi > acc.lo)
        bytesByLength[acc.mem][std::bit_width(static_cast<uint64_t>(acc.hi - acc.lo)) - 1] += acc.hi - acc.lo;
      if (!acc.write) continue;
      if (acc.mem >= memIndex.size()) memIndex.resize(acc.mem + 1, -1);
      if (memIndex[acc.mem] >= 0) continue;
      memIndex[acc.mem] = static_cast<int32_t>(mems.size());
      mems.emplace_back();
    }
  }
  for (uint32_t mem = 0; mem < memIndex.size(); ++mem) {
    if (memIndex[mem] < 0) continue;
    MemEntries& m = mems[static_cast<size_t>(memIndex[mem])];
    const int64_t bytes = mem == kMemSbuf   ? cfg.sbuf_bytes_per_partition
                          : mem == kMemPsum ? cfg.psum_bytes_per_partition
                                            : tensors[mem - kMemFirstDram].bytes;
    if (mem >= kMemFirstDram) {
      while (m.shift < 40 && (bytes >> m.shift) > 256) ++m.shift;
    } else {
      const int64_t* const byLength = bytesByLength[mem];
      int64_t total = 0, below = 0;
      for (int i = 0; i < 64; ++i) total += byLength[i];
      int i = 0;
      while (i < 63 && 2 * (below + byLength[i]) < total) below += byLength[i++];
      m.shift = std::clamp(i, kMinShift, kMaxShift);
    }
    if (bytes > 0) m.buckets.resize(static_cast<size_t>(((bytes - 1) >> m.shift) + 1));
  }
  int64_t lastInOrder[kEngineOrders] = {-1, -1, -1, -1};  // per EngineOrder bit below kOrderWholeBlock
  // The k-th instruction's predecessors, each once (on its writes if any edge is): an access meets
  // the same earlier one in several buckets and several of its operands. Collected here, then
  // linked into their successor lists: appending is a store, no capacity check or call, which
  // keeps the scan's loops in registers.
  struct In {
    uint32_t from;
    bool onWrites;
  };
  const auto in = std::make_unique_for_overwrite<In[]>(count);  // (room for every earlier one)
  uint32_t nIn = 0;
  // Per predecessor: by k, at in[slot] (slot is only read where seenBy says it was written).
  std::vector<uint32_t> seenBy(count, UINT32_MAX);
  const auto slot = std::make_unique_for_overwrite<uint32_t[]>(count);
  uint32_t k = 0;
  // Inlined: called for every conflicting entry met (tens of thousands per block).
  const auto add = [&](uint32_t from, bool onWrites) __attribute__((always_inline)) {
    if (seenBy[from] != k) {
      seenBy[from] = k;
      slot[from] = nIn;
      in[nIn++] = {from, onWrites};
    } else if (onWrites) {
      in[slot[from]].onWrites = true;
    }
  };
  for (; k < count; ++k) {
    const DecodedInst& d = cp.insts[first + k];
    nIn = 0;
    for (int a = 0; a < d.nAccess; ++a) {
      const Access& acc = cp.accesses[d.firstAccess + a];
      if (acc.mem >= memIndex.size() || memIndex[acc.mem] < 0 || acc.hi <= acc.lo) continue;
      MemEntries& m = mems[static_cast<size_t>(memIndex[acc.mem])];
      const int64_t b0 = acc.lo >> m.shift, b1 = (acc.hi - 1) >> m.shift;
      const auto covered = [&](const Entry& e) {
        return (e.quadrants & ~acc.quadrants) == 0 && acc.lo <= e.lo && e.hi <= acc.hi;
      };
      for (int64_t b = b0; b <= b1; ++b) {
        Bucket& bucket = m.at(b);
        if (acc.write) {
          // The earlier accesses it conflicts with, dropping those it covers.
          bucket.writes.visitKeeping([&](const Entry& e) {
            if (e.inst != k && overlaps(e, acc)) add(e.inst, true);
            return !covered(e);
          });
          bucket.reads.visitKeeping([&](const Entry& e) {
            if (e.inst != k && overlaps(e, acc)) add(e.inst, false);
            return !covered(e);
          });
          bucket.writes.push_back({acc.lo, acc.hi, k, acc.quadrants, true}, arena);
        } else {
          for (const Entry& e : bucket.writes)
            if (e.inst != k && overlaps(e, acc)) add(e.inst, true);
          bucket.reads.push_back({acc.lo, acc.hi, k, acc.quadrants, false}, arena);
        }
      }
    }
    // Engine state outside memory: each order's instructions in program order.
    const bir::Instruction& I = *d.inst;
    const auto* act = bir::dyn_cast<bir::InstActivation>(&I);
    const uint32_t orders = engineOrders(d.cls, act && act->acc != bir::AccumCmd::Idle, false);
    for (uint32_t bits = orders; bits; bits &= bits - 1) {  // (most instructions: none)
      const int o = std::countr_zero(bits);
      if (lastInOrder[o] >= 0) add(static_cast<uint32_t>(lastInOrder[o]), true);
      lastInOrder[o] = k;
    }
    g.preds[k] = nIn;
    Edge* const edges = g.edges.take(nIn);
    for (uint32_t i = 0; i < nIn; ++i) {
      const Edge*& head = g.first[in[i].from];
      edges[i] = {head, k, in[i].onWrites};
      head = &edges[i];
    }
  }
  return g;
}

// When an instruction could start, and what it releases, as the simulator's Scheduler would have
// it (engine streams, DMA queues and engines; not the DGEs, SRAM ports or HBM): the estimate the
// list scheduler orders by.
class Estimate {
 public:
  explicit Estimate(const bir::MachineConfig& cfg) : cfg_(cfg) {}

  // The track whose time `d` waits for before it starts: its engine's, or for a DMA the issuing
  // engine's (the DMA queue and engines only delay its end).
  static int startTrack(const DecodedInst& d) { return d.track >= kFirstQueueTrack ? d.issueTrack : d.track; }
  // When `track` is next free (never decreases).
  double freeAt(int track) const { return free_[track]; }
  // Places `d` at `at` (its estimated start); returns (reads released, writes released).
  std::pair<double, double> place(const DecodedInst& d, double at) {
    const double sem = cfg_.semaphore_wait_ns;
    if (d.track < kFirstQueueTrack) {
      const double done = at + d.busy_ns;
      free_[d.track] = done;
      return {done + sem, done + d.access_ns + (d.track == kTrackPE ? 0.0 : sem)};
    }
    const double issued = at + d.busy_ns;
    free_[d.issueTrack] = issued;
    double t = std::max(issued + d.dma_latency_ns, free_[d.track]);
    // The mask's engines, lowest first: one run of bits (bir::Hwm's DMA pricing: the engines of
    // the on-chip side's partitions, or all), walked without finding each bit, unless two on-chip
    // sides cover partitions apart. (A bit at a time was a tenth of matmul_tiled's scheduling.)
    const uint32_t mask = d.dma_engine_mask;
    const int lo = mask ? std::countr_zero(mask) : 0, hi = 32 - std::countl_zero(mask);
    const bool run = ((mask >> lo) & ((mask >> lo) + 1)) == 0;
    if (run) {
      for (int e = lo; e < hi; ++e) t = std::max(t, dmaFree_[e]);
    } else {
      for (uint32_t m = mask; m; m &= m - 1) t = std::max(t, dmaFree_[std::countr_zero(m)]);
    }
    const double end = t + d.dma_transfer_ns;
    free_[d.track] = end;
    if (run) {
      std::fill(dmaFree_ + lo, dmaFree_ + hi, end);
    } else {
      for (uint32_t m = mask; m; m &= m - 1) dmaFree_[std::countr_zero(m)] = end;
    }
    return {end + sem, end + d.access_ns + sem};
  }

 private:
  const bir::MachineConfig& cfg_;
  double free_[kMaxTracks] = {};
  double dmaFree_[32] = {};
};

bool keepsSourceOrder(const DecodedInst& d) {
  if (d.wholeCore) return true;
  const auto* ms = bir::dyn_cast<bir::InstMemset>(d.inst);
  return engineOrders(d.cls, false, ms && ms->mode == bir::MemsetMode::Random) & kOrderWholeBlock;
}

}  // namespace

std::vector<uint32_t> listScheduleBlock(const CoreProgram& cp, const std::vector<TensorSpec>& tensors, uint32_t block,
                                       const bir::MachineConfig& cfg) {
  uint32_t first = 0;
  while (first < cp.insts.size() && cp.insts[first].block != block) ++first;
  uint32_t count = 0;
  while (first + count < cp.insts.size() && cp.insts[first + count].block == block) ++count;
  std::vector<uint32_t> order(count);
  for (uint32_t k = 0; k < count; ++k) order[k] = k;
  for (uint32_t k = 0; k < count; ++k)
    if (keepsSourceOrder(cp.insts[first + k])) return order;

  Graph g = dependencies(cp, tensors, first, count, cfg);
  // Per instruction: its predecessors not yet placed, and the latest release of those placed,
  // folded in as each is placed. (Whatever the order they are placed in: the fold starts at 0 and
  // only takes a value greater than itself, never NaN, so it ends as the largest release not NaN,
  // or 0, in any order. So neither the edges nor the successor lists are sorted.)
  std::vector<uint32_t>& waiting = g.preds;
  std::vector<double> released(count, 0.0);

  // Each step places the ready instruction with the earliest estimated start, max(its start
  // track's free time, its dependencies' release), ties by source position. The ready
  // instructions wait per start track: those whose dependencies are released by the time the
  // track is free all start then, so the first in source order is that track's candidate; the
  // others start when their dependencies are released. A track's free time only grows, so an
  // instruction moves from the second set to the first at most once: a step costs a look at
  // each track, not at each ready instruction.
  // (when, k): earlier first, ties by source position. Compared field by field: std::pair's
  // operator<, through operator<=> on a double (its partial ordering), cost 2% more of the
  // scheduling. (The same order: no key is NaN, releases fold from 0 and ignore NaN.)
  struct Key {
    double at;
    uint32_t k;
    bool operator<(const Key& o) const { return at < o.at || (at == o.at && k < o.k); }
  };
  struct Later {
    bool operator()(const Key& a, const Key& b) const { return b < a; }
  };
  struct Ready {
    std::priority_queue<Key, std::vector<Key>, Later> later;  // (dependencies released, k)
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> atFree;  // k
  };
  std::vector<Ready> ready(kMaxTracks);
  // The tracks with a ready instruction (bit t: ready[t] is not empty): a step looks at those
  // only, a few of the kMaxTracks.
  static_assert(kMaxTracks <= 32);
  uint32_t readyTracks = 0;
  Estimate est(cfg);
  auto makeReady = [&](uint32_t k) {
    const int t = Estimate::startTrack(cp.insts[first + k]);
    ready[t].later.push({released[k], k});
    readyTracks |= 1u << t;
  };
  for (uint32_t k = 0; k < count; ++k)
    if (waiting[k] == 0) makeReady(k);
  order.clear();
  while (order.size() < count) {
    int best = -1;
    Key bestKey{0.0, 0};
    for (uint32_t tracks = readyTracks; tracks; tracks &= tracks - 1) {
      const int t = std::countr_zero(tracks);
      Ready& r = ready[t];
      const double free = est.freeAt(t);
      while (!r.later.empty() && r.later.top().at <= free) {
        r.atFree.push(r.later.top().k);
        r.later.pop();
      }
      Key key;
      if (!r.atFree.empty())
        key = {free, r.atFree.top()};
      else if (!r.later.empty())
        key = r.later.top();
      else
        continue;
      if (best < 0 || key < bestKey) best = t, bestKey = key;
    }
    if (best < 0) break;  // (a dependency cycle: reported below)
    Ready& r = ready[best];
    if (!r.atFree.empty())
      r.atFree.pop();
    else
      r.later.pop();
    if (r.atFree.empty() && r.later.empty()) readyTracks &= ~(1u << best);
    const auto [at, k] = bestKey;
    const auto [reads, writes] = est.place(cp.insts[first + k], at);
    order.push_back(k);
    for (const Edge* e = g.first[k]; e; e = e->next) {
      released[e->to] = std::max(released[e->to], e->onWrites ? writes : reads);
      if (--waiting[e->to] == 0) makeReady(e->to);
    }
  }
  if (order.size() != count) throw std::logic_error("instruction scheduling: a dependency cycle (an internal error)");
  return order;
}

namespace {

// Moves the decoded instructions of the block at cp.insts[first, first + order.size()) as
// BasicBlock::permute moves the block's: the k-th is then the one at order[k]. What a decoding
// reads from an instruction's position follows it (its index in the block, its ordinal in the
// function: consecutive within a block); the rest is the instruction's own, its hazard footprints
// included (found through firstAccess, which needs no order).
void permuteDecoded(CoreProgram& cp, uint32_t first, const std::vector<uint32_t>& order,
                    std::vector<DecodedInst>& scratch) {
  const uint32_t ordinal = cp.insts[first].ordinal;
  scratch.assign(cp.insts.begin() + first, cp.insts.begin() + first + order.size());
  for (uint32_t k = 0; k < order.size(); ++k) {
    DecodedInst& d = cp.insts[first + k];
    d = scratch[order[k]];
    d.index = k;
    d.ordinal = ordinal + k;
  }
}

// Reorders every block of `fn`, decoded as `cp`; `reorder` (when not null, the same as `cp`)
// keeps the decoding in step.
ScheduleStats scheduleBlocks(bir::Function& fn, const CoreProgram& cp, const std::vector<TensorSpec>& tensors,
                             const bir::MachineConfig& cfg, CoreProgram* reorder = nullptr) {
  ScheduleStats stats;
  std::vector<DecodedInst> scratch;
  uint32_t first = 0;  // the block's first instruction in cp.insts (every function's instruction is there)
  for (uint32_t b = 0; b < fn.blocks().size(); first += static_cast<uint32_t>(fn.blocks()[b]->size()), ++b) {
    const std::vector<uint32_t> order = listScheduleBlock(cp, tensors, b, cfg);
    bool same = true;
    for (uint32_t k = 0; k < order.size(); ++k)
      if (order[k] != k) {
        same = false;
        ++stats.moved;
      }
    if (same) {
      ++stats.kept;
      continue;
    }
    fn.blocks()[b]->permute(order);
    if (reorder) permuteDecoded(*reorder, first, order, scratch);
    ++stats.blocks;
  }
  return stats;
}

}  // namespace

ScheduleStats scheduleFunction(bir::Module& m, size_t function, const std::string& arch) {
  const std::unique_ptr<bir::Hwm> hwm = bir::makeHwm(arch);
  std::optional<Program> decoded;
  try {
    decoded.emplace(m, *hwm, Mode::Timing, static_cast<int64_t>(function));
  } catch (const SimulationError&) {
    // The simulator refuses the function: it keeps its order, and simulating it says why.
    ScheduleStats stats;
    stats.refused = true;
    return stats;
  }
  return scheduleBlocks(*m.functions().at(function), decoded->cores.at(0), decoded->tensors, hwm->config());
}

std::vector<ScheduleStats> scheduleModule(bir::Module& m, const std::string& arch, std::shared_ptr<Program>* prepared) {
  if (prepared) prepared->reset();
  const size_t nf = m.functions().size();
  if (nf == 0) return {};
  // One decoding of the whole module (each function's decoding verifies every function; of a
  // module of one function, it is that function's); if the simulator refuses it, each function on
  // its own, so that only the refused ones keep their order.
  const std::unique_ptr<bir::Hwm> hwm = bir::makeHwm(arch);
  std::shared_ptr<Program> decoded;
  try {
    decoded = std::make_shared<Program>(m, *hwm, Mode::Timing, std::nullopt);
  } catch (const SimulationError&) {
  }
  std::vector<ScheduleStats> stats;
  if (decoded) {
    for (size_t f = 0; f < nf; ++f) {
      CoreProgram& cp = decoded->cores.at(f);
      stats.push_back(scheduleBlocks(*m.functions()[f], cp, decoded->tensors, hwm->config(), prepared ? &cp : nullptr));
    }
    if (prepared) *prepared = std::move(decoded);
    return stats;
  }
  if (nf == 1) {
    stats.emplace_back().refused = true;
    return stats;
  }
  for (size_t f = 0; f < nf; ++f) stats.push_back(scheduleFunction(m, f, arch));
  return stats;
}

}  // namespace sim
