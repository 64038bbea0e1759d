#include "Hwm.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cctype>

#include "Error.h"
#include "KernelCost.h"

namespace bir {
namespace {

// ---- operand facts the formulas need ----

bool inPsum(const AccessPattern& ap) { return !ap.isImmediate() && ap.loc->type == MemoryType::PSUM; }
bool inSbuf(const AccessPattern& ap) { return !ap.isImmediate() && ap.loc->type == MemoryType::SB; }
bool is16BitFloat(DType t) { return t == DType::bfloat16 || t == DType::float16; }
bool isFp32(DType t) { return t == DType::float32 || t == DType::float32r; }
bool isFp8(DType t) { return t == DType::float8e4 || t == DType::float8e5 || t == DType::float8e3; }
// The innermost free step is one element (or there is nothing to stride over).
bool unitStride(const AccessPattern& ap) {
  return ap.isImmediate() || ap.pattern.size() < 2 || ap.pattern.back().step == 1 ||
         ap.pattern.back().num == 1;
}
int64_t apBytes(const AccessPattern& ap) {
  return ap.isImmediate() ? 0 : ap.numElements() * dtypeSize(ap.dtype);
}
// N: elements per partition of the main input, or of the output when there is no input [ref §4].
double freeSize(const Instruction& I) {
  for (const auto& ap : I.ins)
    if (!ap.isImmediate()) return static_cast<double>(ap.freeElements());
  return I.outs.empty() ? 0.0 : static_cast<double>(I.outs[0].freeElements());
}
int64_t elementsOut(const Instruction& I) { return I.outs.empty() ? 0 : I.outs[0].numElements(); }

// The DMA engines a transfer is spread over: each serves dma_partitions_per_engine partitions of the
// on-chip side; a DRAM-to-DRAM transfer uses them all [D1].
uint32_t dmaEngineMask(const Instruction& I, const MachineConfig& c) {
  uint32_t mask = 0;
  for (const auto* list : {&I.ins, &I.outs})
    for (const auto& ap : *list) {
      if (ap.isImmediate() || !ap.loc->isOnChip()) continue;
      const int64_t p0 = ap.startPartition(), p1 = p0 + ap.partitions();
      for (int64_t e = p0 / c.dma_partitions_per_engine;
           e * c.dma_partitions_per_engine < p1 && e < c.dma_engines; ++e)
        mask |= 1u << e;
    }
  return mask ? mask : static_cast<uint32_t>((uint64_t{1} << c.dma_engines) - 1);
}

// Elements in one contiguous run of a DMA side: its pairs merged from the innermost outwards while
// each continues the last. An on-chip pattern's first pair walks partitions, which are not
// contiguous with each other, so its runs stop inside a partition.
int64_t contiguousRun(const AccessPattern& ap) {
  const size_t first = ap.loc->isOnChip() ? 1 : 0;
  int64_t run = 1;
  for (size_t i = ap.pattern.size(); i-- > first;) {
    const APPair& p = ap.pattern[i];
    if (p.num == 1) continue;
    if (p.step != run) break;
    run *= p.num;
  }
  return run;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The shape a kernel-node operand stands for: its view's shape, else its pattern's nums.
std::vector<int64_t> operandShape(const AccessPattern& ap) {
  if (!ap.access_shape.empty()) return ap.access_shape;
  std::vector<int64_t> s;
  for (const auto& p : ap.pattern) s.push_back(p.num);
  return s;
}

// Multiply-add work of a macro kernel, estimated from its operand shapes (ours):
//   attention kernels (Q [(B*H), d, Sq], K [(B*H), d, Sk], ...): 2 * 2 * BH * d * Sq * Sk, halved
//   when causal (QK^T and PV);
//   otherwise a matmul chain: with T tokens = ins[0] without its last dim and H its last dim, each
//   later 2-D input [a, b] whose a is H or the b of an earlier one is a projection: 2 * T * a * b
//   (MLP gate/up/down, QKV, row/column-tiled matmuls).
double kernelFlops(const Instruction& I, const std::string& name) {
  if (I.ins.empty()) return 0;
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& ap : I.ins)
    if (!ap.isImmediate()) shapes.push_back(operandShape(ap));
  if (shapes.empty() || shapes[0].empty()) return 0;
  const std::string lname = lower(name);
  if (lname.find("attention") != std::string::npos && shapes.size() >= 2 && shapes[0].size() == 3 &&
      shapes[1].size() == 3) {
    const double bh = static_cast<double>(shapes[0][0]), d = static_cast<double>(shapes[0][1]);
    const double sq = static_cast<double>(shapes[0][2]), sk = static_cast<double>(shapes[1][2]);
    const double f = 4.0 * bh * d * sq * sk;
    return lname.find("causal") != std::string::npos ? f / 2 : f;
  }
  double tokens = 1;
  for (size_t i = 0; i + 1 < shapes[0].size(); ++i) tokens *= static_cast<double>(shapes[0][i]);
  std::vector<int64_t> widths = {shapes[0].back()};
  double flops = 0;
  for (size_t i = 1; i < shapes.size(); ++i) {
    if (shapes[i].size() != 2) continue;
    const int64_t a = shapes[i][0], b = shapes[i][1];
    if (a > 1 && std::find(widths.begin(), widths.end(), a) != widths.end()) {
      flops += 2.0 * tokens * static_cast<double>(a) * static_cast<double>(b);
      widths.push_back(b);
    }
  }
  return flops;
}

MachineConfig trn1Config() {
  MachineConfig c;
  c.arch = "trn1";
  c.neuron_core = "NeuronCore-v2";
  c.sbuf_bytes_per_partition = 192 * 1024;  // 24 MiB = 128 x 192 KiB [A1]
  c.pe_clock_ghz = 2.8;                     // [A1]
  c.act_clock_ghz = 1.4;
  c.dve_clock_ghz = 1.12;
  c.pool_clock_ghz = 1.4;
  c.sp_clock_ghz = 1.4;
  c.pe_fp32_transpose_factor = 4;  // no transpose mode speed-up on v2
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
  c.neuron_core = "NeuronCore-v3";
  c.sbuf_bytes_per_partition = 224 * 1024;  // 28 MiB = 128 x 224 KiB [A2]
  c.pe_clock_ghz = 2.4;                     // [A2]
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
  c.dve_perf_modes = true;
  c.pe_fp8_double_row = true;
  c.has_range_select = true;
  c.act_reduce_add_only = false;
  return c;
}

}  // namespace

std::string canonicalArch(std::string_view arch) {
  if (arch == "trn1" || arch == "gen2" || arch == "NeuronCore-v2" || arch == "inf2") return "trn1";
  if (arch == "trn2" || arch == "gen3" || arch == "NeuronCore-v3") return "trn2";
  return "";
}

const MachineConfig& machineConfig(std::string_view arch) {
  static const MachineConfig kTrn1 = trn1Config();
  static const MachineConfig kTrn2 = trn2Config();
  const std::string a = canonicalArch(arch);
  if (a == "trn1") return kTrn1;
  if (a == "trn2") return kTrn2;
  throw sim::SimulationError("unknown arch '" + std::string(arch) +
                             "' (known: trn1 = gen2 = NeuronCore-v2, trn2 = gen3 = NeuronCore-v3)");
}

// ---------------------------------------------------------------------------------------------

Hwm::Hwm(MachineConfig config) : cfg_(std::move(config)) {}
Hwm::~Hwm() = default;

Engine Hwm::engineOf(const Instruction& I) {
  const NodeClass nc = I.nodeClass();
  if (nc == NodeClass::DMA && (I.engine == Engine::Unassigned || I.engine == Engine::DMA))
    return Engine::SP;
  if (I.engine != Engine::Unassigned) return I.engine;
  switch (nc) {
    case NodeClass::Matmult:
    case NodeClass::BIRKernel:
    case NodeClass::NKIKernel:
    case NodeClass::NKIKLIRKernel:
      return Engine::PE;
    case NodeClass::Iota:
    case NodeClass::AffineSelect:
      return Engine::Pool;
    case NodeClass::Activation:
    case NodeClass::ReadActivationAccumulator:
      return Engine::Activation;
    default:
      return Engine::DVE;
  }
}

double Hwm::clockGhz(Engine e) const {
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

double Hwm::minII(double n) const { return std::max(static_cast<double>(cfg_.min_ii_cycles), n); }

double Hwm::poolCycles(double n) const { return static_cast<double>(cfg_.gpsimd_start_cycles) + n; }

bool Hwm::stridedOperand(const Instruction& I) const {
  for (const auto* list : {&I.ins, &I.outs})
    for (const auto& ap : *list)
      if (!ap.isImmediate() && ap.loc->isOnChip() && ap.pattern.size() > 1 && ap.pattern.back().num > 1 &&
          std::abs(ap.pattern.back().step) * dtypeSize(ap.dtype) > cfg_.sram_full_rate_max_stride_bytes)
        return true;
  return false;
}

Latency Hwm::compute(const Instruction& I, double cycles, int64_t flops) const {
  Latency l;
  l.engine = engineOf(I);
  const double ghz = clockGhz(l.engine);
  // An SBUF/PSUM operand read or written with an innermost stride past the full-rate limit halves
  // its interface's bandwidth [A1]; the MIN_II floor is not a data-rate cost.
  if (l.engine != Engine::PE && cycles > static_cast<double>(cfg_.min_ii_cycles) && stridedOperand(I))
    cycles *= cfg_.sram_strided_factor;
  l.cycles = cycles;
  l.busy_ns = cycles / ghz;
  // Results land in SBUF/PSUM the pipeline's static overhead and one access overhead after the
  // engine is done [A1, P1]; independent instructions overlap it, a dependent one waits. The PE's
  // PSUM writes are near-memory accumulations pipelined with the array (ours): none.
  l.access_ns = l.engine == Engine::PE
                    ? 0.0
                    : static_cast<double>(cfg_.sram_access_cycles + cfg_.static_instruction_overhead_cycles) / ghz;
  for (const auto& ap : I.ins) l.bytes += apBytes(ap);
  for (const auto& ap : I.outs) l.bytes += apBytes(ap);
  l.flops = flops;
  return l;
}

Latency Hwm::getLatency(const Instruction& I) const {
  switch (I.nodeClass()) {
#define BIR_NODE_CLASS(C) \
  case NodeClass::C:      \
    return getLatency(*cast<Inst##C>(&I));
#include "NodeClasses.def"
#undef BIR_NODE_CLASS
  }
  throw sim::SimulationError(I.opcodeName() + " '" + I.name + "': no latency model");
}

// ---- ACT ----

// activation: `max(MIN_II, N)` Scalar Engine cycles [I]; scale and bias are free [A1, P1].
Latency Hwm::getLatency(const InstActivation& I) const {
  const double n = freeSize(I);
  return compute(I, minII(n), elementsOut(I));
}

// ActReadAccumulator: "roughly 64 ScalarE cycles on NeuronCore-v2" [A1].
Latency Hwm::getLatency(const InstReadActivationAccumulator& I) const {
  return compute(I, static_cast<double>(cfg_.act_read_accumulator_cycles), 0);
}

// ---- DVE / ACT / Pool elementwise ----

// memset: `max(MIN_II, N/2)` for value 0 with bf16/fp16, `max(MIN_II, N)` otherwise [I].
Latency Hwm::getLatency(const InstMemset& I) const {
  const double n = freeSize(I);
  if (engineOf(I) == Engine::Pool) return compute(I, poolCycles(n), 0);
  const bool halfRate = I.mode == MemsetMode::Const && I.constant == 0.0 && !I.outs.empty() &&
                        is16BitFloat(I.outs[0].dtype);
  return compute(I, minII(halfRate ? n / 2 : n), 0);
}

Latency Hwm::getLatency(const InstNoOp& I) const { return compute(I, 0, 0); }

// reciprocal: `max(MIN_II, 8*N)` [I].
Latency Hwm::getLatency(const InstReciprocal& I) const {
  return compute(I, minII(8 * freeSize(I)), elementsOut(I));
}

// tensor_copy: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstTensorCopy& I) const {
  const double n = freeSize(I);
  return compute(I, engineOf(I) == Engine::Pool ? poolCycles(n) : minII(n), 0);
}

// tensor_copy_dynamic_src/dst: `max(MIN_II_DYNAMIC, N)` [I].
Latency Hwm::getLatency(const InstTensorCopyDynamic& I) const {
  return compute(I, std::max(static_cast<double>(cfg_.min_ii_dynamic_cycles), freeSize(I)), 0);
}

// tensor_reduce: `N/2` if in and out are bf16 and op is add or max; `N` otherwise [I].
Latency Hwm::getLatency(const InstTensorReduce& I) const {
  const double n = freeSize(I);
  const bool fast = !I.ins.empty() && !I.outs.empty() && I.ins[0].dtype == DType::bfloat16 &&
                    I.outs[0].dtype == DType::bfloat16 && (I.op == AluOp::add || I.op == AluOp::max);
  const int64_t elems = I.ins.empty() ? 0 : I.ins[0].numElements();
  return compute(I, fast ? n / 2 : n, elems);
}

// tensor_scalar: `max(MIN_II, N)` Vector or Scalar cycles; one op costs the same as two [I].
Latency Hwm::getLatency(const InstTensorScalar& I) const {
  const double n = freeSize(I);
  const int64_t ops = I.op1 == AluOp::bypass ? 1 : 2;
  return compute(I, engineOf(I) == Engine::Pool ? poolCycles(n) : minII(n), ops * elementsOut(I));
}

Latency Hwm::getLatency(const InstTensorScalarPtr& I) const {
  const double n = freeSize(I);
  const int64_t ops = I.op1 == AluOp::bypass ? 1 : 2;
  return compute(I, engineOf(I) == Engine::Pool ? poolCycles(n) : minII(n), ops * elementsOut(I));
}

// tensor_tensor: `max(MIN_II, N)` if one input is in PSUM and the other in SBUF; `max(MIN_II, N)`
// if both are in SBUF and all tensors bf16 and op in {add, multiply, subtract} with unit stride;
// `max(MIN_II, 2N)` otherwise [I].
Latency Hwm::getLatency(const InstTensorTensor& I) const {
  const double n = freeSize(I);
  if (engineOf(I) == Engine::Pool) return compute(I, poolCycles(n), elementsOut(I));
  bool single = false;
  if (I.ins.size() == 2 && !I.outs.empty()) {
    const auto &a = I.ins[0], &b = I.ins[1], &o = I.outs[0];
    if ((inPsum(a) && inSbuf(b)) || (inSbuf(a) && inPsum(b))) single = true;
    const bool allBf16 = a.dtype == DType::bfloat16 && b.dtype == DType::bfloat16 && o.dtype == DType::bfloat16;
    const bool cheapOp = I.op == AluOp::add || I.op == AluOp::mult || I.op == AluOp::subtract;
    if (inSbuf(a) && inSbuf(b) && allBf16 && cheapOp && unitStride(a) && unitStride(b) && unitStride(o))
      single = true;
  }
  return compute(I, minII(single ? n : 2 * n), elementsOut(I));
}

// tensor_tensor_scan: `max(MIN_II, 2N)` [I].
Latency Hwm::getLatency(const InstTensorTensorScan& I) const {
  return compute(I, minII(2 * freeSize(I)), 2 * elementsOut(I));
}

// bn_stats: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstBNStats& I) const {
  const int64_t elems = I.ins.empty() ? 0 : I.ins[0].numElements();
  return compute(I, minII(freeSize(I)), 3 * elems);
}

// bn_aggr: `max(MIN_II, 13*(N/3))` [I].
Latency Hwm::getLatency(const InstBNStatsAggregate& I) const {
  const double n = freeSize(I);
  return compute(I, minII(13 * std::floor(n / 3)), 0);
}

// nc_stream_shuffle: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstStreamShuffle& I) const { return compute(I, minII(freeSize(I)), 0); }

// nc_transpose on DVE: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstStreamTranspose& I) const { return compute(I, minII(freeSize(I)), 0); }

// iota: `150 + N` GpSimd cycles [I] (N: output elements per partition).
Latency Hwm::getLatency(const InstIota& I) const {
  const double n = I.outs.empty() ? 0.0 : static_cast<double>(I.outs[0].freeElements());
  return compute(I, poolCycles(n), 0);
}

// affine_select: `GPSIMD_START + N` [I].
Latency Hwm::getLatency(const InstAffineSelect& I) const {
  return compute(I, poolCycles(freeSize(I)), elementsOut(I));
}

// range_select: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstRangeSelect& I) const {
  return compute(I, minII(freeSize(I)), 2 * elementsOut(I));
}

