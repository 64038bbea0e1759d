// bir::Hwm, the hardware latency model: what one BIR instruction costs on a NeuronCore.
//
// The numbers and formulas are the public ones collected in ../shared/reference/nki-isa-and-hw.md
// (cited below as [ref §n] with the source key the page gives, e.g. [A1], [I]); where the public
// material is silent the choice is marked "(ours)". One MachineConfig per generation holds every
// number (units in the field names); Hwm turns an instruction into a Latency with one
// getLatency overload per node class (generated from NodeClasses.def, so a new node class cannot be
// forgotten). TrainiumHwm has the trn1 (NeuronCore-v2) numbers, Trainium2Hwm the trn2 (v3) ones and
// the v3-only behaviour (DVE performance modes, FP8 double-row matmul, faster FP32 transpose).
//
// The simulator (cpp/sim) calls getLatency once per instruction when it decodes a module; the
// cost of a static instruction does not depend on data.
#pragma once

#include <algorithm>
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
  // "add a static instruction overhead of 100 engine cycles" for back-to-back small or dependent
  // instructions [A1 VectorE cost model]; "in the order of ~100 cycles" [P1 Opt #5a]. Charged as
  // pipeline latency of ACT/DVE/Pool instructions: hidden between independent instructions,
  // paid by one that waits for the result.
  int64_t static_instruction_overhead_cycles = 100;
  // An instruction that waits for another's result (its engine's or another engine's) starts this
  // long after the result is visible: the semaphore round trip. Fitted: a chain of dependent
  // one-element ScalarE activations has an initiation interval of "189 ns (264 ScalarE cycles)"
  // [P1 Opt #5a] = (MIN_II + static overhead + SRAM access) / 1.4 GHz + 30 ns; the DMA overview's
  // profile (nki-dma-intro-3.png) shows ~40 ns from the end of an activation to the Sync engine
  // instruction waiting for it.
  double semaphore_wait_ns = 30;
  int64_t act_read_accumulator_cycles = 64;  // ActReadAccumulator, "roughly 64 ScalarE cycles" [A1]
  double pe_fp32_factor = 4;              // fp32 matmul "4 * max(...)" [I]
  double pe_fp32_transpose_factor = 4;    // v3 transpose mode: "2x speedup in FP32 transpose" [A2]
  bool dve_perf_modes = false;            // v3 DVE 2x/4x modes [A2]
  bool pe_fp8_double_row = false;         // v3 FP8 double_row: 2x throughput [A2]
  bool has_range_select = false;          // range_select is v3+ [I]
  bool act_reduce_add_only = true;        // "v2 reduce = add only" [I activation]
  // "When the most-minor F dimension stride is less than 16 bytes, SBUF/PSUM ... can supply a peak
  // bandwidth ... If [it] exceeds 16 bytes, the achievable bandwidth ... will be half ... roughly
  // 50% performance hit on the instructions" [A1]: ACT/DVE/Pool formulas x2 past this stride.
  int64_t sram_full_rate_max_stride_bytes = 16;
  double sram_strided_factor = 2;
  // v2: "VectorE and GpSimdE cannot access SBUF in parallel", "VectorE and ScalarE cannot access
  // PSUM in parallel" [A1]; both lifted on v3 [A2].
  bool dve_pool_share_sbuf = true;
  bool dve_act_share_psum = true;

  // ---- DMA [ref §1, §3; D1; the DMA bandwidth guide DB; the DGE guide G] ----
  // A transfer is spread over the DMA engines its on-chip partitions map to (8 partitions each;
  // DRAM to DRAM: all 16). Each engine works through its descriptors (contiguous runs) one at a
  // time, each taking max(dma_descriptor_ns, bytes / dma_engine_bandwidth_gbps); the engines are
  // shared by all queues, and the core's HBM traffic is limited to hbm_core_bandwidth_gbps.
  int64_t dma_engines = 16;               // per core, each serving 8 partitions
  int64_t dma_partitions_per_engine = 8;
  int64_t dma_queues = 16;
  // Sustained bytes/ns per engine with large payloads: 17 (Trainium1), 23 (Trainium2) [DB, D1].
  double dma_engine_bandwidth_gbps = 0;
  // Per-descriptor (DMA packet) floor: "the DMA packet rate---not HBM bandwidth---becomes the
  // limiting factor" with small payloads [DB]. Fitted per generation (see trn1Config/trn2Config).
  double dma_descriptor_ns = 0;
  // From the trigger to the first data moving, and from the last data moved to the completion
  // semaphore, ~1300 ns "semaphore-to-start latency ... cross-engine" in all [DB]; split as the
  // DMA overview's profile shows it (nki-dma-intro-3.png: trigger to data ~1000 ns, data end to
  // the waiting ScalarE instruction ~315 ns, of which semaphore_wait_ns is the wait itself).
  // Latency, not occupancy: a queue's next transfer starts while this one's completion travels.
  double dma_start_latency_ns = 1000;
  double dma_completion_ns = 270;
  double hbm_core_bandwidth_gbps = 0;     // the chip's HBM bandwidth / its NeuronCores [A1, H4]
  // Hardware DGE: "Each DGE-based DMA instruction takes about 600 ns" on v3 [A2, G], on one of
  // two DGE instances, DGE[0] commanded by the ScalarE sequencer and DGE[1] by the Sync engine
  // [A2 figure]; it generates descriptors while the start latency runs, so it delays a transfer
  // only past that. Software DGE generates them on GpSimd (the same 600 ns, ours).
  double dma_dge_instruction_ns = 0;
  bool has_hardware_dge = false;          // "NeuronCore-v3 hardware DGE" [A2]; none on v2
  // DMA transposes move data at 90% of the copy throughput HBM -> SBUF and 50% SBUF -> SBUF [A2].
  double dma_transpose_dram_factor = 0.9;
  double dma_transpose_sbuf_factor = 0.5;
  // An add-accumulating DMA moves data at "50% DMA throughput via DMA collective compute engines
  // prior to NeuronCore-v4" (trainium3_arch.rst).
  double dma_accumulate_factor = 0.5;
  int64_t dma_trigger_cycles = 64;        // the issuing engine's cost to trigger a queue (ours: MIN_II)

  // ---- kernel nodes (analytic, ours) ----
  double kernel_fixed_ns = 2000;          // launch + drain of one macro kernel (ours)

  double peBf16PeakFlopsPerNs() const { return 2.0 * pe_rows * pe_cols * pe_clock_ghz; }
  double dmaCoreBandwidthBytesPerNs() const {
    return std::min(static_cast<double>(dma_engines) * dma_engine_bandwidth_gbps, hbm_core_bandwidth_gbps);
  }

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
    v("static_instruction_overhead_cycles", static_instruction_overhead_cycles);
    v("semaphore_wait_ns", semaphore_wait_ns);
    v("act_read_accumulator_cycles", act_read_accumulator_cycles);
    v("pe_fp32_factor", pe_fp32_factor);
    v("pe_fp32_transpose_factor", pe_fp32_transpose_factor);
    v("dve_perf_modes", dve_perf_modes);
    v("pe_fp8_double_row", pe_fp8_double_row);
    v("has_range_select", has_range_select);
    v("act_reduce_add_only", act_reduce_add_only);
    v("sram_full_rate_max_stride_bytes", sram_full_rate_max_stride_bytes);
    v("sram_strided_factor", sram_strided_factor);
    v("dve_pool_share_sbuf", dve_pool_share_sbuf);
    v("dve_act_share_psum", dve_act_share_psum);
    v("dma_engines", dma_engines);
    v("dma_partitions_per_engine", dma_partitions_per_engine);
    v("dma_queues", dma_queues);
    v("dma_engine_bandwidth_gbps", dma_engine_bandwidth_gbps);
    v("dma_descriptor_ns", dma_descriptor_ns);
    v("dma_start_latency_ns", dma_start_latency_ns);
    v("dma_completion_ns", dma_completion_ns);
    v("hbm_core_bandwidth_gbps", hbm_core_bandwidth_gbps);
    v("dma_dge_instruction_ns", dma_dge_instruction_ns);
    v("has_hardware_dge", has_hardware_dge);
    v("dma_transpose_dram_factor", dma_transpose_dram_factor);
    v("dma_transpose_sbuf_factor", dma_transpose_sbuf_factor);
    v("dma_accumulate_factor", dma_accumulate_factor);
    v("dma_trigger_cycles", dma_trigger_cycles);
    v("kernel_fixed_ns", kernel_fixed_ns);
  }
};

