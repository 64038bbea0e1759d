#include "Legality.h"

#include <algorithm>
#include <utility>

namespace bir::legality {
namespace {

std::string str(int64_t v) { return std::to_string(v); }
std::string name(DType t) { return std::string(enumName(t)); }
bool isFp32(DType t) { return t == DType::float32 || t == DType::float32r; }
bool isFp8(DType t) { return t == DType::float8e4 || t == DType::float8e5 || t == DType::float8e3; }
std::string_view spaceName(Space s) {
  switch (s) {
    case Space::SBUF: return "SBUF";
    case Space::PSUM: return "PSUM";
    case Space::DRAM: return "DRAM";
    case Space::Immediate: break;
  }
  return "an immediate";
}
// "in SBUF" / "an immediate"
std::string where(const Operand& o) {
  return o.space == Space::Immediate ? "an immediate" : "in " + std::string(spaceName(o.space));
}

// "<instruction>: <what is wrong>", the one shape of every message.
Verdict broken(Rule r, Opcode op, const std::string& text) {
  return Violation{r, InstructionType::string(op) + ": " + text};
}

}  // namespace

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> all = {
#define BIR_LEGALITY_RULE(Name, Id, Requires) {Rule::Name, Id, Requires},
#include "LegalityRules.def"
#undef BIR_LEGALITY_RULE
  };
  return all;
}

const RuleInfo& info(Rule r) { return rules()[static_cast<size_t>(r)]; }

Operand operandOf(const AccessPattern& ap) {
  Operand o;
  o.dtype = ap.dtype;
  if (ap.isImmediate()) {
    o.space = Space::Immediate;
    return o;
  }
  o.partitions = ap.partitions();
  o.free_elements = ap.freeElements();
  const MemoryLocation& loc = *ap.loc;
  if (loc.isDram()) {
    o.space = Space::DRAM;
    return o;
  }
  o.space = loc.type == MemoryType::PSUM ? Space::PSUM : Space::SBUF;
  const int64_t row = ap.rowElements();
  if (row <= 0) return o;
  const int64_t es = dtypeSize(ap.dtype);
  int64_t lo = 0, hi = 0;  // the free walk's extent in elements, relative to element 0
  for (size_t i = 1; i < ap.pattern.size(); ++i) {
    const int64_t span = (ap.pattern[i].num - 1) * ap.pattern[i].step;
    (span < 0 ? lo : hi) += span;
  }
  o.placed = true;
  o.start_byte = loc.addr + (ap.offset % row) * es;
  o.byte_lo = o.start_byte + lo * es;
  o.byte_hi = o.start_byte + (hi + 1) * es;
  return o;
}

bool isPeInputDtype(DType t, const MachineConfig& cfg) {
  switch (t) {
    case DType::float8e4:
    case DType::float8e5:
    case DType::bfloat16:
    case DType::float16:
    case DType::float32r:
    case DType::float32:
      return true;
    case DType::float8e3:  // "FP8_E3 runs at BF16 speed" is a v3 statement [A2]
      return cfg.pe_fp8_double_row;
    default:
      return false;
  }
}

