"""The legality rules of NeuronCore instructions, bound from libBIR (``cpp/bir/Legality.h``): the one
set of rules that the simulator's decoder, the IT54 kernel builder and both NKI tracers apply. Each
rule has a stable id and one wording, ``"<opcode>: <what is wrong>"``; a check returns ``None`` when
the instruction is legal, else the :class:`Violation` of the first rule it breaks. The caller says
where the instruction is (the tracers prefix the kernel's source line).

>>> from neuronxsim.bir import DType, legality
>>> S = legality.Space
>>> v = legality.matmul(legality.Operand(S.SBUF, DType.bfloat16, 128, 128),
...                     legality.Operand(S.SBUF, DType.bfloat16, 128, 600),
...                     legality.Operand(S.PSUM, DType.float32, 128, 600), arch="trn1")
>>> v.rule, v.message
('matmul.moving-size', "Matmult: N = 600 (the moving's elements per partition) exceeds 512 per matmul")

Limits are read from the target description (:mod:`neuronxsim.bir.target`) of ``arch``, which every
check takes by name ("trn1", "trn2" or any alias).
"""

from __future__ import annotations

from typing import Optional, Sequence

from neuronxsim.bir import AccumCmd, AluOp, DgeType, DmaMode, DType, Engine, InstructionType, PerfMode
from neuronxsim.starfish.lib import _core

_b = _core.bir
_PERF_NONE = PerfMode.__members__["None"]  # (a member named None: not reachable as an attribute)
_DGE_NONE = DgeType.__members__["None"]

#: Where an operand lives: ``Space.SBUF``, ``Space.PSUM``, ``Space.DRAM`` or ``Space.Immediate``.
Space = _b.LegalitySpace

#: What the rules know of one operand: ``Operand(space, dtype, partitions, free_elements,
#: placed=None)``; ``placed`` is ``(start, lo, hi)`` once an on-chip operand has an address: the
#: byte of its element 0 in a partition and the bytes ``[lo, hi)`` of each partition it covers.
#: Without it (a trace, before allocation) the address rules (PSUM word, one PSUM bank) wait.
Operand = _b.LegalityOperand

#: A broken rule: ``.rule`` (its id, e.g. ``"matmul.pe-rows"``) and ``.message``.
Violation = _b.LegalityViolation

#: One rule: ``.id`` and ``.requires`` (what it requires, in one line).
Rule = _b.LegalityRule

#: Every rule, in the order of ``cpp/bir/LegalityRules.def``.
RULES: tuple = tuple(_b.legality_rules())


def pe_input_dtypes(arch: str) -> tuple:
    """The dtypes the PE array reads on ``arch`` (``matmul.operand-dtype``)."""
    return tuple(_b.legality_pe_input_dtypes(arch))


def matmul(stationary: Operand, moving: Operand, out: Operand, *, arch: str, is_transpose: bool = False,
           start: bool = True, perf_mode: PerfMode = _PERF_NONE, tile_size: Sequence[int] = (),
           tile_position: Sequence[int] = ()) -> Optional[Violation]:
    """The PE array (``Matmult``; NKI ``nc_matmul`` and the PE ``nc_transpose``): operands in SBUF
    of a PE dtype of ``arch``, fp32 on both or neither, K <= PE rows on both, M <= PE columns,
    N <= the moving limit, an fp32 [M, N] PSUM result (transpose mode: the [K, K] identity as
    moving, an [M, K] result in the input's dtype or fp32, ``start`` true), inside one PSUM bank,
    ``perf_mode`` and PE tiling as ``arch`` allows."""
    return _b.legality_matmul(stationary, moving, out, arch, is_transpose, start, perf_mode, list(tile_size),
                              list(tile_position))


def engine_operand(opcode: InstructionType, engine: Engine, operand: Operand, *, output: bool,
                   arch: str) -> Optional[Violation]:
    """One on-chip operand of ``opcode`` issued on ``engine``: no PSUM on GpSimd (Pool); at most the
    DVE/ACT free-size cap of its memory on the Vector and Scalar engines (DMA transfers exempt)."""
    return _b.legality_engine_operand(int(opcode), engine, operand, output, arch)


