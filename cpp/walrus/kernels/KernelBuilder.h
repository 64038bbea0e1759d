// KernelBuilder: what an IT54 leaf writes its kernel with.
//
// A leaf is a C++ generator: for the node's shapes, attrs and operand access patterns it emits the
// ISA instructions of the kernel, in program order, through this builder. The builder
//   * hands out the operands as DramViews by role (input(role) / output(role), bound by the leaf's
//     signature) and the attrs, typed by it (attrs());
//   * plans on-chip memory: SBUF pools with explicit multi-buffering, PSUM pools of whole banks,
//     scopes that release a phase's memory (OnChipMemory.h), and a per-dtype identity tile for PE
//     transposes built on chip;
//   * emits one instruction per call, with its engine set (PE matmul/transpose, ACT activation,
//     DVE vector ops, Pool iota/affine_select, DMAs triggered from SP for loads and from Pool for
//     stores, spread round-robin over the 16 DMA queues) and its `source` set to
//     "<kernel>:<section>" so profiles attribute time; the pass sets `kernel`;
//   * checks what the hardware would refuse at the call that makes it (PE sizes, PSUM vs SBUF
//     operands, dtypes, element counts), so a leaf bug is a KernelError naming the instruction
//     rather than a simulator refusal later.
// Nothing reaches the function until the pass commits the expansion: the code and the on-chip
// tensors are staged here (takeCode / takeTensors).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bir/Error.h"
#include "bir/Legality.h"
#include "bir/MachineConfig.h"
#include "bir/Module.h"
#include "walrus/kernels/DramView.h"
#include "walrus/kernels/KernelAttrs.h"
#include "walrus/kernels/LeafSignature.h"
#include "walrus/kernels/OnChipMemory.h"
#include "walrus/kernels/Tile.h"

namespace walrus::kernels {

// The target description's numbers every generation shares (bir/MachineConfig.h).
inline constexpr int64_t kPartitions = bir::UniformConfig::kPartitions;  // SBUF/PSUM partitions, PE rows (K) and columns (M)
inline constexpr int64_t kMaxMoving = bir::UniformConfig::kPeMaxMoving;  // PE moving free size (N), one fp32 PSUM bank
inline constexpr int kDmaQueues = bir::UniformConfig::kDmaQueues;
inline constexpr int64_t kBnStatsMaxFree = bir::UniformConfig::kBnStatsMaxFree;  // elements per partition of bn_stats

// Optional operands of an activation, out = func(in * scale + bias), and its accumulator:
//   kb.activation(out, in, Exp, Act().scale(0.125).bias(negMax).accumulate(AccumCmd::ZeroAccumulate));
struct Act {
  Act& scale(double s) { scale_ = s; return *this; }
  Act& scaleBy(const Tile& column) { scaleTile_ = column; return *this; }  // [P, 1], replaces scale
  Act& bias(const Tile& column) { bias_ = column; return *this; }           // [P, 1]
  Act& accumulate(bir::AccumCmd cmd, bir::AluOp op = bir::AluOp::add) { acc_ = cmd; accOp_ = op; return *this; }
  Act& alpha(double a) { alpha_ = a; return *this; }

  double scale_ = 1.0;
  std::optional<Tile> scaleTile_;
  std::optional<Tile> bias_;
  bir::AccumCmd acc_ = bir::AccumCmd::Idle;
  bir::AluOp accOp_ = bir::AluOp::add;
  double alpha_ = 0.0;
};

class KernelBuilder {
 public:
  // `verify`: check each emitted operand with the BIR verifier's rules as it is made.
  // `maxInstructions`: emitting one more throws KernelError (the expansion's cap).
  KernelBuilder(const bir::InstBIRKernel& node, const bir::Function& function, bool verify,
                size_t maxInstructions);
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  const bir::InstBIRKernel& node() const { return node_; }
  KernelAttrs& attrs() { return attrs_; }
  const std::string& arch() const { return arch_; }
  // The target description of the module's arch (checked known when the builder is made).
  const bir::MachineConfig& config() const { return bir::machineConfig(arch_); }

  // ---- operands ----
  // The input / output of `role` as a view, bound by the leaf's signature for the node's attrs
  // (bindOperands: the node's operand counts must match it); `rank` (if > 0) is required.
  DramView input(const std::string& role, size_t rank = 0);
  DramView output(const std::string& role, size_t rank = 0);
  // Whether the binding has an input of `role` (a variadic operand's role0, role1, ...).
  bool hasInput(const std::string& role);
  // KernelError("<what>") unless `ok`: shapes and attrs a leaf cannot take.
  static void require(bool ok, const std::string& what);

