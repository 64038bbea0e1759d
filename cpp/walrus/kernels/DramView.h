// DramView: a kernel-node operand in DRAM, addressed through the operand's own access pattern.
//
// An IT54 operand is an access pattern over a DRAM tensor (seed 000 section 6): a whole tensor
// (Seq / Opaque: one [stride, dim] pair per tensor dim) or a sub-tensor or tile (AP: `offset`
// plus one pair per accessed dim, the partition dim's pair first, the others in dim order, and
// `access_shape` in dim order). A DramView undoes the partition-first ordering and presents the
// operand as a logical N-d array: dim d has `num` elements, `step` elements apart, from `offset`.
// Leaves slice and reshape views and hand them to DMAs; they never assume a contiguous tensor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bir/AccessPattern.h"

namespace walrus::kernels {

class DramView {
 public:
  DramView() = default;
  DramView(bir::MemoryLocation* loc, bir::DType dtype, int64_t offset, std::vector<bir::APPair> dims);

  // The logical view of a kernel operand (`what` names it in errors, e.g. "ins[2] 'gate_w'").
  static DramView ofOperand(const bir::AccessPattern& ap, const std::string& what);

  bir::MemoryLocation* location() const { return loc_; }
  bir::DType dtype() const { return dtype_; }
  int64_t offset() const { return offset_; }
  size_t rank() const { return dims_.size(); }
  int64_t dim(size_t d) const;
  std::vector<int64_t> shape() const;
  int64_t numElements() const;
  const std::vector<bir::APPair>& dims() const { return dims_; }

  // Elements [start, start + count) of dim d.
  DramView slice(size_t d, int64_t start, int64_t count) const;
  // Element i of dim d; the dim is dropped.
  DramView at(size_t d, int64_t i) const;
  // Dims d and d+1 as one dim (they must be nested: step[d] == step[d+1] * num[d+1]).
  DramView merge(size_t d) const;
  // Every dim but the last merged into one: the [rows, row elements] view of a [..., H] operand
  // (its leading dims must nest).
  DramView rows() const;
  // Dim d split into [num / inner, inner].
  DramView split(size_t d, int64_t inner) const;
  // Dims reordered: result dim i is dim order[i].
  DramView permute(const std::vector<size_t>& order) const;
  // A new dim of n elements at position d that repeats the same elements (step 0).
  DramView broadcast(size_t d, int64_t n) const;
  // The same bytes as `dtype` elements; only the innermost dim may change size, and it must be
  // contiguous (the quantized rows' fp32 scales live in fp8 rows).
  DramView bitcast(bir::DType dtype) const;

  // The access pattern enumerating the view's elements in row-major order of its dims.
  bir::AccessPattern ap() const;
  std::string str() const;

 private:
  void checkDim(size_t d, const char* op) const;
  bir::MemoryLocation* loc_ = nullptr;
  bir::DType dtype_ = bir::DType::float32;
  int64_t offset_ = 0;
  std::vector<bir::APPair> dims_;
};

}  // namespace walrus::kernels
