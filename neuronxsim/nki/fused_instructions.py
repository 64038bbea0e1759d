"""Vector Engine instructions with a scalar stage in front of a second operation, each one
instruction: scalar_tensor_tensor (ScalarTensorTensor) and tensor_scalar_reduce /
tensor_scalar_cumulative (TensorScalarReduce, on the engine's accumulation registers,
docs/isa-semantics.md §5)."""

from __future__ import annotations

from neuronxsim import bir
from neuronxsim.bir import legality

from . import dtypes as dt
from .errors import NKIError
from .indexing import full_box
from .instructions import (number, _psum_inputs, broadcast_shape, engine_in, engine_out, is_empty,
                           lane_view, out_view, plan, pointer_view, refuse_illegal_alu, refuse_psum_inputs,
                           result_tile)
from .opcodes import BITVEC_IDS, Alu
from .tensor import Tensor
from .tracer import IT, Access, Engine

def _scalar_in(tr, x, shape: tuple, box, loc, what: str, name: str, engine, opcode) -> Access | None:
    """The access of a ``[P, 1]`` per-partition scalar operand given as a tile; None for a number
    (which the instruction's fields carry)."""
    if x.__class__ is Tensor:
        return engine_in(tr, pointer_view(x, shape[0], box, loc, what, name), loc, what, name,
                         engine, opcode)
    number(x, loc, what, name, tile=True)
    return None


def scalar_tensor_tensor(tr, data: Tensor, op0, operand0, reverse0, op1, operand1: Tensor,
                         reverse1, dtype, loc, mask=None, out=None,
                         what="scalar_tensor_tensor") -> Tensor:
    """``(data op0 operand0) op1 operand1`` in one Vector Engine instruction: ``operand0`` a number
    or a [P, 1] tile, ``operand1`` a tile of ``data``'s shape."""
    if id(op0) in BITVEC_IDS or id(op1) in BITVEC_IDS:  # (alu.scalar-tensor-tensor)
        refuse_illegal_alu(IT.ScalarTensorTensor, Engine.DVE, op0, op1, loc, what)
    shape = broadcast_shape([data.shape, operand1.shape], loc)
    box = plan(tr, shape, mask, (data, operand1), loc)
    # (no dtype: data's, the documented default, "dtype: nki_dtype=data.dtype" (2.2x), as
    # instructions.scalar_tensor_tensor has it; NKI 0.6 writes into dst, whose dtype it passes)
    out = result_tile(tr, out, shape, dtype or data.dtype, what, loc)
    if is_empty(box):
        return out
    engine = Engine.DVE
    stt = IT.ScalarTensorTensor
    ins = [engine_in(tr, lane_view(data, shape, box, loc, what, "data"), loc, what, "data",
                     engine, stt),
           engine_in(tr, lane_view(operand1, shape, box, loc, what, "operand1"), loc, what,
                     "operand1", engine, stt)]
    if _psum_inputs(ins) > 1:
        refuse_psum_inputs(tr, stt, ins, loc, what)
    scalar = _scalar_in(tr, operand0, shape, box, loc, what, "operand0", engine, stt)
    if scalar is not None:
        ins.append(scalar)
    o = engine_out(tr, out_view(out, shape, box, loc), loc, what, "destination", engine, stt)
    fields = {"op0": op0, "const0": 0.0 if scalar is not None else float(operand0),
              "reverse0": True if reverse0 else False, "op1": op1,
              "reverse1": True if reverse1 else False}
    op = tr.record(stt, engine, ins, [o], fields, loc)
    if tuple(box) != full_box(shape):
        op.out_box = box
    return out


def tensor_scalar_accumulate(tr, data: Tensor, op0, operand0, reverse0, reduce_op, acc, initial,
                             negate: bool, cumulative: bool, dtype, loc, mask=None, out=None,
                             reduce_res: Tensor | None = None,
                             what="tensor_scalar_reduce") -> Tensor:
    """``data op0 operand0`` in one Vector Engine instruction that also folds the results with
    ``reduce_op`` into the engine's accumulation registers (``acc``: ZeroAccumulate = reset,
    Accumulate = continue, LoadAccumulate = start from ``initial``, a number or [P, 1] tile),
    written to ``reduce_res`` (negated with ``negate``); ``cumulative`` writes the running
    register values instead of the ``op0`` results (tensor_scalar_cumulative)."""
    if id(op0) in BITVEC_IDS:  # (alu.tensor-scalar-reduce)
        refuse_illegal_alu(IT.TensorScalarReduce, Engine.DVE, op0, Alu.bypass, loc, what)
    why = legality.register_fold(reduce_op, cumulative=cumulative)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)
    if cumulative and any(d in (dt.int32, dt.uint32) for d in (data.dtype, dtype or data.dtype)):
        raise NKIError(f"{what}: int32/uint32 tiles are not supported (as in NKI)", loc)
    shape = data.shape
    box = plan(tr, shape, mask, (data,), loc)
    if cumulative and box[1:] != full_box(shape)[1:]:
        raise NKIError(f"{what}: a mask may limit partitions only (the accumulation runs along "
                       "the whole free dimension)", loc)
    out = result_tile(tr, out, shape, dtype or data.dtype, what, loc)
    if is_empty(box):
        return out
    engine = Engine.DVE
    tsr = IT.TensorScalarReduce
    ins = [engine_in(tr, lane_view(data, shape, box, loc, what, "data"), loc, what, "data",
                     engine, tsr)]
    scalar = _scalar_in(tr, operand0, shape, box, loc, what, "operand0", engine, tsr)
    start = None
    if acc is bir.AccumCmd.LoadAccumulate:
        start = _scalar_in(tr, initial, shape, box, loc, what, "the initial value", engine, tsr)
    ins += [a for a in (scalar, start) if a is not None]
    outs = [engine_out(tr, out_view(out, shape, box, loc), loc, what, "destination", engine, tsr)]
    if reduce_res is not None:
        outs.append(engine_out(tr, pointer_view(reduce_res, shape[0], box, loc, what,
                                                "reduce_res"), loc, what, "reduce_res", engine,
                               tsr))
    fields = {"op0": op0, "const0": 0.0 if scalar is not None else float(operand0),
              "reverse0": True if reverse0 else False, "reduce_op": reduce_op, "acc": acc,
              "initial": 0.0 if start is not None or initial is None else
              number(initial, loc, what, "the initial value"),
              "negate": True if negate else False, "cumulative": True if cumulative else False,
              "has_scalar_tensor": scalar is not None, "has_initial_tensor": start is not None}
    op = tr.record(tsr, engine, ins, outs, fields, loc)
    if tuple(box) != full_box(shape):
        op.out_box = box
    return out

