#include "Hazards.h"

namespace sim {

void RangeTimes::reset(int64_t size) {
  size_ = std::max<int64_t>(size, 1);
  starts_.assign(1, 0);
  times_.assign(1, Times{});
  starts_.reserve(256);
  times_.reserve(256);
}

void RangeTimes::merge(size_t first, size_t last) {
  // Merge equal neighbours in [first - 1, last + 1], in place.
  const size_t lo = first > 0 ? first - 1 : 0;
  const size_t hi = std::min(last + 1, starts_.size() - 1);
  size_t out = lo;
  for (size_t i = lo + 1; i <= hi; ++i) {
    if (times_[i] == times_[out]) continue;
    ++out;
    starts_[out] = starts_[i];
    times_[out] = times_[i];
  }
  if (hi > out) {
    starts_.erase(starts_.begin() + static_cast<std::ptrdiff_t>(out) + 1,
                  starts_.begin() + static_cast<std::ptrdiff_t>(hi) + 1);
    times_.erase(times_.begin() + static_cast<std::ptrdiff_t>(out) + 1,
                 times_.begin() + static_cast<std::ptrdiff_t>(hi) + 1);
  }
}

HazardTracker::HazardTracker(int64_t sbufBytesPerPartition, int64_t psumBytesPerPartition,
                             const std::vector<TensorSpec>& tensors) {
  sizes_.push_back(sbufBytesPerPartition);
  sizes_.push_back(psumBytesPerPartition);
  for (const auto& t : tensors) sizes_.push_back(t.bytes);
  reset();
}

void HazardTracker::reset() {
  mems_.resize(sizes_.size());
  for (size_t i = 0; i < sizes_.size(); ++i) mems_[i].reset(sizes_[i]);
}

}  // namespace sim
