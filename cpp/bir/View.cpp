#include "View.h"

#include "Error.h"
#include "Memory.h"

namespace bir {

std::string shapeText(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

namespace {
std::string locName(const MemoryLocation* loc) { return loc ? loc->name : std::string("?"); }
}  // namespace

View::View(MemoryLocation* loc, DType dtype, int64_t offset, std::vector<APPair> dims, const char* kind)
    : loc_(loc), dtype_(dtype), offset_(offset), dims_(std::move(dims)), kind_(kind) {}

View View::ofShape(MemoryLocation* loc, DType dtype, const std::vector<int64_t>& shape, const char* kind) {
  std::vector<APPair> dims(shape.size());
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    dims[d] = {step, shape[d]};
    step *= shape[d];
  }
  return View(loc, dtype, 0, std::move(dims), kind);
}

View View::ofOperand(const AccessPattern& ap, const std::string& what, const char* kind) {
  if (ap.isImmediate() || !ap.loc) throw BIRError(what + ": an immediate where a DRAM tensor is expected");
  if (!ap.loc->isDram())
    throw BIRError(what + ": tensor '" + ap.loc->name + "' is in " + std::string(enumName(ap.loc->type)) +
                   "; kernel operands are DRAM tensors");
  std::vector<APPair> dims(ap.pattern.begin(), ap.pattern.end());
  const auto& shape = ap.accessShape();
  if (!shape.empty()) {
    // createAP put the partition dim's pair first; move it back to its dim.
    if (shape.size() != dims.size())
      throw BIRError(what + ": access_shape " + shapeText(shape) + " has " + std::to_string(shape.size()) +
                     " dims but the pattern has " + std::to_string(dims.size()) + " pairs");
    const int64_t p = ap.partitionDim();
    if (p < 0 || p >= static_cast<int64_t>(dims.size()))
      throw BIRError(what + ": partition_dim " + std::to_string(p) + " is not a dim of access_shape " +
                     shapeText(shape));
    const APPair partition = dims.front();
    dims.erase(dims.begin());
    dims.insert(dims.begin() + p, partition);
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d].num != shape[d])
        throw BIRError(what + ": the pattern's dim " + std::to_string(d) + " has " + std::to_string(dims[d].num) +
                       " elements but access_shape " + shapeText(shape) + " says " + std::to_string(shape[d]));
  }
  return View(ap.loc, ap.dtype, ap.offset, std::move(dims), kind);
}

View View::onChip(MemoryLocation* loc, DType dtype, int64_t partitions, const std::vector<int64_t>& free,
                  const char* kind) {
  View v = ofShape(loc, dtype, free, kind);
  if (partitions < 1) v.fail("", std::to_string(partitions) + " partitions");
  v.partitions_ = partitions;
  if (v.dims_.empty()) v.dims_.push_back({1, 1});
  const int64_t perPartition = v.freeElements();
  if (loc && perPartition > v.rowElements())
    throw BIRError(std::string(kind) + ": " + std::to_string(perPartition) + " " + std::string(enumName(dtype)) +
                   " elements per partition do not fit the " + std::to_string(loc->bytes_per_partition) +
                   " bytes of '" + loc->name + "'");
  return v;
}

void View::fail(const char* op, const std::string& msg) const {
  throw BIRError(std::string(kind_) + (*op ? "::" : "") + op + ": " + msg);
}

void View::checkDim(size_t d, const char* op) const {
  if (d >= dims_.size()) {
    if (isOnChip()) fail(op, "free dim " + std::to_string(d) + " of " + str());
    fail(op, "dim " + std::to_string(d) + " of a rank-" + std::to_string(dims_.size()) + " view of '" +
                 locName(loc_) + "'");
  }
}

int64_t View::dim(size_t d) const {
  checkDim(d, "dim");
  return dims_[d].num;
}

std::vector<int64_t> View::shape() const {
  std::vector<int64_t> s;
  s.reserve(dims_.size());
  for (const auto& p : dims_) s.push_back(p.num);
  return s;
}

int64_t View::freeElements() const {
  int64_t n = 1;
  for (const auto& p : dims_) n *= p.num;
  return n;
}

