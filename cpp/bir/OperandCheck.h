// The verifier's checks of one instruction's operands, inline, for a reader that walks the
// operands itself and checks each as it reaches it (the simulator's decoder): its operand loop
// then reads each operand's fields once, while they are in cache, instead of the verifier's loop
// and its own each reading them. verifyInstruction (Verifier.cpp) is these checks in a loop of
// their own; both callers check in the same order (the counts, then ins, then outs), so a module
// is refused with the same first error whichever of them verifies it.
#pragma once

#include <string>

#include "Module.h"
#include "PatternShape.h"
#include "Verifier.h"

namespace bir {

// Where the instruction being checked is (functions[fi].blocks[bi].instructions[ii]), and what
// the operand checks ask of its node: made by verifyOperandCounts.
struct InstructionCheck {
  size_t fi, bi, ii;
  bool kernel;   // a kernel node (IT54/55/56): its operands must be DRAM tensors
  bool compute;  // a compute-engine instruction (neither a kernel node nor a DMA)
  std::string path() const;  // the instruction's JSON path, for an error
  // Its operand's: path() + ".ins[k]" (`input`) or ".outs[k]", for an error.
  std::string operandPath(bool input, size_t k) const;
};

namespace verify_detail {

[[noreturn]] void fail(const std::string& where, const std::string& msg);
// Words the refusal of I's operand counts (out of line: only a refusal builds strings).
[[noreturn]] void failOperandCounts(const Instruction& I, const InstructionCheck& check);

inline bool isKernelNode(const Instruction& I) {
  return I.opcode() == InstructionType::BIRKernel || I.opcode() == InstructionType::NKIKernel ||
         I.opcode() == InstructionType::NKIKLIRKernel;
}

// a*b and a+b with overflow detection: hostile JSON may carry any int64.
inline bool addOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
inline bool mulOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// a+b in decimal, exact where it exceeds int64: the end of a range that hostile JSON placed past
// int64, worded in a refusal (as an int64 it would print as a large negative number).
inline std::string sumText(int64_t a, int64_t b) {
  __int128 sum = static_cast<__int128>(a) + b;
  const bool negative = sum < 0;
  std::string digits;
  do {
    const int digit = static_cast<int>(sum % 10);
    digits.insert(digits.begin(), static_cast<char>('0' + (negative ? -digit : digit)));
    sum /= 10;
  } while (sum != 0);
  return negative ? "-" + digits : digits;
}

// One memory location of an allocation (verifyAllocations below). `where` gives the JSON path of
// the location, called only to word an error, so that verifying a valid module builds no strings.
template <class Where>
void checkLocation(const MemoryLocation& l, const Where& where) {
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
                    sumText(l.base_partition, l.partitions) + ") exceed the " +
                    std::to_string(kNumPartitions) + " partitions");
  if (l.type == MemoryType::PSUM && (l.bytes_per_partition > kPsumPartitionBytes ||
                                     l.addr > kPsumPartitionBytes - l.bytes_per_partition))
    fail(where(), "PSUM bytes [" + std::to_string(l.addr) + ", " +
                    sumText(l.addr, l.bytes_per_partition) + ") exceed the " +
                    std::to_string(kPsumPartitionBytes) + " bytes of a PSUM partition");
}

// The start-partition rule (checkStartPartition gives the reason it is broken).
inline bool startPartitionAllowed(int64_t start, int64_t partitions) {
  if (partitions > 64) return start == 0;
  if (partitions > 32) return start == 0 || start == 64;
  return start % 32 == 0 && start < kNumPartitions;
}

// `ext` is patternShape(ap), made by the caller (who may keep it); `where` gives the JSON path of
// the operand, called only to word an error, so that checking a valid operand builds no strings.
// Inlined into the operand loops, which run for every operand of every instruction a module is
// prepared with: as a call it saved and restored registers for a body of mostly untaken branches.
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
  if (ext.countOverflow) fail(where(), "access pattern element count (the product of its nums) overflows");
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
      fail(where(), "access [" + sumText(ap.offset, lo) + ", " + sumText(ap.offset, hi) +
                      "] is outside tensor '" + l.name + "' of " +
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
  if (par.num > l.partitions - firstPartition)  // (the sum may exceed int64: offset is any int64)
    fail(where(), "partitions [" + std::to_string(firstPartition) + ", " +
                    sumText(firstPartition, par.num) + ") are outside tensor '" + l.name +
                    "' of " + std::to_string(l.partitions) + " partitions");
  // (The first pair's extent is bounded: num <= 128 partitions of one row each.)
  if (ext.overflow) fail(where(), "access pattern extent overflows");
  const int64_t lo = ext.lo, hi = ext.hi;
  const int64_t col = ap.offset % row;
  if (lo < -col || hi >= row - col)  // (0 <= col < row; col + hi may exceed int64)
    fail(where(), "free access [" + sumText(col, lo) + ", " + sumText(col, hi) +
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

}  // namespace verify_detail

// bir::verifyAllocations(f, fi) (Verifier.h), handing each location to `onLocation(set, location)`
// once it and its allocation verify: a reader that needs the tensors (the simulator's decoder)
// walks the allocations once, while they are in cache, instead of the verifier's walk and its own.
template <class OnLocation>
void verifyAllocations(const Function& f, size_t fi, OnLocation&& onLocation) {
  using verify_detail::fail;
  auto fpath = [fi] { return "functions[" + std::to_string(fi) + "]"; };
  for (size_t ai = 0; ai < f.allocations().size(); ++ai) {
    const auto& set = *f.allocations()[ai];
    auto apath = [&] { return fpath() + ".allocations[" + std::to_string(ai) + "]"; };
    int64_t bytes = dtypeSize(set.dtype);  // numElements() and the byte size must not overflow
    for (int64_t d : set.tensor_shape) {
      if (d < 0) fail(apath() + ".tensor_shape", "negative dimension " + std::to_string(d));
      if (!verify_detail::mulOk(bytes, d, &bytes)) fail(apath() + ".tensor_shape", "the tensor's size overflows");
    }
    for (size_t li = 0; li < set.locations.size(); ++li) {
      verify_detail::checkLocation(*set.locations[li], [&] {
        return apath() + ".memorylocations[" + std::to_string(li) + "] '" + set.locations[li]->name + "'";
      });
      onLocation(set, *set.locations[li]);
    }
  }
}

// Checks I's operand counts against its node class (the first check of verifyInstruction). Inline:
// as a call, returning the check through memory, it cost more than the comparisons.
inline InstructionCheck verifyOperandCounts(const Instruction& I, size_t fi, size_t bi, size_t ii) {
  const bool kernel = verify_detail::isKernelNode(I);
  const NodeClass cls = I.nodeClass();
  const InstructionCheck check{fi, bi, ii, kernel, !kernel && cls != NodeClass::DMA};
  const OperandRule rule = operandRuleOf(cls);
  const auto nIns = static_cast<int64_t>(I.ins.size()), nOuts = static_cast<int64_t>(I.outs.size());
  if (nIns < rule.min_ins || nIns > rule.max_ins || nOuts < rule.min_outs || nOuts > rule.max_outs)
    verify_detail::failOperandCounts(I, check);
  return check;
}

// Checks operand k of I's ins (`input`) or outs, after verifyOperandCounts(I) gave `check`, and
// puts its patternShape in `shape` (which the decoder and the latency model read again).
[[gnu::always_inline]] inline void verifyOperand(const Instruction& I, const InstructionCheck& check,
                                                 const AccessPattern& ap, bool input, size_t k, PatternShape& shape) {
  using verify_detail::fail;
  // By value: the loop index stays in a register (the closure is only called to word an error,
  // through one out-of-line call: wording the path here made the compiler build the closure in
  // memory for every operand).
  auto where = [&check, input, k] { return check.operandPath(input, k); };
  shape = patternShape(ap);
  verify_detail::checkAccessPattern(ap, shape, check.compute, where);
  // The checks below concern kernel nodes and the kernel-node marks: the operand of another
  // instruction without the marks (nearly every operand) passes them all.
  const bool kernel = check.kernel;
  if (!kernel && ap.lnc_size == 1 && !ap.reduce) return;
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

}  // namespace bir
