#include "Hwm.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "Error.h"

namespace bir {
namespace {

// ---- operand facts the formulas need ----

bool inPsum(const AccessPattern& ap) { return !ap.isImmediate() && ap.loc->type == MemoryType::PSUM; }
bool inSbuf(const AccessPattern& ap) { return !ap.isImmediate() && ap.loc->type == MemoryType::SB; }
bool is16BitFloat(DType t) { return t == DType::bfloat16 || t == DType::float16; }
bool isFp8(DType t) { return t == DType::float8e4 || t == DType::float8e5 || t == DType::float8e3; }
// The innermost free pair that walks (num > 1) of an on-chip pattern (pattern[0] walks the
// partitions), or null when none does: a pair of one element moves nowhere, so a trailing [1, 1]
// must not hide the stride of the pair before it. The cost formulas' "innermost stride" [A1, A2]
// is this pair's step.
const APPair* innermostFreeWalk(const AccessPattern& ap) {
  const APPair* const pairs = ap.pattern.data();
  for (size_t i = ap.pattern.size(); i-- > 1;)
    if (pairs[i].num > 1) return &pairs[i];
  return nullptr;
}
// The innermost free step is one element (or there is nothing to stride over).
bool unitStride(const AccessPattern& ap) {
  if (ap.isImmediate()) return true;
  const APPair* const walk = innermostFreeWalk(ap);
  return !walk || walk->step == 1;
}
// The bytes of a pattern whose shape the caller has.
int64_t apBytes(const AccessPattern& ap, const PatternShape& shape) {
  return ap.isImmediate() ? 0 : shape.numElements() * dtypeSize(ap.dtype);
}
// N: elements per partition of the main input, or of the output when there is no input [ref §4]
// (`shapes`: I's operands', ins then outs).
double freeSize(const Instruction& I, const PatternShape* shapes) {
  const size_t nIns = I.ins.size();
  const AccessPattern* const ins = I.ins.data();
  for (size_t k = 0; k < nIns; ++k)
    if (!ins[k].isImmediate()) return static_cast<double>(shapes[k].freeElements);
  return I.outs.empty() ? 0.0 : static_cast<double>(shapes[nIns].freeElements);
}
int64_t elementsOut(const Instruction& I, const PatternShape* shapes) {
  return I.outs.empty() ? 0 : shapes[I.ins.size()].numElements();
}
// Elements of ins[0], or 0 without inputs.
int64_t elementsIn(const Instruction& I, const PatternShape* shapes) {
  return I.ins.empty() ? 0 : shapes[0].numElements();
}

// How partitions [p0, p0 + partitions) of an on-chip side map to the DMA engines: engine e serves
// partitions [e * per, (e + 1) * per), per = dma_partitions_per_engine [D1] (the last engine also
// any partitions past the engines), so the range is the engines p0 / per .. (p1 - 1) / per, as one
// run of bits, and the busiest of them serves `busiest` of its partitions: a range that does not
// start on an engine's first partition splits its first and last engines' shares.
struct DmaEngineSpread {
  uint32_t bits = 0;
  int64_t busiest = 0;
};
[[gnu::always_inline]] inline DmaEngineSpread dmaEngineSpread(int64_t p0, int64_t partitions, const MachineConfig& c) {
  const int64_t per = c.dma_partitions_per_engine, p1 = p0 + partitions;
  const int64_t lo = p0 / per, hi = std::min<int64_t>((p1 - 1) / per, c.dma_engines - 1);
  if (!(p1 > p0 && lo <= hi)) return {};
  const uint32_t bits = static_cast<uint32_t>((uint64_t{2} << hi) - (uint64_t{1} << lo));
  if (lo == hi) return {bits, partitions};
  const int64_t first = (lo + 1) * per - p0, last = p1 - hi * per;  // the end engines' partitions
  return {bits, std::max(hi - lo > 1 ? per : first, last)};  // a middle engine has all `per`
}
// A transfer's DMA engines, from the bits of its on-chip operands; none on chip (DRAM to DRAM):
// every engine [D1].
uint32_t dmaEngineMaskOf(uint32_t bits, const MachineConfig& c) {
  return bits ? bits : static_cast<uint32_t>((uint64_t{1} << c.dma_engines) - 1);
}

// The DMA engines a transfer is spread over: each serves dma_partitions_per_engine partitions of the
// on-chip side; a DRAM-to-DRAM transfer uses them all [D1].
uint32_t dmaEngineMask(const Instruction& I, const PatternShape* shapes, const MachineConfig& c) {
  uint32_t mask = 0;
  // ins then outs, as `shapes` holds them; each list's data and size read once (the loop's calls
  // are inline, but through the lists' references the compiler would reload them per operand).
  const size_t nIns = I.ins.size(), n = nIns + I.outs.size();
  const AccessPattern *ins = I.ins.data(), *outs = I.outs.data();
  for (size_t k = 0; k < n; ++k) {
    const AccessPattern& ap = k < nIns ? ins[k] : outs[k - nIns];
    if (ap.isImmediate() || !ap.loc->isOnChip()) continue;
    mask |= dmaEngineSpread(ap.startPartition(), shapes[k].partitions, c).bits;
  }
  return dmaEngineMaskOf(mask, c);
}

// std::popcount, inline: without -mpopcnt (the portable build targets x86-64 without it) GCC makes
// std::popcount a call into libgcc, which each DMA's pricing paid.
int bitCount(uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0Fu;
  return static_cast<int>((x * 0x01010101u) >> 24);
}

// std::ceil(x), the same double for every x, with a short path for the positive x below 2^52 that
// DMA pricing rounds up twice per transfer: there the truncation is exact, and so is one more.
// (Without SSE4.1, the portable build, GCC expands std::ceil inline with its sign, infinity and
// NaN cases at each call.)
double ceilPositive(double x) {
  if (!(x > 0 && x < 0x1p52)) return std::ceil(x);  // zero, negative, integral, infinite or NaN
  const double t = static_cast<double>(static_cast<int64_t>(x));
  return t < x ? t + 1 : t;
}

// Elements in one contiguous run of a DMA side: its pairs merged from the innermost outwards while
// each continues the last. An on-chip pattern's first pair walks partitions, which are not
// contiguous with each other, so its runs stop inside a partition. (`onChip`: the side's location
// is SBUF or PSUM, which the caller has read. Inline: twice per DMA priced.)
[[gnu::always_inline]] inline int64_t contiguousRun(const AccessPattern& ap, bool onChip) {
  const size_t first = onChip ? 1 : 0;
  const APPair* const pairs = ap.pattern.data();  // read once (InlineVector: inline or on the heap)
  int64_t run = 1;
  for (size_t i = ap.pattern.size(); i-- > first;) {
    const APPair& p = pairs[i];
    if (p.num == 1) continue;
    if (p.step != run) break;
    run *= p.num;
  }
  return run;
}

// Out of line, so that the dispatch's call needs no stack frame of its own.
[[noreturn, gnu::noinline]] void noLatencyModel(const Instruction& I) {
  throw sim::SimulationError(I.opcodeName() + " '" + I.name + "': no latency model");
}

// The operand shapes of an instruction priced without them (ins then outs): four on the stack, the
// most a DMA or a matmul has (more on the heap).
class ShapesOf {
 public:
  explicit ShapesOf(const Instruction& I) {
    const size_t nIns = I.ins.size(), n = nIns + I.outs.size();
    if (n > std::size(few_)) {
      many_.resize(n);
      data_ = many_.data();
    }
    for (size_t k = 0; k < n; ++k) data_[k] = patternShape(k < nIns ? I.ins[k] : I.outs[k - nIns]);
  }
  const PatternShape* data() const { return data_; }