Verdict matmul(const Matmul& mm, const MachineConfig& cfg) {
  const Opcode op = InstructionType::Matmult;
  auto fail = [&](Rule r, const std::string& text) { return broken(r, op, text); };
  const Operand &st = mm.stationary, &mv = mm.moving, &out = mm.out;
  for (const auto& [role, o] : {std::pair<const char*, const Operand*>{"the stationary", &st}, {"the moving", &mv}}) {
    if (o->space != Space::SBUF)
      return fail(Rule::MatmulOperandSpace, std::string(role) + " is " + where(*o) + "; the PE reads its operands from SBUF");
    if (!isPeInputDtype(o->dtype, cfg))
      return fail(Rule::MatmulOperandDtype, std::string(role) + " is " + name(o->dtype) + ", which the PE does not take on " +
                                                cfg.arch + " (it takes float8e4, float8e5, bfloat16, float16, float32, float32r" +
                                                (cfg.pe_fp8_double_row ? ", float8e3)" : ")"));
  }
  if (isFp32(st.dtype) != isFp32(mv.dtype))
    return fail(Rule::MatmulFp32Pair, "the stationary is " + name(st.dtype) + " and the moving " + name(mv.dtype) +
                                          "; if one operand is fp32 (float32, float32r) both must be");
  if (out.space != Space::PSUM) return fail(Rule::MatmulResultSpace, "the result is " + where(out) + "; the PE writes PSUM");
  const int64_t k = st.partitions, m = st.free_elements, n = mv.free_elements;
  if (mv.partitions != k)
    return fail(Rule::MatmulContraction, "the stationary has K = " + str(k) + " partitions and the moving " +
                                             str(mv.partitions) + "; both hold the contraction dimension K on partitions");
  if (k > cfg.pe_rows) return fail(Rule::MatmulPeRows, "K = " + str(k) + " exceeds the " + str(cfg.pe_rows) + " PE rows");
  if (m > cfg.pe_cols)
    return fail(Rule::MatmulPeCols, "M = " + str(m) + " (the stationary's elements per partition) exceeds the " +
                                        str(cfg.pe_cols) + " PE columns");
  if (n > cfg.pe_max_moving_free_elements)
    return fail(Rule::MatmulMovingSize, "N = " + str(n) + " (the moving's elements per partition) exceeds " +
                                            str(cfg.pe_max_moving_free_elements) + " per matmul");
  if (out.partitions != m)
    return fail(Rule::MatmulResultPartitions, "the result has " + str(out.partitions) + " partitions; it needs M = " + str(m));
  if (mm.is_transpose) {
    if (n != k)
      return fail(Rule::MatmulTransposeIdentity, "a PE transpose takes the [K, K] identity as moving; it has " + str(n) +
                                                     " elements per partition for K = " + str(k));
    if (out.free_elements != k)
      return fail(Rule::MatmulResultSize, "the result has " + str(out.free_elements) +
                                              " elements per partition; the transpose needs K = " + str(k));
    if (out.dtype != st.dtype && !isFp32(out.dtype))
      return fail(Rule::MatmulResultDtype, "a PE transpose writes the stationary's dtype (" + name(st.dtype) +
                                               ") or fp32, not " + name(out.dtype));
    if (!mm.start) return fail(Rule::MatmulTransposeStart, "a PE transpose cannot accumulate (start_tensor_calc is false)");
  } else {
    if (out.free_elements != n)
      return fail(Rule::MatmulResultSize, "the result has " + str(out.free_elements) +
                                              " elements per partition; it needs N = " + str(n));
    if (out.dtype != DType::float32)
      return fail(Rule::MatmulResultDtype, "the PE accumulates in fp32 PSUM; the result is " + name(out.dtype));
  }
  if (out.placed) {
    if (out.start_byte % 4 != 0)
      return fail(Rule::MatmulPsumWord, "the result starts at PSUM byte " + str(out.start_byte) + ", not on a 4-byte word");
    // One accumulation group lives in one bank per partition [ref §2].
    const int64_t bank = cfg.psum_bank_bytes;
    if (out.byte_lo / bank != (out.byte_hi - 1) / bank)
      return fail(Rule::MatmulPsumBank, "the result covers PSUM bytes [" + str(out.byte_lo) + ", " + str(out.byte_hi) +
                                            ") of each partition, crossing the bank boundary at " +
                                            str((out.byte_lo / bank + 1) * bank) + ": an accumulation group must fit one " +
                                            str(bank) + "-byte PSUM bank");
  }
  switch (mm.perf_mode) {
    case PerfMode::None: break;
    case PerfMode::DoubleRow:
      if (!cfg.pe_fp8_double_row)
        return fail(Rule::MatmulPerfMode, "perf_mode DoubleRow needs NeuronCore-v3 or later; " + cfg.arch + " is " + cfg.neuron_core);
      if (!isFp8(st.dtype) || !isFp8(mv.dtype)) return fail(Rule::MatmulPerfMode, "perf_mode DoubleRow takes fp8 operands");
      break;
    default: return fail(Rule::MatmulPerfMode, "perf_mode " + std::string(enumName(mm.perf_mode)) + " is not modelled");
  }
  if (!mm.tile_size.empty() || !mm.tile_position.empty()) {
    if (mm.tile_size.size() != 2 || mm.tile_position.size() != 2)
      return fail(Rule::MatmulPeTile, "tile_size and tile_position take [rows, cols] and [row, col]");
    const int64_t g = cfg.pe_tile_granularity;
    const int64_t rows = mm.tile_size[0], cols = mm.tile_size[1], r0 = mm.tile_position[0], c0 = mm.tile_position[1];
    for (int64_t v : {rows, cols, r0, c0})
      if (v < 0 || v % g != 0)
        return fail(Rule::MatmulPeTile, "PE tile sizes and positions are multiples of " + str(g) + " on " + cfg.arch);
    if (rows == 0 || cols == 0 || r0 + rows > cfg.pe_rows || c0 + cols > cfg.pe_cols)
      return fail(Rule::MatmulPeTile, "PE tile [" + str(r0) + "+" + str(rows) + ", " + str(c0) + "+" + str(cols) +
                                          "] does not fit the " + str(cfg.pe_rows) + " x " + str(cfg.pe_cols) + " array");
    // The tiling modes slice the array's rows and its columns in halves or quarters (as far as the
    // generation's granularity), and a tile starts at a multiple of its size [I: nc_matmul].
    const auto tileOf = [g](int64_t size, int64_t whole) {
      for (int64_t t = whole; t >= g && t > 0; t /= 2)
        if (size == t) return true;
      return false;
    };
    if (!tileOf(rows, cfg.pe_rows) || !tileOf(cols, cfg.pe_cols))
      return fail(Rule::MatmulPeTile, "PE tile size [" + str(rows) + ", " + str(cols) + "]: a tiling mode slices the " +
                                          str(cfg.pe_rows) + " x " + str(cfg.pe_cols) + " array in halves or quarters, down to " +
                                          str(g) + " on " + cfg.arch);
    if (r0 % rows != 0 || c0 % cols != 0)
      return fail(Rule::MatmulPeTile, "PE tile position [" + str(r0) + ", " + str(c0) + "] is not a multiple of its size [" +
                                          str(rows) + ", " + str(cols) + "]");
    if (k > rows || m > cols)
      return fail(Rule::MatmulPeTile, "K x M = " + str(k) + " x " + str(m) + " does not fit the " + str(rows) + " x " +
                                          str(cols) + " PE tile");
  }
  return std::nullopt;
}

