#include "Operand.h"

#include <algorithm>

#include "bir/Error.h"
#include "bir/Memory.h"
#include "bir/View.h"

namespace sim {
bool footprintsOverlap(const Operand& a, const Operand& b) {
  if (a.isImm() || b.isImm() || a.space != b.space || a.tensor != b.tensor) return false;
  if (a.onChip() && (a.p0 + a.lanes <= b.p0 || b.p0 + b.lanes <= a.p0)) return false;
  return a.lo < b.hi && b.lo < a.hi;
}

void decodeDims(const bir::AccessPattern& ap, Operand& op) {
  if (ap.isImmediate()) return;
  const int64_t es = op.esize;
  // Free pairs, then merged.
  int64_t num[64], stride[64];
  const int nIn = static_cast<int>(ap.pattern.size()) - 1;
  if (nIn > 64) throw SimulationError("access pattern has " + std::to_string(nIn) + " free dims");
  for (int i = 0; i < nIn; ++i) {
    num[i] = ap.pattern[static_cast<size_t>(i) + 1].num;
    stride[i] = ap.pattern[static_cast<size_t>(i) + 1].step * es;
  }
  const int n = bir::normaliseDims(num, stride, nIn);
  if (n > kMaxFreeDims)
    throw SimulationError("access pattern has " + std::to_string(n) +
                          " free dims after merging contiguous ones; the simulator takes at most " +
                          std::to_string(kMaxFreeDims));
  op.nfree = static_cast<uint8_t>(n);
  for (int i = 0; i < n; ++i) {
    op.num[i] = num[i];
    op.stride[i] = stride[i];
  }
}

void decodeOperand(const bir::AccessPattern& ap, int32_t tensorIndex, Operand& op) {
  decodeFootprint(ap, bir::patternShape(ap), tensorIndex, op);
  decodeDims(ap, op);
}

Operand contiguousOperand(bir::DType dtype, int64_t n) {
  Operand op;
  op.space = Space::DRAM;
  op.dtype = dtype;
  op.esize = static_cast<uint8_t>(bir::dtypeSize(dtype));
  op.lanes = 1;
  op.nfree = 1;
  op.num[0] = n;
  op.stride[0] = op.esize;
  op.freeElems = n;
  op.hi = n * op.esize;
  return op;
}

int64_t Operand::freeOffset(int64_t k) const {
  int64_t off = 0;
  for (int i = nfree - 1; i >= 0; --i) {
    off += (k % num[i]) * stride[i];
    k /= num[i];
  }
  return off;
}

// ---- RunCursor ----

RunCursor::RunCursor(const Operand& op, uint8_t* lanePtr) {
  nd_ = op.nfree;
  for (int i = 0; i < nd_; ++i) {
    num_[i] = op.num[i];
    stride_[i] = op.stride[i];
  }
  if (nd_ == 0) {
    nd_ = 1;
    num_[0] = 1;
    stride_[0] = op.esize;
  }
  origin_ = lanePtr;
  left_ = op.isImm() ? 0 : op.freeElems;
  startRun();
}

RunCursor RunCursor::whole(const Operand& op, uint8_t* ptr, int64_t dim0Stride) {
  RunCursor c;
  int64_t num[kMaxFreeDims + 1], stride[kMaxFreeDims + 1];
  num[0] = op.lanes;
  stride[0] = dim0Stride;
  for (int i = 0; i < op.nfree; ++i) {
    num[i + 1] = op.num[i];
    stride[i + 1] = op.stride[i];
  }
  c.nd_ = bir::normaliseDims(num, stride, op.nfree + 1);
  for (int i = 0; i < c.nd_; ++i) {
    c.num_[i] = num[i];
    c.stride_[i] = stride[i];
  }
  if (c.nd_ == 0) {
    c.nd_ = 1;
    c.num_[0] = 1;
    c.stride_[0] = op.esize;
  }
  c.origin_ = ptr;
  c.left_ = op.isImm() ? 0 : op.numElements();
  c.startRun();
  return c;
}

void RunCursor::startRun() {
  uint8_t* p = origin_;
  for (int i = 0; i + 1 < nd_; ++i) p += idx_[i] * stride_[i];
  ptr_ = p;
  step_ = stride_[nd_ - 1];
  runLeft_ = std::min(num_[nd_ - 1], left_);
}

void RunCursor::window(int64_t first, int64_t count) {
  int64_t rest = first;
  const int64_t inner = rest % num_[nd_ - 1];
  rest /= num_[nd_ - 1];
  for (int i = nd_ - 2; i >= 0; --i) {
    idx_[i] = rest % num_[i];
    rest /= num_[i];
  }
  left_ = std::min(count, std::max<int64_t>(0, left_ - first));
  startRun();
  ptr_ += inner * step_;
  runLeft_ = std::min(num_[nd_ - 1] - inner, left_);
}

void RunCursor::advance(int64_t k) {
  runLeft_ -= k;
  left_ -= k;
  ptr_ += k * step_;
  if (runLeft_ > 0 || left_ == 0) return;
  for (int i = nd_ - 2; i >= 0; --i) {
    if (++idx_[i] < num_[i]) break;
    idx_[i] = 0;
  }
  startRun();
}

}  // namespace sim