// select / select_reduce: not documented; costed as a two-input DVE op, `max(MIN_II, 2N)` (ours).
Latency Hwm::getLatency(const InstSelect& I) const { return compute(I, minII(2 * freeSize(I)), 0); }
Latency Hwm::getLatency(const InstSelectReduce& I) const {
  return compute(I, minII(2 * freeSize(I)), elementsOut(I));
}

// tensor_copy_predicated: `max(MIN_II, N)` if one of src/predicate is in PSUM, `max(MIN_II, 2N)`
// otherwise [I].
Latency Hwm::getLatency(const InstCopyPredicated& I) const {
  const double n = freeSize(I);
  const bool onePsum = I.ins.size() == 2 && (inPsum(I.ins[0]) != inPsum(I.ins[1]));
  return compute(I, minII(onePsum ? n : 2 * n), 0);
}

// dropout: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstDropout& I) const {
  return compute(I, minII(freeSize(I)), elementsOut(I));
}

// max8: `N` engine cycles [I].
Latency Hwm::getLatency(const InstMax& I) const { return compute(I, freeSize(I), 0); }

// nc_find_index8: `N` engine cycles [I].
Latency Hwm::getLatency(const InstMaxIndex& I) const { return compute(I, freeSize(I), 0); }

// nc_match_replace8: documented as `min(MIN_II, N)` [I], which would make it nearly free; read as
// the `max(MIN_II, N)` every sibling uses (ours).
Latency Hwm::getLatency(const InstMatchReplace& I) const { return compute(I, minII(freeSize(I)), 0); }

