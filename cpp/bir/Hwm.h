// bir::Hwm, the hardware latency model: what one BIR instruction costs on a NeuronCore.
//
// The numbers and formulas are the public ones collected in ../shared/reference/nki-isa-and-hw.md
// (cited below as [ref §n] with the source key the page gives, e.g. [A1], [I]); where the public
// material is silent the choice is marked "(ours)". One MachineConfig per generation holds every
// number (units in the field names); Hwm turns an instruction into a Latency with one
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

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "KernelInstructions.h"

namespace bir {

// Every machine number of one NeuronCore generation. Frozen after construction; mirrored field by
// field in Python (neuronxsim.sim.MachineConfig) through fields().
struct MachineConfig {
  std::string arch;         // "trn1" | "trn2"
  std::string neuron_core;  // "NeuronCore-v2" | "NeuronCore-v3"

  // ---- memories [ref §1, §2; A1, A2] ----
  int64_t num_partitions = 128;
  int64_t sbuf_bytes_per_partition = 0;         // 192 KiB (v2), 224 KiB (v3)
  int64_t psum_bytes_per_partition = 16 * 1024;  // 8 banks of 2 KiB
  int64_t psum_banks = 8;
  int64_t psum_bank_bytes = 2048;
  // "up to 64K elements for SBUF or 4K elements for PSUM" per DVE/ACT instruction [A1]
  int64_t dve_act_max_free_elements_sbuf = 65536;
  int64_t dve_act_max_free_elements_psum = 4096;

  // ---- engines and clocks [ref §1] ----
  int64_t pe_rows = 128;
  int64_t pe_cols = 128;
  int64_t pe_max_moving_free_elements = 512;  // N <= 512 per nc_matmul (v2/v3) [I]
  double pe_clock_ghz = 0;
  double act_clock_ghz = 0;
  double dve_clock_ghz = 0;
  double pool_clock_ghz = 0;
  double sp_clock_ghz = 0;  // the Sync engine's clock is not published: the ACT clock (ours)

  // ---- cost constants [ref §3] ----
  int64_t min_ii_cycles = 64;             // MIN_II, "roughly 64 engine cycles" [I]
  int64_t gpsimd_start_cycles = 150;      // GPSIMD_START, "roughly 150 engine cycles" [I]
  int64_t min_ii_dynamic_cycles = 600;    // MIN_II_DYNAMIC [I]
  int64_t sram_access_cycles = 60;        // "static overhead approximately 60 cycles" per access [A1]
  int64_t act_read_accumulator_cycles = 64;  // ActReadAccumulator, "roughly 64 ScalarE cycles" [A1]
  double pe_fp32_factor = 4;              // fp32 matmul "4 * max(...)" [I]
  double pe_fp32_transpose_factor = 4;    // v3 transpose mode: "2x speedup in FP32 transpose" [A2]
  bool dve_perf_modes = false;            // v3 DVE 2x/4x modes [A2]
  bool pe_fp8_double_row = false;         // v3 FP8 double_row: 2x throughput [A2]
  bool has_range_select = false;          // range_select is v3+ [I]
  bool act_reduce_add_only = true;        // "v2 reduce = add only" [I activation]

  // ---- DMA [ref §1, §3; D1] ----
  int64_t dma_engines = 16;               // per core, each serving 8 partitions
  int64_t dma_partitions_per_engine = 8;
  int64_t dma_queues = 16;
  double dma_engine_bandwidth_gbps = 27.2;  // GB/s per DMA engine [D1]
  double dma_fixed_ns = 200;              // per transfer, from the 32 KiB / 1416 ns calibration [D1]
  double dma_dge_instruction_ns = 0;      // DGE (v3): "about 600 ns" per instruction [A2]
  int64_t dma_trigger_cycles = 64;        // the issuing engine's cost to trigger a queue (ours: MIN_II)
  int64_t dma_min_burst_bytes = 64;       // a shorter contiguous run costs this much (ours)

  double peBf16PeakFlopsPerNs() const { return 2.0 * pe_rows * pe_cols * pe_clock_ghz; }
  double dmaCoreBandwidthBytesPerNs() const { return dma_engines * dma_engine_bandwidth_gbps; }