Verdict poolPsumOperand(Opcode op, bool output) {
  return broken(Rule::PoolPsum, op, std::string(output ? "an output" : "an input") +
                                        " is in PSUM, which GpSimd (Pool) cannot access");
}

Verdict dveActFreeSize(Opcode op, const Operand& o, bool output, int64_t cap) {
  return broken(Rule::DveActFreeSize, op, std::string(output ? "an output" : "an input") + " walks " +
                                              str(o.free_elements) +
                                              " elements per partition; a DVE or ACT instruction walks at most " +
                                              str(cap) + " in " + std::string(spaceName(o.space)));
}

Verdict psumInputs(Opcode op, const Operand& a, const Operand& b) {
  if (a.space == Space::PSUM && b.space == Space::PSUM)
    return broken(Rule::PsumInputs, op, "two inputs are in PSUM; an engine reads at most one PSUM input");
  return std::nullopt;
}

bool isBitvecOp(AluOp op) {
  switch (op) {
    case AluOp::bitwise_and:
    case AluOp::bitwise_or:
    case AluOp::bitwise_xor:
    case AluOp::bitwise_not:
    case AluOp::arith_shift_left:
    case AluOp::arith_shift_right:
    case AluOp::logical_shift_left:
    case AluOp::logical_shift_right:
      return true;
    default:
      return false;
  }
}

Verdict aluOps(Opcode op, Engine engine, AluOp op0, AluOp op1) {
  const auto kind = [](AluOp a) { return isBitvecOp(a) ? "bit-vector" : "arithmetic"; };
  // "op1 bitwise_and is a bit-vector operator; ..."
  const auto bitvec = [](const char* role, AluOp a) {
    return std::string(role) + " " + std::string(enumName(a)) + " is a bit-vector operator; ";
  };
  if (op == InstructionType::ScalarTensorTensor)
    for (const auto& [role, a] : {std::pair{"op0", op0}, std::pair{"op1", op1}})
      if (isBitvecOp(a))
        return broken(Rule::SttArithmeticOps, op, bitvec(role, a) + "op0 and op1 take arithmetic operators only");
  if (op == InstructionType::TensorTensorScan)
    for (const auto& [role, a] : {std::pair{"op0", op0}, std::pair{"op1", op1}})
      if (isBitvecOp(a))
        return broken(Rule::ScanArithmeticOps, op, bitvec(role, a) + "op0 and op1 take arithmetic operators only");
  if (op == InstructionType::TensorScalarReduce && isBitvecOp(op0))
    return broken(Rule::TsrArithmeticOp0, op, bitvec("op0", op0) + "op0 takes arithmetic operators only");
  const bool scalar = op == InstructionType::TensorScalar || op == InstructionType::TensorScalarPtr;
  if (scalar && op1 != AluOp::bypass && isBitvecOp(op0) != isBitvecOp(op1))
    return broken(Rule::TensorScalarOpKinds, op, "op0 " + std::string(enumName(op0)) + " is " + kind(op0) + " and op1 " +
                                                     std::string(enumName(op1)) + " " + kind(op1) +
                                                     "; op0 and op1 are both bit-vector or both arithmetic operators");
  for (AluOp a : {op0, op1})
    if (isBitvecOp(a) && engine != Engine::DVE)
      return broken(Rule::AluBitvecEngine, op, "the bit-vector operator " + std::string(enumName(a)) +
                                                   " runs on the Vector Engine, not " + std::string(enumName(engine)));
  if (scalar && engine == Engine::Activation &&
      !(op0 == AluOp::mult && (op1 == AluOp::add || op1 == AluOp::bypass)) &&
      !(op0 == AluOp::add && op1 == AluOp::bypass))
    return broken(Rule::ActTensorScalarOps, op, "op0 " + std::string(enumName(op0)) + ", op1 " +
                                                    std::string(enumName(op1)) +
                                                    " on the Activation engine, which takes op0 mult with op1 add or "
                                                    "bypass, or op0 add with op1 bypass");
  return std::nullopt;
}

