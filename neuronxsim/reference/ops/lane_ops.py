"""Per-lane instructions whose outputs depend on a whole lane: reductions, scans, statistics,
top-8 search and replace."""

from __future__ import annotations

import math

import numpy as np

from neuronxsim.reference.alu import BITWISE_OPS, apply, apply_bits, fold, on_bit_patterns
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Step

MAX8 = 8  # Max, MaxIndex and MatchReplace work on eight values per lane
BN_STATS_MAX_ELEMENTS = 512
NOT_FOUND = 0xFFFFFFFF


def tensor_reduce(step: Step) -> None:
    inst, src, out = step.inst, step.ins[0], step.outs[0]
    axis = inst.axis.name
    if "C" in axis:
        raise Refusal(f"reduce axis {axis} folds the partition dim, which TensorReduce cannot")
    free = src.free_shape
    if len(axis) > len(free):
        raise Refusal(f"reduce axis {axis} folds {len(axis)} free dims but ins[0] has "
                      f"{len(free)} ({free})")
    lanes, _ = src.shape
    kept = math.prod(free[: len(free) - len(axis)])
    out.expect(lanes, kept)
    if on_bit_patterns(inst.op, src, out):  # from the first element; negate: of the int32
        x = src.read_bits().reshape(lanes, kept, -1)
        r = x[..., 0]
        for k in range(1, x.shape[-1]):
            r = apply_bits(inst.op, r, x[..., k])
        out.write_bits((0 - r.astype(np.int64)) % 2**32 if inst.negate else r)
        return
    x = src.read().reshape(lanes, kept, -1)  # row-major: the folded dims are the innermost
    r = fold(inst.op, x, axis=-1)
    out.write(-r if inst.negate else r)


def tensor_tensor_scan(step: Step) -> None:
    inst, out = step.inst, step.outs[0]
    for op in (inst.op0, inst.op1):
        if op.name in BITWISE_OPS:
            raise Refusal(f"bit-vector op {op.name} (TensorTensorScan takes arithmetic ops)")
    lanes, per_lane = out.shape
    data0 = step.ins[0].read(lanes, per_lane)
    data1 = step.ins[1].read(lanes, per_lane)
    if len(step.ins) == 3:
        r = step.ins[2].read_pointer(lanes)[:, 0]
    else:
        r = np.full(lanes, inst.initial, dtype=np.float32)
    result = np.empty((lanes, per_lane), dtype=np.float32)
    for i in range(per_lane):  # a scan is sequential along the lane; vectorised across lanes
        r = apply(inst.op1, apply(inst.op0, data0[:, i], r), data1[:, i])
        result[:, i] = r
    out.write(result)


#: The register value a reset starts from: the reduce op's identity
_FOLD_IDENTITY = {"add": 0.0, "subtract": 0.0, "mult": 1.0, "max": -np.inf, "min": np.inf}