  // Visits every field as v("name", value) (Python mirror, equality in tests).
  template <class V>
  void fields(V&& v) const {
    v("arch", arch);
    v("neuron_core", neuron_core);
    v("num_partitions", num_partitions);
    v("sbuf_bytes_per_partition", sbuf_bytes_per_partition);
    v("psum_bytes_per_partition", psum_bytes_per_partition);
    v("psum_banks", psum_banks);
    v("psum_bank_bytes", psum_bank_bytes);
    v("dve_act_max_free_elements_sbuf", dve_act_max_free_elements_sbuf);
    v("dve_act_max_free_elements_psum", dve_act_max_free_elements_psum);
    v("pe_rows", pe_rows);
    v("pe_cols", pe_cols);
    v("pe_max_moving_free_elements", pe_max_moving_free_elements);
    v("pe_clock_ghz", pe_clock_ghz);
    v("act_clock_ghz", act_clock_ghz);
    v("dve_clock_ghz", dve_clock_ghz);
    v("pool_clock_ghz", pool_clock_ghz);
    v("sp_clock_ghz", sp_clock_ghz);
    v("min_ii_cycles", min_ii_cycles);
    v("gpsimd_start_cycles", gpsimd_start_cycles);
    v("min_ii_dynamic_cycles", min_ii_dynamic_cycles);
    v("sram_access_cycles", sram_access_cycles);
    v("act_read_accumulator_cycles", act_read_accumulator_cycles);
    v("pe_fp32_factor", pe_fp32_factor);
    v("pe_fp32_transpose_factor", pe_fp32_transpose_factor);
    v("dve_perf_modes", dve_perf_modes);
    v("pe_fp8_double_row", pe_fp8_double_row);
    v("has_range_select", has_range_select);
    v("act_reduce_add_only", act_reduce_add_only);
    v("dma_engines", dma_engines);
    v("dma_partitions_per_engine", dma_partitions_per_engine);
    v("dma_queues", dma_queues);
    v("dma_engine_bandwidth_gbps", dma_engine_bandwidth_gbps);
    v("dma_fixed_ns", dma_fixed_ns);
    v("dma_dge_instruction_ns", dma_dge_instruction_ns);
    v("dma_trigger_cycles", dma_trigger_cycles);
    v("dma_min_burst_bytes", dma_min_burst_bytes);
  }
};

// The configuration of "trn1" / "trn2" (also accepted: "gen2"/"gen3", the BIR JSON arch names,
// and "NeuronCore-v2"/"NeuronCore-v3"). Throws sim::SimulationError for anything else.
const MachineConfig& machineConfig(std::string_view arch);
// "trn1" for any accepted spelling of NeuronCore-v2, "trn2" for v3; "" when unknown.
std::string canonicalArch(std::string_view arch);

// What one instruction costs. Compute instructions occupy their engine for `cycles` engine cycles
// (the documented cost formula: an initiation interval for back-to-back instructions) and their
// results are visible `access_ns` later (the SBUF/PSUM access overhead). DMA instructions occupy
// their issuing engine for `cycles` (the trigger) and then their queue: `dma_fixed_ns` of fixed
// cost, then `dma_transfer_ns` of payload on the DMA engines in `dma_engine_mask`.
struct Latency {
  Engine engine = Engine::Unassigned;  // the engine that executes (DMA: triggers) the instruction
  double cycles = 0;                   // engine cycles, in that engine's clock
  double busy_ns = 0;                  // cycles / clock
  double access_ns = 0;                // after busy_ns, until the results are visible
  int64_t dma_queue = -1;              // DMA only
  double dma_fixed_ns = 0;
  double dma_transfer_ns = 0;
  uint32_t dma_engine_mask = 0;
  int64_t bytes = 0;  // DMA: bytes written to the destination; compute: SBUF/PSUM bytes read + written
  int64_t flops = 0;  // arithmetic operations (a multiply-add is 2)
  bool whole_core = false;  // kernel nodes: every engine and queue of the core is busy for busy_ns
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

  // Dispatches on the node class. Kernel nodes: IT55 (InstNKIKernel) and IT56 (InstNKIKLIRKernel)
  // are priced here through the registered HwmExtension (their kernel travels with them); IT54
  // (InstBIRKernel) only by a model that knows the library leaves (TrainiumHwm overrides it).
  Latency getLatency(const Instruction& I) const;
#define BIR_NODE_CLASS(C) virtual Latency getLatency(const Inst##C& I) const;
#include "NodeClasses.def"
#undef BIR_NODE_CLASS

 protected:
  // A compute instruction of `cycles` engine cycles on I's engine, with the access overhead and
  // the bytes its operands move.
  Latency compute(const Instruction& I, double cycles, int64_t flops) const;
  // max(MIN_II, n) [I]
  double minII(double n) const;
  // The formula used for elementwise work when an engine is not DVE/ACT: GpSimd start-up plus one
  // element per partition per cycle (ours, by analogy with iota / affine_select [I]).
  double poolCycles(double n) const;

  MachineConfig cfg_;
};

// NeuronCore-v3 (trn2): v3 numbers, DVE performance modes, FP8 double-row matmul.
class NeuronCoreV3Hwm : public Hwm {
 public:
  explicit NeuronCoreV3Hwm(MachineConfig config = machineConfig("trn2")) : Hwm(std::move(config)) {}
  using Hwm::getLatency;
  Latency getLatency(const InstTensorCopy& I) const override;
  Latency getLatency(const InstTensorScalar& I) const override;
  Latency getLatency(const InstTensorScalarPtr& I) const override;
  Latency getLatency(const InstTensorTensor& I) const override;
  Latency getLatency(const InstMatmult& I) const override;

 private:
  // The v3 DVE perf-mode speed-up (1, 2 or 4) of a copy / tensor_scalar [A2].
  double dveCopyLikeSpeedup(const Instruction& I) const;
  template <class TensorScalarInst>
  Latency tensorScalarInPerfMode(const TensorScalarInst& I) const;
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
