"""Instructions driven by element positions: Iota, TensorScalarAffineSelect, RangeSelect."""

from __future__ import annotations

import math

import numpy as np

from neuronxsim.reference.alu import apply
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Step


def affine_expression(inst, lanes: int, per_lane: int) -> np.ndarray:
    """``base + channel_multiplier * p + sum_k i_k * pattern[k].step`` in 32-bit integer math
    (wrapped to int32, held as int64) ``[P, F]``, over the index space of the pattern's nums
    (row-major, outermost pair first); terms outside int32 are refused."""
    pairs = [(pair.step, pair.num) for pair in inst.pattern]
    for name, v in [("offset", inst.base), ("channel multiplier", inst.channel_multiplier)] + \
            [("pattern step", step) for step, _ in pairs]:
        if not -2**31 <= v < 2**31:
            raise Refusal(f"the {name} {v} is outside int32")
    nums = [num for _, num in pairs]
    if math.prod(nums) != per_lane:
        raise Refusal(f"pattern {[list(p) for p in pairs]} spans {math.prod(nums)} elements, "
                      f"outs[0] has {per_lane} per partition")
    value = np.full([lanes] + nums, inst.base, dtype=np.int64)
    value += inst.channel_multiplier * np.arange(lanes, dtype=np.int64).reshape([lanes] + [1] * len(nums))
    for axis, (step, num) in enumerate(pairs):
        shape = [1] * (len(nums) + 1)
        shape[axis + 1] = num
        value += step * np.arange(num, dtype=np.int64).reshape(shape)
    return value.reshape(lanes, per_lane).astype(np.int32).astype(np.int64)  # (modulo 2^32)


def iota(step: Step) -> None:
    out = step.outs[0]
    out.write_integers(affine_expression(step.inst, *out.shape))


def affine_select(step: Step) -> None:
    inst, out = step.inst, step.outs[0]
    lanes, per_lane = out.shape
    data = step.ins[0].read(lanes, per_lane)
    # fp32 rounding never changes the sign of e, so comparing fp32(e) with 0 is exact
    e = affine_expression(inst, lanes, per_lane).astype(np.float32)
    keep = apply(inst.compare_op, e, np.float32(0.0)) != 0
    out.write(np.where(keep, data, np.float32(inst.fill_value)))


def range_select(step: Step) -> None:
    inst, out = step.inst, step.outs[0]
    lanes, per_lane = out.shape
    data = step.ins[0].read(lanes, per_lane)
    bound0 = step.ins[1].read_pointer(lanes)
    bound1 = step.ins[2].read_pointer(lanes)
    position = (np.arange(per_lane, dtype=np.int64) + inst.range_start).astype(np.float32)[None, :]
    keep = (apply(inst.comp_op0, position, bound0) != 0) & (apply(inst.comp_op1, position, bound1) != 0)
    result = np.where(keep, data, np.float32(inst.fill_value)).astype(np.float32)
    out.write(result)
    if len(step.outs) == 2:  # reset_reduce: the registers start at -inf and take the max
        step.outs[1].expect(lanes, 1)
        maxima = result.max(axis=1)  # NaN-propagating, as ALU max
        step.machine.set_vector_registers(out.absolute_partitions(), maxima)
        step.outs[1].write(maxima[:, None])


HANDLERS = {
    "Iota": iota,
    "TensorScalarAffineSelect": affine_select,
    "RangeSelect": range_select,
}
