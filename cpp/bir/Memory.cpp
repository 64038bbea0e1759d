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

std::vector<int64_t> AccessPattern::freeShape() const {
  std::vector<int64_t> s;
  for (size_t i = 1; i < pattern.size(); ++i) s.push_back(pattern[i].num);
  return s;
}

AccessPattern sequentialPattern(MemoryLocation* loc) {
  if (!loc || !loc->set) throw BIRError("sequentialPattern: no tensor");
  const DType dtype = loc->set->dtype;
  if (loc->isOnChip())
    return View::onChip(loc, dtype, loc->partitions, {loc->bytes_per_partition / dtypeSize(dtype)}).ap();
  return View::ofShape(loc, dtype, loc->set->tensor_shape).ap();
}

}  // namespace bir
