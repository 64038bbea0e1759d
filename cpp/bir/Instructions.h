// The ISA-level node classes: what the tile-engine simulator executes. Fields follow KLR's public
// BIR schema (KLR/BIR/Instructions.lean) where it names them; each class lists its fields once in
// `fields(v)` (JSON name, member) and its operand layout in the comment and in kOperands.
//
// Operand conventions: ins/outs are access patterns (AccessPattern.h). A "[P,1] pointer" is a
// per-partition scalar operand: one element per partition.
#pragma once

#include <optional>
#include <utility>

#include "Instruction.h"

namespace bir {

#define BIR_NODE_ONE_OPCODE(Class, Op)                                        \
 public:                                                                      \
  static constexpr Opcode kOpcode = InstructionType::Op;                      \
  explicit Class(std::string name = {}, BasicBlock* bb = nullptr)             \
      : Instruction(std::move(name), bb, InstructionType::Op) {}              \
  static bool classof(const Instruction* I) { return I->opcode() == InstructionType::Op; }

#define BIR_NODE_MANY_OPCODES(Class, NC)                                      \
 public:                                                                      \
  explicit Class(Opcode op, std::string name = {}, BasicBlock* bb = nullptr); \
  static bool classof(const Instruction* I) { return I->nodeClass() == NodeClass::NC; }

#define BIR_NO_FIELDS \
  template <class V>  \
  static void fields(V&&) {}

// out = func(in * scale + bias). ins: [data, bias [P,1]?, scale [P,1]?] (present per has_bias /
// has_scale_tensor, in that order); outs: [out]. With acc != Idle the engine also reduces each
// partition's outputs with acc_op into its accumulator register: Zero resets it, Accumulate adds
// this instruction's reduction, ZeroAccumulate resets then adds. alpha is the Lrelu/Prelu slope.
class InstActivation final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstActivation, Activation)
  static constexpr OperandRule kOperands{1, 3, 1, 1};
  ActivationFunc func = ActivationFunc::Identity;
  double scale = 1.0;
  double alpha = 0.0;
  AccumCmd acc = AccumCmd::Idle;
  AluOp acc_op = AluOp::add;
  bool has_bias = false;
  bool has_scale_tensor = false;
  template <class V>
  static void fields(V&& v) {
    v("func", &InstActivation::func);
    v("scale", &InstActivation::scale);
    v("alpha", &InstActivation::alpha);
    v("acc", &InstActivation::acc);
    v("acc_op", &InstActivation::acc_op);
    v("has_bias", &InstActivation::has_bias);
    v("has_scale_tensor", &InstActivation::has_scale_tensor);
  }
};

// outs: [out [P,1]] <- the activation engine's accumulator registers for those partitions.
class InstReadActivationAccumulator final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstReadActivationAccumulator, ReadActivationAccumulator)
  static constexpr OperandRule kOperands{0, 0, 1, 1};
  BIR_NO_FIELDS
};

// outs: [out] <- constant (mode Const) or uniform [0,1) random values (mode Random).
class InstMemset final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstMemset, Memset)
  static constexpr OperandRule kOperands{0, 0, 1, 1};
  MemsetMode mode = MemsetMode::Const;
  double constant = 0.0;
  template <class V>
  static void fields(V&& v) {
    v("mode", &InstMemset::mode);
    v("constant", &InstMemset::constant);
  }
};

class InstNoOp final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstNoOp, NoOp)
  static constexpr OperandRule kOperands{0, 8, 0, 8};
  BIR_NO_FIELDS
};

// outs[0] = 1 / ins[0].
class InstReciprocal final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstReciprocal, Reciprocal)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  BIR_NO_FIELDS
};

// outs[0] = ins[0], converted to the output's dtype.
class InstTensorCopy final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstTensorCopy, TensorCopy)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  BIR_NO_FIELDS
};

