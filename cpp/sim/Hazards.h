// Read/write hazards between instructions, on byte ranges of memory.
//
// The hardware orders engines with semaphores the compiler inserts for every RAW, WAR and WAW
// dependency; the simulator derives the same order from the instructions' footprints. For each
// memory (SBUF, PSUM, each DRAM tensor) it keeps, per byte range, the time the last write became
// visible and the time the last read finished; a read waits for the writes it overlaps (RAW), a
// write for the writes and reads it overlaps (WAW, WAR).
//
// Except a write's WAR and WAW on accesses of its own track: an engine runs its instructions in
// order, and a DMA queue its transfers, so an earlier instruction's reads are done before a later
// one's start and its writes land before the later one's (the same pipeline, the same latency):
// no semaphore orders them. RAW on one track still waits (the result must be visible; the
// semaphore wait on it is fitted to a chain of dependent ScalarE instructions, MachineConfig::
// semaphore_wait_ns). So each range keeps the track of its last write and, for reads, the track
// of the latest read and the latest read of any other track.
//
// Granularity: exact byte intervals along the free (address) axis, per 32-partition quadrant
// along the partition axis. That is what engines address (an on-chip access covers a partition
// range starting at 0/32/64/96 per the start-partition rule, and a byte range), it costs a few
// tens of nanoseconds per access, and unlike a per-tensor or per-tile scheme it never orders two
// instructions that touch disjoint bytes of one tile. A strided pattern is tracked by its bounding
// byte range (two interleaved strided accesses are ordered; we accept that).
//
// Representation: a sorted array of segments covering [0, size) with the two times for each of
// the 4 quadrants; an access splits segments at its ends and neighbours with equal times merge
// again, so the array stays about as long as the number of live tiles. Lookups start from where
// the same access found its segment last time (kernels touch the same tiles again and again)
// before falling back to a binary search. No allocation once the arrays have grown to that
// size. The hot functions are inline: the scheduler calls them a few times per instruction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "Program.h"

namespace sim {

// The track of an access that no other is exempted against (a kernel node on every track).
inline constexpr uint8_t kNoTrack = 0xFF;

class RangeTimes {
 public:
  explicit RangeTimes(int64_t size = 0) { reset(size); }
  void reset(int64_t size);

  // `hint` is where the caller found this access's segment last time (an index; any value is
  // safe): an instruction stream touches the same tiles again and again, so a hint kept per
  // access almost always names the right segment and spares the binary search.

  // Latest write-visible time over [lo, hi) in `quadrants` (what a reader waits for).
  double readReady(int64_t lo, int64_t hi, uint8_t quadrants, uint32_t& hint) const {
    double t = 0;
    for (size_t i = find(lo, hint); i < starts_.size() && starts_[i] < hi; ++i)
      for (int q = 0; q < 4; ++q) t = std::max(t, (quadrants >> q & 1) ? times_[i].w[q] : 0.0);
    return t;
  }
  // Latest write or read time over [lo, hi) (what a writer on `track` waits for), but not the
  // writes and reads of `track` itself (its order keeps them; kNoTrack: every access counts).
  double writeReady(int64_t lo, int64_t hi, uint8_t quadrants, uint32_t& hint, uint8_t track = kNoTrack) const {
    double t = 0;
    for (size_t i = find(lo, hint); i < starts_.size() && starts_[i] < hi; ++i)
      for (int q = 0; q < 4; ++q) {
        if (!(quadrants >> q & 1)) continue;
        const Times& x = times_[i];
        const bool own = track != kNoTrack;
        t = std::max(t, own && x.wTrack[q] == track ? 0.0 : x.w[q]);
        t = std::max(t, own && x.rTrack[q] == track ? x.rOther[q] : x.r[q]);
      }
    return t;
  }
  void markRead(int64_t lo, int64_t hi, uint8_t quadrants, double t, uint32_t& hint, uint8_t track = kNoTrack) {
    size_t first, end;
    if (!segmentsOf(lo, hi, hint, &first, &end)) return;
    for (size_t i = first; i < end; ++i)
      for (int q = 0; q < 4; ++q) {
        if (!(quadrants >> q & 1)) continue;
        // r is the latest read (of track rTrack), rOther the latest read of any other track.
        Times& x = times_[i];
        if (x.rTrack[q] == track) {
          x.r[q] = std::max(x.r[q], t);
        } else if (t > x.r[q]) {
          x.rOther[q] = x.r[q];
          x.r[q] = t;
          x.rTrack[q] = track;
        } else {
          x.rOther[q] = std::max(x.rOther[q], t);
        }
      }
    mergeAround(first, end - 1, hint);
  }
  void markWrite(int64_t lo, int64_t hi, uint8_t quadrants, double t, uint32_t& hint, uint8_t track = kNoTrack) {
    size_t first, end;
    if (!segmentsOf(lo, hi, hint, &first, &end)) return;
    // Every overlapped read and write of another track finished before this write (it waited for
    // them), and those of its own track before it started, so one time stands for them all from
    // now on, the track's own: no earlier than any of them (an exempted one may end later).
    for (size_t i = first; i < end; ++i)
      for (int q = 0; q < 4; ++q) {
        if (!(quadrants >> q & 1)) continue;
        Times& x = times_[i];
        x.w[q] = x.r[q] = std::max(t, std::max(x.w[q], x.r[q]));
        x.rOther[q] = 0;
        x.wTrack[q] = x.rTrack[q] = track;
      }
    mergeAround(first, end - 1, hint);
  }
  size_t segments() const { return starts_.size(); }

