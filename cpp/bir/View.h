// View: the one access-pattern value type, and the one home of the access-pattern algebra.
//
// A view addresses elements of one memory location in units of its dtype as
//     offset + sum_d i_d * step_d        for 0 <= i_d < num_d
// over its logical dims, outermost first (the [step, num] pairs of cpp/bir/AccessPattern.h).
// Two kinds:
//   * a DRAM view (no partition dim): an N-d array over a tensor's flat element array, e.g. a
//     kernel operand (ofOperand) or a whole tensor in some row-major shape (ofShape);
//   * an on-chip view (SB / PSUM, onChip): a partition range [P partitions] plus free dims within
//     each partition's row; the hardware has no partition stride, so the partition pair's step is
//     always one row. On-chip views always keep at least one free dim (a [P] column is [P, 1]).
// The operations make new views of the same bytes (slice, at, merge, flatten, reshape, rows,
// split, permute, broadcast, bitcast, normalised) and never move data; ap() turns a view into an
// operand, partition pair first. normaliseDims is the in-place "drop unit dims, merge contiguous
// ones" every consumer of patterns uses (the simulator's operand decode, walrus's operand layout).
//
// Errors are bir::BIRError naming the operation and the view, in the words of the walrus kernel
// builder's DramView / Tile (the `kind` a view is made with: "DramView", "Tile", "View"; a string
// literal, since views keep the pointer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "AccessPattern.h"

namespace bir {

// Drops dims with num 1 and merges each (outer, inner) pair with outer step == inner step * inner
// num, in place over n dims; returns the new count. No element changes its place in the
// enumeration order. Inline: it is on the simulator's module-preparation path.
inline int normaliseDims(int64_t* num, int64_t* step, int n) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (num[i] == 1) continue;
    if (m > 0 && step[m - 1] == step[i] * num[i]) {
      num[m - 1] *= num[i];
      step[m - 1] = step[i];
    } else {
      num[m] = num[i];
      step[m] = step[i];
      ++m;
    }
  }
  return m;
}

// A shape as errors print it: "[2, 128, 512]".
std::string shapeText(const std::vector<int64_t>& shape);

class View {
 public:
  View() = default;
  // A DRAM view: `dims` from element `offset` of `loc` (which may be null for a detached view).
  View(MemoryLocation* loc, DType dtype, int64_t offset, std::vector<APPair> dims, const char* kind = "View");
  // The whole tensor `loc` seen as a row-major array of `shape` (elements of `dtype`).
  static View ofShape(MemoryLocation* loc, DType dtype, const std::vector<int64_t>& shape, const char* kind = "View");
  // The logical view of a DRAM kernel-node operand: createAP's partition-first pair moved back to
  // its dim (`what` names the operand in errors, e.g. "ins[2] 'gate_w'").
  static View ofOperand(const AccessPattern& ap, const std::string& what, const char* kind = "View");
  // `partitions` partitions of the on-chip location `loc` from its first row, contiguous free
  // dims `free` (an empty `free` is one element per partition).
  static View onChip(MemoryLocation* loc, DType dtype, int64_t partitions, const std::vector<int64_t>& free,
                     const char* kind = "View");

  MemoryLocation* location() const { return loc_; }
  DType dtype() const { return dtype_; }
  int64_t offset() const { return offset_; }
  bool isOnChip() const { return partitions_ > 0; }
  int64_t partitions() const { return isOnChip() ? partitions_ : 1; }
  size_t rank() const { return dims_.size(); }  // logical (free) dims
  int64_t dim(size_t d) const;
  const std::vector<APPair>& dims() const { return dims_; }
  std::vector<int64_t> shape() const;
  int64_t freeElements() const;  // product of the dims' nums
  int64_t numElements() const { return partitions() * freeElements(); }
  // Elements of the view's dtype per partition row of its location (on-chip), or 0.
  int64_t rowElements() const;
  const char* kind() const { return kind_; }

  // Partitions [p0, p0 + n) of an on-chip view.
  View partitionRange(int64_t p0, int64_t n) const;
  // Elements start, start + step, ... (count of them) of dim d; a negative step walks the dim
  // backwards (NumPy's [start::step]), every element inside it. (On an rvalue, slice and at reuse
  // its dims: `v = std::move(v).slice(...)` allocates nothing, for the tracers' subscripts.)
  View slice(size_t d, int64_t start, int64_t count, int64_t step = 1) const&;
  View slice(size_t d, int64_t start, int64_t count, int64_t step = 1) &&;
  // Element i of dim d; the dim is dropped.
  View at(size_t d, int64_t i) const&;
  View at(size_t d, int64_t i) &&;
  // Dims d and d+1 as one dim (they must nest: step[d] == step[d+1] * num[d+1]).
  View merge(size_t d) const;
  // Every dim as one: unit dims dropped, the rest must nest ([1, 1] when none is left).
  View flatten() const;
  // Dims first..last (inclusive) as one: unit dims dropped, the rest must nest; the dim's step is
  // the innermost non-unit dim's (1 when every one is unit).
  View flatten(size_t first, size_t last) const;
  // The same elements in the same (row-major) order as a view of `shape`, moving none: NumPy's
  // no-copy reshape (each run of dims merged or split must nest; a unit dim of the result gets
  // step 1). Refused when the element count differs or the layout would need a copy.
  View reshape(const std::vector<int64_t>& shape) const;
  // Every dim but the last merged into one: the [rows, row elements] view of a [..., H] array.
  View rows() const;
  // Dim d split into [num / inner, inner].
  View split(size_t d, int64_t inner) const;
  // Dims reordered: result dim i is dim order[i].
  View permute(const std::vector<size_t>& order) const;
  // A new dim of n elements at position d repeating the same elements (step 0). On chip, a lone
  // unit free dim (a [P, 1] column) is replaced: [P, 1] broadcast to [P, n].
  View broadcast(size_t d, int64_t n) const;
  // The same bytes as `dtype` elements. Only the innermost dim changes size and it must be
  // contiguous and aligned; on chip the free dims are flattened first.
  View bitcast(DType dtype) const;
  // Unit dims dropped and contiguous dims merged (normaliseDims); the elements and their order
  // are unchanged. A view left without dims gets [1, 1].
  View normalised() const;

  // The operand enumerating the view's elements in row-major order of its dims: the partition
  // pair first on chip; a DRAM view's dims as they are ([1, 1] for rank 0).
  AccessPattern ap() const;
  // A DRAM view as a kernel-node operand pattern: dim `partitionDim`'s pair moved first.
  std::vector<APPair> partitionFirstPairs(int64_t partitionDim) const;
  std::string str() const;

 private:
  void sliceInPlace(size_t d, int64_t start, int64_t count, int64_t step);
  void atInPlace(size_t d, int64_t i);
  [[noreturn]] void fail(const char* op, const std::string& msg) const;
  void checkDim(size_t d, const char* op) const;
  const char* dimWord() const { return isOnChip() ? "free dim " : "dim "; }
  MemoryLocation* loc_ = nullptr;
  DType dtype_ = DType::float32;
  int64_t offset_ = 0;          // elements of dtype_ from the location's start (partition-major on chip)
  int64_t partitions_ = 0;      // on chip: the partition range's size; 0 for DRAM views
  std::vector<APPair> dims_;    // logical dims; on chip the free dims
  const char* kind_ = "View";  // the name errors give the view's class
};

}  // namespace bir
