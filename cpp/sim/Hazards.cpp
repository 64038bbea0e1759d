#include "Hazards.h"

#include <algorithm>

namespace sim {

bool RangeTimes::Times::operator==(const Times& o) const {
  for (int q = 0; q < 4; ++q)
    if (w[q] != o.w[q] || r[q] != o.r[q]) return false;
  return true;
}

void RangeTimes::reset(int64_t size) {
  size_ = std::max<int64_t>(size, 1);
  starts_.assign(1, 0);
  times_.assign(1, Times{{0, 0, 0, 0}, {0, 0, 0, 0}});
  starts_.reserve(256);
  times_.reserve(256);
}

size_t RangeTimes::find(int64_t x) const {
  // Last start <= x.
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), x);
  return static_cast<size_t>(it - starts_.begin()) - 1;
}

size_t RangeTimes::split(int64_t x) {
  const size_t i = find(x);
  if (starts_[i] == x) return i;
  starts_.insert(starts_.begin() + static_cast<std::ptrdiff_t>(i) + 1, x);
  times_.insert(times_.begin() + static_cast<std::ptrdiff_t>(i) + 1, times_[i]);
  return i + 1;
}

double RangeTimes::readReady(int64_t lo, int64_t hi, uint8_t quadrants) const {
  double t = 0;
  for (size_t i = find(lo); i < starts_.size() && starts_[i] < hi; ++i)
    for (int q = 0; q < 4; ++q)
      if (quadrants >> q & 1) t = std::max(t, times_[i].w[q]);
  return t;
}

double RangeTimes::writeReady(int64_t lo, int64_t hi, uint8_t quadrants) const {
  double t = 0;
  for (size_t i = find(lo); i < starts_.size() && starts_[i] < hi; ++i)
    for (int q = 0; q < 4; ++q)
      if (quadrants >> q & 1) t = std::max({t, times_[i].w[q], times_[i].r[q]});
  return t;
}

void RangeTimes::mergeAround(size_t first, size_t last) {
  // Merge equal neighbours in [first - 1, last + 1].
  size_t lo = first > 0 ? first - 1 : 0;
  size_t hi = std::min(last + 1, starts_.size() - 1);
  size_t out = lo;
  for (size_t i = lo + 1; i <= hi; ++i) {
    if (times_[i] == times_[out]) continue;
    ++out;
    starts_[out] = starts_[i];
    times_[out] = times_[i];
  }
  const size_t removed = hi - out;
  if (removed) {
    starts_.erase(starts_.begin() + static_cast<std::ptrdiff_t>(out) + 1,
                  starts_.begin() + static_cast<std::ptrdiff_t>(hi) + 1);
    times_.erase(times_.begin() + static_cast<std::ptrdiff_t>(out) + 1,
                 times_.begin() + static_cast<std::ptrdiff_t>(hi) + 1);
  }
}

void RangeTimes::markRead(int64_t lo, int64_t hi, uint8_t quadrants, double t) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min(hi, size_);
  if (lo >= hi) return;
  const size_t first = split(lo);
  const size_t end = hi < size_ ? split(hi) : starts_.size();
  for (size_t i = first; i < end; ++i)
    for (int q = 0; q < 4; ++q)
      if (quadrants >> q & 1) times_[i].r[q] = std::max(times_[i].r[q], t);
  mergeAround(first, end - 1);
}

void RangeTimes::markWrite(int64_t lo, int64_t hi, uint8_t quadrants, double t) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min(hi, size_);
  if (lo >= hi) return;
  const size_t first = split(lo);
  const size_t end = hi < size_ ? split(hi) : starts_.size();
  // Every overlapped read and write finished before this write (it waited for them), so one time
  // stands for both from now on.
  for (size_t i = first; i < end; ++i)
    for (int q = 0; q < 4; ++q)
      if (quadrants >> q & 1) times_[i].w[q] = times_[i].r[q] = t;
  mergeAround(first, end - 1);
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

double HazardTracker::ready(const Access& a) const {
  const RangeTimes& m = mems_[a.mem];
  return a.write ? m.writeReady(a.lo, a.hi, a.quadrants) : m.readReady(a.lo, a.hi, a.quadrants);
}

void HazardTracker::mark(const Access& a, double t) {
  RangeTimes& m = mems_[a.mem];
  if (a.write)
    m.markWrite(a.lo, a.hi, a.quadrants, t);
  else
    m.markRead(a.lo, a.hi, a.quadrants, t);
}

}  // namespace sim