// The configuration of "trn1" / "trn2" (also accepted: "gen2"/"gen3", the BIR JSON arch names,
// and "NeuronCore-v2"/"NeuronCore-v3"). Throws sim::SimulationError for anything else.
const MachineConfig& machineConfig(std::string_view arch);
// "trn1" for any accepted spelling of NeuronCore-v2, "trn2" for v3; "" when unknown.
std::string canonicalArch(std::string_view arch);

// What one instruction costs. Compute instructions occupy their engine for `cycles` engine cycles
// (the documented cost formula: an initiation interval for back-to-back instructions) and their
// results are visible `access_ns` later (the pipeline's static overhead and the SBUF/PSUM access).
// DMA instructions occupy their issuing engine for `cycles` (the trigger); descriptors come from a
// DGE for `dma_dge_ns` when the instruction uses one; the transfer starts `dma_latency_ns` after
// the trigger and occupies the DMA engines of `dma_engine_mask` for `dma_transfer_ns` each, and
// the core's HBM for `dma_hbm_ns`; its writes are visible `access_ns` after it ends.
struct Latency {
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
  bool whole_core = false;  // kernel nodes: every engine of the core is busy for busy_ns
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

  // Dispatches on the node class.
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
  // An SBUF/PSUM operand whose innermost stride is past sram_full_rate_max_stride_bytes [A1].
  bool stridedOperand(const Instruction& I) const;
  // The formula used for elementwise work when an engine is not DVE/ACT: GpSimd start-up plus one
  // element per partition per cycle (ours, by analogy with iota / affine_select [I]).
  double poolCycles(double n) const;

  MachineConfig cfg_;
};

// NeuronCore-v2 (trn1): the public v2 numbers.
class TrainiumHwm : public Hwm {
 public:
  TrainiumHwm();

 protected:
  explicit TrainiumHwm(MachineConfig config) : Hwm(std::move(config)) {}
};

// NeuronCore-v3 (trn2): v3 numbers, DVE performance modes, FP8 double-row matmul.
class Trainium2Hwm : public TrainiumHwm {
 public:
  Trainium2Hwm();
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

std::unique_ptr<Hwm> makeHwm(std::string_view arch);

}  // namespace bir