Verdict bitvecDtypes(Opcode op, AluOp op0, AluOp op1, std::span<const DType> ins, std::span<const DType> outs) {
  for (AluOp a : {op0, op1}) {
    if (!isBitvecOp(a)) continue;
    for (const auto& [role, dtypes] : {std::pair{"an input", &ins}, std::pair{"an output", &outs}})
      for (DType t : *dtypes)
        if (isFloat(t))
          return broken(Rule::AluBitvecDtype, op, "the bit-vector operator " + std::string(enumName(a)) +
                                                      " treats elements as bit patterns and takes integer tiles; " +
                                                      role + " is " + name(t));
  }
  return std::nullopt;
}

bool isReduceOp(AluOp op) {
  switch (op) {
    case AluOp::add:
    case AluOp::subtract:
    case AluOp::mult:
    case AluOp::max:
    case AluOp::min:
    case AluOp::logical_and:
    case AluOp::logical_or:
    case AluOp::logical_xor:
    case AluOp::bitwise_and:
    case AluOp::bitwise_or:
    case AluOp::bitwise_xor:
      return true;
    default:
      return false;
  }
}

Verdict reduceOp(Opcode op, AluOp reduce_op) {
  if (isReduceOp(reduce_op)) return std::nullopt;
  return broken(Rule::ReduceOp, op, "the operator " + std::string(enumName(reduce_op)) +
                                        " cannot reduce (a reduction takes add, subtract, mult, max, min, logical_and, "
                                        "logical_or, logical_xor, bitwise_and, bitwise_or or bitwise_xor)");
}

Verdict partitionReduceOp(AluOp op) {
  if (op == AluOp::add || op == AluOp::max || op == AluOp::bitwise_or || op == AluOp::bitwise_and ||
      op == AluOp::average)
    return std::nullopt;
  return broken(Rule::PartitionReduceOp, InstructionType::TensorPartitionReduce,
                "op " + std::string(enumName(op)) +
                    " (a partition reduction takes add, max, bitwise_or, bitwise_and or average)");
}

Verdict registerFold(AluOp reduce_op, bool cumulative) {
  if (reduce_op == AluOp::add || reduce_op == AluOp::mult || reduce_op == AluOp::max || reduce_op == AluOp::min ||
      (cumulative && reduce_op == AluOp::subtract))
    return std::nullopt;
  return broken(Rule::TsrRegisterFold, InstructionType::TensorScalarReduce,
                "reduce_op " + std::string(enumName(reduce_op)) +
                    (cumulative ? "; a cumulative reduction takes add, subtract, mult, max or min"
                                : "; the reduction takes add, mult, max or min"));
}

Verdict activationReduce(AccumCmd acc, AluOp acc_op, const MachineConfig& cfg) {
  if (acc != AccumCmd::Idle && cfg.act_reduce_add_only && acc_op != AluOp::add)
    return broken(Rule::ActReduceOp, InstructionType::Activation,
                  "the " + cfg.arch + " Activation engine's accumulation registers reduce with add only, not " +
                      std::string(enumName(acc_op)) + " (" + cfg.neuron_core + ")");
  return std::nullopt;
}