def tensor_scalar_reduce(step: Step) -> None:
    """y = op0(data, scalar0); the vector accumulation register reg = reduce_op(y[i], reg) along the
    lane from the identity, the register or ins[2]; out = y or (cumulative) the running reg."""
    inst, out = step.inst, step.outs[0]
    lanes, per_lane = out.shape
    if step.ins[0].is_immediate:
        raise Refusal("ins[0] (data) must be an access pattern")
    if inst.op0.name in BITWISE_OPS:
        raise Refusal(f"bit-vector op {inst.op0.name} (op0 must be arithmetic)")
    reducible = {"add", "mult", "max", "min"} | ({"subtract"} if inst.cumulative else set())
    if inst.reduce_op.name not in reducible:
        raise Refusal(f"reduce_op {inst.reduce_op.name} cannot reduce here")
    command = inst.acc.name
    if command not in ("ZeroAccumulate", "Accumulate", "LoadAccumulate"):
        raise Refusal(f"accumulate command {command}")
    if inst.has_initial_tensor and command != "LoadAccumulate":
        raise Refusal(f"an initial register value with accumulate command {command}")
    if len(step.ins) != 1 + inst.has_scalar_tensor + inst.has_initial_tensor:
        raise Refusal(f"has_scalar_tensor={inst.has_scalar_tensor} and has_initial_tensor="
                      f"{inst.has_initial_tensor} need {1 + inst.has_scalar_tensor + inst.has_initial_tensor} "
                      f"inputs, got {len(step.ins)}")
    if inst.cumulative and len(step.outs) == 2:
        raise Refusal("a cumulative reduction has one output")
    if inst.cumulative and any(o.dtype.kind in "iu" and o.dtype.itemsize >= 4 for o in (step.ins[0], out)):
        raise Refusal("a cumulative reduction takes no 32- or 64-bit integer data")
    scalar0 = step.ins[1].read_pointer(lanes) if inst.has_scalar_tensor else np.float32(inst.const0)
    y = apply(inst.op0, step.ins[0].read(lanes, per_lane), scalar0, inst.reverse0)
    y = np.broadcast_to(y, (lanes, per_lane))  # (a unary op of the reversed scalar is one column)
    registers = out.absolute_partitions()
    machine = step.machine
    if command == "ZeroAccumulate":
        reg = np.full(lanes, _FOLD_IDENTITY[inst.reduce_op.name], dtype=np.float32)
    elif command == "LoadAccumulate":
        reg = (step.ins[-1].read_pointer(lanes)[:, 0] if inst.has_initial_tensor
               else np.full(lanes, inst.initial, dtype=np.float32))
    else:
        reg = machine.vector_registers(registers)
    running = np.empty((lanes, per_lane), dtype=np.float32)
    for i in range(per_lane):  # sequential along the lane, vectorised across lanes
        reg = apply(inst.reduce_op, y[:, i], reg)
        running[:, i] = reg
    out.write(running if inst.cumulative else y)
    machine.set_vector_registers(registers, reg)
    if len(step.outs) == 2:
        step.outs[1].expect(lanes, 1)
        step.outs[1].write((-reg if inst.negate else reg)[:, None])


def _stats(group: np.ndarray) -> list[np.ndarray]:
    """(count, mean, variance * count) of each lane of ``group`` (an empty group gives zeros)."""
    count = group.shape[1]
    if count == 0:
        zeros = np.zeros(group.shape[0], dtype=np.float32)
        return [zeros, zeros, zeros]
    mean = group.sum(axis=1, dtype=np.float32) / np.float32(count)
    squares = ((group - mean[:, None]) ** 2).sum(axis=1, dtype=np.float32)
    return [np.full_like(mean, count), mean, squares]


def bn_stats(step: Step) -> None:
    src, out = step.ins[0], step.outs[0]
    lanes, n = src.shape
    if n > BN_STATS_MAX_ELEMENTS:
        raise Refusal(f"BNStats takes at most {BN_STATS_MAX_ELEMENTS} elements per partition, "
                      f"ins[0] has {n}")
    out.expect(lanes, 6)
    x = src.read()
    out.write(np.stack(_stats(x[:, 0::2]) + _stats(x[:, 1::2]), axis=1))