// TensorCopyDynamicSrc / TensorCopyDynamicDst: ins: [src, offset]; outs: [dst]. The int32 value at
// offset's first element, times dynamic_step, is added at run time to the src (Src) or dst (Dst)
// pattern's start offset.
class InstTensorCopyDynamic final : public Instruction {
  BIR_NODE_MANY_OPCODES(InstTensorCopyDynamic, TensorCopyDynamic)
  static constexpr OperandRule kOperands{2, 2, 1, 1};
  int64_t dynamic_step = 1;
  template <class V>
  static void fields(V&& v) {
    v("dynamic_step", &InstTensorCopyDynamic::dynamic_step);
  }
};

// outs[0] = reduce(op, ins[0]) over the free axes `axis` names (X = innermost ...), optionally
// negated. The output keeps the reduced axes as size 1 or drops them; only its element count
// matters.
class InstTensorReduce final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstTensorReduce, TensorReduce)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  AluOp op = AluOp::add;
  ReduceAxis axis = ReduceAxis::X;
  bool negate = false;
  template <class V>
  static void fields(V&& v) {
    v("op", &InstTensorReduce::op);
    v("axis", &InstTensorReduce::axis);
    v("negate", &InstTensorReduce::negate);
  }
};

// out = (in op0 const0) op1 const1; reverseN swaps the operands of opN; op1 = bypass skips it.
class InstTensorScalar final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstTensorScalar, TensorScalar)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  AluOp op0 = AluOp::mult;
  double const0 = 0.0;
  bool reverse0 = false;
  AluOp op1 = AluOp::bypass;
  double const1 = 0.0;
  bool reverse1 = false;
  template <class V>
  static void fields(V&& v) {
    v("op0", &InstTensorScalar::op0);
    v("const0", &InstTensorScalar::const0);
    v("reverse0", &InstTensorScalar::reverse0);
    v("op1", &InstTensorScalar::op1);
    v("const1", &InstTensorScalar::const1);
    v("reverse1", &InstTensorScalar::reverse1);
  }
};

// As TensorScalar with per-partition scalars. ins: [data, scalar0 [P,1], scalar1 [P,1]?]; without
// the third operand op1 uses const1.
class InstTensorScalarPtr final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstTensorScalarPtr, TensorScalarPtr)
  static constexpr OperandRule kOperands{2, 3, 1, 1};
  AluOp op0 = AluOp::mult;
  bool reverse0 = false;
  AluOp op1 = AluOp::bypass;
  bool reverse1 = false;
  double const1 = 0.0;
  template <class V>
  static void fields(V&& v) {
    v("op0", &InstTensorScalarPtr::op0);
    v("reverse0", &InstTensorScalarPtr::reverse0);
    v("op1", &InstTensorScalarPtr::op1);
    v("reverse1", &InstTensorScalarPtr::reverse1);
    v("const1", &InstTensorScalarPtr::const1);
  }
};

// outs[0] = ins[0] op ins[1], elementwise.
class InstTensorTensor final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstTensorTensor, TensorTensor)
  static constexpr OperandRule kOperands{2, 2, 1, 1};
  AluOp op = AluOp::add;
  template <class V>
  static void fields(V&& v) {
    v("op", &InstTensorTensor::op);
  }
};

// Along the flattened free axis of each partition: r[i] = op1(op0(data0[i], r[i-1]), data1[i]),
// r[-1] = initial (or the [P,1] third input). ins: [data0, data1, initial [P,1]?]; outs: [r].
class InstTensorTensorScan final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstTensorTensorScan, TensorTensorScan)
  static constexpr OperandRule kOperands{2, 3, 1, 1};
  AluOp op0 = AluOp::mult;
  AluOp op1 = AluOp::add;
  double initial = 0.0;
  template <class V>
  static void fields(V&& v) {
    v("op0", &InstTensorTensorScan::op0);
    v("op1", &InstTensorTensorScan::op1);
    v("initial", &InstTensorTensorScan::initial);
  }
};

// outs[0] [P,6] = per partition (count, mean, count*var) of the even and of the odd elements of
// ins[0] (nki.isa.bn_stats).
class InstBNStats final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstBNStats, BNStats)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  BIR_NO_FIELDS
};