// ---- PE ----

// nc_matmul: `max(min(64, N_stationary), N_moving)` PE cycles for fp8/bf16/fp16/tf32 and
// `4 * max(min(64, N_stationary), N_moving)` for fp32 [I]; N_stationary = M (the stationary's
// free size), N_moving = N. PE transpose: `max(P, min(64, F))` [I], the same expression for the
// identity moving tile (N_moving = K = P); FP32 transpose is 4x (v2) or 2x (v3 transpose mode).
Latency Hwm::getLatency(const InstMatmult& I) const {
  if (I.ins.size() < 2) return compute(I, 0, 0);
  const auto &st = I.ins[0], &mv = I.ins[1];
  const double m = static_cast<double>(st.freeElements());
  const double n = static_cast<double>(mv.freeElements());
  const double k = static_cast<double>(st.partitions());
  double cycles = std::max(std::min(64.0, m), n);
  const bool fp32 = isFp32(st.dtype) || isFp32(mv.dtype);
  if (fp32) cycles *= I.is_transpose ? cfg_.pe_fp32_transpose_factor : cfg_.pe_fp32_factor;
  const int64_t flops = I.is_transpose ? 0 : static_cast<int64_t>(2.0 * k * m * n);
  return compute(I, cycles, flops);
}

// ---- DMA ----

