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

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "Enums.h"
#include "Error.h"
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

// What only a kernel node's operand built from a tile or sub-tensor view carries (seed 000 section
// 6): the shape of the accessed region and which tensor dim became the partition pair.
struct KernelViewShape {
  std::vector<int64_t> access_shape;
  int64_t partition_dim = -1;
};

// An AccessPattern's KernelViewShape, out of line: null for every other operand. Copies deeply,
// like the two fields did when they sat in the operand.
class KernelViewShapePtr {
 public:
  KernelViewShapePtr() = default;
  KernelViewShapePtr(const KernelViewShapePtr& o) : p_(o.p_ ? new KernelViewShape(*o.p_) : nullptr) {}
  KernelViewShapePtr(KernelViewShapePtr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  KernelViewShapePtr& operator=(const KernelViewShapePtr& o) {
    if (this != &o) {
      KernelViewShape* q = o.p_ ? new KernelViewShape(*o.p_) : nullptr;
      delete p_;
      p_ = q;
    }
    return *this;
  }
  KernelViewShapePtr& operator=(KernelViewShapePtr&& o) noexcept {
    if (this != &o) {
      delete p_;
      p_ = o.p_;
      o.p_ = nullptr;
    }
    return *this;
  }
  ~KernelViewShapePtr() { delete p_; }

  const KernelViewShape* get() const { return p_; }
  KernelViewShape& make() { return p_ ? *p_ : *(p_ = new KernelViewShape); }

 private:
  KernelViewShape* p_ = nullptr;
};

struct AccessPattern {
  // The simulator's preparation reads every operand of a module once, and what it costs is mostly
  // the lines fetched: the operand is two cache lines (128 bytes, the static_assert below), the
  // fields every reader reads first. The two kernel-node marks the verifier checks on every
  // operand sit in the bytes the enums leave; the immediate and the kernel-node shape's pointer
  // come last.
  ArgKind kind = ArgKind::PhysicalAP;
  AccessFlavour flavour = AccessFlavour::Plain;
  DType dtype = DType::float32;
  // addArgumentOrOutput's reduce flag: the kernel may reduce the output along its partition dim.
  // Kernel-node operands only.
  bool reduce = false;
  // The tile / sub-tensor builders' LncSize(operand): how many physical NeuronCores of a logical
  // core share the operand (LNC=2 splits its partition dim). Kernel-node operands only. 32 bits:
  // the readers refuse larger values (kMaxLncSize).
  int32_t lnc_size = 1;
  MemoryLocation* loc = nullptr;  // null for immediates
  int64_t offset = 0;             // elements
  APPairs pattern;                // partition pair first
  double imm = 0.0;               // ImmValue only
  KernelViewShapePtr kernel_view; // null: no access_shape, partition_dim -1

  static constexpr int64_t kMaxLncSize = INT32_MAX;

  // Kernel-node operands built from a tile or sub-tensor view: the accessed region's shape (empty
  // otherwise) and the tensor dim that became the partition pair (-1 otherwise).
  const std::vector<int64_t>& accessShape() const;
  int64_t partitionDim() const { return kernel_view.get() ? kernel_view.get()->partition_dim : -1; }
  void setAccessShape(std::vector<int64_t> shape);
  void setPartitionDim(int64_t dim);

  static AccessPattern immediate(double value, DType dtype = DType::float32);

  bool isImmediate() const { return kind == ArgKind::ImmValue; }
  int64_t partitions() const { return pattern.empty() ? 1 : pattern.front().num; }
  // Product of the free pairs' nums: elements each partition touches. These two are exact for a
  // verified pattern only: the verifier refuses a pattern whose counts overflow (patternShape).
  int64_t freeElements() const;
  int64_t numElements() const { return partitions() * freeElements(); }
  // Free pairs' nums (the tile shape without its partition dim).
  std::vector<int64_t> freeShape() const;
  // Elements per row of the location in this pattern's dtype (SB/PSUM), or 0.
  int64_t rowElements() const;
  // First partition touched (SB/PSUM: absolute, including the location's base partition).
  int64_t startPartition() const;
};

// The host's cache line (x86-64 and the usual AArch64 cores), not a machine number of the simulated one.
inline constexpr size_t kHostCacheLine = 64;
static_assert(sizeof(AccessPattern) == 2 * kHostCacheLine, "an operand is two cache lines (preparation reads every one)");
// The pairs' count and the partition pair and first free pair on the first line.
static_assert(offsetof(AccessPattern, pattern) == 24, "the hot fields before the pairs take 24 bytes");

inline const std::vector<int64_t>& AccessPattern::accessShape() const {
  static const std::vector<int64_t> kNone;
  return kernel_view.get() ? kernel_view.get()->access_shape : kNone;
}

inline void AccessPattern::setAccessShape(std::vector<int64_t> shape) {
  if (shape.empty() && !kernel_view.get()) return;
  kernel_view.make().access_shape = std::move(shape);
}

inline void AccessPattern::setPartitionDim(int64_t dim) {
  if (dim == -1 && !kernel_view.get()) return;
  kernel_view.make().partition_dim = dim;
}

// lnc_size as the operand holds it: refuses (BIRError "<where()>: lnc_size N ...") what does not
// fit 32 bits, at the readers (JSON, binary, createAP, the binding) before the verifier meets the
// value. Values below 1 that fit pass here: the verifier refuses them (OperandCheck.h), in the same
// words. `where` is called only to refuse: the readers' paths cost a string each.
[[noreturn]] inline void refuseLncSize(int64_t n, const std::string& where) {
  const std::string what = "lnc_size " + std::to_string(n);
  if (n < 1) throw BIRError(located(where, what + " is not positive"));
  throw BIRError(located(where, what + " is above " + std::to_string(AccessPattern::kMaxLncSize) +
                                    ", the most NeuronCores an operand can be shared by here"));
}

template <class Where>
int32_t narrowLncSize(int64_t n, Where&& where) {
  if (n < INT32_MIN || n > AccessPattern::kMaxLncSize) refuseLncSize(n, where());
  return static_cast<int32_t>(n);
}

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