// outs[0] [P,2] = (mean, variance) aggregated from ins[0] [P,6k] bn_stats records.
class InstBNStatsAggregate final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstBNStatsAggregate, BNStatsAggregate)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  BIR_NO_FIELDS
};

// Per 32-partition quadrant: out partition i = in partition shuffle_mask[i]; 255 leaves i as is.
class InstStreamShuffle final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstStreamShuffle, StreamShuffle)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  std::vector<int64_t> shuffle_mask;
  template <class V>
  static void fields(V&& v) {
    v("shuffle_mask", &InstStreamShuffle::shuffle_mask);
  }
};

// Vector-engine transpose of a tile of at most 32x32: out[f, p] = in[p, f].
class InstStreamTranspose final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstStreamTranspose, StreamTranspose)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  BIR_NO_FIELDS
};

// outs[0][p, i...] = base + channel_multiplier * p + sum_k i_k * pattern[k].step, the pattern's
// nums giving the output's free shape.
class InstIota final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstIota, Iota)
  static constexpr OperandRule kOperands{0, 0, 1, 1};
  int64_t base = 0;
  std::vector<APPair> pattern;
  int64_t channel_multiplier = 0;
  template <class V>
  static void fields(V&& v) {
    v("base", &InstIota::base);
    v("pattern", &InstIota::pattern);
    v("channel_multiplier", &InstIota::channel_multiplier);
  }
};

// TensorScalarAffineSelect: with e = the Iota expression above,
// out = compare_op(e, 0) ? ins[0] : fill_value (causal masks).
class InstAffineSelect final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstAffineSelect, TensorScalarAffineSelect)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  int64_t base = 0;
  std::vector<APPair> pattern;
  int64_t channel_multiplier = 0;
  AluOp compare_op = AluOp::is_ge;
  double fill_value = 0.0;
  template <class V>
  static void fields(V&& v) {
    v("base", &InstAffineSelect::base);
    v("pattern", &InstAffineSelect::pattern);
    v("channel_multiplier", &InstAffineSelect::channel_multiplier);
    v("compare_op", &InstAffineSelect::compare_op);
    v("fill_value", &InstAffineSelect::fill_value);
  }
};

// Keep data[p, i] where comp_op0(i + range_start, bound0[p]) and comp_op1(i + range_start,
// bound1[p]), else fill_value. ins: [data, bound0 [P,1], bound1 [P,1]]; outs: [out, max [P,1]?]
// (the optional second output is the per-partition max of the result).
class InstRangeSelect final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstRangeSelect, RangeSelect)
  static constexpr OperandRule kOperands{3, 3, 1, 2};
  AluOp comp_op0 = AluOp::is_ge;
  AluOp comp_op1 = AluOp::is_lt;
  int64_t range_start = 0;
  double fill_value = -3.4028234663852886e38;  // FP32_MIN, the documented default
  template <class V>
  static void fields(V&& v) {
    v("comp_op0", &InstRangeSelect::comp_op0);
    v("comp_op1", &InstRangeSelect::comp_op1);
    v("range_start", &InstRangeSelect::range_start);
    v("fill_value", &InstRangeSelect::fill_value);
  }
};

// out = predicate != 0 ? on_true : on_false. ins: [predicate, on_true, on_false].
class InstSelect final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstSelect, Select)
  static constexpr OperandRule kOperands{3, 3, 1, 1};
  BIR_NO_FIELDS
};

// out = predicate != 0 ? on_true : (on_false tensor, or on_false_value); with a second output,
// also the per-partition reduction (reduce_op) of out. ins: [predicate, on_true, on_false?];
// outs: [out, reduced [P,1]?].
class InstSelectReduce final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstSelectReduce, SelectReduce)
  static constexpr OperandRule kOperands{2, 3, 1, 2};
  double on_false_value = 0.0;
  AluOp reduce_op = AluOp::max;
  template <class V>
  static void fields(V&& v) {
    v("on_false_value", &InstSelectReduce::on_false_value);
    v("reduce_op", &InstSelectReduce::reduce_op);
  }
};

