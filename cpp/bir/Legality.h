// The legality rules: what a NeuronCore instruction may be, once, for every layer that emits or
// runs instructions. The simulator's decoder (cpp/sim), the IT54 kernel builder
// (cpp/walrus/kernels/KernelBuilder) and both NKI tracers (through neuronxsim.bir.legality)
// describe their operands as legality::Operand and ask here. Each rule (LegalityRules.def) has an
// id and one wording, "<opcode>: <what is wrong>", the same from every layer; the caller adds where
// the instruction sits (the simulator its position in the module, the kernel builder its node, a
// tracer the kernel's source line).
//
// Every number comes from the target description (MachineConfig.h); the rules follow the public
// ISA documentation ([ref §2, §4] in ../shared/reference/nki-isa-and-hw.md).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "AccessPattern.h"
#include "Enums.h"
#include "InstructionType.h"
#include "MachineConfig.h"

namespace bir::legality {

enum class Rule : uint8_t {
#define BIR_LEGALITY_RULE(Name, Id, Requires) Name,
#include "LegalityRules.def"
#undef BIR_LEGALITY_RULE
};

struct RuleInfo {
  Rule rule;
  std::string_view id;        // "matmul.pe-rows"
  std::string_view requires_; // "K <= pe_rows"
};
// Every rule, in LegalityRules.def's order.
const std::vector<RuleInfo>& rules();
const RuleInfo& info(Rule r);

// A broken rule: which, and its message ("Matmult: K = 200 exceeds the 128 PE rows").
struct Violation {
  Rule rule;
  std::string message;
};
using Verdict = std::optional<Violation>;  // nullopt: legal

enum class Space : uint8_t { SBUF, PSUM, DRAM, Immediate };

// What the rules need to know of one operand; each layer fills it from its own operand type.
struct Operand {
  Space space = Space::SBUF;
  DType dtype = DType::float32;
  int64_t partitions = 1;     // partitions (on-chip); the outermost pattern pair's size (DRAM)
  int64_t free_elements = 1;  // elements per partition
  // Once placed (on-chip): the byte of element 0 in its partition, and the bytes [byte_lo, byte_hi)
  // of each partition it covers. A tracer places after the trace: the address rules then wait.
  bool placed = false;
  int64_t start_byte = 0, byte_lo = 0, byte_hi = 0;
};
// An access pattern as the rules see it (immediates, DRAM, and SB / PSUM placed at their location).
Operand operandOf(const AccessPattern& ap);

// ---- the PE array: nc_matmul and PE transposes (InstMatmult) ----
struct Matmul {
  Operand stationary, moving, out;
  bool is_transpose = false;  // moving is the [K, K] identity; out = stationary^T
  bool start = true;          // start_tensor_calc: a new accumulation group
  PerfMode perf_mode = PerfMode::None;
  // PE tiling ([rows, cols], [row, col]) or empty. Views of the caller's lists (the instruction's,
  // which outlive the check): the simulator's decoder asks this of every matmul, and copying two
  // vectors cost about a quarter of its check.
  std::span<const int64_t> tile_size, tile_position;
};
Verdict matmul(const Matmul& mm, const MachineConfig& cfg);
// The dtypes the PE reads on this generation.
bool isPeInputDtype(DType t, const MachineConfig& cfg);

// ---- operands of the compute engines ----
// One on-chip operand (`output`: an output, else an input) of instruction `op` issued on `engine`:
// GpSimd (Pool) reaches no PSUM; a DVE or ACT compute instruction walks at most
// dve_act_max_free_elements_{sbuf,psum} per partition (DMA transfers are exempt).
// Inline: asked of every on-chip operand of every instruction a module is prepared with; only a
// refusal's message is made out of line.
inline Verdict engineOperand(Opcode op, Engine engine, const Operand& operand, bool output, const MachineConfig& cfg);
// engineOperand's refusals: rule pool-psum, and rule dve-act-free-size with the engine's `cap`.
Verdict poolPsumOperand(Opcode op, bool output);
Verdict dveActFreeSize(Opcode op, const Operand& operand, bool output, int64_t cap);

// The two tensor inputs `a` and `b` that instruction `op` pairs element by element (TensorTensor,
// TensorTensorScan, ScalarTensorTensor, SelectReduce, CopyPredicated): at most one in PSUM.
Verdict psumInputs(Opcode op, const Operand& a, const Operand& b);

// ---- ALU operators by engine ----
// The ALU operators of `op` on `engine`: op0 and op1 of TensorScalar / TensorScalarPtr /
// ScalarTensorTensor / TensorTensorScan (op1 bypass: none), TensorTensor's op and
// TensorScalarReduce's op0 (op1 bypass). Bit-vector operators run on the Vector Engine;
// tensor_scalar's two are of one kind (both bit-vector or both arithmetic); the Activation
// engine's tensor_scalar takes mult then add, mult, or add; scalar_tensor_tensor,
// tensor_tensor_scan and TensorScalarReduce's op0 (its reduction is not an ALU stage) take
// arithmetic operators only.
// The bit-vector operators (bitwise and shifts): the Vector Engine's alone (alu.bitvec-engine),
// and refused where an instruction takes arithmetic operators only.
bool isBitvecOp(AluOp op);
Verdict aluOps(Opcode op, Engine engine, AluOp op0, AluOp op1);
// The dtypes of the tensors instruction `op` reads (`ins`: its data, not per-partition scalars) and
// writes (`outs`) when its operators are `op0` / `op1` (bypass: none): a bit-vector operator treats
// elements as bit patterns, so every one is an integer dtype (alu.bitvec-dtype).
Verdict bitvecDtypes(Opcode op, AluOp op0, AluOp op1, std::span<const DType> ins, std::span<const DType> outs);
// The same over braced lists of dtypes (a span cannot be made from one in C++20).
inline Verdict bitvecDtypes(Opcode op, AluOp op0, AluOp op1, std::initializer_list<DType> ins,
                            std::initializer_list<DType> outs) {
  return bitvecDtypes(op, op0, op1, std::span<const DType>(ins.begin(), ins.size()),
                      std::span<const DType>(outs.begin(), outs.size()));
}
// The operators a reduction along the free axes folds with (tbl-aluop's "Legal Reduction op").
bool isReduceOp(AluOp op);
// `reduce_op`, the operator reduction instruction `op` (TensorReduce, an accumulating Activation,
// SelectReduce) folds with (alu.reduce-op).
Verdict reduceOp(Opcode op, AluOp reduce_op);
// The operator TensorPartitionReduce folds GpSimd's partitions with (alu.partition-reduce-op).
Verdict partitionReduceOp(AluOp op);
// The operator `reduce_op` a TensorScalarReduce folds its results into the Vector Engine's
// accumulation registers with; `cumulative`: tensor_scalar_cumulative's, which also subtracts.
Verdict registerFold(AluOp reduce_op, bool cumulative);
// The reduction `acc_op` of an Activation whose accumulate command is `acc` (Idle: none).
Verdict activationReduce(AccumCmd acc, AluOp acc_op, const MachineConfig& cfg);

// ---- the Vector Engine's transpose (InstStreamTranspose) ----
Verdict dveTranspose(const Operand& in, const Operand& out, const MachineConfig& cfg);

// ---- per-instruction limits ----
Verdict bnStats(const Operand& in, const MachineConfig& cfg);
// max8 / nc_find_index8 / nc_match_replace8 (opcode Max, MaxIndex, MatchReplace).
Verdict max8Family(Opcode op, const Operand& in, const MachineConfig& cfg);

// ---- GpSimd's partition-local gather (LocalGather) ----
// `index` holds each core's indices (gpsimd_core_partitions partitions per core).
Verdict localGather(const Operand& src, const Operand& index, int64_t num_elem_per_idx, int64_t num_valid_indices,
                    const MachineConfig& cfg);

// ---- instructions of a later generation ----
// Whether `op` on `engine` exists on this generation (RangeSelect, NonzeroWithCount, the random
// number generators' Rand / SetRandState / GetRandState); other opcodes pass.
Verdict generation(Opcode op, Engine engine, const MachineConfig& cfg);

// ---- DMA (DMA, Load, Save, DMACopy, IndirectSave) ----
struct Dma {
  Opcode opcode = InstructionType::DMA;  // IndirectSave: a scatter (the destination is indexed)
  Engine engine = Engine::SP;  // the engine that triggers it
  Operand src, dst;
  // ins[1]: an indirect DMA's index tensor (one index per row of the side not indexed: the
  // destination of a gather, the source of a scatter), or a Dynamic DMA's run-time row offset.
  std::optional<Operand> index;
  DmaMode mode = DmaMode::Copy;
  AluOp dst_rmw_op = AluOp::bypass;
  DgeType dge_type = DgeType::None;
  int64_t indirect_dim = -1;
  bool src_2d = true;  // the source pattern has at most two dims of more than one element
};
Verdict dma(const Dma& d, const MachineConfig& cfg);
// Whether dma() passes a plain copy: one input, mode Copy, no hardware DGE, not a scatter. It says
// yes only where dma() finds nothing (it reads no rule of its own: each test is one of dma()'s, in
// the cases it leaves), so that the simulator's decoder, which asks this of every DMA of a module,
// skips building the Dma and its refusal; any other transfer goes to dma(). Inline: per DMA.
inline bool plainDmaPasses(Opcode op, const Operand& src, const Operand& dst, DmaMode mode, AluOp dst_rmw_op,
                           DgeType dge_type) {
  return op != InstructionType::IndirectSave && mode == DmaMode::Copy && dge_type != DgeType::HWDGE &&
         (dst_rmw_op == AluOp::bypass || dst_rmw_op == AluOp::add) && src.space != Space::Immediate &&
         src.space != Space::PSUM && dst.space != Space::PSUM &&
         src.partitions * src.free_elements == dst.partitions * dst.free_elements;
}
// The descriptor generator of a transfer from `src` dtype to `dst` dtype and the engine that
// triggers it (rule dma.hwdge), also asked alone by a tracer choosing them before it has the
// transfer's operands.
Verdict dmaTrigger(Opcode op, DgeType dge_type, Engine engine, DType src, DType dst, const MachineConfig& cfg);

inline Verdict engineOperand(Opcode op, Engine engine, const Operand& o, bool output, const MachineConfig& cfg) {
  if (o.space != Space::SBUF && o.space != Space::PSUM) return std::nullopt;
  if (o.space == Space::PSUM && engine == Engine::Pool) return poolPsumOperand(op, output);
  if ((engine == Engine::DVE || engine == Engine::Activation) &&
      InstructionType::category(op) != InstructionType::Category::DMA) {
    const int64_t cap = o.space == Space::PSUM ? cfg.dve_act_max_free_elements_psum : cfg.dve_act_max_free_elements_sbuf;
    if (o.free_elements > cap) return dveActFreeSize(op, o, output, cap);
  }
  return std::nullopt;
}

}  // namespace bir::legality
