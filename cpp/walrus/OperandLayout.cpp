#include "walrus/OperandLayout.h"

#include <cstdlib>

#include "bir/Error.h"
#include "bir/View.h"

namespace walrus {

OperandLayout::OperandLayout(const bir::AccessPattern& operand)
    : loc_(operand.loc), offset_(operand.offset) {
  for (const bir::APPair& p : operand.pattern) {
    if (__builtin_mul_overflow(elements_, p.num, &elements_))
      throw KernelError("operand of " + std::to_string(operand.pattern.size()) +
                        " dims has too many elements");
    sizes_.push_back(p.num);
    strides_.push_back(p.step);
  }
  const int dims = bir::normaliseDims(sizes_.data(), strides_.data(), static_cast<int>(sizes_.size()));
  sizes_.resize(static_cast<size_t>(dims));
  strides_.resize(static_cast<size_t>(dims));
  if (sizes_.empty()) {
    sizes_ = {1};
    strides_ = {1};
  }
  weights_.assign(sizes_.size(), 1);
  for (size_t i = sizes_.size() - 1; i-- > 0;) weights_[i] = weights_[i + 1] * sizes_[i + 1];
}

std::optional<bir::AccessPattern> OperandLayout::rebase(const bir::AccessPattern& kap,
                                                        std::string* why) const {
  const size_t dims = sizes_.size();
  if (kap.offset < 0 || kap.offset >= elements_) {
    *why = "its offset " + std::to_string(kap.offset) + " is outside the " +
           std::to_string(elements_) + " elements of the operand";
    return std::nullopt;
  }
  std::vector<int64_t> digit(dims), lo(dims, 0), hi(dims, 0);
  bir::AccessPattern out = kap;
  out.loc = loc_;
  out.offset = offset_;
  for (size_t i = 0; i < dims; ++i) {
    digit[i] = kap.offset / weights_[i] % sizes_[i];
    out.offset += digit[i] * strides_[i];
  }
  for (size_t m = 0; m < kap.pattern.size(); ++m) {
    const int64_t s = kap.pattern[m].step, n = kap.pattern[m].num;
    const int64_t mag = std::llabs(s);
    size_t i = 0;
    while (i < dims && !(mag % weights_[i] == 0 && mag / weights_[i] < sizes_[i])) ++i;
    if (i == dims) {
      if (n == 1) {  // a pair that never steps: its step is immaterial
        out.pattern[m].step = 0;
        continue;
      }
      *why = "its pair [" + std::to_string(s) + ", " + std::to_string(n) +
             "] steps across the operand's strided dims";
      return std::nullopt;
    }
    const int64_t t = s / weights_[i];
    out.pattern[m].step = t * strides_[i];
    const int64_t excursion = (n - 1) * t;
    (excursion < 0 ? lo[i] : hi[i]) += excursion;
  }
  for (size_t i = 0; i < dims; ++i)
    if (digit[i] + lo[i] < 0 || digit[i] + hi[i] >= sizes_[i]) {
      *why = "it crosses a boundary of the operand's dim " + std::to_string(i) + " (size " +
             std::to_string(sizes_[i]) + ", host stride " + std::to_string(strides_[i]) + ")";
      return std::nullopt;
    }
  return out;
}

}  // namespace walrus
