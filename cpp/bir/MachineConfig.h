// The target description: every machine number of each NeuronCore generation and the names a
// generation goes by, in one place. Every layer reads its numbers from here: the latency model
// (bir::Hwm), the simulator, the legality rules, the IT54 kernel builder, and, through the Python
// mirror neuronxsim.bir.target, the NKI tracer, the codegen and the command line. Only the NumPy
// reference executor (neuronxsim/reference) keeps its own copies, because it is the oracle.
//
// The numbers are public ones, cited by source key ([A1], [I], ...: docs/sources.md lists them;
// older comments cite [ref §n], a section of the facts collected from those sources); where the
// public material is silent the choice is marked "(ours)". Units are in the field names.
//
// Adding a generation: a <name>Config() in MachineConfig.cpp and its row in the name table there;
// a Hwm subclass in Hwm.cpp when its cost formulas differ (docs/architecture.md has the checklist).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bir {

// The numbers every known generation shares, as compile-time constants for code that takes no arch
// (the IT54 kernel builder's tiles, the verifier's start-partition rule, the PSUM bank of an
// address). MachineConfig's fields default to them, and a test checks every generation against
// them: a generation that differs gets its own value in its config, and the code that used the
// constant must then read that generation's MachineConfig instead.
struct UniformConfig {
  static constexpr int64_t kPartitions = 128;       // SBUF/PSUM partitions = PE rows (K) = PE columns (M)
  static constexpr int64_t kPsumBankBytes = 2048;   // per partition; 8 banks of 2 KiB [A1]
  static constexpr int64_t kPsumBanks = 8;
  static constexpr int64_t kPeMaxMoving = 512;      // N <= 512 per nc_matmul (v2/v3) [I]: one fp32 bank
  static constexpr int64_t kDmaQueues = 16;         // per core [D1]
  static constexpr int64_t kBnStatsMaxFree = 512;   // bn_stats: N <= 512 [I]
  static constexpr int64_t kMax8MaxFree = 16384;    // max8 / find_index8 / match_replace8 [I]
  static constexpr int64_t kDveTransposeMax = 32;   // DVE transposes blocks of up to [32, 32] [I]
  static constexpr int64_t kApMaxFreeDims = 4;      // free-dimension pattern: "up to 4-D per partition" [A1]
};

// The generation a module is for when nothing says (Module::arch's default): NeuronCore-v2.
inline constexpr const char* kDefaultBirArch = "gen2";

// Every machine number of one NeuronCore generation. Frozen after construction; mirrored field by
// field in Python (neuronxsim.bir.target.MachineConfig) through fields().
struct MachineConfig {
  std::string arch;         // "trn1" | "trn2": the name the tools take (--arch, nki.trace(arch=))
  std::string bir_arch;     // "gen2" | "gen3": Module::arch in BIR JSON
  std::string neuron_core;  // "NeuronCore-v2" | "NeuronCore-v3"
  int64_t neuron_core_version = 0;  // 2 | 3: the N of NeuronCore-vN (picks the latency model class)

  // ---- memories [ref §1, §2; A1, A2] ----
  int64_t num_partitions = UniformConfig::kPartitions;
  int64_t sbuf_bytes_per_partition = 0;         // 192 KiB (v2), 224 KiB (v3)
  int64_t psum_bytes_per_partition = UniformConfig::kPsumBanks * UniformConfig::kPsumBankBytes;
  int64_t psum_banks = UniformConfig::kPsumBanks;
  int64_t psum_bank_bytes = UniformConfig::kPsumBankBytes;
  // "up to 64K elements for SBUF or 4K elements for PSUM" per DVE/ACT instruction [A1]
  int64_t dve_act_max_free_elements_sbuf = 65536;
  int64_t dve_act_max_free_elements_psum = 4096;

  // ---- engines and clocks [ref §1] ----
  int64_t pe_rows = UniformConfig::kPartitions;
  int64_t pe_cols = UniformConfig::kPartitions;
  int64_t pe_max_moving_free_elements = UniformConfig::kPeMaxMoving;
  int64_t pe_tile_granularity = 0;  // PE tiling splits the array into 2 x 64 (v2) / 4 x 32 (v3) tiles [I]
  double pe_clock_ghz = 0;
  double act_clock_ghz = 0;
  double dve_clock_ghz = 0;
  double pool_clock_ghz = 0;
  double sp_clock_ghz = 0;  // the Sync engine's clock is not published: the ACT clock (ours)