// DMA [D1, DB, A2, G]: the issuing engine (SP unless the instruction names ACT or Pool) spends
// dma_trigger_cycles; the transfer starts dma_start_latency_ns later (or when its DGE has made the
// descriptors, if later); each DMA engine it spreads over (8 partitions of the on-chip side each;
// DRAM to DRAM: all) works through its share of the descriptors, one contiguous run of both sides
// each, at max(dma_descriptor_ns, run bytes / dma_engine_bandwidth_gbps) a descriptor; the core's
// HBM carries the DRAM sides' bytes at hbm_core_bandwidth_gbps; the writes are visible
// dma_completion_ns after the transfer. Casts go src -> fp32 -> dst, so the wider side's bytes are
// charged. Transposes and add-accumulating DMAs move data at a fraction of the copy rate
// (MachineConfig::dma_transpose_*_factor, dma_accumulate_factor).
Latency Hwm::getLatency(const InstDMA& I) const {
  Latency l;
  l.engine = engineOf(I);
  l.cycles = static_cast<double>(cfg_.dma_trigger_cycles);
  l.busy_ns = l.cycles / clockGhz(l.engine);
  l.dma_queue = I.queue;
  l.dma_engine_mask = dmaEngineMask(I, cfg_);
  l.dma_latency_ns = cfg_.dma_start_latency_ns;
  l.dma_dge_ns = I.dge_type == DgeType::None ? 0.0 : cfg_.dma_dge_instruction_ns;
  l.access_ns = cfg_.dma_completion_ns;
  l.bytes = I.outs.empty() ? 0 : apBytes(I.outs[0]);
  l.flops = I.dst_rmw_op == AluOp::bypass ? 0 : elementsOut(I);
  if (I.ins.empty() || I.outs.empty() || I.ins[0].isImmediate()) return l;
  const AccessPattern &src = I.ins[0], &dst = I.outs[0];

  const int64_t elements = dst.numElements();
  const int64_t run = std::max<int64_t>(1, std::min(contiguousRun(src), contiguousRun(dst)));
  const double descriptors = std::ceil(static_cast<double>(elements) / static_cast<double>(run));
  const double bytes = static_cast<double>(elements) * std::max(dtypeSize(src.dtype), dtypeSize(dst.dtype));
  // The busiest engine's share: its partitions of the on-chip side, or an even split.
  double share = 1.0 / std::popcount(l.dma_engine_mask);
  for (const auto* ap : {&dst, &src})
    if (ap->loc->isOnChip()) {
      const int64_t p = ap->partitions();
      share = static_cast<double>(std::min<int64_t>(p, cfg_.dma_partitions_per_engine)) / static_cast<double>(p);
      break;
    }
  double rate = cfg_.dma_engine_bandwidth_gbps;  // GB/s = bytes/ns
  if (I.mode == DmaMode::Transpose)
    rate *= src.loc->isOnChip() ? cfg_.dma_transpose_sbuf_factor : cfg_.dma_transpose_dram_factor;
  if (I.dst_rmw_op != AluOp::bypass) rate *= cfg_.dma_accumulate_factor;
  l.dma_descriptors = std::ceil(descriptors * share);
  l.dma_transfer_ns = std::max(l.dma_descriptors * cfg_.dma_descriptor_ns, bytes * share / rate);
  double hbmBytes = 0;
  if (!src.loc->isOnChip()) hbmBytes += static_cast<double>(apBytes(src));
  if (!dst.loc->isOnChip()) hbmBytes += static_cast<double>(apBytes(dst));
  l.dma_hbm_ns = hbmBytes / cfg_.hbm_core_bandwidth_gbps;
  return l;
}

