// Decoded operands: an access pattern turned, once, into byte strides over one Memory, plus the
// cursor that walks the elements of one or several operands in enumeration order.
//
// Enumeration order (cpp/bir/AccessPattern.h, docs/isa-semantics.md §1): the partition pair
// outermost, then the free pairs outermost first. Dim 0 of a decoded operand is that outer pair
// (the lane for on-chip operands); the free dims follow, with unit dims dropped and adjacent dims
// that are contiguous in memory merged, which changes no element's position in the order.
#pragma once

#include <cstdint>

#include "State.h"
#include "bir/AccessPattern.h"
#include "bir/PatternShape.h"

namespace sim {

inline constexpr int kMaxFreeDims = 7;

struct Operand {
  Space space = Space::Imm;
  bir::DType dtype = bir::DType::float32;
  uint8_t esize = 4;
  uint8_t nfree = 0;         // free dims after merging
  int32_t tensor = -1;       // DRAM: index into the run's tensors
  int32_t lanes = 1;         // dim 0: partitions (on-chip) or the outer pair (DRAM)
  int32_t p0 = 0;            // on-chip: absolute first partition
  int64_t base = 0;          // on-chip: byte of element 0 within its partition; DRAM: within the tensor
  int64_t laneStride = 0;    // DRAM: bytes per dim-0 step (on-chip: the memory's partition pitch)
  int64_t freeElems = 1;     // elements per lane
  int64_t num[kMaxFreeDims] = {};
  int64_t stride[kMaxFreeDims] = {};  // bytes
  // Footprint within one partition (on-chip) or the tensor (DRAM): bytes [lo, hi).
  int64_t lo = 0, hi = 0;
  double imm = 0;            // immediates

  bool isImm() const { return space == Space::Imm; }
  bool onChip() const { return space == Space::SBUF || space == Space::PSUM; }
  int64_t numElements() const { return static_cast<int64_t>(lanes) * freeElems; }
  // Bytes from element 0 of the lane to the lane's element `k` (k < freeElems).
  int64_t freeOffset(int64_t k) const;
  // The innermost dim is contiguous (a single run per lane when nfree <= 1).
  bool innerContiguous() const { return nfree == 0 || stride[nfree - 1] == esize; }
  // A lane is one run (elements at a constant stride): the common case, with a fast path.
  bool singleRun() const { return nfree <= 1; }
  int64_t runStride() const { return nfree ? stride[0] : esize; }
};

// Whether the two operands' footprints (partitions x bytes [lo, hi), or the same DRAM tensor's
// bytes) intersect: they may share elements. Immediates share nothing.
bool footprintsOverlap(const Operand& a, const Operand& b);

// n contiguous elements of `dtype` in one lane: how staged copies of operands are described.
Operand contiguousOperand(bir::DType dtype, int64_t n);

// Builds the decoded form of `ap` in `op`, a default-built Operand (in place: the decoder fills its
// operand list without a copy); `tensorIndex` is the DRAM tensor index (DRAM operands only).
// Throws sim::SimulationError (without a location; the caller adds it) when the pattern has more
// dims than kMaxFreeDims after merging. `ap` must verify (bir::verifyAccessPattern).
void decodeOperand(const bir::AccessPattern& ap, int32_t tensorIndex, Operand& op);
// decodeOperand in two steps. The footprint: every field but the dims (num, stride; nfree 0), from
// the pattern's shape (bir::patternShape(ap)), into any Operand; it throws nothing. The dims: the free pairs with unit
// dims dropped and contiguous ones merged, which only execution walks; decodeDims throws
// decodeOperand's refusal, which only a pattern of more than kMaxFreeDims free pairs can meet
// (dimsMayRefuse). Timing mode decodes footprints only (and the dims of a pattern that may be
// refused, for the refusal): its operands are dropped once the decode-time checks have read them.
// Inline: made for every operand of every instruction a module is prepared with.
inline void decodeFootprint(const bir::AccessPattern& ap, const bir::PatternShape& shape, int32_t tensorIndex, Operand& op);
void decodeDims(const bir::AccessPattern& ap, Operand& op);
inline bool dimsMayRefuse(const bir::AccessPattern& ap) {
  return static_cast<int64_t>(ap.pattern.size()) - 1 > kMaxFreeDims;
}

// Walks the elements of one lane (or of the whole operand, `wholeOperand`) as runs: stretches of
// elements `step()` bytes apart along the innermost dim.
class RunCursor {
 public:
  RunCursor() = default;
  // Lane `lane` of `op` whose element 0 is at `lanePtr`.
  RunCursor(const Operand& op, uint8_t* lanePtr);
  // All dims, dim 0 with byte stride `dim0Stride` (the memory's pitch for on-chip operands).
  static RunCursor whole(const Operand& op, uint8_t* ptr, int64_t dim0Stride);

