"""GpSimd instructions that work across partitions or compact data: TensorPartitionReduce,
LocalGather, Gather (nc_n_gather), SequenceBounds, NonzeroWithCount."""

from __future__ import annotations

import functools

import numpy as np

from neuronxsim.reference.alu import INT_OPS, apply_bits, apply_int, fold, on_bit_patterns
from neuronxsim.reference.numbers import same_format
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Step

CORE_PARTITIONS = 16  # SBUF partitions per GpSimd core
NUM_ELEM_PER_IDX = (1, 2, 4, 8, 16, 32)
MAX_INDICES_PER_CORE = 4096
PARTITION_REDUCE_OPS = ("add", "max", "bitwise_or", "bitwise_and")
WORDS = (np.int32, np.uint32)


def _starts_on_a_core(operand, what: str) -> None:
    first = int(operand.absolute_partitions()[0])
    if first % CORE_PARTITIONS:
        raise operand.refuse(f"({what}) starts at partition {first}, not on a GpSimd core's first "
                             f"partition (a multiple of {CORE_PARTITIONS})")


def tensor_partition_reduce(step: Step) -> None:
    src, out = step.ins[0], step.outs[0]
    if step.inst.op.name not in PARTITION_REDUCE_OPS:
        raise Refusal(f"op {step.inst.op.name} (a partition reduction takes "
                      f"{', '.join(PARTITION_REDUCE_OPS)})")
    lanes, per_lane = src.shape
    out.expect(1, per_lane)
    op = step.inst.op
    if on_bit_patterns(op, src, out):  # every bit kept (docs/isa-semantics.md §3)
        bits = src.read_bits()
        out.write_bits(functools.reduce(lambda a, b: apply_bits(op, a, b), bits)[None, :])
        return
    if op.name in INT_OPS and src.dtype in WORDS and out.dtype in WORDS:
        # GpSimd's native integer arithmetic, as TensorTensor on Pool (add wraps modulo 2^32)
        values = src.read_raw().astype(np.int64)
        as_value = (lambda bits: bits.view(np.int32).astype(np.int64)) if src.dtype == np.int32 else \
            (lambda bits: bits.astype(np.int64))
        out.write_bits(functools.reduce(lambda a, b: as_value(apply_int(op, a, b)), values).astype(np.uint32)[None, :])
        return
    out.write(fold(op, src.read(), axis=0)[None, :])


def local_gather(step: Step) -> None:
    inst, src, index, out = step.inst, step.ins[0], step.ins[1], step.outs[0]
    lanes, per_lane = src.shape
    if lanes % CORE_PARTITIONS:
        raise src.refuse(f"has {lanes} partitions, not a multiple of {CORE_PARTITIONS}")
    for operand, what in ((src, "source"), (index, "index"), (out, "destination")):
        _starts_on_a_core(operand, what)
    index.expect(lanes)
    if index.dtype != np.uint16:
        raise index.refuse(f"is {index.dtype}; the indices are uint16")
    if not same_format(out.dtype, src.dtype):
        raise out.refuse(f"is {out.ap.dtype.name} but the source is {src.ap.dtype.name} (no conversion)")
    e, valid = inst.num_elem_per_idx, inst.num_valid_indices
    if e not in NUM_ELEM_PER_IDX:
        raise Refusal(f"num_elem_per_idx {e} is not one of {NUM_ELEM_PER_IDX}")
    per_core = CORE_PARTITIONS * index.shape[1]
    if not 1 <= valid <= min(per_core, MAX_INDICES_PER_CORE):
        raise Refusal(f"num_valid_indices {valid} outside 1..{min(per_core, MAX_INDICES_PER_CORE)}")
    out.expect(lanes, valid * e)
    data = src.read_raw()
    # each core's 16 index partitions, flattened partition first: [cores, valid]
    idx = index.read_raw().astype(np.int64).reshape(-1, CORE_PARTITIONS, index.shape[1])
    idx = idx.transpose(0, 2, 1).reshape(idx.shape[0], -1)[:, :valid]
    if (idx + e > per_lane).any():
        bad = int(idx[idx + e > per_lane][0])
        raise Refusal(f"index {bad} reaches past the {per_lane} elements of a source partition")
    columns = (idx[:, :, None] + np.arange(e)).reshape(idx.shape[0], -1)  # [cores, valid * e]
    columns = np.repeat(columns, CORE_PARTITIONS, axis=0)  # every partition of the core
    out.write_raw(np.take_along_axis(data, columns, axis=1))


