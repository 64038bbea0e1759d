#include "MachineConfig.h"

#include <array>

#include "Error.h"

namespace bir {
namespace {

MachineConfig trn1Config() {
  MachineConfig c;
  c.arch = "trn1";
  c.bir_arch = "gen2";
  c.neuron_core = "NeuronCore-v2";
  c.neuron_core_version = 2;
  c.sbuf_bytes_per_partition = 192 * 1024;  // 24 MiB = 128 x 192 KiB [A1]
  c.pe_clock_ghz = 2.8;                     // [A1]
  c.pe_tile_granularity = c.pe_rows / 2;    // 2 x 64 PE tiles [I]
  c.act_clock_ghz = 1.4;
  c.dve_clock_ghz = 1.12;
  c.pool_clock_ghz = 1.4;
  c.sp_clock_ghz = 1.4;
  c.pe_fp32_transpose_factor = 4;  // no transpose mode speed-up on v2
  // "Neuron Custom C++ Operators ... run on the GPSIMD engines of Inf2 and Trn1" (aws-neuron-sdk)
  c.has_custom_ops = true;
  c.dma_engine_bandwidth_gbps = 17;  // "TRN1 17 B/ns" per engine [DB, D1]
  // Fitted to the matrix multiplication tutorial's optimization 1 on trn1 (42.96 ms, loads of
  // [128, 1 KiB] rows: about 100 GB/s); the same floor puts the DMA overview's throughput figure,
  // read as trn1, within 10% at every payload from 256 B to 4 KiB per partition.
  c.dma_descriptor_ns = 155;
  c.hbm_core_bandwidth_gbps = 820.0 / 2;  // "820 GB/s" for the chip's 2 NeuronCores [A1]
  c.dma_dge_instruction_ns = 600;  // DGE cost measured on v3 [A2], used for v2's software DGE (ours)
  return c;
}

MachineConfig trn2Config() {
  MachineConfig c = trn1Config();
  c.arch = "trn2";
  c.bir_arch = "gen3";
  c.neuron_core = "NeuronCore-v3";
  c.neuron_core_version = 3;
  c.has_custom_ops = false;
  c.sbuf_bytes_per_partition = 224 * 1024;  // 28 MiB = 128 x 224 KiB [A2]
  c.pe_clock_ghz = 2.4;                     // [A2]
  c.pe_tile_granularity = c.pe_rows / 4;    // 4 x 32 PE tiles [I]
  c.act_clock_ghz = 1.2;
  c.dve_clock_ghz = 0.96;
  c.pool_clock_ghz = 1.2;
  c.sp_clock_ghz = 1.2;
  c.pe_fp32_transpose_factor = 2;  // "2x speedup in FP32 transpose" [A2]
  c.dma_engine_bandwidth_gbps = 23;  // "TRN2 23 B/ns" per engine [DB, D1]
  // Fitted to the DMA overview's throughput-vs-bytes-per-partition figure (nki-dma-intro-1.jpg,
  // read as trn2, whose profiles the page shows): 1 KiB per partition at 0.42 of the 32 KiB rate.
  c.dma_descriptor_ns = 108;
  c.hbm_core_bandwidth_gbps = 2900.0 / 8;  // "2.9 TB/s" for the chip's 8 NeuronCores [H4]
  c.has_hardware_dge = true;
  c.dve_pool_share_sbuf = false;  // "both restrictions are lifted" on v3 [A2]
  c.dve_act_share_psum = false;
  c.dve_act_share_psum_banks = true;  // "unless they hit the same bank" [A2]
  c.dve_perf_modes = true;
  c.pe_fp8_double_row = true;
  c.pe_mfu_fp8_factor = 0.5;  // the profiler's FP8 `adjusted_flops` on Trn2 / Trn3 [R2]
  c.has_range_select = true;
  c.has_gpsimd_v3_instructions = true;
  c.act_reduce_add_only = false;
  c.act_tensor_copy = true;
  c.act_bias_immediate = true;
  c.max_logical_cores = 2;
  return c;
}

// One row per generation, oldest first: its configuration and the other names it goes by
// (besides arch, bir_arch and neuron_core, which every configuration carries).
struct Generation {
  MachineConfig config;
  std::vector<std::string> extra_aliases;
};

const std::array<Generation, 2>& generations() {
  static const std::array<Generation, 2> kGenerations = {
      Generation{trn1Config(), {"inf2"}},  // Inferentia2 has NeuronCore-v2 cores
      Generation{trn2Config(), {}},
  };
  return kGenerations;
}

const Generation* find(std::string_view name) {
  for (const Generation& g : generations()) {
    const MachineConfig& c = g.config;
    if (name == c.arch || name == c.bir_arch || name == c.neuron_core) return &g;
    for (const std::string& a : g.extra_aliases)
      if (name == a) return &g;
  }
  return nullptr;
}

}  // namespace

std::string canonicalArch(std::string_view arch) {
  const Generation* g = find(arch);
  return g ? g->config.arch : "";
}

std::string knownArchNames() {
  std::string known;
  for (const Generation& g : generations())
    known += (known.empty() ? "" : ", ") + g.config.arch + " = " + g.config.bir_arch + " = " + g.config.neuron_core;
  return known;
}

const MachineConfig& machineConfig(std::string_view arch) {
  if (const Generation* g = find(arch)) return g->config;
  throw sim::SimulationError("unknown arch '" + std::string(arch) + "' (known: " + knownArchNames() + ")");
}

std::string runArch(std::string_view requested, std::string_view moduleArch) {
  const MachineConfig& own = machineConfig(moduleArch);
  if (requested.empty()) return own.arch;
  const MachineConfig& asked = machineConfig(requested);
  if (asked.arch != own.arch)
    throw sim::SimulationError("arch '" + std::string(requested) + "' (" + asked.neuron_core + ") contradicts the module's arch '" +
                               std::string(moduleArch) + "' (" + own.neuron_core + "): a module is simulated on the generation it was made for");
  return own.arch;
}

const std::vector<std::string>& knownArchs() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Generation& g : generations()) names.push_back(g.config.arch);
    return names;
  }();
  return kNames;
}

std::vector<std::string> archAliases(std::string_view arch) {
  const Generation* g = find(arch);
  if (!g) return {};
  std::vector<std::string> names = {g->config.arch, g->config.bir_arch, g->config.neuron_core};
  names.insert(names.end(), g->extra_aliases.begin(), g->extra_aliases.end());
  return names;
}

}  // namespace bir
