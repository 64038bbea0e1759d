// bir::Hwm, the hardware latency model: what one BIR instruction costs on a NeuronCore.
//
// The numbers and formulas are the public ones collected in ../shared/reference/nki-isa-and-hw.md
// (cited below as [ref §n] with the source key the page gives, e.g. [A1], [I]); where the public
// material is silent the choice is marked "(ours)". The target description (MachineConfig.h) holds
// every number of each generation; Hwm turns an instruction into a Latency with one
// getLatency overload per node class (generated from NodeClasses.def, so a new node class cannot be
// forgotten). Hwm prices a NeuronCore-v2 (trn1) core; NeuronCoreV3Hwm adds the v3-only behaviour
// (DVE performance modes, FP8 double-row matmul, faster FP32 transpose).
//
// Kernel nodes (the Custom / Extension band of the opcode table, seed 000) are priced by expanding
// them with the real expanders and scheduling the expansion: see HwmExtension below. The models
// the simulator uses are libwalrus's TrainiumHwm / Trainium2Hwm (walrus/TrainiumHwm.h), which
// makeHwm builds.
//
// The simulator (cpp/sim) calls getLatency once per instruction when it decodes a module; the
// cost of a static instruction does not depend on data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "KernelInstructions.h"
#include "MachineConfig.h"
#include "PatternShape.h"

namespace bir {

// What one instruction costs. Compute instructions occupy their engine for `cycles` engine cycles
// (the documented cost formula: an initiation interval for back-to-back instructions) and their
// results are visible `access_ns` later (the pipeline's static overhead and the SBUF/PSUM access).
// DMA instructions occupy their issuing engine for `cycles` (the trigger); descriptors come from a
// DGE for `dma_dge_ns` when the instruction uses one; the transfer starts `dma_latency_ns` after
// the trigger and occupies the DMA engines of `dma_engine_mask` for `dma_transfer_ns` each, and
// the core's HBM for `dma_hbm_ns`; its writes are visible `access_ns` after it ends.
struct Latency {
  // Provided, so that a formula's `Latency l;` stores the initialisers below field by field: as
  // the implicit constructor GCC zeroed the whole object with a `rep stos` first (fifteen steps
  // and slow to start), once for every instruction a module is prepared with.
  Latency() {}
  Engine engine = Engine::Unassigned;  // the engine that executes (DMA: triggers) the instruction
  double cycles = 0;                   // engine cycles, in that engine's clock
  double busy_ns = 0;                  // cycles / clock
  double access_ns = 0;                // after busy_ns (DMA: after the transfer), until visible
  int64_t dma_queue = -1;              // DMA only
  double dma_latency_ns = 0;           // trigger to first data
  double dma_dge_ns = 0;               // descriptor generation on a DGE (0: static descriptors)
  double dma_transfer_ns = 0;          // on each DMA engine of the mask
  double dma_hbm_ns = 0;               // of the core's HBM bandwidth
  double dma_descriptors = 0;          // contiguous runs, on the busiest engine
  uint32_t dma_engine_mask = 0;
  int64_t bytes = 0;  // DMA: bytes written to the destination; compute: SBUF/PSUM bytes read + written
  int64_t flops = 0;  // arithmetic operations (a multiply-add is 2)
  // The PE's flops as MFU counts them, the profiler's `adjusted_flops` [R2]: a matmul's flops times
  // its input dtype's weight (MachineConfig::pe_mfu_*_factor); 0 off the PE.
  double adjusted_flops = 0;
  bool whole_core = false;  // kernel nodes: every engine and queue of the core is busy for busy_ns
};

// A formula's engine cycles, `fixed + max(floor, data)`: `data` is the part that streams the
// operands through the SBUF/PSUM interfaces, which an operand's innermost stride past the
// full-rate limit slows [A1]; `floor` the initiation-interval floor (MIN_II, MIN_II_DYNAMIC) and
// `fixed` a start-up (GPSIMD_START) or a fixed extra pass, which it does not.
struct EngineCycles {
  double data = 0;
  double floor = 0;
  double fixed = 0;
  // `data` is already the rate of the operands' strides (the v3 DVE perf modes [A2]).
  bool stridesPriced = false;
};

class Hwm {
 public:
  explicit Hwm(MachineConfig config);
  virtual ~Hwm();
  Hwm(const Hwm&) = delete;
  Hwm& operator=(const Hwm&) = delete;