  // ---- instruction limits [ref §2, §4] ----
  int64_t ap_max_free_dims = UniformConfig::kApMaxFreeDims;
  int64_t dve_transpose_max = UniformConfig::kDveTransposeMax;
  int64_t bn_stats_max_free_elements = UniformConfig::kBnStatsMaxFree;
  int64_t max8_min_free_elements = 8;  // max8 / nc_find_index8: 8..16,384 per partition [I]
  int64_t max8_max_free_elements = UniformConfig::kMax8MaxFree;
  int64_t gpsimd_core_partitions = 16;  // GpSimd: 8 cores, core i wired to partitions [16i, 16i+16) [ref §1]
  int64_t local_gather_max_indices = 4096;  // local_gather: num_valid_indices "at most 4096" [I]
  int64_t gather_group_elements = 512;  // nc_n_gather: "n = ceil(elems_per_partition / 512)" groups [I]

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
  // MFU counts a matmul's flops as the profiler's `adjusted_flops` does [R2]: weighted by its input
  // dtype against the bf16 peak (the PE rate of that dtype over the bf16 rate), so that a PE kept
  // busy by matmuls of any dtype is at most 100%: bf16 / fp16 / tf32 (float32r) 1.0x, fp32 4.0x
  // (four passes), fp8 1.0x on Trn1 / Inf2 and 0.5x on Trn2 / Trn3 (twice the bf16 rate by double
  // row). UINT8 (0.5x) and MX (0.25x) are no PE input dtype of these generations.
  double pe_mfu_fp32_factor = 4;
  double pe_mfu_fp8_factor = 1;
  bool dve_perf_modes = false;            // v3 DVE 2x/4x modes [A2]
  bool pe_fp8_double_row = false;         // v3 FP8 double_row: 2x throughput [A2]
  bool has_range_select = false;          // range_select is v3+ [I]
  bool has_custom_ops = false;  // Neuron Custom C++ operators on the GpSimd cores (Inf2, Trn1 only)
  bool has_gpsimd_v3_instructions = false;  // GpSimd nonzero_with_count, rng, rand_set_state / _get_state: v3+ [I]
  bool act_reduce_add_only = true;        // "v2 reduce = add only" [I activation]
  // The Scalar Engine's native tensor_copy is v3+ [I tensor_copy]; v2's ACT copies "by first
  // casting the input tile to FP32" (2.2x docs): the simulator copies through fp32 there.
  bool act_tensor_copy = false;
  bool act_bias_immediate = false;        // a number as activation's bias is v3+; v2 reads a [P, 1] tile [I activation]
  int64_t max_logical_cores = 1;          // NeuronCores one logical core (LNC) may span: LNC=2 is v3's [A2]
  // "When the most-minor F dimension stride is less than 16 bytes, SBUF/PSUM ... can supply a peak
  // bandwidth ... If [it] exceeds 16 bytes, the achievable bandwidth ... will be half ... roughly
  // 50% performance hit on the instructions" [A1]: the per-element part of an ACT/DVE/Pool formula
  // takes this factor longer past this stride (not its MIN_II floor or GPSIMD_START; Hwm::compute).
  int64_t sram_full_rate_max_stride_bytes = 16;
  double sram_strided_factor = 2;
  // v2: "VectorE and GpSimdE cannot access SBUF in parallel", "VectorE and ScalarE cannot access
  // PSUM in parallel" [A1]; both lifted on v3 [A2], where "DVE and ACT get full PSUM bandwidth in
  // parallel unless they hit the same bank" [A2]: each PSUM bank is a port they share.
  bool dve_pool_share_sbuf = true;
  bool dve_act_share_psum = true;
  bool dve_act_share_psum_banks = false;

  // ---- DMA [ref §1, §3; D1; the DMA bandwidth guide DB; the DGE guide G] ----
  // A transfer is spread over the DMA engines its on-chip partitions map to (8 partitions each;
  // DRAM to DRAM: all 16). Each engine works through its descriptors (contiguous runs) one at a
  // time, each taking max(dma_descriptor_ns, bytes / dma_engine_bandwidth_gbps); the engines are
  // shared by all queues, and the core's HBM traffic is limited to hbm_core_bandwidth_gbps.
  int64_t dma_engines = 16;               // per core, each serving 8 partitions
  int64_t dma_partitions_per_engine = 8;
  int64_t dma_queues = UniformConfig::kDmaQueues;
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
  // A direct DMA transpose by hardware DGE takes a source of 16 rows, a multiple of 128 columns
  // and 2-byte elements (the nisa.dma_transpose page's "DMA Direct Transpose Constraints").
  int64_t dma_hwdge_transpose_rows = 16;
  int64_t dma_hwdge_transpose_column_multiple = 128;
  int64_t dma_hwdge_transpose_dtype_bytes = 2;
  // An add-accumulating DMA moves data at "50% DMA throughput via DMA collective compute engines
  // prior to NeuronCore-v4" (trainium3_arch.rst).
  double dma_accumulate_factor = 0.5;
  int64_t dma_trigger_cycles = 64;        // the issuing engine's cost to trigger a queue (ours: MIN_II)