// dst = predicate != 0 ? src : dst (dst is read as well as written). ins: [src, predicate].
class InstCopyPredicated final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstCopyPredicated, CopyPredicated)
  static constexpr OperandRule kOperands{2, 2, 1, 1};
  BIR_NO_FIELDS
};

// out = in, each element zeroed with probability prob, survivors unchanged; the draws come from the
// Vector Engine's generators (their state is the engine's, as for Rand: no seed field).
class InstDropout final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstDropout, Dropout)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  double prob = 0.0;
  template <class V>
  static void fields(V&& v) {
    v("prob", &InstDropout::prob);
  }
};

// max8: outs[0] [P,8] = the eight largest values of each partition of ins[0], descending.
class InstMax final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstMax, Max)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  BIR_NO_FIELDS
};

// nc_find_index8: outs[0] [P,8] (uint32) = index of the first occurrence in ins[0] of each of the
// eight values ins[1] [P,8].
class InstMaxIndex final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstMaxIndex, MaxIndex)
  static constexpr OperandRule kOperands{2, 2, 1, 1};
  BIR_NO_FIELDS
};

// nc_match_replace8: outs[0] = ins[0] with the first occurrence of each of the eight values ins[1]
// replaced by imm_value; optional outs[1] [P,8] (uint32) receives their indices.
class InstMatchReplace final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstMatchReplace, MatchReplace)
  static constexpr OperandRule kOperands{2, 2, 1, 2};
  double imm_value = 0.0;
  template <class V>
  static void fields(V&& v) {
    v("imm_value", &InstMatchReplace::imm_value);
  }
};

// nc_matmul: outs[0] (PSUM, [M partitions, N]) (= or +=) ins[0]^T @ ins[1], with ins[0] the
// stationary [K partitions, M] and ins[1] the moving [K partitions, N] tile. start_tensor_calc
// starts an accumulation group (overwrite); otherwise the product is added to the group in PSUM.
// stop_tensor_calc closes the group. is_transpose: PE transpose mode (out = ins[0]^T exactly;
// ins[1] is the [K, K] identity and is not read).
class InstMatmult final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstMatmult, Matmult)
  static constexpr OperandRule kOperands{2, 2, 1, 1};
  bool start_tensor_calc = true;
  bool stop_tensor_calc = true;
  bool is_transpose = false;
  std::vector<int64_t> tile_position;  // [row, col]; empty = whole array
  std::vector<int64_t> tile_size;      // [rows, cols]; empty = 128x128
  PerfMode perf_mode = PerfMode::None;
  template <class V>
  static void fields(V&& v) {
    v("start_tensor_calc", &InstMatmult::start_tensor_calc);
    v("stop_tensor_calc", &InstMatmult::stop_tensor_calc);
    v("is_transpose", &InstMatmult::is_transpose);
    v("tile_position", &InstMatmult::tile_position);
    v("tile_size", &InstMatmult::tile_size);
    v("perf_mode", &InstMatmult::perf_mode);
  }
};

// DMA, Load, Save, DMACopy, IndirectSave: outs[0] = ins[0] (cast through fp32 when dtypes differ),
// on DMA queue `queue`. dst_rmw_op = add accumulates into dst. mode Transpose transposes a 2-D
// pattern. With a second input (an integer index tensor, one index per row) the copy is indirect:
// a gather, where row r of the destination reads the source's outermost pair at index[r]
// (indirect_dim 0), or for IndirectSave a scatter, where source row r lands in the destination's
// outermost pair at index[r]; an index outside the indexed side is an error when oob_is_err, else
// the row is skipped.
class InstDMA final : public Instruction {
  BIR_NODE_MANY_OPCODES(InstDMA, DMA)
  static constexpr OperandRule kOperands{1, 2, 1, 1};
  int64_t queue = 0;
  DgeType dge_type = DgeType::None;
  DmaMode mode = DmaMode::Copy;
  AluOp dst_rmw_op = AluOp::bypass;
  bool oob_is_err = true;
  int64_t indirect_dim = -1;
  template <class V>
  static void fields(V&& v) {
    v("queue", &InstDMA::queue);
    v("dge_type", &InstDMA::dge_type);
    v("mode", &InstDMA::mode);
    v("dst_rmw_op", &InstDMA::dst_rmw_op);
    v("oob_is_err", &InstDMA::oob_is_err);
    v("indirect_dim", &InstDMA::indirect_dim);
  }
};