def psum_inputs(opcode: InstructionType, a: Operand, b: Operand) -> Optional[Violation]:
    """``operand.psum-inputs``: the two tensor inputs ``a`` and ``b`` that ``opcode`` pairs
    element by element (``TensorTensor``, ``TensorTensorScan``, ``ScalarTensorTensor``,
    ``SelectReduce``, ``CopyPredicated``), at most one of them in PSUM."""
    return _b.legality_psum_inputs(int(opcode), a, b)


def is_bitvec_op(op: AluOp) -> bool:
    """Whether ``op`` is a bit-vector operator (bitwise and / or / xor / not, the shifts): the
    Vector Engine's alone, and refused where an instruction takes arithmetic operators only."""
    return _b.legality_is_bitvec_op(op)


def alu_ops(opcode: InstructionType, engine: Engine, op0: AluOp, op1: AluOp = AluOp.bypass) -> Optional[Violation]:
    """``alu.bitvec-engine`` / ``alu.tensor-scalar-op-kinds`` / ``alu.act-tensor-scalar`` /
    ``alu.scalar-tensor-tensor`` / ``alu.tensor-tensor-scan`` / ``alu.tensor-scalar-reduce``: the
    ALU operators of ``opcode`` on ``engine`` (``TensorScalar`` / ``TensorScalarPtr`` /
    ``ScalarTensorTensor`` / ``TensorTensorScan``: ``op0`` and ``op1``, bypass for none;
    ``TensorTensor``: ``op0``; ``TensorScalarReduce``: ``op0``). Bit-vector operators run on the
    Vector Engine; tensor_scalar's two are both bit-vector or both arithmetic; the Activation
    engine's tensor_scalar takes mult then add, mult, or add; scalar_tensor_tensor,
    tensor_tensor_scan and TensorScalarReduce's op0 take arithmetic operators only."""
    return _b.legality_alu_ops(int(opcode), engine, op0, op1)


def bitvec_dtypes(opcode: InstructionType, op0: AluOp, op1: AluOp = AluOp.bypass, *, ins: Sequence[DType],
                  outs: Sequence[DType]) -> Optional[Violation]:
    """``alu.bitvec-dtype``: ``opcode`` applying ``op0`` / ``op1`` (bypass: none) to tensors of
    dtypes ``ins`` (its data, not per-partition scalars) and ``outs``; a bit-vector operator treats
    elements as bit patterns, so every one is an integer dtype."""
    return _b.legality_bitvec_dtypes(int(opcode), op0, op1, list(ins), list(outs))


def is_reduce_op(op: AluOp) -> bool:
    """Whether a reduction along the free axes may fold with ``op`` (``alu.reduce-op``)."""
    return _b.legality_is_reduce_op(op)


def reduce_op(opcode: InstructionType, op: AluOp) -> Optional[Violation]:
    """``alu.reduce-op``: the operator ``op`` of a reduction along the free axes (``TensorReduce``,
    an accumulating ``Activation``, ``SelectReduce``): add, subtract, mult, max, min, the logical
    and bitwise and / or / xor."""
    return _b.legality_reduce_op(int(opcode), op)


def partition_reduce_op(op: AluOp) -> Optional[Violation]:
    """``alu.partition-reduce-op``: the operator ``TensorPartitionReduce`` folds GpSimd's
    partitions with (add, max, bitwise_or, bitwise_and or average)."""
    return _b.legality_partition_reduce_op(op)


def register_fold(reduce_op: AluOp, *, cumulative: bool) -> Optional[Violation]:
    """``alu.tensor-scalar-reduce-fold``: the operator a ``TensorScalarReduce`` folds into the
    Vector Engine's accumulation registers with (add, mult, max or min; a ``cumulative`` one,
    tensor_scalar_cumulative, also subtract)."""
    return _b.legality_register_fold(reduce_op, cumulative)


def activation_reduce(acc: AccumCmd, acc_op: AluOp, *, arch: str) -> Optional[Violation]:
    """``alu.act-reduce``: an ``Activation`` accumulating (``acc`` other than ``Idle``) with
    ``acc_op``; NeuronCore-v2's Activation engine reduces with add only."""
    return _b.legality_activation_reduce(acc, acc_op, arch)