  const MachineConfig& config() const { return cfg_; }

  // The engine that runs `I`: its `engine` field, or for Unassigned the natural engine of its
  // class (Matmult -> PE; DMA class -> SP, which triggers the queue; Iota / affine select -> Pool;
  // Activation and ReadActivationAccumulator -> Activation; everything else -> DVE).
  static Engine engineOf(const Instruction& I);
  double clockGhz(Engine e) const;

  // Dispatches on the node class, with I's operand shapes made here (patternShape of each). Kernel
  // nodes: IT55 (InstNKIKernel) and IT56 (InstNKIKLIRKernel) are priced here through the
  // registered HwmExtension (their kernel travels with them); IT54 (InstBIRKernel) only by a model
  // that knows the library leaves (TrainiumHwm overrides it).
  Latency getLatency(const Instruction& I) const;
  // The same when the caller already has I's operand shapes, ins then outs (patternShape of each,
  // as bir::verifyInstruction makes them): the simulator's decoder.
  Latency getLatency(const Instruction& I, const PatternShape* shapes) const;
  // One formula per node class, on I and its operand shapes (ins then outs): the formulas read
  // element counts from the shapes rather than walking the patterns again (the decoder has them).
#define BIR_NODE_CLASS(C) virtual Latency getLatency(const Inst##C& I, const PatternShape* shapes) const;
#include "NodeClasses.def"
#undef BIR_NODE_CLASS
  // Kernel nodes are priced by expanding them, which reads no operand shape: their entries above
  // call these, the signatures seed 000 gives them (TrainiumHwm overrides the first).
  virtual Latency getLatency(const InstBIRKernel& I) const;
  virtual Latency getLatency(const InstNKIKernel& I) const;
  virtual Latency getLatency(const InstNKIKLIRKernel& I) const;

 protected:
  // A compute instruction of `cycles` on I's engine (its data part slowed by a strided SBUF/PSUM
  // operand [A1], except on the PE), with the access overhead and the bytes its operands move;
  // `shapes`: its operands' (ins then outs).
  Latency compute(const Instruction& I, EngineCycles cycles, int64_t flops, const PatternShape* shapes) const;
  // max(MIN_II, n) [I]
  EngineCycles minII(double n) const;
  // An SBUF/PSUM operand whose innermost stride is past sram_full_rate_max_stride_bytes [A1].
  bool stridedOperand(const Instruction& I) const;
  // GPSIMD_START + n: iota and affine_select [I], and the GpSimd-only instructions without a
  // published cost (ours, by analogy with those). Not the GpSimd forms of instructions other
  // engines also run (tensor_copy, tensor_scalar, tensor_tensor, memset, rng): their pages give one
  // formula for every engine, without GPSIMD_START.
  EngineCycles poolCycles(double n) const;

