"""DMA queues: DMA, Load, Save, DMACopy, IndirectSave (element copy with cast, accumulate,
transpose, indirect row gather and scatter)."""

from __future__ import annotations

import numpy as np

from neuronxsim.reference.numbers import convert, from_fp32, is_integer, to_fp32
from neuronxsim.reference.refusal import Refusal
from neuronxsim.reference.step import Operand, Step


def dma(step: Step) -> None:
    inst = step.inst
    src, dst = step.ins[0], step.outs[0]
    mode, rmw = inst.mode.name, inst.dst_rmw_op.name
    if mode not in ("Copy", "Transpose", "Dynamic"):
        raise Refusal(f"DMA mode {mode} is not modelled")
    if mode == "Dynamic" and len(step.ins) != 2:
        raise Refusal("a Dynamic DMA takes its run-time row offset as ins[1]")
    if rmw not in ("bypass", "add"):
        raise Refusal(f"dst_rmw_op {rmw} is not modelled (bypass and add are)")
    if inst.opcode_name == "IndirectSave":
        if len(step.ins) != 2 or mode == "Transpose":
            raise Refusal("IndirectSave takes source rows and their indices, and does not transpose")
        _scatter_rows(step, src, step.ins[1], dst, add=rmw == "add")
        return
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


def _indexed_rows(step: Step, src: Operand, index: Operand, dst: Operand, scatter: bool):
    """(the indexed side's row for each row of the other side, which of them are inside it) of an
    indirect DMA: a gather indexes the source (ins[0]), a scatter the destination (outs[0])."""
    if step.inst.indirect_dim not in (-1, 0):
        raise Refusal(f"indirect_dim {step.inst.indirect_dim} is not modelled (only the outermost "
                      f"pair, 0, is)")
    if not is_integer(index.dtype):
        raise Refusal(f"ins[1]: the index tensor must hold integers, not {index.ap.dtype.name}")
    if src.shape[1] != dst.shape[1]:
        raise Refusal(f"ins[0] rows have {src.shape[1]} elements, outs[0] rows {dst.shape[1]}")
    (direct, direct_name), (table, table_name) = (((src, "ins[0]"), (dst, "outs[0]")) if scatter
                                                  else ((dst, "outs[0]"), (src, "ins[0]")))
    indices = _row_indices(step, index, direct.shape[0], direct_name)
    inside = (indices >= 0) & (indices < table.shape[0])
    if step.inst.oob_is_err and not inside.all():
        r = int(np.argmax(~inside))
        raise Refusal(f"index {int(indices[r])} for row {r} is outside the {table.shape[0]} rows "
                      f"of {table_name}")
    return indices, inside


def _gather_rows(step: Step, src: Operand, index: Operand, dst: Operand):
    """Indirect DMA: destination row r (its outermost pair) gets source row index[r] (the
    source's outermost pair). Returns the rows and which destination rows are written."""
    indices, inside = _indexed_rows(step, src, index, dst, scatter=False)
    values = src.read_raw()[np.where(inside, indices, 0)]
    return values, np.broadcast_to(inside[:, None], dst.shape)


def _row_indices(step: Step, index: Operand, rows: int, direct: str) -> np.ndarray:
    """The indexed side's row for each of the ``rows`` rows of the other side: ``index`` itself,
    or with mode Dynamic its one value plus the row number."""
    values = index.read_raw().reshape(-1).astype(np.int64)
    if step.inst.mode.name == "Dynamic":
        if values.size != 1:
            raise Refusal(f"ins[1]: a run-time row offset is one element, not {values.size}")
        return values[0] + np.arange(rows, dtype=np.int64)
    if values.size != rows:
        raise Refusal(f"ins[1] holds {values.size} indices for the {rows} rows of {direct}")
    return values


def _scatter_rows(step: Step, src: Operand, index: Operand, dst: Operand, add: bool) -> None:
    """IndirectSave: source row r (its outermost pair) lands in destination row index[r], rows in
    order (a repeated index: the last row stays, or with add every row adds)."""
    indices, inside = _indexed_rows(step, src, index, dst, scatter=True)
    table_rows, per_row = dst.shape
    source = src.read_raw()  # every source row before any is written
    table = dst.read_raw().copy()
    written = np.zeros((table_rows, per_row), bool)
    for r in np.flatnonzero(inside):  # in row order, each stored before the next reads it
        t = indices[r]
        if add:
            table[t] = from_fp32(to_fp32(table[t]) + to_fp32(source[r]), dst.dtype)
        else:
            table[t] = convert(source[r], dst.dtype)
        written[t] = True
    dst.write_raw(table, where=written)


HANDLERS = {opcode: dma for opcode in ("DMA", "Load", "Save", "DMACopy", "IndirectSave")}
