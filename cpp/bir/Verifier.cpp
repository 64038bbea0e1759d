#include "Verifier.h"

#include <algorithm>
#include <limits>

#include "Error.h"
#include "PatternShape.h"

namespace bir {
namespace {

// a*b and a+b with overflow detection: hostile JSON may carry any int64.
bool mulOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool addOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

[[noreturn]] void fail(const std::string& where, const std::string& msg) {
  throw BIRError(located(where, msg));
}

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

bool isKernelNode(const Instruction& I) {
  return I.opcode() == InstructionType::BIRKernel || I.opcode() == InstructionType::NKIKernel ||
         I.opcode() == InstructionType::NKIKLIRKernel;
}

}  // namespace

namespace {
// The start-partition rule (checkStartPartition gives the reason it is broken).
bool startPartitionAllowed(int64_t start, int64_t partitions) {
  if (partitions > 64) return start == 0;
  if (partitions > 32) return start == 0 || start == 64;
  return start % 32 == 0 && start < kNumPartitions;
}
}  // namespace

std::string checkStartPartition(int64_t start, int64_t partitions) {
  if (startPartitionAllowed(start, partitions)) return "";
  const char* allowed = partitions > 64 ? "0" : partitions > 32 ? "0, 64" : "0, 32, 64, 96";
  return "partition start " + std::to_string(start) + " breaks the start-partition rule for " +
         std::to_string(partitions) + " partitions (allowed: " + allowed + ")";
}

namespace {

// `ext` is patternShape(ap), made by the caller (who may keep it). Inlined into the verifier's
// operand loop, which runs for every operand of every instruction a module is prepared with: as a
// call it saved and restored registers for a body of mostly untaken branches.
template <class Where>
[[gnu::always_inline]] inline void checkAccessPattern(const AccessPattern& ap, const PatternShape& ext, bool computeEngine, const Where& where) {
  if (ap.isImmediate()) return;
  if (!ap.loc || !ap.loc->set) fail(where(), "access pattern has no memory location");
  if (ap.pattern.empty()) fail(where(), "access pattern has no [step, num] pairs");
  if (ext.minNum < 1)
    for (size_t i = 0; i < ap.pattern.size(); ++i)
      if (ap.pattern[i].num < 1)
        fail(where(), "ap[" + std::to_string(i) + "] has num " + std::to_string(ap.pattern[i].num) +
                        " (must be at least 1)");
  if (ap.offset < 0) fail(where(), "negative offset " + std::to_string(ap.offset));
  const MemoryLocation& l = *ap.loc;
  const int64_t dsize = dtypeSize(ap.dtype);

  if (!l.isOnChip()) {
    const int64_t capacity = l.partitions * l.bytes_per_partition / dsize;  // verified not to overflow
    int64_t lo = ext.lo, hi = ext.hi, first, last;
    if (ext.overflow || !addOk(lo, ext.outerLo, &lo) || !addOk(hi, ext.outerHi, &hi))
      fail(where(), "access pattern extent overflows");
    if (!addOk(ap.offset, lo, &first) || !addOk(ap.offset, hi, &last) || first < 0 ||
        last >= capacity)
      fail(where(), "access [" + std::to_string(ap.offset + lo) + ", " +
                      std::to_string(ap.offset + hi) + "] is outside tensor '" + l.name + "' of " +
                      std::to_string(capacity) + " " + std::string(enumName(ap.dtype)) +
                      " elements");
    return;
  }

  const int64_t row = l.bytes_per_partition / dsize;
  if (row <= 0) fail(where(), "tensor '" + l.name + "' has no room for one element per partition");
  const APPair& par = ap.pattern.front();
  if (par.num > 1 && par.step != row)
    fail(where(), "partition step " + std::to_string(par.step) + " is not one partition (" +
                    std::to_string(row) + " elements of " + std::string(enumName(ap.dtype)) +
                    "): the hardware has no partition stride");
  if (par.num > kNumPartitions)
    fail(where(), std::to_string(par.num) + " partitions exceed the " +
                    std::to_string(kNumPartitions) + " partitions");
  const int64_t firstPartition = ap.offset / row;
  if (firstPartition + par.num > l.partitions)
    fail(where(), "partitions [" + std::to_string(firstPartition) + ", " +
                    std::to_string(firstPartition + par.num) + ") are outside tensor '" + l.name +
                    "' of " + std::to_string(l.partitions) + " partitions");
  // (The first pair's extent is bounded: num <= 128 partitions of one row each.)
  if (ext.overflow) fail(where(), "access pattern extent overflows");
  const int64_t lo = ext.lo, hi = ext.hi;
  const int64_t col = ap.offset % row;
  if (col + lo < 0 || col + hi >= row)
    fail(where(), "free access [" + std::to_string(col + lo) + ", " + std::to_string(col + hi) +
                    "] is outside the " + std::to_string(row) + " elements per partition of '" +
                    l.name + "'");
  if (computeEngine) {
    if (static_cast<int64_t>(ap.pattern.size()) - 1 > kMaxFreeDims)
      fail(where(), std::to_string(ap.pattern.size() - 1) + " free dims exceed the " +
                      std::to_string(kMaxFreeDims) + " an engine access pattern can have");
    if (!startPartitionAllowed(l.base_partition + firstPartition, par.num))
      fail(where(), checkStartPartition(l.base_partition + firstPartition, par.num));
  }
}

}  // namespace

void verifyAccessPattern(const AccessPattern& ap, bool computeEngine, const std::string& where) {
  checkAccessPattern(ap, patternShape(ap), computeEngine, [&] { return where; });
}

void verifyAllocations(const Function& f, size_t fi) {
  auto fpath = [fi] { return "functions[" + std::to_string(fi) + "]"; };
  for (size_t ai = 0; ai < f.allocations().size(); ++ai) {
    const auto& set = *f.allocations()[ai];
    auto apath = [&] { return fpath() + ".allocations[" + std::to_string(ai) + "]"; };
    for (int64_t d : set.tensor_shape)
      if (d < 0) fail(apath() + ".tensor_shape", "negative dimension " + std::to_string(d));
    for (size_t li = 0; li < set.locations.size(); ++li)
      verifyLocation(*set.locations[li], [&] {
        return apath() + ".memorylocations[" + std::to_string(li) + "] '" + set.locations[li]->name + "'";
      });
  }
}

void verifyInstruction(const Instruction& I, size_t fi, size_t bi, size_t ii, PatternShape* shapes) {
  auto ipath = [&] {
    return "functions[" + std::to_string(fi) + "].blocks[" + std::to_string(bi) + "].instructions[" +
           std::to_string(ii) + "]";
  };
  const NodeClass cls = I.nodeClass();
  const OperandRule rule = operandRuleOf(cls);
  const auto nIns = static_cast<int>(I.ins.size()), nOuts = static_cast<int>(I.outs.size());
  if (nIns < rule.min_ins || nIns > rule.max_ins || nOuts < rule.min_outs ||
      nOuts > rule.max_outs)
    fail(ipath(), I.opcodeName() + " '" + I.name + "' takes " + std::to_string(rule.min_ins) +
                      ".." + std::to_string(rule.max_ins) + " inputs and " +
                      std::to_string(rule.min_outs) + ".." + std::to_string(rule.max_outs) +
                      " outputs, got " + std::to_string(nIns) + " and " +
                      std::to_string(nOuts));
  const bool kernel = isKernelNode(I);
  const bool compute = !kernel && cls != NodeClass::DMA;
  PatternShape own;  // where the shapes go when the caller keeps none
  // Inlined (both sides): as a call it saved and restored registers twice per instruction.
  auto checkSide = [&](const std::vector<AccessPattern>& list, bool input, PatternShape* out) __attribute__((always_inline)) {
    for (size_t k = 0, n = list.size(); k < n; ++k) {
      const AccessPattern& ap = list[k];
      // By value: the loop index stays in a register (the closure is only called to word an error).
      auto where = [&ipath, input, k] { return ipath() + (input ? ".ins[" : ".outs[") + std::to_string(k) + "]"; };
      PatternShape& shape = out ? out[k] : own;
      shape = patternShape(ap);
      checkAccessPattern(ap, shape, compute, where);
      // The checks below concern kernel nodes and the kernel-node marks: the operand of another
      // instruction without the marks (nearly every operand) passes them all.
      if (!kernel && ap.lnc_size == 1 && !ap.reduce) continue;
      if (kernel && !ap.isImmediate() && !ap.loc->isDram())
        fail(where(), "kernel node operands must be DRAM tensors; '" + ap.loc->name +
                          "' is in " + std::string(enumName(ap.loc->type)));
      if (ap.lnc_size < 1) fail(where(), "lnc_size " + std::to_string(ap.lnc_size) + " is not positive");
      if ((ap.lnc_size != 1 || ap.reduce) && !kernel)
        fail(where(), "lnc_size and reduce mark kernel-node operands (LncSize, addArgumentOrOutput); " +
                          I.opcodeName() + " is not a kernel node");
      if (ap.reduce && input)
        fail(where(), "reduce marks an output that may be reduced along its partition dim, not an input");
    }
  };
  checkSide(I.ins, true, shapes);
  checkSide(I.outs, false, shapes ? shapes + nIns : nullptr);
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