def dve_transpose(data: Operand, out: Operand, *, arch: str) -> Optional[Violation]:
    """The Vector Engine's transpose (``StreamTranspose``; NKI ``nc_transpose`` on the DVE): a
    source of at most ``dve_transpose_max`` squared, ``out`` of the transposed shape."""
    return _b.legality_dve_transpose(data, out, arch)


def bn_stats(data: Operand, *, arch: str) -> Optional[Violation]:
    """``BNStats``: at most ``bn_stats_max_free_elements`` per partition."""
    return _b.legality_bn_stats(data, arch)


def max8_family(opcode: InstructionType, data: Operand, *, arch: str) -> Optional[Violation]:
    """``Max`` (max8), ``MaxIndex`` (nc_find_index8), ``MatchReplace`` (nc_match_replace8):
    ``max8_min_free_elements`` to ``max8_max_free_elements`` per partition."""
    return _b.legality_max8_family(int(opcode), data, arch)


def local_gather(src: Operand, index: Operand, num_elem_per_idx: int, num_valid_indices: int, *,
                 arch: str) -> Optional[Violation]:
    """GpSimd's partition-local gather (``LocalGather``): source and index of the same partitions,
    a multiple of a GpSimd core's; uint16 indices; ``num_elem_per_idx`` 1, 2, 4, ..., 32;
    ``num_valid_indices`` 1 to a core's indices, at most ``local_gather_max_indices``."""
    return _b.legality_local_gather(src, index, num_elem_per_idx, num_valid_indices, arch)


def generation(opcode: InstructionType, engine: Engine, *, arch: str) -> Optional[Violation]:
    """``instruction.generation``: ``RangeSelect``, ``NonzeroWithCount`` and GpSimd's random
    number generator (``Rand``, ``SetRandState``, ``GetRandState`` on ``Engine.Pool``) only where
    ``arch`` has them; ``GetRandState`` reads GpSimd's generators only."""
    return _b.legality_generation(int(opcode), engine, arch)


def dma(src: Operand, dst: Operand, *, arch: str, opcode: InstructionType = InstructionType.DMA,
        index: Optional[Operand] = None, mode: DmaMode = DmaMode.Copy, dst_rmw_op: AluOp = AluOp.bypass,
        dge_type: DgeType = _DGE_NONE, indirect_dim: int = -1, src_2d: bool = True,
        engine: Engine = Engine.SP) -> Optional[Violation]:
    """A transfer (``DMA``, ``Load``, ``Save``, ``DMACopy``, ``IndirectSave``): a modelled mode
    (copy, the transpose of a 2-D source: ``src_2d``, or ``Dynamic``: rows at the run-time offset
    ``index``, one integer element), add as the only read-modify-write, the trigger
    (:func:`dma_trigger`), equal element counts; an indirect transfer (``index``; an
    ``IndirectSave`` scatter always has one): integer indices, one per row of the side not indexed
    (the destination of a gather, the source of a scatter), ``indirect_dim`` -1 or 0, rows of
    equal size."""
    return _b.legality_dma(int(opcode), src, dst, index, mode, dst_rmw_op, dge_type, indirect_dim, src_2d, engine,
                           arch)


def dma_trigger(*, arch: str, dge_type: DgeType, engine: Engine, src: DType, dst: DType,
                opcode: InstructionType = InstructionType.DMA) -> Optional[Violation]:
    """``dma.hwdge`` alone: hardware DGE only where ``arch`` has it, triggered by the Activation
    or SP ``engine``, moving raw bytes (the ``src`` and ``dst`` dtypes alike), for a tracer that
    picks them before it has the transfer's operands."""
    return _b.legality_dma_trigger(int(opcode), dge_type, engine, src, dst, arch)


__all__ = ["Space", "Operand", "Violation", "Rule", "RULES", "pe_input_dtypes", "matmul", "engine_operand", "psum_inputs",
           "alu_ops", "bitvec_dtypes", "is_reduce_op", "reduce_op", "partition_reduce_op", "register_fold", "activation_reduce", "dve_transpose",
           "bn_stats", "max8_family", "local_gather", "generation", "dma", "dma_trigger"]