Verdict dveTranspose(const Operand& in, const Operand& out, const MachineConfig& cfg) {
  const Opcode op = InstructionType::StreamTranspose;
  const int64_t most = cfg.dve_transpose_max;
  if (in.space == Space::Immediate) return broken(Rule::DveTransposeSource, op, "the source is an immediate");
  if (in.partitions > most || in.free_elements > most)
    return broken(Rule::DveTransposeBlock, op, "the Vector Engine transposes blocks of up to " + str(most) + " x " + str(most) +
                                                   "; the source is " + str(in.partitions) + " x " + str(in.free_elements));
  if (out.partitions != in.free_elements || out.free_elements != in.partitions)
    return broken(Rule::DveTransposeResult, op, "the result is " + str(out.partitions) + " x " + str(out.free_elements) +
                                                    "; the transpose of " + str(in.partitions) + " x " +
                                                    str(in.free_elements) + " is " + str(in.free_elements) + " x " +
                                                    str(in.partitions));
  return std::nullopt;
}

Verdict bnStats(const Operand& in, const MachineConfig& cfg) {
  if (in.free_elements > cfg.bn_stats_max_free_elements)
    return broken(Rule::BnStatsSize, InstructionType::BNStats,
                  "bn_stats takes at most " + str(cfg.bn_stats_max_free_elements) + " elements per partition; the data has " +
                      str(in.free_elements));
  return std::nullopt;
}

Verdict max8Family(Opcode op, const Operand& in, const MachineConfig& cfg) {
  const int64_t n = in.free_elements, lo = cfg.max8_min_free_elements, hi = cfg.max8_max_free_elements;
  if (n < lo || n > hi)
    return broken(Rule::Max8Size, op, "takes " + str(lo) + ".." + str(hi) + " elements per partition; the data has " + str(n));
  return std::nullopt;
}

Verdict localGather(const Operand& src, const Operand& index, int64_t e, int64_t valid, const MachineConfig& cfg) {
  const Opcode op = InstructionType::LocalGather;
  const int64_t core = cfg.gpsimd_core_partitions;
  if (src.partitions % core != 0 || index.partitions != src.partitions)
    return broken(Rule::LocalGatherPartitions, op, "the source has " + str(src.partitions) + " partitions and the index " +
                                                       str(index.partitions) + "; both need the same, a multiple of " +
                                                       str(core) + " (a GpSimd core's)");
  if (index.dtype != DType::uint16)
    return broken(Rule::LocalGatherIndexDtype, op, "the index is " + name(index.dtype) + "; local_gather indices are uint16");
  if (e != 1 && e != 2 && e != 4 && e != 8 && e != 16 && e != 32)
    return broken(Rule::LocalGatherElements, op, "num_elem_per_idx " + str(e) + " (it takes 1, 2, 4, 8, 16 or 32)");
  const int64_t perCore = core * index.free_elements, most = std::min(perCore, cfg.local_gather_max_indices);
  if (valid < 1 || valid > most)
    return broken(Rule::LocalGatherValidIndices, op, "num_valid_indices " + str(valid) + " (each core has " + str(perCore) +
                                                         " indices, and gathers at most " +
                                                         str(cfg.local_gather_max_indices) + ")");
  return std::nullopt;
}

Verdict generation(Opcode op, Engine engine, const MachineConfig& cfg) {
  const std::string needsV3 = "needs NeuronCore-v3 or later; " + cfg.arch + " is " + cfg.neuron_core;
  if (op == InstructionType::RangeSelect && !cfg.has_range_select) return broken(Rule::Generation, op, needsV3);
  if (op == InstructionType::NonzeroWithCount && !cfg.has_gpsimd_v3_instructions)
    return broken(Rule::Generation, op, needsV3);
  const bool generator = op == InstructionType::Rand || op == InstructionType::SetRandState ||
                         op == InstructionType::GetRandState;
  if (generator && engine == Engine::Pool && !cfg.has_gpsimd_v3_instructions)
    return broken(Rule::Generation, op, "the GpSimd Engine's random number generator " + needsV3);
  if (op == InstructionType::GetRandState && engine != Engine::Pool)
    return broken(Rule::Generation, op, "reading the Vector Engine's generator states is NeuronCore-v4's "
                                        "(rand_get_state runs on GpSimd before it)");
  return std::nullopt;
}