// ---- misc ----

// device_print: a debugging aid the hardware runs as a copy out (ours: MIN_II).
Latency Hwm::getLatency(const InstDevicePrint& I) const {
  return compute(I, static_cast<double>(cfg_.min_ii_cycles), 0);
}

// ---- kernel nodes: analytic cost from the operand shapes (ours) ----
// An IT54 node whose kernel_name has a leaf estimator (KernelCost.h) costs
//   kernel_fixed_ns + the estimator's per-engine model of the leaf's schedule;
// any other kernel node (and an IT54 node whose operands are not its leaf's) costs
//   kernel_fixed_ns + max(flops / PE bf16 peak, bytes / core DMA bandwidth)
// with flops from kernelFlops() and bytes the sizes of every DRAM operand. The node occupies the
// whole core.
namespace {
Latency kernelLatency(const Instruction& I, const std::string& name, const MachineConfig& c,
                      std::optional<double> modelled = std::nullopt) {
  Latency l;
  l.engine = Engine::PE;
  l.whole_core = true;
  for (const auto& ap : I.ins) l.bytes += apBytes(ap);
  for (const auto& ap : I.outs) l.bytes += apBytes(ap);
  const double flops = kernelFlops(I, name);
  l.flops = static_cast<int64_t>(flops);
  const double pe_ns = flops / c.peBf16PeakFlopsPerNs();
  const double dma_ns = static_cast<double>(l.bytes) / c.dmaCoreBandwidthBytesPerNs();
  l.busy_ns = c.kernel_fixed_ns + (modelled ? *modelled : std::max(pe_ns, dma_ns));
  l.cycles = l.busy_ns * c.pe_clock_ghz;
  return l;
}
}  // namespace