def gather(step: Step) -> None:
    data, indices, out = step.ins[0], step.ins[1], step.outs[0]
    lanes, per_lane = data.shape
    indices.expect(lanes)
    out.expect(lanes, indices.shape[1])
    if indices.dtype.kind not in "iu":
        raise indices.refuse(f"is {indices.dtype}; the indices are integers")
    if not same_format(out.dtype, data.dtype):
        raise out.refuse(f"is {out.ap.dtype.name} but the data is {data.ap.dtype.name} (no conversion)")
    idx = indices.read_raw().astype(np.int64)
    outside = (idx < 0) | (idx >= per_lane)
    if outside.any():
        raise Refusal(f"index {int(idx[outside][0])} is outside the {per_lane} elements of a partition")
    out.write_raw(np.take_along_axis(data.read_raw(), idx, axis=1))


def _exact_values(operand) -> np.ndarray:
    raw = operand.read_raw()
    return raw.astype(np.float64) if raw.dtype.kind == "f" else raw.astype(np.int64)


def sequence_bounds(step: Step) -> None:
    ids, out = step.ins[0], step.outs[0]
    for operand in (ids, out):
        if operand.dtype not in (np.float32, np.int32):
            raise operand.refuse(f"is {operand.dtype}; sequence_bounds takes float32 or int32")
    ids.expect(1)
    n = ids.shape[1]
    out.expect(1, 2 * n)
    seq = _exact_values(ids)[0]
    if ((seq < 0) | (seq != np.floor(seq))).any():
        raise Refusal("segment ids must be non-negative integers")
    start, end = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for i in range(n):
        start[i] = n if seq[i] == 0 else (start[i - 1] if i and seq[i] == seq[i - 1] else i)
    for i in reversed(range(n)):
        end[i] = -1 if seq[i] == 0 else (end[i + 1] if i + 1 < n and seq[i] == seq[i + 1] else i + 1)
    out.write_integers(np.concatenate([start, end])[None, :])


def nonzero_with_count(step: Step) -> None:
    inst, src, out = step.inst, step.ins[0], step.outs[0]
    if src.dtype not in (np.float32, np.int32):
        raise src.refuse(f"is {src.dtype}; nonzero_with_count reads float32 or int32")
    if out.dtype != np.int32:
        raise out.refuse(f"is {out.dtype}; nonzero_with_count writes int32")
    lanes, n = src.shape
    out.expect(lanes, n + 1)
    _starts_on_a_core(src, "source")
    _starts_on_a_core(out, "destination")
    values = _exact_values(src)
    result = np.zeros((lanes, n + 1), np.int64)
    for lane in range(0, lanes, CORE_PARTITIONS):  # each GpSimd core's first partition
        found = np.flatnonzero(values[lane] != 0)  # NaN is nonzero
        row = np.full(n + 1, inst.padding_val, np.int64)
        row[:found.size] = found + inst.index_offset
        row[n] = found.size
        result[lane] = row
    written = np.zeros((lanes, n + 1), bool)
    written[::CORE_PARTITIONS] = True
    out.write_raw(np.clip(result, -2**31, 2**31 - 1).astype(np.int32), where=written)


HANDLERS = {
    "TensorPartitionReduce": tensor_partition_reduce,
    "LocalGather": local_gather,
    "Gather": gather,
    "SequenceBounds": sequence_bounds,
    "NonzeroWithCount": nonzero_with_count,
}
