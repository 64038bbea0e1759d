"""DMA queues: DMA, Load, Save, DMACopy (element copy with cast, accumulate, transpose and
indirect row gather)."""

from __future__ import annotations

import numpy as np

from neuronxsim.reference.numbers import convert, is_integer, to_fp32
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Operand, Step


def dma(step: Step) -> None:
    inst = step.inst
    src, dst = step.ins[0], step.outs[0]
    mode, rmw = inst.mode.name, inst.dst_rmw_op.name
    if mode not in ("Copy", "Transpose"):
        raise Refusal(f"DMA mode {mode} is not modelled")
    if rmw not in ("bypass", "add"):
        raise Refusal(f"dst_rmw_op {rmw} is not modelled (bypass and add are)")
    if len(step.ins) == 2:
        if mode == "Transpose":
            raise Refusal("an indirect DMA cannot also transpose")
        values, written = _gather_rows(step, src, step.ins[1], dst)
    else:
        values, written = _source_in_destination_order(src, dst, transpose=mode == "Transpose"), None
    if rmw == "add":
        dst.write(dst.read() + to_fp32(values), where=written)
    else:
        dst.write_raw(convert(values, dst.dtype), where=written)


def _source_in_destination_order(src: Operand, dst: Operand, transpose: bool) -> np.ndarray:
    """The source elements rearranged as ``dst``'s ``[P, F]``: ``dst[k] = src[k]`` in enumeration
    order, or, transposing a 2-D source ``[a, b]``, in the order of ``[b, a]``."""
    raw = src.read_raw().reshape(-1)
    if transpose:
        dims = [pair.num for pair in src.ap.pattern if pair.num != 1]
        if len(dims) > 2:
            raise Refusal(f"ins[0]: a transposing DMA needs a 2-D source, this one is {dims}")
        a, b = ([1, 1] + dims)[-2:]
        raw = raw.reshape(a, b).T.reshape(-1)
    lanes, per_lane = dst.shape
    if raw.size != lanes * per_lane:
        raise Refusal(f"ins[0] has {raw.size} elements, outs[0] has {lanes * per_lane}")
    return raw.reshape(lanes, per_lane)


def _gather_rows(step: Step, src: Operand, index: Operand, dst: Operand):
    """Indirect DMA: destination row r (its outermost pair) gets source row index[r] (the
    source's outermost pair). Returns the rows and which destination rows are written."""
    if step.inst.indirect_dim not in (-1, 0):
        raise Refusal(f"indirect_dim {step.inst.indirect_dim} is not modelled (only the outermost "
                      f"pair, 0, is)")
    if not is_integer(index.dtype):
        raise Refusal(f"ins[1]: the index tensor must hold integers, not {index.ap.dtype.name}")
    rows, per_row = dst.shape
    source_rows, source_per_row = src.shape
    if source_per_row != per_row:
        raise Refusal(f"ins[0] rows have {source_per_row} elements, outs[0] rows {per_row}")
    indices = index.read_raw().reshape(-1).astype(np.int64)
    if indices.size != rows:
        raise Refusal(f"ins[1] holds {indices.size} indices for the {rows} rows of outs[0]")
    inside = (indices >= 0) & (indices < source_rows)
    if step.inst.oob_is_err and not inside.all():
        r = int(np.argmax(~inside))
        raise Refusal(f"index {int(indices[r])} for row {r} is outside the {source_rows} rows of ins[0]")
    values = src.read_raw()[np.where(inside, indices, 0)]
    return values, np.broadcast_to(inside[:, None], dst.shape)


HANDLERS = {opcode: dma for opcode in ("DMA", "Load", "Save", "DMACopy")}
