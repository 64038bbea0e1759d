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
  verifyAllocations(f, fi, [](const MemoryLocationSet&, const MemoryLocation&) {});
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