int64_t View::rowElements() const {
  return isOnChip() && loc_ ? loc_->bytes_per_partition / dtypeSize(dtype_) : 0;
}

View View::partitionRange(int64_t p0, int64_t n) const {
  if (!isOnChip()) fail("rows", "a partition range of the DRAM view " + str());
  if (p0 < 0 || n < 1 || p0 + n > partitions_)
    fail("rows", "partitions [" + std::to_string(p0) + ", " + std::to_string(p0 + n) + ") of " + str());
  View v = *this;
  v.offset_ += p0 * rowElements();
  v.partitions_ = n;
  return v;
}

void View::sliceInPlace(size_t d, int64_t start, int64_t count, int64_t step) {
  checkDim(d, "slice");
  const int64_t last = start + (count - 1) * step, num = dims_[d].num;
  if (count < 1 || step == 0 || start < 0 || start >= num || last < 0 || last >= num)
    fail("slice", (step == 1 ? "[" + std::to_string(start) + ", " + std::to_string(start + count) + ")"
                             : std::to_string(count) + " elements every " + std::to_string(step) + " from " +
                                   std::to_string(start)) +
                      " of " + dimWord() + std::to_string(d) + " of " + str());
  offset_ += start * dims_[d].step;
  dims_[d] = {dims_[d].step * step, count};
}

View View::slice(size_t d, int64_t start, int64_t count, int64_t step) const& {
  View v = *this;
  v.sliceInPlace(d, start, count, step);
  return v;
}

View View::slice(size_t d, int64_t start, int64_t count, int64_t step) && {
  sliceInPlace(d, start, count, step);
  return std::move(*this);
}

void View::atInPlace(size_t d, int64_t i) {
  sliceInPlace(d, i, 1, 1);
  const int64_t step = dims_[d].step;
  dims_.erase(dims_.begin() + static_cast<std::ptrdiff_t>(d));
  if (isOnChip() && dims_.empty()) dims_.push_back({step, 1});  // a tile keeps one free dim
}

View View::at(size_t d, int64_t i) const& {
  View v = *this;
  v.atInPlace(d, i);
  return v;
}

View View::at(size_t d, int64_t i) && {
  atInPlace(d, i);
  return std::move(*this);
}

View View::merge(size_t d) const {
  checkDim(d + 1, "merge");
  const APPair &outer = dims_[d], &inner = dims_[d + 1];
  View v = *this;
  if (outer.num == 1) {
    v.dims_.erase(v.dims_.begin() + static_cast<std::ptrdiff_t>(d));
    return v;
  }
  if (inner.num != 1 && outer.step != inner.step * inner.num)
    fail("merge", "dims " + std::to_string(d) + " and " + std::to_string(d + 1) + " of " + str() + " do not nest");
  const int64_t step = inner.num == 1 ? outer.step : inner.step;
  v.dims_[d] = {step, outer.num * inner.num};
  v.dims_.erase(v.dims_.begin() + static_cast<std::ptrdiff_t>(d) + 1);
  return v;
}

View View::flatten() const {
  View v = *this;
  std::vector<APPair> kept;
  for (const auto& p : dims_)
    if (p.num != 1) kept.push_back(p);
  if (kept.empty()) {
    v.dims_ = {{1, 1}};
    return v;
  }
  for (size_t i = 0; i + 1 < kept.size(); ++i)
    if (kept[i].step != kept[i + 1].step * kept[i + 1].num)
      fail("flat", std::string("the ") + (isOnChip() ? "free " : "") + "dims of " + str() + " do not nest");
  v.dims_ = {{kept.back().step, freeElements()}};
  return v;
}