Latency Hwm::getLatency(const InstBIRKernel& I) const {
  return kernelLatency(I, I.kernel_name, cfg_, kernelNodeNs(I, cfg_));
}
Latency Hwm::getLatency(const InstNKIKernel& I) const { return kernelLatency(I, I.func, cfg_); }
Latency Hwm::getLatency(const InstNKIKLIRKernel& I) const {
  return kernelLatency(I, I.func_name, cfg_);
}

Latency Hwm::getLatency(const InstUnmodeled& I) const {
  throw sim::SimulationError(I.opcodeName() + " '" + I.name +
                             "': this opcode has no functional or latency model");
}

// ---------------------------------------------------------------------------------------------

TrainiumHwm::TrainiumHwm() : Hwm(trn1Config()) {}

Trainium2Hwm::Trainium2Hwm() : TrainiumHwm(trn2Config()) {}

// v3 DVE perf mode [A2]: 4x for tensor_copy / tensor_scalar with in and out in SBUF, BF16/FP16 and
// unit-stride innermost; 2x for the same when not contiguous or when one side is in PSUM.
double Trainium2Hwm::dveCopyLikeSpeedup(const Instruction& I) const {
  if (engineOf(I) != Engine::DVE || I.ins.empty() || I.outs.empty()) return 1;
  const auto &in = I.ins[0], &out = I.outs[0];
  if (in.isImmediate() || !is16BitFloat(in.dtype) || !is16BitFloat(out.dtype)) return 1;
  if (inSbuf(in) && inSbuf(out)) return unitStride(in) && unitStride(out) ? 4 : 2;
  if (inPsum(in) != inPsum(out)) return 2;
  return 1;
}