  MachineConfig cfg_;
};

// The engine a node class runs on when its instruction names none: the one engine of each
// single-engine class (the decoder's engineAllowed reads it so), the vector engine where
// several may run it.
inline Engine defaultEngine(NodeClass nc) {
  switch (nc) {
    case NodeClass::Matmult:
    case NodeClass::BIRKernel:
    case NodeClass::NKIKernel:
    case NodeClass::NKIKLIRKernel:
      return Engine::PE;
    case NodeClass::Iota:
    case NodeClass::AffineSelect:
    case NodeClass::TensorPartitionReduce:
    case NodeClass::LocalGather:
    case NodeClass::Gather:
    case NodeClass::SequenceBounds:
    case NodeClass::NonzeroWithCount:
      return Engine::Pool;
    case NodeClass::Activation:
    case NodeClass::ReadActivationAccumulator:
      return Engine::Activation;
    default:
      return Engine::DVE;
  }
}

// Inline: every instruction's pricing asks it.
inline double Hwm::clockGhz(Engine e) const {
  switch (e) {
    case Engine::PE:
      return cfg_.pe_clock_ghz;
    case Engine::Activation:
      return cfg_.act_clock_ghz;
    case Engine::Pool:
      return cfg_.pool_clock_ghz;
    case Engine::SP:
    case Engine::DMA:
      return cfg_.sp_clock_ghz;
    case Engine::DVE:
    case Engine::Unassigned:
      return cfg_.dve_clock_ghz;
  }
  return cfg_.dve_clock_ghz;
}

// Inline: asked several times of every instruction a module is prepared with (the decoder, the
// formulas), across the library boundary.
inline Engine Hwm::engineOf(const Instruction& I) {
  const NodeClass nc = I.nodeClass();
  if (nc == NodeClass::DMA && (I.engine == Engine::Unassigned || I.engine == Engine::DMA))
    return Engine::SP;
  if (I.engine != Engine::Unassigned) return I.engine;
  if (I.opcode() == InstructionType::CustomOp) return Engine::Pool;  // Custom C++ operators run on GpSimd
  return defaultEngine(nc);
}

// NeuronCore-v3 (trn2): v3 numbers, DVE performance modes, FP8 double-row matmul.
class NeuronCoreV3Hwm : public Hwm {
 public:
  explicit NeuronCoreV3Hwm(MachineConfig config = machineConfig("trn2")) : Hwm(std::move(config)) {}
  using Hwm::getLatency;
  Latency getLatency(const InstTensorCopy& I, const PatternShape* shapes) const override;
  Latency getLatency(const InstTensorScalar& I, const PatternShape* shapes) const override;
  Latency getLatency(const InstTensorScalarPtr& I, const PatternShape* shapes) const override;
  Latency getLatency(const InstTensorTensor& I, const PatternShape* shapes) const override;
  Latency getLatency(const InstMatmult& I, const PatternShape* shapes) const override;

 private:
  // The cycles of a copy / tensor_scalar of n elements per partition in the v3 DVE perf mode [A2],
  // or none where the mode does not apply.
  std::optional<EngineCycles> dveCopyLikePerfMode(const Instruction& I, double n) const;
  template <class TensorScalarInst>
  Latency tensorScalarInPerfMode(const TensorScalarInst& I, const PatternShape* shapes) const;
};

// ---- kernel nodes: the hook libwalrus fills ----
// A kernel node is priced by expanding it with the real builder (InlineBIRKernel's leaves for IT54,
// the IT55 / IT56 resolvers) into a scratch module and scheduling the expansion with the
// simulator's scheduler in timing mode, on the same Hwm. The expanders live in libwalrus and the
// scheduler in libnxsim, both above libBIR (libwalrus -> libnxsim -> libBIR), so libBIR cannot call
// them: libwalrus registers this extension when it is loaded (walrus/TrainiumHwm.cpp).
struct HwmExtension {
  // The latency of an IT55 / IT56 node priced by `hwm` (bir::Hwm::getLatency of InstNKIKernel /
  // InstNKIKLIRKernel).
  Latency (*carried_kernel_latency)(const Hwm& hwm, const Instruction& node) = nullptr;
  // The Trainium model of `config` (TrainiumHwm / Trainium2Hwm), which makeHwm returns.
  std::unique_ptr<Hwm> (*make_trainium_hwm)(const MachineConfig& config) = nullptr;
};
// Called once by libwalrus; a second registration replaces the first.
void registerHwmExtension(const HwmExtension& extension);

// The latency model the simulator uses for `arch`: libwalrus's Trainium model. Throws
// sim::SimulationError for an unknown arch, or when libwalrus is not loaded.
std::unique_ptr<Hwm> makeHwm(std::string_view arch);

}  // namespace bir
