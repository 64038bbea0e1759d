#include "AccessPattern.h"
#include "Error.h"
#include "Memory.h"
#include "View.h"

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
  const DType dtype = loc->set->dtype;
  if (loc->isOnChip())
    return View::onChip(loc, dtype, loc->partitions, {loc->bytes_per_partition / dtypeSize(dtype)}).ap();
  return View::ofShape(loc, dtype, loc->set->tensor_shape).ap();
}

}  // namespace bir
