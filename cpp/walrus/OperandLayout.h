// How a kernel-node operand places a kernel's DRAM tensor on a host tensor, and the rebasing of
// the kernel's access patterns through it.
//
// The operand is an access pattern over the host tensor: its k-th element (in enumeration order)
// is the kernel tensor's flat element k. Written as mixed-radix digits, flat index e has digits
// d_i (sizes n_i, outermost first) and sits at host element offset + sum_i d_i * stride_i. After
// dropping size-1 dims and merging dims that are contiguous with each other, a whole-tensor or
// contiguous sub-tensor operand is a single dim of stride 1, a strided sub-tensor (a column block,
// one batch of a 3-D tensor) has several.
//
// A kernel pattern [offset; (s_m, n_m)...] over the kernel tensor rebases to one pattern over the
// host tensor when every pair steps within one operand dim without carrying into the next: pair m
// lands in the dim i whose digit weight w_i divides s_m with |s_m| / w_i < n_i, becomes
// (s_m / w_i * stride_i, n_m), and for every dim the offset's digit plus the pairs' excursions stay
// inside [0, n_i). Every contiguous operand satisfies this for every in-bounds kernel pattern;
// anything else is refused, naming the pattern.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bir/AccessPattern.h"

namespace walrus {

class OperandLayout {
 public:
  // Throws walrus::KernelError when the operand's element count overflows.
  explicit OperandLayout(const bir::AccessPattern& operand);

  int64_t elements() const { return elements_; }
  bool contiguous() const { return sizes_.size() == 1 && strides_[0] == 1; }

  // `kernelAp` (over the bound kernel tensor) as an access pattern over the operand's host tensor;
  // nullopt, with the reason in *why, when it is not a single affine pattern there.
  std::optional<bir::AccessPattern> rebase(const bir::AccessPattern& kernelAp, std::string* why) const;

 private:
  bir::MemoryLocation* loc_;  // the host tensor
  int64_t offset_;
  int64_t elements_ = 1;
  std::vector<int64_t> sizes_, strides_, weights_;  // canonical dims, outermost first
};

}  // namespace walrus