  bool done() const { return left_ == 0; }
  uint8_t* ptr() const { return ptr_; }
  int64_t remaining() const { return runLeft_; }  // elements left in the current run
  int64_t step() const { return step_; }
  void advance(int64_t k);  // consume k <= remaining() elements
  // A fresh cursor narrowed to its elements [first, first + count) (a lane-parallel share).
  void window(int64_t first, int64_t count);

 private:
  void startRun();
  int nd_ = 0;
  int64_t num_[kMaxFreeDims + 1] = {};
  int64_t stride_[kMaxFreeDims + 1] = {};
  int64_t idx_[kMaxFreeDims + 1] = {};
  uint8_t* origin_ = nullptr;  // element 0
  uint8_t* ptr_ = nullptr;
  int64_t step_ = 0;
  int64_t runLeft_ = 0;
  int64_t left_ = 0;  // elements left in total
};

inline void decodeFootprint(const bir::AccessPattern& ap, const bir::PatternShape& shape, int32_t tensorIndex, Operand& op) {
  // Every field but num and stride is assigned (as a default-built Operand has them where this
  // operand has none), so that `op` may be a reused one; nfree 0: no dims decoded.
  op.dtype = ap.dtype;
  op.esize = static_cast<uint8_t>(bir::dtypeSize(ap.dtype));
  op.nfree = 0;
  op.tensor = -1;
  op.lanes = 1;
  op.p0 = 0;
  op.base = 0;
  op.laneStride = 0;
  op.freeElems = 1;
  op.lo = op.hi = 0;
  op.imm = 0;
  if (ap.isImmediate()) {
    op.space = Space::Imm;
    op.imm = ap.imm;
    return;
  }
  const bir::MemoryLocation& loc = *ap.loc;
  const int64_t es = op.esize;
  // The free extent in bytes, relative to element 0. Dropping unit dims and merging contiguous ones
  // (decodeDims) changes neither the element count nor the extent, so both come from the pairs.
  const int64_t flo = shape.lo * es, fhi = shape.hi * es;
  op.freeElems = shape.freeElements;
  op.lanes = static_cast<int32_t>(shape.partitions);
  if (loc.isOnChip()) {
    op.space = loc.type == bir::MemoryType::SB ? Space::SBUF : Space::PSUM;
    const int64_t row = loc.bytes_per_partition / es;  // verified > 0
    op.p0 = static_cast<int32_t>(loc.base_partition + ap.offset / row);
    op.base = loc.addr + (ap.offset % row) * es;
    op.lo = op.base + flo;
    op.hi = op.base + fhi + es;
  } else {
    op.space = Space::DRAM;
    op.tensor = tensorIndex;
    op.base = ap.offset * es;
    op.laneStride = (ap.pattern.empty() ? 1 : ap.pattern.front().step) * es;
    op.lo = op.base + flo + shape.outerLo * es;
    op.hi = op.base + fhi + shape.outerHi * es + es;
  }
}

}  // namespace sim