def bn_stats_aggregate(step: Step) -> None:
    src, out = step.ins[0], step.outs[0]
    lanes, n = src.shape
    if n % 3:
        raise Refusal(f"ins[0] has {n} elements per partition, not a whole number of "
                      f"(count, mean, variance*count) triples")
    out.expect(lanes, 2)
    triples = src.read().reshape(lanes, n // 3, 3)
    present = triples[..., 0] != 0  # count-0 triples are skipped (their mean may be anything)
    count = np.where(present, triples[..., 0], 0)
    mean = np.where(present, triples[..., 1], 0)
    m2 = np.where(present, triples[..., 2], 0)
    total = count.sum(axis=1, dtype=np.float32)
    union_mean = (count * mean).sum(axis=1, dtype=np.float32) / total
    # skipped triples add nothing: 0 * (0 - union_mean)^2 would be NaN for a huge union mean
    spread = np.where(present, count * (mean - union_mean[:, None]) ** 2, 0).sum(axis=1, dtype=np.float32)
    variance = (m2.sum(axis=1, dtype=np.float32) + spread) / total
    out.write(np.stack([union_mean, variance], axis=1))


def max8(step: Step) -> None:
    src, out = step.ins[0], step.outs[0]
    lanes, n = src.shape
    if n < MAX8:
        raise Refusal(f"Max needs at least {MAX8} elements per partition, ins[0] has {n}")
    out.expect(lanes, MAX8)
    # descending; NumPy sorts NaN above +inf, so NaNs come first
    out.write(np.sort(src.read(), axis=1)[:, ::-1][:, :MAX8])


def _first_occurrences(data: np.ndarray, values: np.ndarray, excluded: np.ndarray | None = None):
    """For each lane and each of its values, the index of the value's first occurrence in the
    lane's data (outside ``excluded``), or NOT_FOUND; ``values`` is ``[P, k]``."""
    matches = data[:, None, :] == values[:, :, None]  # [P, k, N]
    if excluded is not None:
        matches &= ~excluded[:, None, :]
    return np.where(matches.any(axis=2), matches.argmax(axis=2), NOT_FOUND)


def _paired_occurrences(data: np.ndarray, values: np.ndarray, order) -> tuple[np.ndarray, np.ndarray]:
    """The values (``[P, 8]``) visited in ``order``, each paired with its first occurrence in the
    lane's data that no value visited before took (NOT_FOUND if none): the indices
    (``[P, 8]`` int64) and the taken positions (bool, ``data``'s shape)."""
    lanes = data.shape[0]
    taken = np.zeros(data.shape, dtype=bool)
    indices = np.empty((lanes, MAX8), dtype=np.int64)
    lane = np.arange(lanes)
    for k in order:  # each value sees the positions the ones before it took
        index = _first_occurrences(data, values[:, k : k + 1], taken)[:, 0]
        found = index != NOT_FOUND
        taken[lane[found], index[found]] = True
        indices[:, k] = index
    return indices, taken


def max_index(step: Step) -> None:
    """Duplicate values take ascending positions (values visited 0..7)."""
    src, out = step.ins[0], step.outs[0]
    lanes, _ = src.shape
    out.expect(lanes, MAX8)
    indices, _ = _paired_occurrences(src.read(), step.ins[1].read(lanes, MAX8), range(MAX8))
    out.write_integers(indices)


def match_replace(step: Step) -> None:
    """Duplicate values take descending positions (values visited 7..0)."""
    src, out = step.ins[0], step.outs[0]
    lanes, n = src.shape
    out.expect(lanes, n)
    data = src.read()
    indices, replaced = _paired_occurrences(data, step.ins[1].read(lanes, MAX8), reversed(range(MAX8)))
    out.write(np.where(replaced, np.float32(step.inst.imm_value), data))
    if len(step.outs) == 2:
        step.outs[1].expect(lanes, MAX8)
        step.outs[1].write_integers(indices)


def select_reduce(step: Step) -> None:
    inst, out = step.inst, step.outs[0]
    lanes, per_lane = out.shape
    predicate = step.ins[0].read(lanes, per_lane)
    on_true = step.ins[1].read(lanes, per_lane)
    on_false = step.ins[2].read(lanes, per_lane) if len(step.ins) == 3 else np.float32(inst.on_false_value)
    result = np.where(predicate != 0, on_true, on_false).astype(np.float32)
    out.write(result)
    if len(step.outs) == 2:  # reset_reduce: the registers start at -inf and take the fold (max)
        step.outs[1].expect(lanes, 1)
        folded = fold(inst.reduce_op, result)
        step.machine.set_vector_registers(out.absolute_partitions(), folded)
        step.outs[1].write(folded[:, None])


HANDLERS = {
    "TensorReduce": tensor_reduce,
    "TensorTensorScan": tensor_tensor_scan,
    "TensorScalarReduce": tensor_scalar_reduce,
    "BNStats": bn_stats,
    "BNStatsAggregate": bn_stats_aggregate,
    "Max": max8,
    "MaxIndex": max_index,
    "MatchReplace": match_replace,
    "SelectReduce": select_reduce,
}