  // ---- dtypes ----
  // The dtype the PE multiplies operands of dtype `t` in: `t`, except that fp32 operands follow the
  // node's auto_cast ("matmult"/"all" -> auto_cast_type), as neuronx-cc's --auto-cast does.
  bir::DType matmulDtype(bir::DType t) const;

  // ---- on-chip memory ----
  class Scope {
   public:
    explicit Scope(KernelBuilder& kb);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    KernelBuilder& kb_;
    int64_t sbuf_, psum_;
  };
  // Releases every SBUF/PSUM allocation made after it when it ends.
  Scope scope() { return Scope(*this); }
  TilePool sbufPool(const std::string& name, bir::DType dtype, const std::vector<int64_t>& free, int bufs);
  Tile sbufTile(const std::string& name, bir::DType dtype, const std::vector<int64_t>& free);
  // `bufs` rotating buffers of `banksPerBuf` consecutive whole banks each (a buffer of several
  // banks holds several accumulation groups side by side, one per bank).
  PsumPool psumPool(const std::string& name, int bufs, int banksPerBuf = 1);
  int psumBanks() const { return static_cast<int>(psum_.capacity() / psumBankBytes_); }
  int64_t sbufBytes() const { return sbuf_.capacity(); }
  // SBUF bytes per partition not yet allocated (in this scope and the ones around it).
  int64_t sbufFree() const { return sbuf_.capacity() - sbuf_.mark(); }
  int64_t psumBankBytes() const { return psumBankBytes_; }
  // The [128, 128] identity of `dtype` (built on first use: memset + affine_select).
  Tile identity(bir::DType dtype);

  // ---- sections: the `source` of what is emitted inside ----
  class Section {
   public:
    Section(KernelBuilder& kb, const std::string& label);
    ~Section();
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;

   private:
    KernelBuilder& kb_;
    std::string saved_;
  };
  Section section(const std::string& label) { return Section(*this, label); }

  // ---- DMA ----
  void load(const Tile& dst, const DramView& src, bir::Engine issuer = bir::Engine::SP);
  // dst [b, a] = src [a, b]^T (a DMA in transpose mode: no PE or vector work).
  void loadTransposed(const Tile& dst, const DramView& src, bir::Engine issuer = bir::Engine::SP);
  // dst [b, a] = src [a, b]^T within SBUF, by a DMA in transpose mode.
  void transposeOnChip(const Tile& dst, const Tile& src, bir::Engine issuer = bir::Engine::SP);
  void store(const DramView& dst, const Tile& src, bir::Engine issuer = bir::Engine::Pool);
  // dst [b, a] = src [a, b]^T: a store in DMA transpose mode.
  void storeTransposed(const DramView& dst, const Tile& src, bir::Engine issuer = bir::Engine::Pool);
  // Destination row r <- source row index[r] (indirect gather over the source's outermost dim).
  void gather(const Tile& dst, const DramView& src, const Tile& index, bir::Engine issuer = bir::Engine::SP);
  // DRAM -> DRAM (e.g. a residual sum stored twice).
  void copyDram(const DramView& dst, const DramView& src, bir::Engine issuer = bir::Engine::SP);

  // ---- PE ----
  // out[M, N] (PSUM, fp32) = / += stationary[K, M]^T @ moving[K, N]; `start` opens the group.
  void matmul(const Tile& out, const Tile& stationary, const Tile& moving, bool start, bool stop);
  // out[M, K] (PSUM, in's dtype or fp32) = in[K, M]^T, exactly (PE transpose mode).
  void transpose(const Tile& out, const Tile& in);

  // ---- ACT ----
  void activation(const Tile& out, const Tile& in, bir::ActivationFunc func, const Act& args = Act());
  void readAccumulator(const Tile& out);

