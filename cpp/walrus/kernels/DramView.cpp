#include "walrus/kernels/DramView.h"

#include "bir/Error.h"
#include "bir/Memory.h"

namespace walrus::kernels {

using bir::APPair;

namespace {
std::string shapeText(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}
}  // namespace

DramView::DramView(bir::MemoryLocation* loc, bir::DType dtype, int64_t offset, std::vector<APPair> dims)
    : loc_(loc), dtype_(dtype), offset_(offset), dims_(std::move(dims)) {}

DramView DramView::ofOperand(const bir::AccessPattern& ap, const std::string& what) {
  if (ap.isImmediate() || !ap.loc) throw KernelError(what + ": an immediate where a DRAM tensor is expected");
  if (!ap.loc->isDram())
    throw KernelError(what + ": tensor '" + ap.loc->name + "' is in " + std::string(bir::enumName(ap.loc->type)) +
                      "; kernel operands are DRAM tensors");
  std::vector<APPair> dims = ap.pattern;
  const auto& shape = ap.access_shape;
  if (!shape.empty()) {
    // createAP put the partition dim's pair first; move it back to its dim.
    if (shape.size() != dims.size())
      throw KernelError(what + ": access_shape " + shapeText(shape) + " has " + std::to_string(shape.size()) +
                        " dims but the pattern has " + std::to_string(dims.size()) + " pairs");
    const int64_t p = ap.partition_dim;
    if (p < 0 || p >= static_cast<int64_t>(dims.size()))
      throw KernelError(what + ": partition_dim " + std::to_string(p) + " is not a dim of access_shape " +
                        shapeText(shape));
    const APPair partition = dims.front();
    dims.erase(dims.begin());
    dims.insert(dims.begin() + p, partition);
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d].num != shape[d])
        throw KernelError(what + ": the pattern's dim " + std::to_string(d) + " has " + std::to_string(dims[d].num) +
                          " elements but access_shape " + shapeText(shape) + " says " + std::to_string(shape[d]));
  }
  return DramView(ap.loc, ap.dtype, ap.offset, std::move(dims));
}

void DramView::checkDim(size_t d, const char* op) const {
  if (d >= dims_.size())
    throw KernelError(std::string("DramView::") + op + ": dim " + std::to_string(d) + " of a rank-" +
                      std::to_string(dims_.size()) + " view of '" + (loc_ ? loc_->name : "?") + "'");
}

int64_t DramView::dim(size_t d) const {
  checkDim(d, "dim");
  return dims_[d].num;
}

std::vector<int64_t> DramView::shape() const {
  std::vector<int64_t> s;
  for (const auto& p : dims_) s.push_back(p.num);
  return s;
}

int64_t DramView::numElements() const {
  int64_t n = 1;
  for (const auto& p : dims_) n *= p.num;
  return n;
}

DramView DramView::slice(size_t d, int64_t start, int64_t count) const {
  checkDim(d, "slice");
  if (start < 0 || count < 1 || start + count > dims_[d].num)
    throw KernelError("DramView::slice: [" + std::to_string(start) + ", " + std::to_string(start + count) +
                      ") of dim " + std::to_string(d) + " of " + str());
  DramView v = *this;
  v.offset_ += start * dims_[d].step;
  v.dims_[d].num = count;
  return v;
}

DramView DramView::at(size_t d, int64_t i) const {
  DramView v = slice(d, i, 1);
  v.dims_.erase(v.dims_.begin() + static_cast<std::ptrdiff_t>(d));
  return v;
}

DramView DramView::merge(size_t d) const {
  checkDim(d + 1, "merge");
  const APPair &outer = dims_[d], &inner = dims_[d + 1];
  DramView v = *this;
  if (outer.num == 1) {
    v.dims_.erase(v.dims_.begin() + static_cast<std::ptrdiff_t>(d));
    return v;
  }
  if (inner.num != 1 && outer.step != inner.step * inner.num)
    throw KernelError("DramView::merge: dims " + std::to_string(d) + " and " + std::to_string(d + 1) + " of " +
                      str() + " do not nest");
  const int64_t step = inner.num == 1 ? outer.step : inner.step;
  v.dims_[d] = {step, outer.num * inner.num};
  v.dims_.erase(v.dims_.begin() + static_cast<std::ptrdiff_t>(d) + 1);
  return v;
}

