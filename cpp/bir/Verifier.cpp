#include "Verifier.h"

#include <algorithm>
#include <limits>

#include "Error.h"
#include "OperandCheck.h"
#include "PatternShape.h"

namespace bir {

namespace verify_detail {
void fail(const std::string& where, const std::string& msg) { throw BIRError(located(where, msg)); }
}  // namespace verify_detail

namespace {

// a*b and a+b with overflow detection: hostile JSON may carry any int64.
bool mulOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
using verify_detail::addOk;
using verify_detail::fail;

// `where` below is a callable giving the JSON path of what is checked: it is called only to
// word an error, so that verifying a valid module builds no strings.

template <class Where>
void verifyLocation(const MemoryLocation& l, const Where& where) {
  if (l.partitions < 0 || l.bytes_per_partition < 0)
    fail(where(), "negative dims [" + std::to_string(l.partitions) + ", " +
                    std::to_string(l.bytes_per_partition) + "]");
  int64_t total;
  if (!mulOk(l.partitions, l.bytes_per_partition, &total)) fail(where(), "size overflows");
  if (!l.isOnChip()) return;
  if (l.addr < 0) fail(where(), "negative address " + std::to_string(l.addr));
  if (l.base_partition < 0 || l.partitions > kNumPartitions ||
      l.base_partition > kNumPartitions - l.partitions)
    fail(where(), "partitions [" + std::to_string(l.base_partition) + ", " +
                    std::to_string(l.base_partition + l.partitions) + ") exceed the " +
                    std::to_string(kNumPartitions) + " partitions");
  if (l.type == MemoryType::PSUM && (l.bytes_per_partition > kPsumPartitionBytes ||
                                     l.addr > kPsumPartitionBytes - l.bytes_per_partition))
    fail(where(), "PSUM bytes [" + std::to_string(l.addr) + ", " +
                    std::to_string(l.addr + l.bytes_per_partition) + ") exceed the " +
                    std::to_string(kPsumPartitionBytes) + " bytes of a PSUM partition");
}

}  // namespace

std::string checkStartPartition(int64_t start, int64_t partitions) {
  if (verify_detail::startPartitionAllowed(start, partitions)) return "";
  const char* allowed = partitions > 64 ? "0" : partitions > 32 ? "0, 64" : "0, 32, 64, 96";
  return "partition start " + std::to_string(start) + " breaks the start-partition rule for " +
         std::to_string(partitions) + " partitions (allowed: " + allowed + ")";
}

void verifyAccessPattern(const AccessPattern& ap, bool computeEngine, const std::string& where) {
  verify_detail::checkAccessPattern(ap, patternShape(ap), computeEngine, [&] { return where; });
}

void verifyAllocations(const Function& f, size_t fi) {
  auto fpath = [fi] { return "functions[" + std::to_string(fi) + "]"; };
  for (size_t ai = 0; ai < f.allocations().size(); ++ai) {
    const auto& set = *f.allocations()[ai];
    auto apath = [&] { return fpath() + ".allocations[" + std::to_string(ai) + "]"; };
    int64_t bytes = dtypeSize(set.dtype);  // numElements() and the byte size must not overflow
    for (int64_t d : set.tensor_shape) {
      if (d < 0) fail(apath() + ".tensor_shape", "negative dimension " + std::to_string(d));
      if (!mulOk(bytes, d, &bytes)) fail(apath() + ".tensor_shape", "the tensor's size overflows");
    }
    for (size_t li = 0; li < set.locations.size(); ++li)
      verifyLocation(*set.locations[li], [&] {
        return apath() + ".memorylocations[" + std::to_string(li) + "] '" + set.locations[li]->name + "'";
      });
  }
}

std::string InstructionCheck::path() const {
  return "functions[" + std::to_string(fi) + "].blocks[" + std::to_string(bi) + "].instructions[" +
         std::to_string(ii) + "]";
}

std::string InstructionCheck::operandPath(bool input, size_t k) const {
  return path() + (input ? ".ins[" : ".outs[") + std::to_string(k) + "]";
}

namespace verify_detail {
void failOperandCounts(const Instruction& I, const InstructionCheck& check) {
  const OperandRule rule = operandRuleOf(I.nodeClass());
  fail(check.path(), I.opcodeName() + " '" + I.name + "' takes " + std::to_string(rule.min_ins) +
                         ".." + std::to_string(rule.max_ins) + " inputs and " +
                         std::to_string(rule.min_outs) + ".." + std::to_string(rule.max_outs) +
                         " outputs, got " + std::to_string(I.ins.size()) + " and " +
                         std::to_string(I.outs.size()));
}
}  // namespace verify_detail

void verifyInstruction(const Instruction& I, size_t fi, size_t bi, size_t ii, PatternShape* shapes) {
  const InstructionCheck check = verifyOperandCounts(I, fi, bi, ii);
  PatternShape own;  // where the shapes go when the caller keeps none
  const size_t nIns = I.ins.size();
  for (size_t k = 0; k < nIns; ++k) verifyOperand(I, check, I.ins[k], true, k, shapes ? shapes[k] : own);
  for (size_t k = 0; k < I.outs.size(); ++k)
    verifyOperand(I, check, I.outs[k], false, k, shapes ? shapes[nIns + k] : own);
}

void verifyModule(const Module& m) {
  for (size_t fi = 0; fi < m.functions().size(); ++fi) {
    const Function& f = *m.functions()[fi];
    verifyAllocations(f, fi);
    for (size_t bi = 0; bi < f.blocks().size(); ++bi) {
      const BasicBlock& bb = *f.blocks()[bi];
      for (size_t ii = 0; ii < bb.size(); ++ii) verifyInstruction(*bb.at(ii), fi, bi, ii);
    }
  }
}

}  // namespace bir