Verdict dmaTrigger(Opcode op, DgeType dge_type, Engine engine, DType src, DType dst, const MachineConfig& cfg) {
  if (dge_type != DgeType::HWDGE) return std::nullopt;
  if (!cfg.has_hardware_dge)
    return broken(Rule::DmaHwdge, op, "hardware DGE needs NeuronCore-v3 or later; " + cfg.arch + " is " + cfg.neuron_core);
  if (engine != Engine::Activation && engine != Engine::SP)
    return broken(Rule::DmaHwdge, op, "a hardware-DGE DMA is triggered by the Activation or SP engine, not " +
                                          std::string(enumName(engine)));
  if (src != dst)
    return broken(Rule::DmaHwdge, op, "a hardware-DGE DMA moves raw bytes, without a cast; the source is " + name(src) +
                                          " and the destination " + name(dst));
  return std::nullopt;
}

Verdict dma(const Dma& d, const MachineConfig& cfg) {
  const Opcode op = d.opcode;
  auto fail = [&](Rule r, const std::string& text) { return broken(r, op, text); };
  const bool scatter = op == InstructionType::IndirectSave, dynamic = d.mode == DmaMode::Dynamic;
  if (d.src.space == Space::Immediate) return fail(Rule::DmaSource, "the source is an immediate");
  const char* index = dynamic ? "the run-time row offset" : "the index tensor";
  for (const auto& [role, o] : {std::pair<const char*, const Operand*>{"the source", &d.src}, {"the destination", &d.dst},
                                 {index, d.index ? &*d.index : nullptr}})
    if (o && o->space == Space::PSUM)
      return fail(Rule::DmaPsum, std::string(role) + " is in PSUM; DMA moves data between HBM and SBUF (a compute "
                                                     "engine copies PSUM to SBUF)");
  if (d.mode != DmaMode::Copy && d.mode != DmaMode::Transpose && !dynamic)
    return fail(Rule::DmaMode, "DMA mode " + std::string(enumName(d.mode)) + " is not modelled");
  if (dynamic && !d.index) return fail(Rule::DmaDynamicOffset, "a Dynamic DMA takes its run-time row offset as ins[1]");
  if (d.dst_rmw_op != AluOp::bypass && d.dst_rmw_op != AluOp::add)
    return fail(Rule::DmaRmwOp, "dst_rmw_op " + std::string(enumName(d.dst_rmw_op)) + " (DMA read-modify-write takes add)");
  if (auto v = dmaTrigger(op, d.dge_type, d.engine, d.src.dtype, d.dst.dtype, cfg)) return v;
  if (scatter && !d.index) return fail(Rule::DmaIndex, "IndirectSave takes the source rows and their destination indices");
  if (d.index) {
    const Operand& idx = *d.index;
    const Rule r = dynamic ? Rule::DmaDynamicOffset : Rule::DmaIndex;
    const char* what = dynamic ? "the run-time row offset" : "the index tensor";
    if (idx.space == Space::Immediate) return fail(r, std::string(what) + " is an immediate");
    if (isFloat(idx.dtype)) return fail(r, std::string(what) + " must have an integer dtype, not " + name(idx.dtype));
    if (d.mode == DmaMode::Transpose) return fail(Rule::DmaIndex, "an indirect DMA cannot transpose");
    if (d.indirect_dim != -1 && d.indirect_dim != 0)
      return fail(Rule::DmaIndirectDim, "indirect_dim " + str(d.indirect_dim) + " (only the outermost dim, 0, is modelled)");
    const int64_t n = idx.partitions * idx.free_elements;
    const Operand& direct = scatter ? d.src : d.dst;  // one index per row of the side not indexed
    if (dynamic) {
      if (n != 1) return fail(Rule::DmaDynamicOffset, "the run-time row offset has " + str(n) + " elements, not one");
    } else if (n != direct.partitions) {
      return fail(Rule::DmaIndex, "the index tensor has " + str(n) + " elements but the " +
                                      (scatter ? "source" : "destination") + " has " + str(direct.partitions) +
                                      " rows (one index per row)");
    }
    if (d.src.free_elements != d.dst.free_elements)
      return fail(Rule::DmaRowSize, "a source row has " + str(d.src.free_elements) + " elements but a destination row " +
                                        str(d.dst.free_elements));
    return std::nullopt;
  }
  if (d.mode == DmaMode::Transpose && !d.src_2d)
    return fail(Rule::DmaTransposeSource, "a DMA transpose takes a 2-D source [a, b] (unit dims aside); the source has more dims");
  const int64_t ns = d.src.partitions * d.src.free_elements, nd = d.dst.partitions * d.dst.free_elements;
  if (ns != nd)
    return fail(Rule::DmaElementCount, "the source has " + str(ns) + " elements but the destination " + str(nd));
  return std::nullopt;
}

}  // namespace bir::legality