// scalar_tensor_tensor: out = op1(op0(data, s0), data1), reverseN swapping opN's operands, with
// s0 the [P,1] third input or, without one, const0. ins: [data, data1, scalar0 [P,1]?]; outs: [out].
class InstScalarTensorTensor final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstScalarTensorTensor, ScalarTensorTensor)
  static constexpr OperandRule kOperands{2, 3, 1, 1};
  AluOp op0 = AluOp::mult;
  double const0 = 0.0;
  bool reverse0 = false;
  AluOp op1 = AluOp::add;
  bool reverse1 = false;
  template <class V>
  static void fields(V&& v) {
    v("op0", &InstScalarTensorTensor::op0);
    v("const0", &InstScalarTensorTensor::const0);
    v("reverse0", &InstScalarTensorTensor::reverse0);
    v("op1", &InstScalarTensorTensor::op1);
    v("reverse1", &InstScalarTensorTensor::reverse1);
  }
};

// tensor_scalar_reduce / tensor_scalar_cumulative: y[i] = op0(data[i], s0) along each lane (s0 the
// [P,1] scalar input if has_scalar_tensor, else const0), folded into the Vector Engine's
// accumulation register of the lane, reg = reduce_op(y[i], reg), which starts as reduce_op's
// identity (acc ZeroAccumulate), as the register's value (Accumulate) or as the [P,1] initial
// input if has_initial_tensor, else `initial` (LoadAccumulate). out[i] = y[i], or the running reg
// when `cumulative`; the optional [P,1] second output gets the final reg (negated when `negate`).
// ins: [data, scalar0 [P,1]?, initial [P,1]?] (present per the flags, in that order);
// outs: [out, reduced [P,1]?].
class InstTensorScalarReduce final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstTensorScalarReduce, TensorScalarReduce)
  static constexpr OperandRule kOperands{1, 3, 1, 2};
  AluOp op0 = AluOp::mult;
  double const0 = 0.0;
  bool reverse0 = false;
  AluOp reduce_op = AluOp::add;
  AccumCmd acc = AccumCmd::ZeroAccumulate;
  double initial = 0.0;
  bool negate = false;
  bool cumulative = false;
  bool has_scalar_tensor = false;
  bool has_initial_tensor = false;
  template <class V>
  static void fields(V&& v) {
    v("op0", &InstTensorScalarReduce::op0);
    v("const0", &InstTensorScalarReduce::const0);
    v("reverse0", &InstTensorScalarReduce::reverse0);
    v("reduce_op", &InstTensorScalarReduce::reduce_op);
    v("acc", &InstTensorScalarReduce::acc);
    v("initial", &InstTensorScalarReduce::initial);
    v("negate", &InstTensorScalarReduce::negate);
    v("cumulative", &InstTensorScalarReduce::cumulative);
    v("has_scalar_tensor", &InstTensorScalarReduce::has_scalar_tensor);
    v("has_initial_tensor", &InstTensorScalarReduce::has_initial_tensor);
  }
};

// tensor_partition_reduce (GpSimd): outs[0] [1, N] = op folded over the partitions of ins[0] [P, N],
// element by element.
class InstTensorPartitionReduce final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstTensorPartitionReduce, TensorPartitionReduce)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  AluOp op = AluOp::add;
  template <class V>
  static void fields(V&& v) {
    v("op", &InstTensorPartitionReduce::op);
  }
};