Latency Trainium2Hwm::getLatency(const InstTensorCopy& I) const {
  const double s = dveCopyLikeSpeedup(I);
  if (s == 1) return Hwm::getLatency(I);
  return compute(I, minII(freeSize(I) / s), 0);
}

// Both forms of tensor_scalar: scalars as immediates or as [P, 1] pointers (ref §4).
template <class TensorScalarInst>
Latency Trainium2Hwm::tensorScalarInPerfMode(const TensorScalarInst& I) const {
  const double s = dveCopyLikeSpeedup(I);
  Latency l = Hwm::getLatency(I);
  if (s == 1) return l;
  return compute(I, minII(freeSize(I) / s), l.flops);
}

Latency Trainium2Hwm::getLatency(const InstTensorScalar& I) const { return tensorScalarInPerfMode(I); }
Latency Trainium2Hwm::getLatency(const InstTensorScalarPtr& I) const { return tensorScalarInPerfMode(I); }

// v3: tensor_tensor with both inputs in SBUF and all tensors BF16/FP16 runs in 2x mode [A2]:
// `max(MIN_II, N)` instead of `max(MIN_II, 2N)`.
Latency Trainium2Hwm::getLatency(const InstTensorTensor& I) const {
  Latency l = Hwm::getLatency(I);
  if (engineOf(I) != Engine::DVE || I.ins.size() != 2 || I.outs.empty()) return l;
  const auto &a = I.ins[0], &b = I.ins[1], &o = I.outs[0];
  if (inSbuf(a) && inSbuf(b) && is16BitFloat(a.dtype) && is16BitFloat(b.dtype) && is16BitFloat(o.dtype))
    return compute(I, minII(freeSize(I)), l.flops);
  return l;
}

// v3 FP8 double_row: K=256 in the time of a BF16 K=128, i.e. half the cycles per row [A2].
Latency Trainium2Hwm::getLatency(const InstMatmult& I) const {
  Latency l = Hwm::getLatency(I);
  if (I.perf_mode == PerfMode::DoubleRow && I.ins.size() == 2 && isFp8(I.ins[0].dtype) &&
      isFp8(I.ins[1].dtype)) {
    l.cycles /= 2;
    l.busy_ns /= 2;
  }
  return l;
}

std::unique_ptr<Hwm> makeHwm(std::string_view arch) {
  const std::string a = canonicalArch(arch);
  if (a == "trn1") return std::make_unique<TrainiumHwm>();
  if (a == "trn2") return std::make_unique<Trainium2Hwm>();
  machineConfig(arch);  // throws the unknown-arch message
  return nullptr;
}

}  // namespace bir
