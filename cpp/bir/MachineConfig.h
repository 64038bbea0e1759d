// The target description: every machine number of each NeuronCore generation and the names a
// generation goes by, in one place. Every layer reads its numbers from here: the latency model
// (bir::Hwm), the simulator, the legality rules, the IT54 kernel builder, and, through the Python
// mirror neuronxsim.bir.target, the NKI tracer, the codegen and the command line. Only the NumPy
// reference executor (neuronxsim/reference) keeps its own copies, because it is the oracle.
//
// The numbers are the public ones collected in ../shared/reference/nki-isa-and-hw.md (cited as
// [ref §n] with the source key the page gives, e.g. [A1], [I]); where the public material is
// silent the choice is marked "(ours)". Units are in the field names.
//
// Adding a generation: a <name>Config() in MachineConfig.cpp and its row in the name table there;
// a Hwm subclass in Hwm.cpp when its cost formulas differ (docs/architecture.md has the checklist).
#pragma once

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
  bool has_hardware_dge = false;          // DMA descriptors generated in hardware (DGE) are v3+ [A2]
  bool has_custom_ops = false;  // Neuron Custom C++ operators on the GpSimd cores (Inf2, Trn1 only)
  bool act_reduce_add_only = true;        // "v2 reduce = add only" [I activation]

  // ---- DMA [ref §1, §3; D1] ----
  int64_t dma_engines = 16;               // per core, each serving 8 partitions
  int64_t dma_partitions_per_engine = 8;
  int64_t dma_queues = UniformConfig::kDmaQueues;
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
    v("has_hardware_dge", has_hardware_dge);
    v("has_custom_ops", has_custom_ops);
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

// The configuration of a generation by any of its names: "trn1" / "trn2", the BIR JSON arch names
// "gen2" / "gen3", "NeuronCore-v2" / "NeuronCore-v3" (and "inf2", a NeuronCore-v2 part). Throws
// sim::SimulationError naming the known ones for anything else.
const MachineConfig& machineConfig(std::string_view arch);
// "trn1" for any accepted name of NeuronCore-v2, "trn2" for v3; "" when unknown.
std::string canonicalArch(std::string_view arch);
// The known generations by their canonical names, oldest first ("trn1", "trn2").
const std::vector<std::string>& knownArchs();
// Every name accepted for the generation `arch` (canonical name first).
std::vector<std::string> archAliases(std::string_view arch);

}  // namespace bir