  double peBf16PeakFlopsPerNs() const { return 2.0 * pe_rows * pe_cols * pe_clock_ghz; }
  double dmaCoreBandwidthBytesPerNs() const {
    return std::min(static_cast<double>(dma_engines) * dma_engine_bandwidth_gbps, hbm_core_bandwidth_gbps);
  }

  // Visits every field as v("name", value) (Python mirror, equality in tests).
  template <class V>
  void fields(V&& v) const {
    v("arch", arch);
    v("bir_arch", bir_arch);
    v("neuron_core", neuron_core);
    v("neuron_core_version", neuron_core_version);
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
    v("pe_tile_granularity", pe_tile_granularity);
    v("pe_clock_ghz", pe_clock_ghz);
    v("act_clock_ghz", act_clock_ghz);
    v("dve_clock_ghz", dve_clock_ghz);
    v("pool_clock_ghz", pool_clock_ghz);
    v("sp_clock_ghz", sp_clock_ghz);
    v("ap_max_free_dims", ap_max_free_dims);
    v("dve_transpose_max", dve_transpose_max);
    v("bn_stats_max_free_elements", bn_stats_max_free_elements);
    v("max8_min_free_elements", max8_min_free_elements);
    v("max8_max_free_elements", max8_max_free_elements);
    v("gpsimd_core_partitions", gpsimd_core_partitions);
    v("local_gather_max_indices", local_gather_max_indices);
    v("gather_group_elements", gather_group_elements);
    v("min_ii_cycles", min_ii_cycles);
    v("gpsimd_start_cycles", gpsimd_start_cycles);
    v("min_ii_dynamic_cycles", min_ii_dynamic_cycles);
    v("sram_access_cycles", sram_access_cycles);
    v("static_instruction_overhead_cycles", static_instruction_overhead_cycles);
    v("semaphore_wait_ns", semaphore_wait_ns);
    v("act_read_accumulator_cycles", act_read_accumulator_cycles);
    v("pe_fp32_factor", pe_fp32_factor);
    v("pe_fp32_transpose_factor", pe_fp32_transpose_factor);
    v("pe_mfu_fp32_factor", pe_mfu_fp32_factor);
    v("pe_mfu_fp8_factor", pe_mfu_fp8_factor);
    v("dve_perf_modes", dve_perf_modes);
    v("pe_fp8_double_row", pe_fp8_double_row);
    v("has_range_select", has_range_select);
    v("has_custom_ops", has_custom_ops);
    v("has_gpsimd_v3_instructions", has_gpsimd_v3_instructions);
    v("act_reduce_add_only", act_reduce_add_only);
    v("act_tensor_copy", act_tensor_copy);
    v("act_bias_immediate", act_bias_immediate);
    v("max_logical_cores", max_logical_cores);
    v("sram_full_rate_max_stride_bytes", sram_full_rate_max_stride_bytes);
    v("sram_strided_factor", sram_strided_factor);
    v("dve_pool_share_sbuf", dve_pool_share_sbuf);
    v("dve_act_share_psum", dve_act_share_psum);
    v("dve_act_share_psum_banks", dve_act_share_psum_banks);
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
    v("dma_hwdge_transpose_rows", dma_hwdge_transpose_rows);
    v("dma_hwdge_transpose_column_multiple", dma_hwdge_transpose_column_multiple);
    v("dma_hwdge_transpose_dtype_bytes", dma_hwdge_transpose_dtype_bytes);
    v("dma_accumulate_factor", dma_accumulate_factor);
    v("dma_trigger_cycles", dma_trigger_cycles);
  }
};

// The configuration of a generation by any of its names: "trn1" / "trn2", the BIR JSON arch names
// "gen2" / "gen3", "NeuronCore-v2" / "NeuronCore-v3" (and "inf2", a NeuronCore-v2 part). Throws
// sim::SimulationError naming the known ones for anything else.
const MachineConfig& machineConfig(std::string_view arch);
// "trn1" for any accepted name of NeuronCore-v2, "trn2" for v3; "" when unknown.
std::string canonicalArch(std::string_view arch);
// The known generations by their canonical names, oldest first ("trn1", "trn2").
const std::vector<std::string>& knownArchs();
// Every generation by all its names ("trn1 = gen2 = NeuronCore-v2, ..."), for a refusal.
std::string knownArchNames();
// The canonical name of the generation a module of arch `moduleArch` (Module::arch) is simulated
// on: the module's own when `requested` is empty, else `requested`, which must name the same
// generation (a module is made for one: it ran as another, its numerics could change silently).
// Throws sim::SimulationError otherwise.
std::string runArch(std::string_view requested, std::string_view moduleArch);
// Every name accepted for the generation `arch` (canonical name first).
std::vector<std::string> archAliases(std::string_view arch);

}  // namespace bir
