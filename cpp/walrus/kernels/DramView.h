// DramView: a kernel-node operand in DRAM, addressed through the operand's own access pattern.
//
// An IT54 operand is an access pattern over a DRAM tensor (seed 000 section 6): a whole tensor
// (Seq / Opaque: one [stride, dim] pair per tensor dim) or a sub-tensor or tile (AP: `offset`
// plus one pair per accessed dim, the partition dim's pair first, the others in dim order, and
// `access_shape` in dim order). A DramView undoes the partition-first ordering and presents the
// operand as a logical N-d array: dim d has `num` elements, `step` elements apart, from `offset`.
// Leaves slice and reshape views and hand them to DMAs; they never assume a contiguous tensor.
//
// The view algebra is bir::View's (cpp/bir/View.h); DramView only keeps the type apart from
// on-chip Tiles, so a leaf cannot hand one where the other is meant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bir/View.h"

namespace walrus::kernels {

class DramView : public bir::View {
 public:
  DramView() : View(nullptr, bir::DType::float32, 0, {}, "DramView") {}
  DramView(bir::MemoryLocation* loc, bir::DType dtype, int64_t offset, std::vector<bir::APPair> dims)
      : View(loc, dtype, offset, std::move(dims), "DramView") {}

  // The logical view of a kernel operand (`what` names it in errors, e.g. "ins[2] 'gate_w'").
  static DramView ofOperand(const bir::AccessPattern& ap, const std::string& what) {
    return DramView(View::ofOperand(ap, what, "DramView"));
  }

  DramView slice(size_t d, int64_t start, int64_t count) const { return DramView(View::slice(d, start, count)); }
  DramView at(size_t d, int64_t i) const { return DramView(View::at(d, i)); }
  DramView merge(size_t d) const { return DramView(View::merge(d)); }
  DramView rows() const { return DramView(View::rows()); }
  DramView split(size_t d, int64_t inner) const { return DramView(View::split(d, inner)); }
  DramView permute(const std::vector<size_t>& order) const { return DramView(View::permute(order)); }
  DramView broadcast(size_t d, int64_t n) const { return DramView(View::broadcast(d, n)); }
  DramView bitcast(bir::DType dtype) const { return DramView(View::bitcast(dtype)); }

 private:
  explicit DramView(View v) : View(std::move(v)) {}
};

}  // namespace walrus::kernels