// local_gather (GpSimd): each group of 16 partitions (one GpSimd core) reads its indices ins[1]
// (uint16) partition first, keeps the first num_valid_indices, and each partition p of the group
// gathers num_elem_per_idx elements from its own lane of ins[0] at each index (an element offset).
// ins: [src, index]; outs: [dst] (num_valid_indices * num_elem_per_idx elements per partition).
class InstLocalGather final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstLocalGather, LocalGather)
  static constexpr OperandRule kOperands{2, 2, 1, 1};
  int64_t num_elem_per_idx = 1;
  int64_t num_valid_indices = 0;
  template <class V>
  static void fields(V&& v) {
    v("num_elem_per_idx", &InstLocalGather::num_elem_per_idx);
    v("num_valid_indices", &InstLocalGather::num_valid_indices);
  }
};

// nc_n_gather (GpSimd): outs[0][p, j] = ins[0][p, ins[1][p, j]] within each partition (the
// element at that flat free index). ins: [data, indices]; outs: [dst].
class InstGather final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstGather, Gather)
  static constexpr OperandRule kOperands{2, 2, 1, 1};
  BIR_NO_FIELDS
};

// sequence_bounds (GpSimd): for segment ids ins[0] [1, N], outs[0] [1, 2N] holds each element's
// segment start, then each element's segment end (exclusive); padding (id 0) gets N and -1.
class InstSequenceBounds final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstSequenceBounds, SequenceBounds)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  BIR_NO_FIELDS
};

// nonzero_with_count (GpSimd): on every lane whose absolute partition is a multiple of 16,
// outs[0] [P, N+1] = the indices of the nonzero elements of ins[0] [P, N] plus index_offset, then
// padding_val, then their count; other lanes are not written.
class InstNonzeroWithCount final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstNonzeroWithCount, NonzeroWithCount)
  static constexpr OperandRule kOperands{1, 1, 1, 1};
  int64_t index_offset = 0;
  int64_t padding_val = -1;
  template <class V>
  static void fields(V&& v) {
    v("index_offset", &InstNonzeroWithCount::index_offset);
    v("padding_val", &InstNonzeroWithCount::padding_val);
  }
};

// The engines' pseudo-random number generators (XORWOW [I rand2, rand_set_state]), one per lane
// (absolute partition) of the Vector and of the GpSimd engine; `engine` chooses which.
//   Rand (rng): outs[0] (8-, 16- or 32-bit integers) <- per element, the least significant bits
//     of the lane's next 32-bit output.
//   SetRandState: ins[0] [P,6] uint32 -> the lanes' states (rand_set_state), or ins[0] [1,1]
//     (Vector Engine) -> every lane's state derived from that one seed (set_rng_seed).
//   GetRandState: outs[0] [P,6] uint32 <- the lanes' states (rand_get_state).
class InstRand final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstRand, Rand)
  static constexpr OperandRule kOperands{0, 0, 1, 1};
  BIR_NO_FIELDS
};

class InstSetRandState final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstSetRandState, SetRandState)
  static constexpr OperandRule kOperands{1, 1, 0, 0};
  BIR_NO_FIELDS
};

class InstGetRandState final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstGetRandState, GetRandState)
  static constexpr OperandRule kOperands{0, 0, 1, 1};
  BIR_NO_FIELDS
};

// nl.device_print: prints prefix and ins[0] when simulated.
class InstDevicePrint final : public Instruction {
  BIR_NODE_ONE_OPCODE(InstDevicePrint, DevicePrint)
  static constexpr OperandRule kOperands{1, 1, 0, 0};
  std::string prefix;
  template <class V>
  static void fields(V&& v) {
    v("prefix", &InstDevicePrint::prefix);
  }
};

// An opcode whose fields this build does not model: every field it was read with is kept in
// extra_json and written back unchanged. The simulator refuses it.
class InstUnmodeled final : public Instruction {
  BIR_NODE_MANY_OPCODES(InstUnmodeled, Unmodeled)
  static constexpr OperandRule kOperands{0, 64, 0, 64};
  BIR_NO_FIELDS
};

}  // namespace bir
