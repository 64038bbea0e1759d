// Read/write hazards between instructions, on byte ranges of memory.
//
// The hardware orders engines with semaphores the compiler inserts for every RAW, WAR and WAW
// dependency; the simulator derives the same order from the instructions' footprints. For each
// memory (SBUF, PSUM, each DRAM tensor) it keeps, per byte range, the time the last write became
// visible and the time the last read finished; a read waits for the writes it overlaps (RAW), a
// write for the writes and reads it overlaps (WAW, WAR).
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
// again, so the array stays about as long as the number of live tiles. No allocation once the
// arrays have grown to that size.
#pragma once

#include <cstdint>
#include <vector>

#include "Program.h"

namespace sim {

class RangeTimes {
 public:
  explicit RangeTimes(int64_t size = 0) { reset(size); }
  void reset(int64_t size);
  // Latest write-visible time over [lo, hi) in `quadrants` (what a reader waits for).
  double readReady(int64_t lo, int64_t hi, uint8_t quadrants) const;
  // Latest write or read time over [lo, hi) (what a writer waits for).
  double writeReady(int64_t lo, int64_t hi, uint8_t quadrants) const;
  void markRead(int64_t lo, int64_t hi, uint8_t quadrants, double t);
  void markWrite(int64_t lo, int64_t hi, uint8_t quadrants, double t);
  size_t segments() const { return starts_.size(); }

 private:
  struct Times {
    double w[4];
    double r[4];
    bool operator==(const Times& o) const;
  };
  size_t find(int64_t x) const;   // segment containing x
  size_t split(int64_t x);        // makes x a segment start (x < size); returns its index
  void mergeAround(size_t first, size_t last);
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
  double ready(const Access& a) const;
  void mark(const Access& a, double t);

 private:
  std::vector<RangeTimes> mems_;
  std::vector<int64_t> sizes_;
};

}  // namespace sim