 private:
  PatternShape few_[4];
  std::vector<PatternShape> many_;
  PatternShape* data_ = few_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------

Hwm::Hwm(MachineConfig config) : cfg_(std::move(config)) {}
Hwm::~Hwm() = default;

EngineCycles Hwm::minII(double n) const { return {.data = n, .floor = static_cast<double>(cfg_.min_ii_cycles)}; }

EngineCycles Hwm::poolCycles(double n) const {
  return {.data = n, .fixed = static_cast<double>(cfg_.gpsimd_start_cycles)};
}

bool Hwm::stridedOperand(const Instruction& I) const {
  for (const auto* list : {&I.ins, &I.outs})
    for (const auto& ap : *list)
      if (!ap.isImmediate() && ap.loc->isOnChip())
        if (const APPair* const walk = innermostFreeWalk(ap);
            walk && std::abs(walk->step) * dtypeSize(ap.dtype) > cfg_.sram_full_rate_max_stride_bytes)
          return true;
  return false;
}

Latency Hwm::compute(const Instruction& I, EngineCycles cycles, int64_t flops, const PatternShape* shapes) const {
  Latency l;
  l.engine = engineOf(I);
  const double ghz = clockGhz(l.engine);
  // An SBUF/PSUM operand read or written with an innermost stride past the full-rate limit halves
  // its interface's bandwidth [A1]: the data part takes sram_strided_factor times as long, which
  // matters where it can pass the floor (the operands are walked only then). The PE's operands
  // stream through its own array (ours).
  double data = cycles.data;
  if (l.engine != Engine::PE && !cycles.stridesPriced && data * cfg_.sram_strided_factor > cycles.floor &&
      stridedOperand(I))
    data *= cfg_.sram_strided_factor;
  l.cycles = cycles.fixed + std::max(cycles.floor, data);
  l.busy_ns = l.cycles / ghz;
  // Results land in SBUF/PSUM the pipeline's static overhead and one access overhead after the
  // engine is done [A1, P1]; independent instructions overlap it, a dependent one waits. The PE's
  // PSUM writes are near-memory accumulations pipelined with the array (ours): none.
  l.access_ns = l.engine == Engine::PE
                    ? 0.0
                    : static_cast<double>(cfg_.sram_access_cycles + cfg_.static_instruction_overhead_cycles) / ghz;
  // Each list's data and size read once (through the lists' references the compiler reloads them).
  const size_t nIns = I.ins.size(), nOuts = I.outs.size();
  const AccessPattern *ins = I.ins.data(), *outs = I.outs.data();
  for (size_t k = 0; k < nIns; ++k) l.bytes += apBytes(ins[k], shapes[k]);
  for (size_t k = 0; k < nOuts; ++k) l.bytes += apBytes(outs[k], shapes[nIns + k]);
  l.flops = flops;
  return l;
}

Latency Hwm::getLatency(const Instruction& I) const { return getLatency(I, ShapesOf(I).data()); }

Latency Hwm::getLatency(const Instruction& I, const PatternShape* shapes) const {
  // One entry per node class (NodeClass counts in NodeClasses.def order), each calling that
  // class's formula through the vtable: the dispatch is one indexed call. (A switch of the virtual
  // calls had GCC inline the small formulas speculatively, so that every instruction's dispatch
  // set up their stack frame: 25 machine instructions instead of 11.)
  using Formula = Latency (*)(const Hwm&, const Instruction&, const PatternShape*);
  static constexpr Formula kFormulas[] = {
#define BIR_NODE_CLASS(C) \
  [](const Hwm& hwm, const Instruction& I, const PatternShape* shapes) { return hwm.getLatency(*cast<Inst##C>(&I), shapes); },
#include "NodeClasses.def"
#undef BIR_NODE_CLASS
  };
  const auto nc = static_cast<size_t>(I.nodeClass());
  if (nc >= std::size(kFormulas)) noLatencyModel(I);
  return kFormulas[nc](*this, I, shapes);
}

// ---- ACT ----

// activation: `max(MIN_II, N)` Scalar Engine cycles [I]; scale and bias are free [A1, P1].
Latency Hwm::getLatency(const InstActivation& I, const PatternShape* shapes) const {
  const double n = freeSize(I, shapes);
  return compute(I, minII(n), elementsOut(I, shapes), shapes);
}

// ActReadAccumulator: "roughly 64 ScalarE cycles on NeuronCore-v2" [A1].
Latency Hwm::getLatency(const InstReadActivationAccumulator& I, const PatternShape* shapes) const {
  return compute(I, {.fixed = static_cast<double>(cfg_.act_read_accumulator_cycles)}, 0, shapes);
}

// ---- DVE / ACT / Pool elementwise ----

// memset (DVE/Pool): `max(MIN_II, N/2)` for value 0 with bf16/fp16, `max(MIN_II, N)` otherwise [I],
// on either engine: the page gives one formula and no GPSIMD_START (cited only by the iota and
// affine_select pages [I]).
Latency Hwm::getLatency(const InstMemset& I, const PatternShape* shapes) const {
  const double n = freeSize(I, shapes);
  const bool halfRate = I.mode == MemsetMode::Const && I.constant == 0.0 && !I.outs.empty() &&
                        is16BitFloat(I.outs[0].dtype);
  return compute(I, minII(halfRate ? n / 2 : n), 0, shapes);
}

Latency Hwm::getLatency(const InstNoOp& I, const PatternShape* shapes) const { return compute(I, {}, 0, shapes); }

// reciprocal: `max(MIN_II, 8*N)` [I].
Latency Hwm::getLatency(const InstReciprocal& I, const PatternShape* shapes) const {
  return compute(I, minII(8 * freeSize(I, shapes)), elementsOut(I, shapes), shapes);
}

// tensor_copy (DVE/ACT/Pool): `max(MIN_II, N)` [I], the one formula of every engine the page names.
Latency Hwm::getLatency(const InstTensorCopy& I, const PatternShape* shapes) const {
  return compute(I, minII(freeSize(I, shapes)), 0, shapes);
}

// tensor_copy_dynamic_src/dst: `max(MIN_II_DYNAMIC, N)` [I].
Latency Hwm::getLatency(const InstTensorCopyDynamic& I, const PatternShape* shapes) const {
  return compute(I, {.data = freeSize(I, shapes), .floor = static_cast<double>(cfg_.min_ii_dynamic_cycles)}, 0,
                 shapes);
}

// tensor_reduce: `N/2` if in and out are bf16 and op is add or max; `N` otherwise [I].
Latency Hwm::getLatency(const InstTensorReduce& I, const PatternShape* shapes) const {
  const double n = freeSize(I, shapes);
  const bool fast = !I.ins.empty() && !I.outs.empty() && I.ins[0].dtype == DType::bfloat16 &&
                    I.outs[0].dtype == DType::bfloat16 && (I.op == AluOp::add || I.op == AluOp::max);
  const int64_t elems = elementsIn(I, shapes);
  return compute(I, {.data = fast ? n / 2 : n}, elems, shapes);
}

// tensor_scalar (DVE/ACT/Pool): `max(MIN_II, N)` Vector or Scalar cycles; one op costs the same as
// two [I]. The page's one formula for every engine it names; GpSimd included (no GPSIMD_START).
Latency Hwm::getLatency(const InstTensorScalar& I, const PatternShape* shapes) const {
  const int64_t ops = I.op1 == AluOp::bypass ? 1 : 2;
  return compute(I, minII(freeSize(I, shapes)), ops * elementsOut(I, shapes), shapes);
}

Latency Hwm::getLatency(const InstTensorScalarPtr& I, const PatternShape* shapes) const {
  const int64_t ops = I.op1 == AluOp::bypass ? 1 : 2;
  return compute(I, minII(freeSize(I, shapes)), ops * elementsOut(I, shapes), shapes);
}

// tensor_tensor: `max(MIN_II, N)` if one input is in PSUM and the other in SBUF; `max(MIN_II, N)`
// if both are in SBUF and all tensors bf16 and op in {add, multiply, subtract} with unit stride;
// `max(MIN_II, 2N)` otherwise [I]: the Vector Engine's rule. The page names GpSimd for `power` and
// integer add/mul/sub without a formula of its own; there we keep the GpSimd start-up plus one cycle
// an element (ours): the published mamba measurements, whose accumulation is an fp32 add on GpSimd,
// are met with it and five of their rows are not with the 2N rule (docs/calibration.md).
Latency Hwm::getLatency(const InstTensorTensor& I, const PatternShape* shapes) const {
  const double n = freeSize(I, shapes);
  if (engineOf(I) == Engine::Pool) return compute(I, poolCycles(n), elementsOut(I, shapes), shapes);
  bool single = false;
  if (I.ins.size() == 2 && !I.outs.empty()) {
    const auto &a = I.ins[0], &b = I.ins[1], &o = I.outs[0];
    if ((inPsum(a) && inSbuf(b)) || (inSbuf(a) && inPsum(b))) single = true;
    const bool allBf16 = a.dtype == DType::bfloat16 && b.dtype == DType::bfloat16 && o.dtype == DType::bfloat16;
    const bool cheapOp = I.op == AluOp::add || I.op == AluOp::mult || I.op == AluOp::subtract;
    if (inSbuf(a) && inSbuf(b) && allBf16 && cheapOp && unitStride(a) && unitStride(b) && unitStride(o))
      single = true;
  }
  return compute(I, minII(single ? n : 2 * n), elementsOut(I, shapes), shapes);
}

// tensor_tensor_scan: `max(MIN_II, 2N)` [I].
Latency Hwm::getLatency(const InstTensorTensorScan& I, const PatternShape* shapes) const {
  return compute(I, minII(2 * freeSize(I, shapes)), 2 * elementsOut(I, shapes), shapes);
}

// bn_stats: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstBNStats& I, const PatternShape* shapes) const {
  const int64_t elems = elementsIn(I, shapes);
  return compute(I, minII(freeSize(I, shapes)), 3 * elems, shapes);
}

// bn_aggr: `max(MIN_II, 13*(N/3))` [I].
Latency Hwm::getLatency(const InstBNStatsAggregate& I, const PatternShape* shapes) const {
  const double n = freeSize(I, shapes);
  return compute(I, minII(13 * std::floor(n / 3)), 0, shapes);
}

// nc_stream_shuffle: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstStreamShuffle& I, const PatternShape* shapes) const {
  return compute(I, minII(freeSize(I, shapes)), 0, shapes);
}

// nc_transpose on DVE: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstStreamTranspose& I, const PatternShape* shapes) const {
  return compute(I, minII(freeSize(I, shapes)), 0, shapes);
}

// iota: `150 + N` GpSimd cycles [I] (N: output elements per partition).
Latency Hwm::getLatency(const InstIota& I, const PatternShape* shapes) const {
  const double n = I.outs.empty() ? 0.0 : static_cast<double>(shapes[I.ins.size()].freeElements);
  return compute(I, poolCycles(n), 0, shapes);
}

// affine_select: `GPSIMD_START + N` [I].
Latency Hwm::getLatency(const InstAffineSelect& I, const PatternShape* shapes) const {
  return compute(I, poolCycles(freeSize(I, shapes)), elementsOut(I, shapes), shapes);
}

// range_select: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstRangeSelect& I, const PatternShape* shapes) const {
  return compute(I, minII(freeSize(I, shapes)), 2 * elementsOut(I, shapes), shapes);
}

// select / select_reduce: not documented; costed as a two-input DVE op, `max(MIN_II, 2N)` (ours).
Latency Hwm::getLatency(const InstSelect& I, const PatternShape* shapes) const {
  return compute(I, minII(2 * freeSize(I, shapes)), 0, shapes);
}
Latency Hwm::getLatency(const InstSelectReduce& I, const PatternShape* shapes) const {
  return compute(I, minII(2 * freeSize(I, shapes)), elementsOut(I, shapes), shapes);
}

// tensor_copy_predicated: `max(MIN_II, N)` if one of src/predicate is in PSUM, `max(MIN_II, 2N)`
// otherwise [I].
Latency Hwm::getLatency(const InstCopyPredicated& I, const PatternShape* shapes) const {
  const double n = freeSize(I, shapes);
  const bool onePsum = I.ins.size() == 2 && (inPsum(I.ins[0]) != inPsum(I.ins[1]));
  return compute(I, minII(onePsum ? n : 2 * n), 0, shapes);
}

// dropout: `max(MIN_II, N)` [I].
Latency Hwm::getLatency(const InstDropout& I, const PatternShape* shapes) const {
  return compute(I, minII(freeSize(I, shapes)), elementsOut(I, shapes), shapes);
}

// max8: `N` engine cycles [I].
Latency Hwm::getLatency(const InstMax& I, const PatternShape* shapes) const {
  return compute(I, {.data = freeSize(I, shapes)}, 0, shapes);
}

// nc_find_index8: `N` engine cycles [I].
Latency Hwm::getLatency(const InstMaxIndex& I, const PatternShape* shapes) const {
  return compute(I, {.data = freeSize(I, shapes)}, 0, shapes);
}

// nc_match_replace8: documented as `min(MIN_II, N)` [I], which would make it nearly free; read as
// the `max(MIN_II, N)` every sibling uses (ours).
Latency Hwm::getLatency(const InstMatchReplace& I, const PatternShape* shapes) const {
  return compute(I, minII(freeSize(I, shapes)), 0, shapes);
}

// scalar_tensor_tensor: `N` if data and operand1 are both bfloat16, op0 = subtract, op1 = multiply
// and N is even; `2*N` otherwise [I scalar_tensor_tensor] (no MIN_II in the formula).
Latency Hwm::getLatency(const InstScalarTensorTensor& I, const PatternShape* shapes) const {
  const double n = freeSize(I, shapes);
  bool fast = false;
  if (I.ins.size() >= 2)
    fast = I.ins[0].dtype == DType::bfloat16 && I.ins[1].dtype == DType::bfloat16 &&
           I.op0 == AluOp::subtract && I.op1 == AluOp::mult && std::fmod(n, 2.0) == 0.0;
  return compute(I, {.data = fast ? n : 2 * n}, 2 * elementsOut(I, shapes), shapes);
}

// tensor_scalar_reduce: `max(MIN_II, N) + MIN_II` [I tensor_scalar_reduce]. tensor_scalar_cumulative
// has no published cost; it is the same single pass writing its running values instead of reading
// the register out: `max(MIN_II, N)`, the one-input Vector Engine rate [A1] (ours).
Latency Hwm::getLatency(const InstTensorScalarReduce& I, const PatternShape* shapes) const {
  const double n = freeSize(I, shapes);
  EngineCycles cycles = minII(n);
  if (!I.cumulative) cycles.fixed = static_cast<double>(cfg_.min_ii_cycles);  // the register read-out
  return compute(I, cycles, 2 * elementsOut(I, shapes), shapes);
}

// ---- GpSimd ----

// tensor_partition_reduce, nc_n_gather, sequence_bounds and nonzero_with_count have no published
// cost: GPSIMD_START plus one cycle per element per partition, as iota and affine_select [I]
// (ours; cpp/sim/README.md). nc_n_gather is "n groups of instructions in the underlying ISA,
// where n = ceil(elems_per_partition / 512)" [I nc_n_gather]: a start-up per group.
Latency Hwm::getLatency(const InstTensorPartitionReduce& I, const PatternShape* shapes) const {
  const int64_t elems = elementsIn(I, shapes);
  return compute(I, poolCycles(freeSize(I, shapes)), elems, shapes);
}

Latency Hwm::getLatency(const InstGather& I, const PatternShape* shapes) const {
  const double n = I.outs.empty() ? 0.0 : static_cast<double>(shapes[I.ins.size()].freeElements);
  const double groups = std::max(1.0, std::ceil(n / static_cast<double>(cfg_.gather_group_elements)));
  return compute(I, {.data = n, .fixed = groups * static_cast<double>(cfg_.gpsimd_start_cycles)}, 0, shapes);
}

Latency Hwm::getLatency(const InstSequenceBounds& I, const PatternShape* shapes) const {
  return compute(I, poolCycles(freeSize(I, shapes)), 0, shapes);
}

Latency Hwm::getLatency(const InstNonzeroWithCount& I, const PatternShape* shapes) const {
  return compute(I, poolCycles(freeSize(I, shapes)), 0, shapes);
}

// local_gather: `150 + (num_valid_indices * num_elem_per_idx)/C` GpSimd cycles, with
// `C = ((28 + t*num_elem_per_idx)/(t*num_elem_per_idx)) / min(4/dtype_size, num_elem_per_idx)`,
// dtype_size the source's element bytes and `t` = 4 [I local_gather].
Latency Hwm::getLatency(const InstLocalGather& I, const PatternShape* shapes) const {
  constexpr double t = 4;
  const double e = static_cast<double>(I.num_elem_per_idx);
  const double size = I.ins.empty() ? 4.0 : static_cast<double>(dtypeSize(I.ins[0].dtype));
  const double c = ((28 + t * e) / (t * e)) / std::min(4.0 / size, e);
  const double n = static_cast<double>(I.num_valid_indices) * e;
  return compute(I, {.data = n / c, .fixed = static_cast<double>(cfg_.gpsimd_start_cycles)}, 0, shapes);
}

// ---- the engines' random number generators (no published cost; ours) ----

// rng: one output element per cycle as the single-input Vector Engine rule [A1], `max(MIN_II, N)`;
// the state moves cost an initiation interval. The same on GpSimd, as the pages of the instructions
// both engines run give one formula for both (tensor_copy, tensor_scalar, memset [I]).
Latency Hwm::getLatency(const InstRand& I, const PatternShape* shapes) const {
  return compute(I, minII(freeSize(I, shapes)), 0, shapes);
}

Latency Hwm::getLatency(const InstSetRandState& I, const PatternShape* shapes) const {
  return compute(I, minII(0), 0, shapes);
}

Latency Hwm::getLatency(const InstGetRandState& I, const PatternShape* shapes) const {
  return compute(I, minII(0), 0, shapes);
}

// ---- PE ----

// nc_matmul: `max(min(64, N_stationary), N_moving)` PE cycles for fp8/bf16/fp16/tf32 and
// `4 * max(min(64, N_stationary), N_moving)` for fp32 [I]; N_stationary = M (the stationary's
// free size), N_moving = N. PE transpose: `max(P, min(64, F))` [I], the same expression for the
// identity moving tile (N_moving = K = P); FP32 transpose is 4x (v2) or 2x (v3 transpose mode).
Latency Hwm::getLatency(const InstMatmult& I, const PatternShape* shapes) const {
  if (I.ins.size() < 2) return compute(I, {}, 0, shapes);
  const auto &st = I.ins[0], &mv = I.ins[1];
  const double m = static_cast<double>(shapes[0].freeElements);
  const double n = static_cast<double>(shapes[1].freeElements);
  const double k = static_cast<double>(shapes[0].partitions);
  double cycles = std::max(std::min(64.0, m), n);
  // float32 takes four passes; tfloat32 (float32r) runs at the bf16 rate [I: nc_matmul].
  const bool fp32 = st.dtype == DType::float32 || mv.dtype == DType::float32;
  if (fp32) cycles *= I.is_transpose ? cfg_.pe_fp32_transpose_factor : cfg_.pe_fp32_factor;
  const int64_t flops = I.is_transpose ? 0 : static_cast<int64_t>(2.0 * k * m * n);
  Latency l = compute(I, {.data = cycles}, flops, shapes);
  // MFU's count, the profiler's `adjusted_flops` [R2]: weighted by the input dtype against the
  // bf16 peak, as the cycles above are (fp32 when they take fp32's passes). An fp8 operand with a
  // 16-bit one is not the fp8 rate: weight 1, as bf16 (ours).
  const double weight = fp32                                 ? cfg_.pe_mfu_fp32_factor
                        : isFp8(st.dtype) && isFp8(mv.dtype) ? cfg_.pe_mfu_fp8_factor
                                                             : 1.0;
  l.adjusted_flops = static_cast<double>(flops) * weight;
  return l;
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
Latency Hwm::getLatency(const InstDMA& I, const PatternShape* shapes) const {
  Latency l;
  l.engine = engineOf(I);
  l.cycles = static_cast<double>(cfg_.dma_trigger_cycles);
  l.busy_ns = l.cycles / clockGhz(l.engine);
  l.dma_queue = I.queue;
  l.dma_latency_ns = cfg_.dma_start_latency_ns;
  l.dma_dge_ns = I.dge_type == DgeType::None ? 0.0 : cfg_.dma_dge_instruction_ns;
  l.access_ns = cfg_.dma_completion_ns;
  // The operand lists read once (through their references the compiler would reload them).
  const size_t nIns = I.ins.size(), nOuts = I.outs.size();
  const AccessPattern *ins = I.ins.data(), *outs = I.outs.data();
  const PatternShape* outShapes = shapes + nIns;
  l.bytes = nOuts == 0 ? 0 : apBytes(outs[0], outShapes[0]);
  l.flops = I.dst_rmw_op == AluOp::bypass || nOuts == 0 ? 0 : outShapes[0].numElements();
  if (nIns == 0 || nOuts == 0 || ins[0].isImmediate()) {
    l.dma_engine_mask = dmaEngineMask(I, shapes, cfg_);
    return l;
  }
  const AccessPattern &src = ins[0], &dst = outs[0];
  const PatternShape &srcShape = shapes[0], &dstShape = outShapes[0];
  // Each side's location read once: whether it is on chip decides its engines, its runs, its
  // share of the engines and whether HBM carries it.
  const bool srcOnChip = src.loc->isOnChip(), dstOnChip = dst.loc->isOnChip();
  const DmaEngineSpread srcSpread = srcOnChip ? dmaEngineSpread(src.startPartition(), srcShape.partitions, cfg_)
                                              : DmaEngineSpread{};
  const DmaEngineSpread dstSpread = dstOnChip ? dmaEngineSpread(dst.startPartition(), dstShape.partitions, cfg_)
                                              : DmaEngineSpread{};
  // A plain transfer (one input, one output, the common case) has its engines from its two sides;
  // any other (an index operand, more outputs) from dmaEngineMask's walk over every operand.
  if (nIns == 1 && nOuts == 1) {
    l.dma_engine_mask = dmaEngineMaskOf(srcSpread.bits | dstSpread.bits, cfg_);
  } else {
    l.dma_engine_mask = dmaEngineMask(I, shapes, cfg_);
  }
  // Indirect (a second input): the rows that move are the side that is not indexed, the source of
  // an IndirectSave scatter, else the destination; the indexed side names a whole table.
  const bool indirect = nIns == 2;
  const bool scatter = I.opcode() == InstructionType::IndirectSave;
  const AccessPattern& moved = scatter ? src : dst;
  const PatternShape& movedShape = scatter ? srcShape : dstShape;
  const bool movedOnChip = scatter ? srcOnChip : dstOnChip;
  const AccessPattern &from = indirect ? moved : src, &to = indirect ? moved : dst;
  const PatternShape &fromShape = indirect ? movedShape : srcShape, &toShape = indirect ? movedShape : dstShape;
  const bool fromOnChip = indirect ? movedOnChip : srcOnChip, toOnChip = indirect ? movedOnChip : dstOnChip;

  const int64_t elements = toShape.numElements();
  const int64_t run = std::max<int64_t>(1, std::min(contiguousRun(from, fromOnChip), contiguousRun(to, toOnChip)));
  const double descriptors = ceilPositive(static_cast<double>(elements) / static_cast<double>(run));
  const double bytes = static_cast<double>(elements) * std::max(dtypeSize(src.dtype), dtypeSize(dst.dtype));
  // The busiest engine's share: its partitions of the on-chip side (the destination's if both
  // are), as the side's partitions map to the engines, or an even split.
  double share;
  if (dstOnChip || srcOnChip) {
    const int64_t busiest = dstOnChip ? dstSpread.busiest : srcSpread.busiest;
    share = static_cast<double>(busiest) / static_cast<double>(dstOnChip ? dstShape.partitions : srcShape.partitions);
  } else {
    share = 1.0 / bitCount(l.dma_engine_mask);
  }
  double rate = cfg_.dma_engine_bandwidth_gbps;  // GB/s = bytes/ns
  if (I.mode == DmaMode::Transpose)
    rate *= srcOnChip ? cfg_.dma_transpose_sbuf_factor : cfg_.dma_transpose_dram_factor;
  if (I.dst_rmw_op != AluOp::bypass) rate *= cfg_.dma_accumulate_factor;
  l.dma_descriptors = ceilPositive(descriptors * share);
  l.dma_transfer_ns = std::max(l.dma_descriptors * cfg_.dma_descriptor_ns, bytes * share / rate);
  double hbmBytes = 0;
  if (!srcOnChip) hbmBytes += static_cast<double>(apBytes(from, fromShape));
  if (!dstOnChip) hbmBytes += static_cast<double>(apBytes(to, toShape));
  l.dma_hbm_ns = hbmBytes / cfg_.hbm_core_bandwidth_gbps;
  return l;
}

// ---- the Custom / Extension band (seed 000: slots 53..57, opaque latency-modelled boxes) ----

namespace {
HwmExtension gExtension;

const HwmExtension& extension(const Instruction& I) {
  if (!gExtension.carried_kernel_latency)
    throw sim::SimulationError(I.opcodeName() + " '" + I.name + "': a kernel node is priced by expanding it, "
                               "which needs libwalrus (the kernel expanders); it is not loaded");
  return gExtension;
}
}  // namespace

void registerHwmExtension(const HwmExtension& e) { gExtension = e; }

// IT54 library kernels are expanded by their Trainium leaves: TrainiumHwm (libwalrus) prices them.
Latency Hwm::getLatency(const InstBIRKernel& I) const {
  throw sim::SimulationError("InstBIRKernel '" + I.name + "' (kernel '" + I.kernel_name +
                             "'): library kernel nodes are priced by expanding their leaf, which only the "
                             "Trainium models know (TrainiumHwm, libwalrus; bir::makeHwm builds them)");
}
// IT55 / IT56 carry their own kernel: expanded and scheduled through the extension.
Latency Hwm::getLatency(const InstNKIKernel& I) const {
  return extension(I).carried_kernel_latency(*this, I);
}
Latency Hwm::getLatency(const InstNKIKLIRKernel& I) const {
  return extension(I).carried_kernel_latency(*this, I);
}

Latency Hwm::getLatency(const InstBIRKernel& I, const PatternShape*) const { return getLatency(I); }
Latency Hwm::getLatency(const InstNKIKernel& I, const PatternShape*) const { return getLatency(I); }
Latency Hwm::getLatency(const InstNKIKLIRKernel& I, const PatternShape*) const { return getLatency(I); }

// device_print works only in simulation (the public NKI docs; [S2], [G1]): a debugging aid that
// takes no device time. It still waits for the tile it prints (its operand's hazards).
Latency Hwm::getLatency(const InstDevicePrint& I, const PatternShape*) const {
  Latency l;
  l.engine = engineOf(I);
  return l;
}

// CustomOp (53): a Neuron Custom C++ operator, user code that runs on the GpSimd cores, on
// NeuronCore-v2 only (aws-neuron-sdk: "Neuron Custom C++ Operators ... run on the GPSIMD engines of
// Inf2 and Trn1"). Opaque: priced as GpSimd work over its largest operand, GPSIMD_START + N cycles
// with N its elements per partition (ours, the rule of every Pool instruction without a documented
// cost). Every other Unmodeled opcode has no model.
Latency Hwm::getLatency(const InstUnmodeled& I, const PatternShape* shapes) const {
  if (I.opcode() != InstructionType::CustomOp)
    throw sim::SimulationError(I.opcodeName() + " '" + I.name + "': this opcode has no functional or latency model");
  if (!cfg_.has_custom_ops)
    throw sim::SimulationError("CustomOp '" + I.name + "': Neuron Custom C++ operators run on NeuronCore-v2 only, not " +
                               cfg_.neuron_core);
  double n = 0;
  const size_t nIns = I.ins.size(), nOperands = nIns + I.outs.size();
  for (size_t k = 0; k < nOperands; ++k)
    if (!(k < nIns ? I.ins[k] : I.outs[k - nIns]).isImmediate())
      n = std::max(n, static_cast<double>(shapes[k].freeElements));
  return compute(I, poolCycles(n), 0, shapes);
}

// ---------------------------------------------------------------------------------------------

// v3 DVE perf mode [A2]: 4x for tensor_copy / tensor_scalar with in and out in SBUF, BF16/FP16 and
// unit-stride innermost; 2x for the same when not contiguous (the mode's rate for strided
// operands, which their stride does not slow again [A1]) or when one side is in PSUM.
std::optional<EngineCycles> NeuronCoreV3Hwm::dveCopyLikePerfMode(const Instruction& I, double n) const {
  if (engineOf(I) != Engine::DVE || I.ins.empty() || I.outs.empty()) return std::nullopt;
  const auto &in = I.ins[0], &out = I.outs[0];
  if (in.isImmediate() || !is16BitFloat(in.dtype) || !is16BitFloat(out.dtype)) return std::nullopt;
  if (inSbuf(in) && inSbuf(out)) {
    EngineCycles c = minII(unitStride(in) && unitStride(out) ? n / 4 : n / 2);
    c.stridesPriced = true;
    return c;
  }
  if (inPsum(in) != inPsum(out)) return minII(n / 2);
  return std::nullopt;
}

Latency NeuronCoreV3Hwm::getLatency(const InstTensorCopy& I, const PatternShape* shapes) const {
  if (const auto cycles = dveCopyLikePerfMode(I, freeSize(I, shapes))) return compute(I, *cycles, 0, shapes);
  return Hwm::getLatency(I, shapes);
}

// Both forms of tensor_scalar: scalars as immediates or as [P, 1] pointers (ref §4).
template <class TensorScalarInst>
Latency NeuronCoreV3Hwm::tensorScalarInPerfMode(const TensorScalarInst& I, const PatternShape* shapes) const {
  Latency l = Hwm::getLatency(I, shapes);
  if (const auto cycles = dveCopyLikePerfMode(I, freeSize(I, shapes))) return compute(I, *cycles, l.flops, shapes);
  return l;
}

Latency NeuronCoreV3Hwm::getLatency(const InstTensorScalar& I, const PatternShape* shapes) const {
  return tensorScalarInPerfMode(I, shapes);
}
Latency NeuronCoreV3Hwm::getLatency(const InstTensorScalarPtr& I, const PatternShape* shapes) const {
  return tensorScalarInPerfMode(I, shapes);
}

// v3: tensor_tensor with both inputs in SBUF and all tensors BF16/FP16 runs in 2x mode [A2]:
// `max(MIN_II, N)` instead of `max(MIN_II, 2N)`.
Latency NeuronCoreV3Hwm::getLatency(const InstTensorTensor& I, const PatternShape* shapes) const {
  Latency l = Hwm::getLatency(I, shapes);
  if (engineOf(I) != Engine::DVE || I.ins.size() != 2 || I.outs.empty()) return l;
  const auto &a = I.ins[0], &b = I.ins[1], &o = I.outs[0];
  if (inSbuf(a) && inSbuf(b) && is16BitFloat(a.dtype) && is16BitFloat(b.dtype) && is16BitFloat(o.dtype))
    return compute(I, minII(freeSize(I, shapes)), l.flops, shapes);
  return l;
}

// v3 FP8 double_row: K=256 in the time of a BF16 K=128, i.e. half the cycles per row; but
// "FP8_E3 runs at BF16 speed" [A2]: an e3 operand takes the whole time.
Latency NeuronCoreV3Hwm::getLatency(const InstMatmult& I, const PatternShape* shapes) const {
  Latency l = Hwm::getLatency(I, shapes);
  auto fastFp8 = [](DType t) { return isFp8(t) && t != DType::float8e3; };
  if (I.perf_mode == PerfMode::DoubleRow && I.ins.size() == 2 && fastFp8(I.ins[0].dtype) &&
      fastFp8(I.ins[1].dtype)) {
    l.cycles /= 2;
    l.busy_ns /= 2;
  }
  return l;
}

std::unique_ptr<Hwm> makeHwm(std::string_view arch) {
  const MachineConfig& config = machineConfig(arch);  // throws the unknown-arch message
  if (!gExtension.make_trainium_hwm)
    throw sim::SimulationError("makeHwm: the Trainium latency models are libwalrus's, which is not loaded");
  return gExtension.make_trainium_hwm(config);
}

}  // namespace bir
