// Operands of BIR instructions.
//
// A physical access pattern (JSON kind "physical_ap") addresses elements of one memory location,
// counted in units of the pattern's own dtype, as
//     offset + sum_k i_k * step_k        for 0 <= i_k < num_k
// over its [step, num] pairs, outermost first. The first pair is the partition pair.
//   * DRAM locations: the element index runs over the tensor's flat row-major array.
//   * SB / PSUM locations: the location is a [partitions, row] array with
//     row = bytes_per_partition / sizeof(dtype); element e sits in partition e / row, column
//     e % row. The partition pair's step must be exactly one row (the hardware has no partition
//     stride), and every free-dimension access stays inside the row.
// Immediates (kind "imm_value") carry a scalar instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "Enums.h"
#include "InlineVector.h"
#include "MachineConfig.h"
#include "Memory.h"

namespace bir {

struct APPair {
  int64_t step = 1;
  int64_t num = 1;
  bool operator==(const APPair& o) const { return step == o.step && num == o.num; }
};

// An operand's pairs, held inline up to the longest pattern an engine instruction may have (the
// partition pair and UniformConfig::kApMaxFreeDims free pairs, Verifier.h's kMaxFreeDims); DMA and
// DRAM patterns, which the rules do not limit, go to the heap beyond that (InlineVector.h says why).
inline constexpr size_t kInlinePairs = UniformConfig::kApMaxFreeDims + 1;
using APPairs = InlineVector<APPair, kInlinePairs>;

enum class ArgKind : uint8_t { PhysicalAP, ImmValue };

struct AccessPattern {
  // The fields every reader of every operand reads come first, in as few cache lines as an
  // operand of a few pairs allows (the simulator's preparation reads each operand of a module
  // once, and what it costs is mostly lines fetched): the two kernel-node marks the verifier
  // checks on every operand before the pairs (reduce in the bytes the enums leave), the immediate
  // and the kernel-node shape after them.
  ArgKind kind = ArgKind::PhysicalAP;
  AccessFlavour flavour = AccessFlavour::Plain;
  DType dtype = DType::float32;
  // addArgumentOrOutput's reduce flag: the kernel may reduce the output along its partition dim.
  // Kernel-node operands only.
  bool reduce = false;
  MemoryLocation* loc = nullptr;  // null for immediates
  int64_t offset = 0;             // elements
  // The tile / sub-tensor builders' LncSize(operand): how many physical NeuronCores of a logical
  // core share the operand (LNC=2 splits its partition dim). Kernel-node operands only.
  int64_t lnc_size = 1;
  APPairs pattern;                // partition pair first
  double imm = 0.0;               // ImmValue only
  // Kernel-node operands built from a tile or sub-tensor view (seed 000 section 6): the shape of
  // the accessed region and which tensor dim became the partition pair; empty / -1 otherwise.
  std::vector<int64_t> access_shape;
  int64_t partition_dim = -1;

  static AccessPattern immediate(double value, DType dtype = DType::float32);

  bool isImmediate() const { return kind == ArgKind::ImmValue; }
  int64_t partitions() const { return pattern.empty() ? 1 : pattern.front().num; }
  // Product of the free pairs' nums: elements each partition touches.
  int64_t freeElements() const;
  int64_t numElements() const { return partitions() * freeElements(); }
  // Free pairs' nums (the tile shape without its partition dim).
  std::vector<int64_t> freeShape() const;
  // Elements per row of the location in this pattern's dtype (SB/PSUM), or 0.
  int64_t rowElements() const;
  // First partition touched (SB/PSUM: absolute, including the location's base partition).
  int64_t startPartition() const;
};

// Inline: the simulator's module preparation asks these of every operand.
inline int64_t AccessPattern::freeElements() const {
  int64_t n = 1;
  for (size_t i = 1; i < pattern.size(); ++i) n *= pattern[i].num;
  return n;
}

inline int64_t AccessPattern::rowElements() const {
  if (!loc || !loc->isOnChip()) return 0;
  return loc->bytes_per_partition / dtypeSize(dtype);
}

inline int64_t AccessPattern::startPartition() const {
  if (!loc || !loc->isOnChip()) return 0;
  const int64_t row = rowElements();
  return loc->base_partition + (row > 0 ? offset / row : 0);
}

// The whole tensor as a sequential pattern: one [stride, dim] pair per tensor dim (dim 0 first).
AccessPattern sequentialPattern(MemoryLocation* loc);

}  // namespace bir
