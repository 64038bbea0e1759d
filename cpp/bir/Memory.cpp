#include "AccessPattern.h"
#include "Error.h"
#include "Memory.h"

namespace bir {

int64_t MemoryLocationSet::numElements() const {
  int64_t n = 1;
  for (int64_t d : tensor_shape) n *= d;
  return n;
}

AccessPattern AccessPattern::immediate(double value, DType dtype) {
  AccessPattern ap;
  ap.kind = ArgKind::ImmValue;
  ap.dtype = dtype;
  ap.imm = value;
  return ap;
}

int64_t AccessPattern::freeElements() const {
  int64_t n = 1;
  for (size_t i = 1; i < pattern.size(); ++i) n *= pattern[i].num;
  return n;
}

std::vector<int64_t> AccessPattern::freeShape() const {
  std::vector<int64_t> s;
  for (size_t i = 1; i < pattern.size(); ++i) s.push_back(pattern[i].num);
  return s;
}

int64_t AccessPattern::rowElements() const {
  if (!loc || !loc->isOnChip()) return 0;
  return loc->bytes_per_partition / dtypeSize(dtype);
}

int64_t AccessPattern::startPartition() const {
  if (!loc || !loc->isOnChip()) return 0;
  const int64_t row = rowElements();
  return loc->base_partition + (row > 0 ? offset / row : 0);
}

AccessPattern sequentialPattern(MemoryLocation* loc) {
  if (!loc || !loc->set) throw BIRError("sequentialPattern: no tensor");
  AccessPattern ap;
  ap.dtype = loc->set->dtype;
  ap.loc = loc;
  if (loc->isOnChip()) {
    const int64_t row = loc->bytes_per_partition / dtypeSize(ap.dtype);
    ap.pattern = {{row, loc->partitions}, {1, row}};
    return ap;
  }
  const auto& shape = loc->set->tensor_shape;
  if (shape.empty()) {
    ap.pattern = {{1, 1}};
    return ap;
  }
  ap.pattern.resize(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    ap.pattern[i] = {stride, shape[i]};
    stride *= shape[i];
  }
  return ap;
}

}  // namespace bir