DramView DramView::rows() const {
  if (dims_.empty()) throw KernelError("DramView::rows: a rank-0 view of '" + (loc_ ? loc_->name : std::string("?")) + "'");
  DramView v = *this;
  if (v.dims_.size() == 1) v.dims_.insert(v.dims_.begin(), APPair{0, 1});
  while (v.dims_.size() > 2) v = v.merge(0);
  return v;
}

DramView DramView::split(size_t d, int64_t inner) const {
  checkDim(d, "split");
  if (inner < 1 || dims_[d].num % inner != 0)
    throw KernelError("DramView::split: dim " + std::to_string(d) + " of " + str() + " by " + std::to_string(inner));
  DramView v = *this;
  const APPair p = dims_[d];
  v.dims_[d] = {p.step * inner, p.num / inner};
  v.dims_.insert(v.dims_.begin() + static_cast<std::ptrdiff_t>(d) + 1, APPair{p.step, inner});
  return v;
}

DramView DramView::permute(const std::vector<size_t>& order) const {
  if (order.size() != dims_.size()) throw KernelError("DramView::permute: " + std::to_string(order.size()) + " dims for " + str());
  std::vector<bool> seen(dims_.size(), false);
  DramView v = *this;
  for (size_t i = 0; i < order.size(); ++i) {
    checkDim(order[i], "permute");
    if (seen[order[i]]) throw KernelError("DramView::permute: dim " + std::to_string(order[i]) + " twice");
    seen[order[i]] = true;
    v.dims_[i] = dims_[order[i]];
  }
  return v;
}

DramView DramView::broadcast(size_t d, int64_t n) const {
  if (d > dims_.size() || n < 1) throw KernelError("DramView::broadcast: dim " + std::to_string(d) + " of " + str());
  DramView v = *this;
  v.dims_.insert(v.dims_.begin() + static_cast<std::ptrdiff_t>(d), APPair{0, n});
  return v;
}

DramView DramView::bitcast(bir::DType dtype) const {
  const int64_t from = bir::dtypeSize(dtype_), to = bir::dtypeSize(dtype);
  if (from == to) {
    DramView v = *this;
    v.dtype_ = dtype;
    return v;
  }
  const bool contiguous = !dims_.empty() && dims_.back().step == 1;
  const int64_t bytes = dims_.empty() ? 0 : dims_.back().num * from;
  if (!contiguous || bytes % to != 0 || (offset_ * from) % to != 0)
    throw KernelError("DramView::bitcast: " + str() + " as " + std::string(bir::enumName(dtype)) +
                      " needs a contiguous, aligned innermost dim");
  DramView v = *this;
  v.dtype_ = dtype;
  v.offset_ = offset_ * from / to;
  for (size_t d = 0; d + 1 < v.dims_.size(); ++d) {
    if ((v.dims_[d].step * from) % to != 0)
      throw KernelError("DramView::bitcast: dim " + std::to_string(d) + " of " + str() + " is not aligned");
    v.dims_[d].step = v.dims_[d].step * from / to;
  }
  v.dims_.back() = {1, bytes / to};
  return v;
}

bir::AccessPattern DramView::ap() const {
  bir::AccessPattern a;
  a.dtype = dtype_;
  a.loc = loc_;
  a.offset = offset_;
  a.pattern = dims_.empty() ? std::vector<APPair>{{1, 1}} : dims_;
  return a;
}

std::string DramView::str() const {
  std::string s = (loc_ ? loc_->name : std::string("?")) + "@" + std::to_string(offset_) + "[";
  for (size_t i = 0; i < dims_.size(); ++i)
    s += (i ? ", " : "") + std::string("[") + std::to_string(dims_[i].step) + "," + std::to_string(dims_[i].num) + "]";
  return s + "] " + std::string(bir::enumName(dtype_));
}

}  // namespace walrus::kernels