View View::flatten(size_t first, size_t last) const {
  checkDim(last, "flatten");
  if (first > last) fail("flatten", "dims " + std::to_string(first) + ".." + std::to_string(last) + " of " + str());
  const auto begin = dims_.begin() + static_cast<std::ptrdiff_t>(first);
  const auto end = dims_.begin() + static_cast<std::ptrdiff_t>(last) + 1;
  int64_t num = 1, step = 1;
  const APPair* inner = nullptr;  // the last non-unit dim seen
  for (auto it = begin; it != end; ++it) {
    if (it->num == 1) continue;
    if (inner && inner->step != it->step * it->num)
      fail("flatten", "dims " + std::to_string(first) + ".." + std::to_string(last) + " of " + str() + " do not nest");
    inner = &*it;
    num *= it->num;
    step = it->step;
  }
  View v = *this;
  v.dims_.erase(v.dims_.begin() + static_cast<std::ptrdiff_t>(first) + 1, v.dims_.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  v.dims_[first] = {step, num};
  return v;
}

View View::reshape(const std::vector<int64_t>& shape) const {
  int64_t count = 1;
  for (int64_t n : shape) count *= n;
  const auto refuse = [&]() {
    fail("reshape", str() + " as " + shapeText(shape) +
                        (count == freeElements() ? " needs a copy" : ": " + std::to_string(count) + " elements, not " +
                                                                        std::to_string(freeElements())));
  };
  if (count != freeElements()) refuse();
  std::vector<APPair> old;  // the non-unit dims
  for (const APPair& p : dims_)
    if (p.num != 1) old.push_back(p);
  std::vector<size_t> big;  // the result's non-unit dims
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) big.push_back(i);
  std::vector<APPair> out(shape.size());
  size_t oi = 0, ni = 0;
  // Match runs of old and new dims of equal element counts; each old run must nest, and the new
  // run's steps continue from its innermost dim's.
  while (oi < old.size() && ni < big.size()) {
    int64_t newCount = shape[big[ni]], oldCount = old[oi].num;
    size_t nj = ni + 1, oj = oi + 1;
    while (newCount != oldCount) {
      if (newCount < oldCount) {
        if (nj >= big.size()) refuse();
        newCount *= shape[big[nj++]];
      } else {
        if (oj >= old.size()) refuse();
        oldCount *= old[oj++].num;
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (old[k].step != old[k + 1].step * old[k + 1].num) refuse();
    int64_t step = old[oj - 1].step;
    for (size_t k = nj; k-- > ni;) {
      out[big[k]] = {step, shape[big[k]]};
      step *= shape[big[k]];
    }
    oi = oj;
    ni = nj;
  }
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1) out[i] = {1, 1};
  View v = *this;
  v.dims_ = std::move(out);
  return v;
}

View View::rows() const {
  if (dims_.empty()) fail("rows", "a rank-0 view of '" + locName(loc_) + "'");
  View v = *this;
  if (dims_.size() == 1) v.dims_ = {APPair{0, 1}, dims_.front()};  // one row
  while (v.dims_.size() > 2) v = v.merge(0);
  return v;
}

View View::split(size_t d, int64_t inner) const {
  checkDim(d, "split");
  if (inner < 1 || dims_[d].num % inner != 0)
    fail("split", dimWord() + std::to_string(d) + " of " + str() + " by " + std::to_string(inner));
  View v = *this;
  const APPair p = dims_[d];
  v.dims_[d] = {p.step * inner, p.num / inner};
  v.dims_.insert(v.dims_.begin() + static_cast<std::ptrdiff_t>(d) + 1, APPair{p.step, inner});
  return v;
}

View View::permute(const std::vector<size_t>& order) const {
  if (order.size() != dims_.size()) fail("permute", std::to_string(order.size()) + " dims for " + str());
  std::vector<bool> seen(dims_.size(), false);
  View v = *this;
  for (size_t i = 0; i < order.size(); ++i) {
    checkDim(order[i], "permute");
    if (seen[order[i]]) fail("permute", "dim " + std::to_string(order[i]) + " twice");
    seen[order[i]] = true;
    v.dims_[i] = dims_[order[i]];
  }
  return v;
}

View View::broadcast(size_t d, int64_t n) const {
  if (d > dims_.size() || n < 1) fail("broadcast", "dim " + std::to_string(d) + " of " + str());
  View v = *this;
  // An on-chip [P, 1] column's unit free dim is a placeholder; broadcasting replaces it.
  if (isOnChip() && v.dims_.size() == 1 && v.dims_[0].num == 1) v.dims_.clear(), d = 0;
  v.dims_.insert(v.dims_.begin() + static_cast<std::ptrdiff_t>(d), APPair{0, n});
  return v;
}

View View::bitcast(DType dtype) const {
  const int64_t from = dtypeSize(dtype_), to = dtypeSize(dtype);
  View v = isOnChip() ? flatten() : *this;
  v.dtype_ = dtype;
  if (from == to) return v;
  const bool contiguous = !v.dims_.empty() && v.dims_.back().step == 1;
  const int64_t bytes = v.dims_.empty() ? 0 : v.dims_.back().num * from;
  const bool rowsAligned = !isOnChip() || (loc_ && loc_->bytes_per_partition % to == 0);
  if (!contiguous || bytes % to != 0 || (offset_ * from) % to != 0 || !rowsAligned)
    fail("bitcast", str() + " as " + std::string(enumName(dtype)) +
                        (isOnChip() ? " needs one contiguous, aligned free dim"
                                    : " needs a contiguous, aligned innermost dim"));
  v.offset_ = offset_ * from / to;
  for (size_t d = 0; d + 1 < v.dims_.size(); ++d) {
    if ((v.dims_[d].step * from) % to != 0) fail("bitcast", "dim " + std::to_string(d) + " of " + str() + " is not aligned");
    v.dims_[d].step = v.dims_[d].step * from / to;
  }
  v.dims_.back() = {1, bytes / to};
  return v;
}

View View::normalised() const {
  View v = *this;
  std::vector<int64_t> num(dims_.size()), step(dims_.size());
  for (size_t d = 0; d < dims_.size(); ++d) num[d] = dims_[d].num, step[d] = dims_[d].step;
  const int n = normaliseDims(num.data(), step.data(), static_cast<int>(dims_.size()));
  v.dims_.resize(static_cast<size_t>(n));
  for (int d = 0; d < n; ++d) v.dims_[static_cast<size_t>(d)] = {step[static_cast<size_t>(d)], num[static_cast<size_t>(d)]};
  if (v.dims_.empty()) v.dims_.push_back({1, 1});
  return v;
}

AccessPattern View::ap() const {
  AccessPattern a;
  a.dtype = dtype_;
  a.loc = loc_;
  a.offset = offset_;
  if (isOnChip()) {
    a.pattern.reserve(dims_.size() + 1);
    a.pattern.push_back({rowElements(), partitions_});
    a.pattern.insert(a.pattern.end(), dims_.begin(), dims_.end());
  } else {
    a.pattern = dims_.empty() ? std::vector<APPair>{{1, 1}} : dims_;
  }
  return a;
}

std::vector<APPair> View::partitionFirstPairs(int64_t partitionDim) const {
  if (isOnChip()) fail("partitionFirstPairs", "the on-chip view " + str() + " has its partition pair");
  if (partitionDim < 0 || partitionDim >= static_cast<int64_t>(dims_.size()))
    fail("partitionFirstPairs", "partition_dim " + std::to_string(partitionDim) + " of " + str());
  std::vector<APPair> pairs;
  pairs.reserve(dims_.size());
  pairs.push_back(dims_[static_cast<size_t>(partitionDim)]);
  for (size_t d = 0; d < dims_.size(); ++d)
    if (static_cast<int64_t>(d) != partitionDim) pairs.push_back(dims_[d]);
  return pairs;
}

std::string View::str() const {
  if (isOnChip()) {
    std::string s = locName(loc_) + "[" + std::to_string(partitions_);
    for (const auto& p : dims_) s += ", " + std::to_string(p.num);
    return s + "] " + std::string(enumName(dtype_));
  }
  std::string s = locName(loc_) + "@" + std::to_string(offset_) + "[";
  for (size_t i = 0; i < dims_.size(); ++i)
    s += (i ? ", " : "") + std::string("[") + std::to_string(dims_[i].step) + "," + std::to_string(dims_[i].num) + "]";
  return s + "] " + std::string(enumName(dtype_));
}

}  // namespace bir
