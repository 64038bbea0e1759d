#include "walrus/kernels/Tile.h"

#include "bir/Error.h"
#include "bir/Memory.h"

namespace walrus::kernels {

using bir::APPair;

Tile::Tile(bir::MemoryLocation* loc, bir::DType dtype, int64_t partitions, const std::vector<int64_t>& free)
    : loc_(loc), dtype_(dtype), partitions_(partitions) {
  int64_t step = 1;
  free_.resize(free.size());
  for (size_t i = free.size(); i-- > 0;) {
    free_[i] = {step, free[i]};
    step *= free[i];
  }
  if (free_.empty()) free_.push_back({1, 1});
  if (loc_ && step > rowElements())
    throw KernelError("Tile: " + std::to_string(step) + " " + std::string(bir::enumName(dtype)) +
                      " elements per partition do not fit the " + std::to_string(loc_->bytes_per_partition) +
                      " bytes of '" + loc_->name + "'");
}

bool Tile::inPsum() const { return loc_ && loc_->type == bir::MemoryType::PSUM; }

void Tile::checkDim(size_t d, const char* op) const {
  if (d >= free_.size())
    throw KernelError(std::string("Tile::") + op + ": free dim " + std::to_string(d) + " of " + str());
}

int64_t Tile::dim(size_t d) const {
  checkDim(d, "dim");
  return free_[d].num;
}

std::vector<int64_t> Tile::freeShape() const {
  std::vector<int64_t> s;
  for (const auto& p : free_) s.push_back(p.num);
  return s;
}

int64_t Tile::freeSize() const {
  int64_t n = 1;
  for (const auto& p : free_) n *= p.num;
  return n;
}

int64_t Tile::rowElements() const { return loc_ ? loc_->bytes_per_partition / bir::dtypeSize(dtype_) : 0; }

Tile Tile::rows(int64_t p0, int64_t n) const {
  if (p0 < 0 || n < 1 || p0 + n > partitions_)
    throw KernelError("Tile::rows: partitions [" + std::to_string(p0) + ", " + std::to_string(p0 + n) + ") of " + str());
  Tile t = *this;
  t.offset_ += p0 * rowElements();
  t.partitions_ = n;
  return t;
}

Tile Tile::slice(size_t d, int64_t start, int64_t n) const {
  checkDim(d, "slice");
  if (start < 0 || n < 1 || start + n > free_[d].num)
    throw KernelError("Tile::slice: [" + std::to_string(start) + ", " + std::to_string(start + n) + ") of free dim " +
                      std::to_string(d) + " of " + str());
  Tile t = *this;
  t.offset_ += start * free_[d].step;
  t.free_[d].num = n;
  return t;
}

Tile Tile::at(size_t d, int64_t i) const {
  Tile t = slice(d, i, 1);
  if (t.free_.size() > 1) t.free_.erase(t.free_.begin() + static_cast<std::ptrdiff_t>(d));
  return t;
}

Tile Tile::flat() const {
  Tile t = *this;
  std::vector<APPair> kept;
  for (const auto& p : free_)
    if (p.num != 1) kept.push_back(p);
  if (kept.empty()) {
    t.free_ = {{1, 1}};
    return t;
  }
  for (size_t i = 0; i + 1 < kept.size(); ++i)
    if (kept[i].step != kept[i + 1].step * kept[i + 1].num)
      throw KernelError("Tile::flat: the free dims of " + str() + " do not nest");
  t.free_ = {{kept.back().step, freeSize()}};
  return t;
}

Tile Tile::split(size_t d, int64_t inner) const {
  checkDim(d, "split");
  if (inner < 1 || free_[d].num % inner != 0)
    throw KernelError("Tile::split: free dim " + std::to_string(d) + " of " + str() + " by " + std::to_string(inner));
  Tile t = *this;
  const APPair p = free_[d];
  t.free_[d] = {p.step * inner, p.num / inner};
  t.free_.insert(t.free_.begin() + static_cast<std::ptrdiff_t>(d) + 1, APPair{p.step, inner});
  return t;
}

Tile Tile::permute(const std::vector<size_t>& order) const {
  if (order.size() != free_.size()) throw KernelError("Tile::permute: " + std::to_string(order.size()) + " dims for " + str());
  std::vector<bool> seen(free_.size(), false);
  Tile t = *this;
  for (size_t i = 0; i < order.size(); ++i) {
    checkDim(order[i], "permute");
    if (seen[order[i]]) throw KernelError("Tile::permute: dim " + std::to_string(order[i]) + " twice");
    seen[order[i]] = true;
    t.free_[i] = free_[order[i]];
  }
  return t;
}

Tile Tile::broadcast(size_t d, int64_t n) const {
  if (d > free_.size() || n < 1) throw KernelError("Tile::broadcast: dim " + std::to_string(d) + " of " + str());
  Tile t = *this;
  // A [P, 1] column has the placeholder dim {1, 1}; broadcasting replaces it.
  if (t.free_.size() == 1 && t.free_[0].num == 1) t.free_.clear(), d = 0;
  t.free_.insert(t.free_.begin() + static_cast<std::ptrdiff_t>(d), APPair{0, n});
  return t;
}

Tile Tile::bitcast(bir::DType dtype) const {
  const int64_t from = bir::dtypeSize(dtype_), to = bir::dtypeSize(dtype);
  Tile t = flat();
  if (from == to) {
    t.dtype_ = dtype;
    return t;
  }
  const int64_t bytes = t.freeSize() * from;
  if (t.free_[0].step != 1 || bytes % to != 0 || (offset_ * from) % to != 0 || loc_->bytes_per_partition % to != 0)
    throw KernelError("Tile::bitcast: " + str() + " as " + std::string(bir::enumName(dtype)) +
                      " needs one contiguous, aligned free dim");
  t.dtype_ = dtype;
  t.offset_ = offset_ * from / to;
  t.free_ = {{1, bytes / to}};
  return t;
}

bir::AccessPattern Tile::ap() const {
  bir::AccessPattern a;
  a.dtype = dtype_;
  a.loc = loc_;
  a.offset = offset_;
  a.pattern.reserve(free_.size() + 1);
  a.pattern.push_back({rowElements(), partitions_});
  a.pattern.insert(a.pattern.end(), free_.begin(), free_.end());
  return a;
}

std::string Tile::str() const {
  std::string s = (loc_ ? loc_->name : std::string("?")) + "[" + std::to_string(partitions_);
  for (const auto& p : free_) s += ", " + std::to_string(p.num);
  return s + "] " + std::string(bir::enumName(dtype_));
}

}  // namespace walrus::kernels