  // ---- DVE (or the named engine) ----
  void copy(const Tile& out, const Tile& in, bir::Engine e = bir::Engine::DVE);
  void memset(const Tile& out, double value, bir::Engine e = bir::Engine::DVE);
  void tensorTensor(const Tile& out, const Tile& a, const Tile& b, bir::AluOp op, bir::Engine e = bir::Engine::DVE);
  // out = (in op0 c0) op1 c1
  void tensorScalar(const Tile& out, const Tile& in, bir::AluOp op0, double c0, bir::AluOp op1 = bir::AluOp::bypass,
                    double c1 = 0.0, bir::Engine e = bir::Engine::DVE);
  // out = (in op0 s0[p]) op1 (s1[p] or c1)
  void tensorScalarPtr(const Tile& out, const Tile& in, bir::AluOp op0, const Tile& s0,
                       bir::AluOp op1 = bir::AluOp::bypass, std::optional<Tile> s1 = std::nullopt, double c1 = 0.0,
                       bir::Engine e = bir::Engine::DVE);
  void reduce(const Tile& out, const Tile& in, bir::AluOp op, bir::ReduceAxis axis = bir::ReduceAxis::X,
              bool negate = false);
  void reciprocal(const Tile& out, const Tile& in);
  void bnStats(const Tile& out, const Tile& in);
  void bnAggregate(const Tile& out, const Tile& in);
  // max8: the 8 largest of each partition, descending.
  void max8(const Tile& out, const Tile& in);
  // nc_find_index8: index (uint32) of the first occurrence of each of the 8 values that no
  // earlier value took (equal values: ascending positions).
  void findIndex8(const Tile& out, const Tile& in, const Tile& values);
  // nc_match_replace8: `in` with the first not yet replaced occurrence of each of the 8 values
  // replaced by imm, the values taken 7..0 (equal values: descending positions); `indices` (if
  // given, [P, 8] integers) receives where they were.
  void matchReplace8(const Tile& out, const Tile& in, const Tile& values, double imm,
                     std::optional<Tile> indices = std::nullopt);

  // ---- Pool ----
  // out[p, i...] = base + channelMultiplier * p + sum_k i_k * pattern[k].step
  void iota(const Tile& out, int64_t base, const std::vector<bir::APPair>& pattern, int64_t channelMultiplier);
  // out = cmp(e, 0) ? in : fill, with e the iota expression.
  void affineSelect(const Tile& out, const Tile& in, int64_t base, const std::vector<bir::APPair>& pattern,
                    int64_t channelMultiplier, bir::AluOp cmp, double fill);

  // ---- the staged expansion ----
  size_t codeSize() const { return code_.size(); }
  std::vector<std::unique_ptr<bir::Instruction>> takeCode() { return std::move(code_); }
  std::vector<std::unique_ptr<bir::MemoryLocationSet>> takeTensors() { return std::move(tensors_); }
  int64_t sbufHighWater() const { return sbuf_.highWater(); }
  int psumBanksUsed() const { return static_cast<int>(psum_.highWater() / psumBankBytes_); }

 private:
  template <class T>
  T& emit(bir::Engine engine, const char* what);
  bir::MemoryLocation* newOnChipTensor(const std::string& name, bir::MemoryType type, bir::DType dtype,
                                       int64_t bytes, int64_t addr);
  bir::InstDMA& dma(bir::Engine issuer, const bir::AccessPattern& dst, const bir::AccessPattern& src);
  // The legality rules every instruction obeys (bir/Legality.h: engine operands), then the
  // verifier's access-pattern rules when verifying.
  void check(const bir::Instruction& I) const;
  DramView operand(bool isOutput, const std::string& role, size_t rank);
  const OperandBinding& binding();
  // Fails with the rule's message when `verdict` names a broken legality rule.
  void legal(const bir::Instruction& I, const bir::legality::Verdict& verdict) const {
    if (verdict) fail(I, verdict->message);
  }
  [[noreturn]] void fail(const bir::Instruction& I, const std::string& msg) const;

  const bir::InstBIRKernel& node_;
  const bir::Function& function_;
  bool verify_;
  size_t maxInstructions_;
  std::string arch_;
  KernelAttrs attrs_;
  std::optional<OperandBinding> binding_;  // bound at the first input() / output()
  Arena sbuf_;
  Arena psum_;
  int64_t psumBankBytes_;
  std::string section_;
  uint64_t seq_ = 0;
  int nextQueue_ = 0;
  std::map<bir::DType, Tile> identities_;
  std::set<std::string> stagedNames_;
  std::vector<std::unique_ptr<bir::Instruction>> code_;
  std::vector<std::unique_ptr<bir::MemoryLocationSet>> tensors_;
};

}  // namespace walrus::kernels