 private:
  struct Times {
    double w[4] = {};
    double r[4] = {};
    double rOther[4] = {};
    uint8_t wTrack[4] = {kNoTrack, kNoTrack, kNoTrack, kNoTrack};
    uint8_t rTrack[4] = {kNoTrack, kNoTrack, kNoTrack, kNoTrack};
    bool operator==(const Times& o) const {
      for (int q = 0; q < 4; ++q)
        if (w[q] != o.w[q] || r[q] != o.r[q] || rOther[q] != o.rOther[q] || wTrack[q] != o.wTrack[q] ||
            rTrack[q] != o.rTrack[q])
          return false;
      return true;
    }
  };
  // The segment containing x: `hint` if it still is, else a binary search (which updates it).
  size_t find(int64_t x, uint32_t& hint) const {
    const size_t n = starts_.size(), i = hint;
    if (i < n && starts_[i] <= x && (i + 1 == n || x < starts_[i + 1])) return i;
    const size_t j = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), x) - starts_.begin()) - 1;
    hint = static_cast<uint32_t>(j);
    return j;
  }
  // Makes x (< size) a segment start; returns its index.
  size_t split(int64_t x, uint32_t& hint) {
    const size_t i = find(x, hint);
    if (starts_[i] == x) return i;
    starts_.insert(starts_.begin() + static_cast<std::ptrdiff_t>(i) + 1, x);
    times_.insert(times_.begin() + static_cast<std::ptrdiff_t>(i) + 1, times_[i]);
    return i + 1;
  }
  // The segments [first, end) that exactly cover [lo, hi), splitting as needed; false if empty.
  bool segmentsOf(int64_t lo, int64_t hi, uint32_t& hint, size_t* first, size_t* end) {
    lo = std::max<int64_t>(lo, 0);
    hi = std::min(hi, size_);
    if (lo >= hi) return false;
    const size_t i = find(lo, hint);  // fast path: the access is exactly one segment (a whole tile)
    if (starts_[i] == lo && (i + 1 < starts_.size() ? starts_[i + 1] : size_) == hi) {
      *first = i;
      *end = i + 1;
      return true;
    }
    *first = split(lo, hint);
    uint32_t hiHint = static_cast<uint32_t>(*first);
    *end = hi < size_ ? split(hi, hiHint) : starts_.size();
    hint = static_cast<uint32_t>(*first);
    return true;
  }
  // Merges equal neighbours around the changed segments [first, last]; usually there are none.
  void mergeAround(size_t first, size_t last, uint32_t& hint) {
    if (first == last && !(first > 0 && times_[first - 1] == times_[first]) &&
        !(first + 1 < starts_.size() && times_[first + 1] == times_[first]))
      return;
    merge(first, last);
    hint = static_cast<uint32_t>(first > 0 ? first - 1 : 0);  // the merged segment is here or just before
  }
  void merge(size_t first, size_t last);

  std::vector<int64_t> starts_;
  std::vector<Times> times_;
  int64_t size_ = 0;
};

// The hazard state of one core: SBUF, PSUM and the DRAM tensors.
class HazardTracker {
 public:
  // On-chip ranges are bytes within a partition; DRAM ranges bytes within the tensor.
  HazardTracker(int64_t sbufBytesPerPartition, int64_t psumBytesPerPartition,
                const std::vector<TensorSpec>& tensors);
  void reset();
  // `hint`: the caller's per-access segment hint (RangeTimes); `track`: where the instruction runs
  // (an engine or a DMA queue, in order), or kNoTrack.
  double ready(const Access& a, uint32_t& hint, uint8_t track) const {
    const RangeTimes& m = mems_[a.mem];
    return a.write ? m.writeReady(a.lo, a.hi, a.quadrants, hint, track) : m.readReady(a.lo, a.hi, a.quadrants, hint);
  }
  void mark(const Access& a, double t, uint32_t& hint, uint8_t track) {
    RangeTimes& m = mems_[a.mem];
    if (a.write)
      m.markWrite(a.lo, a.hi, a.quadrants, t, hint, track);
    else
      m.markRead(a.lo, a.hi, a.quadrants, t, hint, track);
  }

 private:
  std::vector<RangeTimes> mems_;
  std::vector<int64_t> sizes_;
};

}  // namespace sim
