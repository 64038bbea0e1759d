"""One builder per ISA instruction: check the operands against the engine's rules, then record it.

Builders take views (:class:`~neuronxsim.nki.tensor.Tensor`) and a kernel source location, and
return the view of the result. Both ``nl`` (with NKI's broadcasting, type promotion and
temporaries) and ``nisa`` (the public instruction signatures) are written on top of these.

Lane-wise instructions run over an *iteration space* (the result's shape, partition dimension
first). Their operands line up with it as NKI broadcasts tiles: equal partition counts, free
dimensions aligned from the right, size-1 free dimensions repeated (an access-pattern step of 0).
A mask restricts the iteration space to a box; so does a partial write of the inputs: an
instruction computes only the leading partitions its on-chip inputs define (a masked
``nl.load`` of the last 122 rows leaves the other 6 partitions of its tile unwritten, and the
instructions that follow skip them instead of reading memory nothing wrote).
"""

from __future__ import annotations

import math

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import legality, target
from neuronxsim.starfish.lib import _core

from . import dtypes as dt
from .errors import NKIError
from .indexing import (_FULL_BOXES, BoxPieces, IndexExpr, IndexPredicate, Mask, full_box,
                       mask_box)
from .opcodes import BITVEC_IDS, REDUCE_IDS, Alu
from .tensor import INPUT, NUM_PARTITIONS, PSUM, SBUF, Tensor, new_view
from .tracer import (DMA_QUEUES, IT, Access, Engine, Op, Tracer, check_compute_operand,
                     merge_pairs, new_access, plain_tile_access)

Act = bir.ActivationFunc
MATMUL_MAX_STATIONARY = target.uniform("pe_cols")
MATMUL_MAX_MOVING = target.uniform("pe_max_moving_free_elements")
#: The dtypes the PE reads on every generation (nl.matmul casts other inputs to float32).
MATMUL_DTYPES = tuple(d for d in dt.SUPPORTED if d is not dt.bool_ and
                      all(dt.BIR_DTYPES[d] in legality.pe_input_dtypes(a) for a in target.ARCHS))
MATMUL_DTYPE_SET = frozenset(MATMUL_DTYPES)  # (hashing beats comparing with each in turn)
_LEGAL_SPACES = {SBUF: legality.Space.SBUF, PSUM: legality.Space.PSUM}
# (module globals for the engines of every matmul and transfer: reading a member of the Engine
# class costs several times as much)
_PE, _DMA, _DVE = Engine.PE, Engine.DMA, Engine.DVE


# ---- iteration spaces ----

def broadcast_shape(shapes: list[tuple], loc) -> tuple:
    """The iteration space of tiles combined lane-wise (NKI broadcasting, see the module doc)."""
    first = shapes[0]
    for s in shapes:
        if s != first:
            break
    else:
        return first
    parts = {s[0] for s in shapes}
    if len(parts) > 1:
        hint = (" (a [1, N] tile reaches all partitions with .broadcast_to)"
                if 1 in parts else "")
        raise NKIError(f"tiles of shapes {', '.join(str(list(s)) for s in shapes)} have different "
                       f"partition counts{hint}", loc)
    rank = max(len(s) for s in shapes) - 1
    free = [1] * rank
    for s in shapes:
        for i, n in enumerate(s[1:], rank - len(s) + 1):
            if n != free[i]:
                if free[i] != 1 and n != 1:
                    raise NKIError(f"tiles of shapes {', '.join(str(list(x)) for x in shapes)} "
                                   "do not broadcast", loc)
                free[i] = max(free[i], n)
    return (parts.pop(),) + tuple(free)


def plan(tr: Tracer, shape: tuple, mask, views, loc, pieces=False) -> tuple | BoxPieces:
    """The box of ``shape`` an instruction computes (see the module docstring). ``pieces``: the
    caller records an element-wise instruction (each output element computed from the input
    elements at its place, nothing carried along a row), so a mask of several boxes may be one
    instruction per box (:class:`BoxPieces`, :func:`record_lanewise`); any other instruction
    refuses such a mask."""
    box = (_FULL_BOXES.get(shape) or full_box(shape)) if mask is None else mask_box(mask, shape)
    if box.__class__ is BoxPieces:
        if not pieces:
            raise box.refusal(loc)
        return _plan_pieces(tr, shape, box, views)
    return _plan_box(tr, shape, box, views)


def _plan_box(tr: Tracer, shape: tuple, box: tuple, views) -> tuple:
    """:func:`plan` of the box a mask keeps."""
    lo, hi = box[0]
    for v in views:
        if v.__class__ is not Tensor:
            continue
        st = v.storage
        if st.on_chip and st.state.forward is None and \
                st.state.written_partitions >= v.offset // st.layout.row + hi:
            continue  # the usual case: every partition the instruction reads was written
        if not st.on_chip or not v.shape or v.shape[0] != shape[0]:
            continue
        defined = tr.defined_partitions(v)
        if 0 < defined < hi:
            hi = defined
    if hi != box[0][1]:
        box = ((lo, max(lo, hi)),) + tuple(box[1:])
    return box


def _plan_pieces(tr: Tracer, shape: tuple, pieces: BoxPieces, views) -> tuple | BoxPieces:
    """:func:`plan` of a mask of several boxes: each piece as plan makes a box of it (partitions
    no view defines are left out), the pieces left empty dropped."""
    boxes = [b for piece in pieces.boxes if not is_empty(b := _plan_box(tr, shape, piece, views))]
    if len(boxes) > 1:
        return pieces if boxes == list(pieces.boxes) else BoxPieces(tuple(boxes), pieces.pred)
    return boxes[0] if boxes else tuple((lo, lo) for lo, _ in full_box(shape))


def masked_out(out: Tensor) -> Tensor:
    """``out``, the result of an instruction its mask skipped: a tile nothing wrote, which an
    assignment or an accumulation then leaves alone (the instruction did not happen)."""
    if not out.storage.state.write_count:
        out.storage.state.masked_out = True
    return out


def is_empty(box) -> bool:
    if box.__class__ is BoxPieces:
        return False  # (its pieces are not)
    for lo, hi in box:  # (a loop: any() over a generator costs more than the whole test)
        if lo >= hi:
            return True
    return False


def lane_view(view: Tensor, shape: tuple, box: list, loc, what: str, name: str) -> Tensor:
    """``view`` lined up with the iteration space ``shape`` and cut to ``box``: broadcast
    dimensions get step 0. Index ranges are checked on the cut view."""
    vshape, vstrides = view.shape, view.strides
    if vshape == shape and not view.checks and box is _FULL_BOXES.get(shape):
        return view  # the usual case: nothing to line up, cut or check
    if not vshape:
        raise NKIError(f"{what}: {name} has no partition dimension", loc)
    if vshape[0] != shape[0]:
        raise NKIError(f"{what}: {name} has {vshape[0]} partitions; the instruction has "
                       f"{shape[0]}", loc)
    pad = len(shape) - len(vshape)
    if pad < 0:
        raise NKIError(f"{what}: {name} of shape {list(vshape)} has more dimensions than the "
                       f"instruction's {list(shape)}", loc)
    cut = view
    for axis, n in enumerate(vshape):
        target = 0 if axis == 0 else axis + pad
        if n == shape[target]:
            lo, hi = box[target]
            cut = cut.restrict(axis, lo, hi)
        elif n != 1:
            raise NKIError(f"{what}: {name} of shape {list(vshape)} does not broadcast to "
                           f"{list(shape)}", loc)
    if cut.checks:
        cut.check_bounds(loc)
    if cut is view and vshape == shape:  # no broadcast, nothing cut
        return view
    out_shape = [hi - lo for lo, hi in box]
    strides = [vstrides[0]] + [0] * (len(shape) - 1)
    for axis in range(1, len(vshape)):
        if vshape[axis] != 1:
            strides[axis + pad] = vstrides[axis]
    return new_view(cut.storage, cut.offset, tuple(out_shape), tuple(strides), ())


def pointer_view(view: Tensor, partitions: int, box: list, loc, what: str, name: str) -> Tensor:
    """A per-partition scalar operand ([P, 1]) cut to the box's partitions."""
    vshape = view.shape
    if not vshape or vshape[0] != partitions or \
            (vshape[1] if len(vshape) == 2 else math.prod(vshape[1:])) != 1:
        raise NKIError(f"{what}: {name} must hold one value per partition, shape "
                       f"[{partitions}, 1]; it is {list(vshape)}", loc)
    lo, hi = box[0]
    return view if lo == 0 and hi == partitions else view.restrict(0, lo, hi)


def out_view(view: Tensor, shape: tuple, box: list, loc, what: str = "the destination") -> Tensor:
    """The destination of an instruction over ``shape``, cut to ``box``. Its shape must match,
    or have the same partitions and elements per partition when the box cuts no free dim."""
    if view.shape == shape:
        for axis, (lo, hi) in enumerate(box):
            view = view.restrict(axis, lo, hi)
        return view
    if (view.shape and view.shape[0] == shape[0] and math.prod(view.shape[1:]) ==
            math.prod(shape[1:]) and all(b == (0, n) for b, n in zip(box[1:], shape[1:]))):
        return view.restrict(0, *box[0])
    raise NKIError(f"{what} has shape {list(view.shape)}; the result has shape {list(shape)}",
                   loc)


# ---- operand checks ----

def engine_in(tr: Tracer, view: Tensor, loc, what: str, name: str, engine, opcode,
              merge: bool = True) -> Access:
    """``tr.read`` of an input of ``opcode`` on a compute ``engine``, checked by
    :func:`check_compute_operand`."""
    st = view.storage
    s = st.state
    if s.forward is None and s.pending_zero is None and s.write_count and not view.checks:
        acc = plain_tile_access(view, st, engine)
        if acc is not None:
            return acc
    acc = tr.read(view, loc, merge)
    check_compute_operand(acc, loc, what, name, opcode, engine, False)
    return acc


def engine_out(tr: Tracer, view: Tensor, loc, what: str, name: str, engine, opcode,
               merge: bool = True) -> Access:
    """``tr.write`` of an output of ``opcode`` on a compute ``engine``, checked by
    :func:`check_compute_operand`."""
    acc = tr.write_plain(view, engine)
    if acc is not None:
        return acc
    acc = tr.write(view, loc, merge)
    check_compute_operand(acc, loc, what, name, opcode, engine, True)
    return acc


def result_tile(tr: Tracer, out, shape: tuple, dtype, name: str, loc, kind: str = SBUF) -> Tensor:
    if out is not None:
        return out
    if shape[0] > NUM_PARTITIONS:
        raise NKIError(f"the result would span {shape[0]} partitions; a tile has at most "
                       f"{NUM_PARTITIONS}", loc)
    return tr.new_result(kind, dtype, shape, name, loc)


def plain_inputs(tr: Tracer, engine, shape: tuple, mask, tiles, pointers=()) -> list | None:
    """The accesses of a lane-wise instruction's inputs (``tiles``, then the [P, 1] ``pointers``
    views) when they need none of :func:`plan`'s and :func:`record_lanewise`'s work: the mask
    (if any) keeps the whole iteration space ``shape``, every tile has that shape and was written
    in all its partitions, and ``engine`` takes every operand as it is (``plain_tile_access``).
    None otherwise, having changed nothing: the general path then does (and checks) it all.
    (The mask is resolved first, so a wrong one fails here as it would in ``plan``.)"""
    if mask is not None and mask_box(mask, shape) is not _FULL_BOXES.get(shape):
        return None
    ins = []
    p = shape[0]
    for v in tiles:
        st = v.storage
        s = st.state
        if v.shape != shape or v.checks or s.forward is not None or s.pending_zero is not None:
            return None
        acc = plain_tile_access(v, st, engine)
        if acc is None or s.written_partitions < v.offset // st.layout.row + p:
            return None
        ins.append(acc)
    for v in pointers:
        st = v.storage
        s = st.state
        vshape = v.shape  # [P, 1], or [P] (a reduction's result)
        if not (len(vshape) == 2 and vshape[1] == 1 or len(vshape) == 1) or vshape[0] != p or \
                v.checks or s.forward is not None or s.pending_zero is not None or \
                not s.write_count:
            return None
        acc = plain_tile_access(v, st, engine)
        if acc is None:
            return None
        ins.append(acc)
    if len(ins) > 1 and engine is not Engine.Activation and _psum_inputs(ins) > 1:
        return None  # (an error: record_lanewise reports it)
    return ins


# The opcodes whose builders' general path, past lanewise_plain, is plan over the tiles,
# result_tile and record_lanewise (tensor_tensor, tensor_scalar, activation): lanewise_plain
# records their partial tiles too (tiles written in a leading run of partitions: a loop's last,
# `t * 128 + i_p < rows`), as that path would.
CUT_OPCODES = (IT.TensorTensor, IT.TensorScalar, IT.TensorScalarPtr, IT.Activation)
_core.nki.configure_lanewise(Tensor, plain_tile_access, _core.nki.write_plain, Engine.Activation,
                             PSUM, SBUF, NUM_PARTITIONS, CUT_OPCODES)
#: ``lanewise_plain(tr, opcode, engine, shape, tiles, pointers, out, out_shape, dtype, what,
#: fields, loc)``: :func:`plain_inputs` (no mask: callers resolve theirs first, see
#: :func:`keeps_all`), :func:`result_tile` and :func:`record_plain` in one call: the recorded
#: destination; NotImplemented, having changed nothing, when the instruction needs the general
#: path; ``(result,)`` when it made the new result but the general path must record it; and, for
#: the opcodes above, plan's box and record_lanewise of tiles written in their leading partitions
#: only. In C (``cpp/python/trace_lanewise.cpp``, which states the conditions): most instructions
#: of a normalisation kernel are such.
lanewise_plain = _core.nki.lanewise_plain


def keeps_all(mask, shape: tuple) -> bool:
    """Whether ``mask`` (None or a mask) keeps the whole iteration space ``shape``, as
    :func:`plain_inputs` asks it first (a wrong mask raises here as it would there). (The
    builders test ``mask is None`` before calling it: most instructions have no mask.)"""
    if mask is None:
        return True
    c = mask.__class__
    if c is IndexPredicate or c is Mask:  # (mask_box's remembered box, without its frame)
        cached = mask.box_cache
        if cached is not None and cached[0] == shape:
            return cached[1] is _FULL_BOXES.get(shape)
    return mask_box(mask, shape) is _FULL_BOXES.get(shape)


# (what keeps_all answers from a mask's remembered box, in C through a FastCall:
# cpp/python/trace_mask_box.cpp; the definition above answers the rest)
keeps_all = _core.nki.FastCall(keeps_all, _core.nki.keeps_all_fast())


def refuse_psum_inputs(tr, opcode, ins: list, loc, what: str):
    """Raises the rule operand.psum-inputs on the first two of the inputs ``ins`` (accesses or
    views) that are in PSUM (the rule reads their memories only)."""
    a, b = [legal_operand(PSUM, x.storage.dtype, 1, 1) for x in ins if x.storage.kind == PSUM][:2]
    why = legality.psum_inputs(opcode, a, b)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)


def _psum_inputs(ins: list) -> int:
    """How many of the input accesses ``ins`` read PSUM (a Vector Engine instruction takes one)."""
    n = 0
    for a in ins:
        if a.storage.kind == PSUM:
            n += 1
    return n


def record_plain(tr: Tracer, opcode, engine, shape: tuple, ins: list, out: Tensor, fields,
                 loc) -> bool:
    """Records an instruction whose inputs :func:`plain_inputs` made, when ``out`` (of the
    result's ``shape``: a lane-wise instruction's iteration space) needs none of
    record_lanewise's work either; False (nothing changed) when it does."""
    if out.shape == shape:
        o = tr.write_plain(out, engine)
        if o is not None:
            tr.record(opcode, engine, ins, [o], fields, loc)
            return True
    return False


def record_lanewise(tr: Tracer, opcode, engine, shape: tuple, box: list, tiles: list,
                    pointers: list, out: Tensor, fields, loc, what: str,
                    outs_extra: tuple = ()):
    """Records a lane-wise instruction: ``ins`` = tiles (lined up with the iteration space), then
    pointer operands; ``outs`` = the destination (then ``outs_extra``): one instruction per
    piece of a :class:`BoxPieces` (the last one's record answered)."""
    if box.__class__ is BoxPieces:
        for piece in box.boxes:
            op = record_lanewise(tr, opcode, engine, shape, piece, tiles, pointers, out, fields,
                                 loc, what, outs_extra)
        return op
    full = box is _FULL_BOXES.get(shape) or tuple(box) == full_box(shape)
    ins = []
    for i, v in enumerate(tiles):
        if not full or v.shape != shape or v.checks:
            v = lane_view(v, shape, box, loc, what, f"operand {i}")
        ins.append(engine_in(tr, v, loc, what, "operand", engine, opcode))
    for name, v in pointers:
        ins.append(engine_in(tr, pointer_view(v, shape[0], box, loc, what, name), loc, what, name,
                             engine, opcode))
    if not full or out.shape != shape:
        out = out_view(out, shape, box, loc)
    outs = [engine_out(tr, out, loc, what, "destination", engine, opcode)]
    for name, v in outs_extra:
        outs.append(engine_out(tr, pointer_view(v, shape[0], box, loc, what, name), loc, what,
                               name, engine, opcode))
    if len(ins) > 1 and opcode is not IT.Activation and _psum_inputs(ins) > 1:
        refuse_psum_inputs(tr, opcode, ins, loc, what)
    return tr.record(opcode, engine, ins, outs, fields, loc, None if full else box)


# ---- the builders ----

def tensor_tensor(tr, a: Tensor, b: Tensor, op, dtype, loc, mask=None, out=None,
                  engine=Engine.DVE, what="tensor_tensor") -> Tensor:
    bitvec = id(op) in BITVEC_IDS
    if engine is not _DVE and bitvec:
        refuse_illegal_alu(IT.TensorTensor, engine, op, _BYPASS, loc, what)  # (alu.bitvec-engine)
    shape = a.shape
    if b.shape != shape:
        shape = broadcast_shape([shape, b.shape], loc)
    dtype = dtype or dt.promote(a.dtype, b.dtype)
    if not bitvec and shape is a.shape and (mask is None or keeps_all(mask, shape)):  # (b of a's shape)
        made = lanewise_plain(tr, _TT, engine, shape, (a, b), (), out, shape, dtype, what,
                              {"op": op}, loc)
        if made.__class__ is Tensor:
            return made
        if made is not NotImplemented:
            out = made[0]  # (made, not recorded: the general path below records it)
    return tensor_tensor_general(tr, a, b, op, dtype, loc, mask, out, engine, what, shape, bitvec)


def tensor_tensor_general(tr, a, b, op, dtype, loc, mask, out, engine, what, shape, bitvec):
    """The rest of :func:`tensor_tensor` past its ``lanewise_plain`` call (``dtype`` resolved,
    ``shape`` the iteration space, ``out`` the result lanewise_plain made but did not record, if
    it did): also called from C by the tile operators (cpp/python/trace_accumulate.cpp) and NKI
    0.6's nisa.tensor_tensor (cpp/python/trace_nki06_lanewise.cpp)."""
    ins = plain_inputs(tr, engine, shape, mask, (a, b))
    box = None if ins is not None else plan(tr, shape, mask, (a, b), loc, True)
    out = result_tile(tr, out, shape, dtype, what, loc)
    if bitvec:
        refuse_bitvec_dtypes(IT.TensorTensor, op, _BYPASS, (a, b), out, loc, what)
    fields = {"op": op}
    if box is None:  # the usual case (see plain_inputs)
        if record_plain(tr, IT.TensorTensor, engine, shape, ins, out, fields, loc):
            return out
        box = full_box(shape)
    if is_empty(box):
        return masked_out(out)
    record_lanewise(tr, IT.TensorTensor, engine, shape, box, (a, b), (), out, fields, loc, what)
    return out


def tensor_scalar(tr, data: Tensor, op0, operand0, reverse0, op1, operand1, reverse1, dtype,
                  loc, mask=None, out=None, engine=Engine.DVE, what="tensor_scalar") -> Tensor:
    """``(data op0 operand0) op1 operand1``; operands are numbers or [P, 1] tiles."""
    shape = data.shape
    dtype = dtype or data.dtype
    if op1 is None:
        op1, operand1 = _BYPASS, 0.0
    tile0, tile1 = operand0.__class__ is Tensor, operand1.__class__ is Tensor
    opcode = _TSP if tile0 or tile1 else _TS
    bitvec = id(op0) in BITVEC_IDS or id(op1) in BITVEC_IDS
    if bitvec or engine is not _DVE:  # (alu.tensor-scalar-op-kinds, alu.bitvec-engine, alu.act-tensor-scalar)
        refuse_illegal_alu(opcode, engine, op0, op1, loc, what)
    c1 = operand1.__class__
    if not bitvec and (tile0 or not tile1) and (tile1 or c1 is float or c1 is int) and \
            (mask is None or keeps_all(mask, shape)):
        made = _tensor_scalar_plain(tr, data, shape, op0, operand0, tile0, reverse0, op1,
                                    operand1, tile1, reverse1, dtype, loc, out, engine, what)
        if made.__class__ is Tensor:
            return made
        if made is not NotImplemented:
            out = made[0]  # (made, not recorded: the general path records it)
    return tensor_scalar_general(tr, data, op0, operand0, reverse0, op1, operand1, reverse1,
                                 dtype, loc, mask, out, engine, what, opcode, tile0, tile1, bitvec)


def tensor_scalar_general(tr, data, op0, operand0, reverse0, op1, operand1, reverse1, dtype,
                          loc, mask, out, engine, what, opcode, tile0, tile1, bitvec):
    """The rest of :func:`tensor_scalar` past its ``lanewise_plain`` call (``dtype`` and ``op1``
    resolved, ``out`` the result lanewise_plain made but did not record, if it did): also called
    from C (cpp/python/trace_accumulate.cpp, trace_nki06_lanewise.cpp)."""
    shape = data.shape
    if tile0:
        ins = plain_inputs(tr, engine, shape, mask, (data,),
                           (operand0, operand1) if tile1 else (operand0,))
    else:  # (a tile operand1 needs a constant column for operand0 first: the general path)
        ins = None if tile1 else plain_inputs(tr, engine, shape, mask, (data,))
    box = None if ins is not None else plan(tr, shape, mask, (data,), loc, True)
    out = result_tile(tr, out, shape, dtype, what, loc)
    if bitvec:
        refuse_bitvec_dtypes(opcode, op0, op1, (data,), out, loc, what)
    if box is not None and is_empty(box):
        return masked_out(out)
    reverse0, reverse1 = True if reverse0 else False, True if reverse1 else False
    if not tile0 and not tile1:
        fields = {"op0": op0, "const0": number(operand0, loc, what, "operand0", tile=True),
                  "reverse0": reverse0, "op1": op1,
                  "const1": number(operand1, loc, what, "operand1", tile=True),
                  "reverse1": reverse1}
        if box is None:  # the usual case (see plain_inputs)
            if record_plain(tr, IT.TensorScalar, engine, shape, ins, out, fields, loc):
                return out
            box = full_box(shape)
        record_lanewise(tr, IT.TensorScalar, engine, shape, box, [data], (), out, fields,
                        loc, what)
        return out
    if not tile0:  # the pointer form takes operand0 from a tile: make one
        operand0 = constant_column(tr, shape[0], number(operand0, loc, what, "operand0", tile=True),
                                   loc)
    fields = {"op0": op0, "reverse0": reverse0, "op1": op1, "reverse1": reverse1,
              "const1": 0.0}
    if tile1:
        pointers = (("operand0", operand0), ("operand1", operand1))
    else:
        pointers = (("operand0", operand0),)
        fields["const1"] = number(operand1, loc, what, "operand1", tile=True)
    if box is None:  # the usual case (see plain_inputs)
        if record_plain(tr, IT.TensorScalarPtr, engine, shape, ins, out, fields, loc):
            return out
        box = full_box(shape)
    record_lanewise(tr, IT.TensorScalarPtr, engine, shape, box, [data], pointers, out,
                    fields, loc, what)
    return out


def _tensor_scalar_plain(tr, data, shape, op0, operand0, tile0, reverse0, op1, operand1, tile1,
                         reverse1, dtype, loc, out, engine, what):
    """:func:`tensor_scalar` by ``lanewise_plain`` (same fields, same operands), or what that
    returned; NotImplemented for a number operand0 other than a float or int (``number`` may
    refuse it, after result_tile)."""
    reverse0, reverse1 = True if reverse0 else False, True if reverse1 else False
    if tile0:
        fields = {"op0": op0, "reverse0": reverse0, "op1": op1, "reverse1": reverse1,
                  "const1": 0.0}
        if tile1:
            pointers = (operand0, operand1)
        else:
            pointers = (operand0,)
            fields["const1"] = float(operand1)
        return lanewise_plain(tr, _TSP, engine, shape, (data,), pointers, out, shape, dtype, what,
                              fields, loc)
    c0 = operand0.__class__
    if c0 is not float and c0 is not int:
        return NotImplemented
    fields = {"op0": op0, "const0": float(operand0), "reverse0": reverse0,
              "op1": op1, "const1": float(operand1), "reverse1": reverse1}
    return lanewise_plain(tr, _TS, engine, shape, (data,), (), out, shape, dtype, what, fields,
                          loc)


_TT, _TS, _TSP, _ACT, _COPY = (IT.TensorTensor, IT.TensorScalar, IT.TensorScalarPtr,
                               IT.Activation, IT.TensorCopy)
_ACT_ENGINE = Engine.Activation
_ACT_BIAS_DTYPES = (dt.float32, dt.float16, dt.bfloat16)


def refuse_illegal_alu(opcode, engine, op0, op1, loc, what: str) -> None:
    """Raises the legality rule (:func:`neuronxsim.bir.legality.alu_ops`) the ALU operators
    ``op0`` / ``op1`` of ``opcode`` on ``engine`` break, with the kernel's source line."""
    why = legality.alu_ops(opcode, engine, op0, op1)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)


def refuse_bitvec_dtypes(opcode, op0, op1, ins, out: Tensor, loc, what: str) -> None:
    """Raises the rule ``alu.bitvec-dtype`` (:func:`neuronxsim.bir.legality.bitvec_dtypes`) when
    ``opcode`` applies a bit-vector operator to a float tile (of ``ins``, its data, or ``out``)."""
    why = legality.bitvec_dtypes(opcode, op0, op1, ins=[dt.BIR_DTYPES[t.dtype] for t in ins],
                                 outs=[dt.BIR_DTYPES[out.dtype]])
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)


def refuse_illegal_reduce(tr, op, loc, what: str) -> None:
    """Raises the legality rule (:func:`neuronxsim.bir.legality.activation_reduce`) an
    accumulating Activation reducing with ``op`` breaks; the tracers record add only, so another
    ``op`` the generation takes is refused as not modelled."""
    why = legality.activation_reduce(bir.AccumCmd.ZeroAccumulate, op, arch=tr.arch)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)
    if op is not Alu.add:
        raise NKIError(f"{what}: reduce_op {op.name} on the Scalar Engine's accumulation registers is not "
                       "modelled by the tracer (it records nl.add)", loc)
    _REDUCE_ADD_ARCHS.add(tr.arch)


#: The archs refuse_illegal_reduce passed Alu.add on (the rule's verdict is the op's and the arch's
#: alone): the C path of NKI 0.6's nisa.activation_reduce (cpp/python/trace_nki06_lanewise.cpp)
#: skips the call for them.
_REDUCE_ADD_ARCHS: set = set()


def number(x, loc, what: str, name: str | None = None, tile: bool = False) -> float:
    """``x``, an instruction's immediate (an int, a float or a NumPy number), as a float; anything
    else (a string too, which ``float`` would read) is refused saying that the operand ``what``,
    or ``"what: name"`` when ``name`` is given (made only then), must be a number, or a number or
    a tile where the instruction also takes a tile (``tile``), and what it got."""
    if x.__class__ is float:
        return x
    if not (dt.is_number(x) or isinstance(x, np.bool_)):
        if name is not None:
            what = f"{what}: {name}"
        given = "a tile" if isinstance(x, Tensor) else type(x).__name__
        raise NKIError(f"{what} must be {'a number or a tile' if tile else 'a number'}, not "
                       f"{given}", loc)
    return float(x)


def constant_column(tr, partitions: int, value: float, loc, dtype=dt.float32) -> Tensor:
    """A [P, 1] tile holding ``value`` (for operands the hardware takes only from SBUF)."""
    t = tr.new_result(SBUF, dtype, (partitions, 1), "const", loc)
    memset(tr, t, value, loc)
    return t


def activation(tr, func, data: Tensor, bias, scale, dtype, loc, mask=None, out=None,
               acc=bir.AccumCmd.Idle, acc_op=Alu.add, what="activation") -> Tensor:
    """``func(data * scale + bias)`` on the Scalar Engine; bias a [P, 1] tile or number, scale a
    number or [P, 1] tile."""
    shape = data.shape
    c = scale.__class__
    if (bias is None or bias.__class__ is Tensor and (bias.storage.kind == PSUM or
                                                      bias.storage.dtype in _ACT_BIAS_DTYPES)) and \
            (c is Tensor or c is float or c is int) and (mask is None or keeps_all(mask, shape)):
        fields = {"func": func, "acc": acc, "acc_op": acc_op, "scale": 1.0}
        pointers = ()
        if bias is not None:
            pointers = (bias,)
            fields["has_bias"] = True
        if c is Tensor:
            pointers += (scale,)
            fields["has_scale_tensor"] = True
        else:
            fields["scale"] = float(scale)
        made = lanewise_plain(tr, _ACT, _ACT_ENGINE, shape, (data,), pointers, out, shape,
                              dtype or data.dtype, what, fields, loc)
        if made.__class__ is Tensor:
            return made
        if made is not NotImplemented:
            out = made[0]  # (made, not recorded: the general path records it)
    return activation_general(tr, func, data, bias, scale, dtype, loc, mask, out, acc, acc_op,
                              what)


def activation_general(tr, func, data, bias, scale, dtype, loc, mask, out, acc, acc_op, what):
    """The rest of :func:`activation` past its ``lanewise_plain`` call (``out`` the result
    lanewise_plain made but did not record, if it did): also called from C
    (cpp/python/trace_lane_fast.cpp, trace_nki06_lanewise.cpp)."""
    shape = data.shape
    # The pointer operands, when known before a number bias makes its constant column.
    known = () if scale.__class__ is not Tensor else (scale,)
    if bias is not None:
        known = (bias,) + known if bias.__class__ is Tensor else None
    ins = plain_inputs(tr, Engine.Activation, shape, mask, (data,), known or ())
    box = None if ins is not None else plan(tr, shape, mask, (data,), loc,
                                            acc == bir.AccumCmd.Idle)  # (no accumulation)
    out = result_tile(tr, out, shape, dtype or data.dtype, what, loc)
    if box is not None and is_empty(box):
        return masked_out(out)
    pointers = []
    fields = {"func": func, "acc": acc, "acc_op": acc_op, "scale": 1.0}
    if bias is not None:
        if not isinstance(bias, Tensor):
            value = number(bias, loc, what, "bias", tile=True)
            bias = constant_column(tr, shape[0], value, loc) if value else None
        if bias is not None:
            if bias.storage.kind != PSUM and bias.dtype not in (dt.float32, dt.float16, dt.bfloat16):
                raise NKIError(f"{what}: bias must be float32, float16 or bfloat16, not "
                               f"{dt.name(bias.dtype)}", loc)
            pointers.append(("bias", bias))
            fields["has_bias"] = True
    if isinstance(scale, Tensor):
        pointers.append(("scale", scale))
        fields["has_scale_tensor"] = True
    else:
        fields["scale"] = number(scale, loc, what, "scale", tile=True)
    if box is None:  # the usual case (see plain_inputs)
        if known is None and pointers:
            ins = plain_inputs(tr, Engine.Activation, shape, None, (data,),
                               [v for _, v in pointers])
        if ins is not None and record_plain(tr, IT.Activation, Engine.Activation, shape, ins,
                                            out, fields, loc):
            return out
        box = full_box(shape)
    record_lanewise(tr, IT.Activation, Engine.Activation, shape, box, [data], pointers, out,
                    fields, loc, what)
    return out


def read_accumulator(tr, dst: Tensor, partitions: int, loc, what="reduce_res"):
    """Copies the Scalar Engine's accumulation registers of ``partitions`` lanes into ``dst``."""
    box = [(0, partitions)]
    acc = engine_out(tr, pointer_view(dst, partitions, box, loc, "activation", what), loc,
                     "activation", what, Engine.Activation, IT.ReadActivationAccumulator)
    tr.record(IT.ReadActivationAccumulator, Engine.Activation, [], [acc], None, loc)


def tensor_reduce(tr, op, data: Tensor, axes, keepdims: bool, negate: bool, dtype, loc,
                  mask=None, out=None, what="tensor_reduce") -> Tensor:
    """Reduces ``data`` along free ``axes`` (Vector Engine)."""
    if id(op) not in REDUCE_IDS:  # (alu.reduce-op)
        raise NKIError(f"{what}: {legality.reduce_op(IT.TensorReduce, op).message}", loc)
    shape = data.shape
    rank = len(shape)
    axes = normalize_axes(axes, rank, loc, what)
    fields = {"op": op, "axis": _REDUCE_X, "negate": True if negate else False}
    if rank == 2:  # the commonest: a [P, F] tile along F (axes is [1], axis 0 being refused)
        out_shape = (shape[0], 1) if keepdims else (shape[0],)
        # Its operand walks F in one access-pattern dimension: the pattern as plain_inputs
        # makes it is the one the general path makes.
        if id(op) not in BITVEC_IDS and (mask is None or keeps_all(mask, shape)):
            made = lanewise_plain(tr, IT.TensorReduce, Engine.DVE, shape, (data,), (), out,
                                  out_shape, dtype or data.dtype, what, fields, loc)
            if made.__class__ is Tensor:
                return made
            if made is not NotImplemented:
                out = made[0]  # (made, not recorded: the general path records it)
    return tensor_reduce_general(tr, op, data, axes, keepdims, dtype, loc, mask, out, what,
                                 fields, out_shape if rank == 2 else None)


def tensor_reduce_general(tr, op, data, axes, keepdims, dtype, loc, mask, out, what, fields,
                          out_shape):
    """The rest of :func:`tensor_reduce` past its ``lanewise_plain`` call (``axes`` normalized,
    ``fields`` made, ``out_shape`` that of a [P, F] tile's result, else None; ``out`` the result
    lanewise_plain made but did not record, if it did): also called from C
    (cpp/python/trace_lane_fast.cpp, trace_nki06_lanewise.cpp)."""
    shape = data.shape
    rank = len(shape)
    if rank == 2:
        ins = plain_inputs(tr, Engine.DVE, shape, mask, (data,))
    else:
        out_shape = tuple([1 if a in axes else n for a, n in enumerate(shape)
                           if keepdims or a not in axes])
        ins = None
    box = None if ins is not None else plan(tr, shape, mask, (data,), loc)
    out = result_tile(tr, out, out_shape, dtype or data.dtype, what, loc)
    if id(op) in BITVEC_IDS:
        refuse_bitvec_dtypes(IT.TensorReduce, op, _BYPASS, (data,), out, loc, what)
    if box is None:  # the usual case (see plain_inputs)
        if record_plain(tr, IT.TensorReduce, Engine.DVE, out_shape, ins, out, fields, loc):
            return out
        box = full_box(shape)
    if is_empty(box):
        return masked_out(out)
    src = lane_view(data, shape, box, loc, what, "data")
    # Reduced axes go last (an access pattern can walk dimensions in any order); each group is
    # merged where contiguous so the reduction uses few access-pattern dimensions.
    read = tr.read(src, loc, merge=False)
    row_pair = read.pairs[0]
    kept = [a for a in range(1, rank) if a not in axes]
    by_axis = {a: (src.strides[a], src.shape[a]) for a in range(1, rank)}
    kept_pairs = merge_pairs([by_axis[a] for a in kept])
    red_pairs = merge_pairs([by_axis[a] for a in axes]) or [(1, 1)]
    acc = new_access(read.storage, read.offset, [row_pair] + kept_pairs + red_pairs)
    check_compute_operand(acc, loc, what, "data", IT.TensorReduce, Engine.DVE, False)
    fields["axis"] = _REDUCE_AXES[len(red_pairs)]
    if keepdims:
        kept_box = [box[0]] + [(0, 1) if a in axes else box[a] for a in range(1, rank)]
    else:
        kept_box = [box[0]] + [box[a] for a in kept]
    dst = out_view(out, out_shape, kept_box, loc)
    o = engine_out(tr, dst, loc, what, "destination", Engine.DVE, IT.TensorReduce)
    tr.record(IT.TensorReduce, Engine.DVE, [acc], [o], fields, loc,
              None if tuple(kept_box) == full_box(out_shape) else kept_box)
    return out


#: the ReduceAxis of a reduction over 1, 2, 3 or 4 access-pattern dimensions
_REDUCE_AXES = (None, bir.ReduceAxis.X, bir.ReduceAxis.XY, bir.ReduceAxis.XYZ,
                bir.ReduceAxis.XYZW)
_REDUCE_X = _REDUCE_AXES[1]


def normalize_axes(axes, rank: int, loc, what: str) -> list:
    if isinstance(axes, (int, np.integer)) or not hasattr(axes, "__iter__"):
        axes = [axes]  # (anything else but an int, a float say, is refused below)
    result = []
    for a in axes:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            raise NKIError(f"{what}: axis must be an integer or a tuple of integers, not {a!r}",
                           loc)
        a = int(a)
        if a < 0:
            a += rank
        if not 0 <= a < rank:
            raise NKIError(f"{what}: axis {a} is out of range for a {rank}-dimensional tile", loc)
        if a == 0:
            raise NKIError(f"{what}: cannot reduce along the partition dimension (axis 0); "
                           "reductions run along free dimensions", loc)
        if a not in result:
            result.append(a)
    if not result:
        raise NKIError(f"{what}: no axis to reduce", loc)
    return sorted(result)


def tensor_copy(tr, src: Tensor, dtype, loc, mask=None, out=None, engine=None,
                what="tensor_copy") -> Tensor:
    """A copy or cast; by default on the Scalar Engine from PSUM, else on the Vector Engine."""
    if engine is None:
        engine = Engine.Activation if src.storage.kind == PSUM else Engine.DVE
    shape = src.shape
    if mask is None or keeps_all(mask, shape):
        made = lanewise_plain(tr, _COPY, engine, shape, (src,), (), out, shape,
                              dtype or src.dtype, what, None, loc)
        if made.__class__ is Tensor:
            return made
        if made is not NotImplemented:
            out = made[0]  # (made, not recorded: the general path records it)
    return tensor_copy_general(tr, src, dtype, loc, mask, out, engine, what)


def tensor_copy_general(tr, src, dtype, loc, mask, out, engine, what):
    """The rest of :func:`tensor_copy` past its ``lanewise_plain`` call (``engine`` resolved;
    ``out`` the result lanewise_plain made but did not record, if it did): also called from C
    (cpp/python/trace_nki06_lanewise.cpp)."""
    shape = src.shape
    ins = plain_inputs(tr, engine, shape, mask, (src,))
    box = None if ins is not None else plan(tr, shape, mask, (src,), loc, True)
    out = result_tile(tr, out, shape, dtype or src.dtype, what, loc)
    if box is None:  # the usual case (see plain_inputs)
        if record_plain(tr, IT.TensorCopy, engine, shape, ins, out, None, loc):
            return out
        box = full_box(shape)
    if is_empty(box):
        return masked_out(out)
    record_lanewise(tr, IT.TensorCopy, engine, shape, box, [src], [], out, None, loc, what)
    return out


def memset(tr, dst: Tensor, value, loc, mask=None, engine=Engine.DVE, what="memset: value"):
    """Fills ``dst`` with ``value``; ``what`` names ``value`` in errors."""
    shape = dst.shape
    if mask is None:
        box = full_box(shape)
    else:
        box = mask_box(mask, shape)
        if is_empty(box):
            return None
    acc = engine_out(tr, out_view(dst, shape, box, loc), loc, "memset", "destination", engine,
                     IT.Memset)
    fields = {"mode": _MEMSET_CONST, "constant": number(value, loc, what)}
    return tr.record(IT.Memset, engine, [], [acc], fields, loc)


def dropout(tr, data: Tensor, prob, dtype, loc, mask=None, what="dropout") -> Tensor:
    """``data`` with each element zeroed with probability ``prob``, the others kept (Vector
    Engine), by draws of its generators (which ``nl.random_seed`` seeds)."""
    if isinstance(prob, Tensor):
        raise NKIError(f"{what}: a drop probability held in a tile is not modelled; the "
                       "simulator takes a number", loc)
    p = number(prob, loc, what, "the drop probability")
    if not 0.0 <= p <= 1.0:
        raise NKIError(f"{what}: the drop probability {p} is outside [0, 1]", loc)
    shape = data.shape
    box = plan(tr, shape, mask, (data,), loc)
    out = result_tile(tr, None, shape, dtype or data.dtype, "dropout", loc)
    if is_empty(box):
        return masked_out(out)
    record_lanewise(tr, IT.Dropout, Engine.DVE, shape, box, [data], [], out,
                    {"prob": p}, loc, what)
    return out


_MEMSET_CONST = bir.MemsetMode.Const
_BYPASS = Alu.bypass


def _affine_fields(expr: IndexExpr, shape: tuple, box, loc, what: str) -> dict:
    """base / channel_multiplier / pattern of an affine expression over the tile ``shape``,
    restricted to ``box``."""
    if expr.ndim > len(shape):
        raise NKIError(f"{what}: the index expression has {expr.ndim} dimensions; the tile has "
                       f"{len(shape)}", loc)
    e = expr.broadcast_to(shape)
    base = e.const + sum(c * lo for c, (lo, _) in zip(e.coefs, box))
    pattern = [(c, hi - lo) for c, (lo, hi) in zip(e.coefs[1:], box[1:])] or [(0, 1)]
    return refuse_non_int32_affine({"base": base, "channel_multiplier": e.coefs[0],
                                    "pattern": pattern}, loc, what)


def refuse_non_int32_affine(fields: dict, loc, what: str) -> dict:
    """``fields`` (an Iota's or affine select's base, channel_multiplier and pattern), once each
    term is found to be an int32: the index values are 32-bit integer math (docs/isa-semantics.md,
    Iota; the simulator's check refuses the same, here said at the kernel's line)."""
    terms = [("offset", fields["base"]), ("channel_multiplier", fields["channel_multiplier"])]
    for name, v in terms + [("pattern step", step) for step, _ in fields["pattern"]]:
        if not -2**31 <= v < 2**31:
            raise NKIError(f"{what}: {name} {v} is outside int32 (the index values are 32-bit "
                           "integer math)", loc)
    return fields


def iota(tr, expr: IndexExpr, dtype, loc, mask=None, out=None) -> Tensor:
    """The values of an index expression, computed on GpSimd."""
    if not isinstance(expr, IndexExpr):
        raise NKIError("iota takes an index expression (nl.arange / nl.mgrid arithmetic)", loc)
    if expr.ndim < 2:  # one value per partition
        expr = IndexExpr((expr.shape or (1,)) + (1,), expr.const, (expr.coefs or (0,)) + (0,))
    shape = expr.shape
    box = full_box(shape) if mask is None else mask_box(mask, shape)
    out = result_tile(tr, out, shape, dtype, "iota", loc)
    if is_empty(box):
        return masked_out(out)
    fields = _affine_fields(expr, shape, box, loc, "iota")
    acc = engine_out(tr, out_view(out, shape, box, loc), loc, "iota", "destination", Engine.Pool,
                     IT.Iota)
    tr.record(IT.Iota, Engine.Pool, [], [acc], fields, loc,
              None if tuple(box) == full_box(shape) else box)
    return out


_COMPARE = {"<": Alu.is_lt, "<=": Alu.is_le, ">": Alu.is_gt, ">=": Alu.is_ge,
            "==": Alu.is_equal, "!=": Alu.not_equal}


def affine_select(tr, pred, on_true: Tensor, fill: float, dtype, loc, mask=None,
                  out=None) -> Tensor:
    """``on_true`` where the affine predicate holds, else ``fill`` (GpSimd)."""
    if not isinstance(pred, IndexPredicate):
        raise NKIError("affine_select takes one comparison of index expressions as its predicate "
                       "(e.g. i_q - i_k >= 0)", loc)
    if on_true.storage.kind == PSUM:
        # GpSimd reads SBUF only: the value is first copied out of PSUM (as the compiler
        # lowers it)
        on_true = tensor_copy(tr, on_true, on_true.dtype, loc, mask, what="affine_select")
    shape = on_true.shape
    box = plan(tr, shape, mask, (on_true,), loc)
    out = result_tile(tr, out, shape, dtype or on_true.dtype, "affine_select", loc)
    if is_empty(box):
        return masked_out(out)
    fields = _affine_fields(pred.expr, shape, box, loc, "affine_select")
    fields["compare_op"] = _COMPARE[pred.op]
    fields["fill_value"] = number(fill, loc, "affine_select: on_false_value")
    record_lanewise(tr, IT.TensorScalarAffineSelect, Engine.Pool, shape, box, [on_true], [],
                    out, fields, loc, "affine_select")
    return out


def select(tr, pred: Tensor, on_true, on_false, dtype, loc, mask=None, out=None,
           what="where") -> Tensor:
    """``on_true if pred != 0 else on_false`` (Vector Engine). ``on_false`` may be a number."""
    tiles = [x for x in (pred, on_true, on_false) if isinstance(x, Tensor)]
    shape = broadcast_shape([t.shape for t in tiles], loc)
    if not isinstance(on_true, Tensor):
        on_true = constant_tile(tr, shape, number(on_true, loc, what, "x", tile=True), dt.float32,
                                loc)
    dtype = dtype or (dt.promote(on_true.dtype, on_false.dtype) if isinstance(on_false, Tensor)
                      else on_true.dtype)
    box = plan(tr, shape, mask, tiles, loc, True)
    out = result_tile(tr, out, shape, dtype, what, loc)
    if is_empty(box):
        return masked_out(out)
    if isinstance(on_false, Tensor):
        record_lanewise(tr, IT.Select, Engine.DVE, shape, box, [pred, on_true, on_false], [],
                        out, None, loc, what)
    else:
        record_lanewise(tr, IT.SelectReduce, Engine.DVE, shape, box, [pred, on_true], [], out,
                        {"on_false_value": number(on_false, loc, what, "y", tile=True)}, loc, what)
    return out


def constant_tile(tr, shape, value, dtype, loc) -> Tensor:
    """A tile of ``shape`` filled with ``value``."""
    t = tr.new_result(SBUF, dtype, shape, "const", loc)
    memset(tr, t, value, loc)
    return t


def select_reduce(tr, dst: Tensor, pred: Tensor, on_true: Tensor, on_false, reduce_res,
                  reduce_op, loc, mask=None) -> None:
    shape = on_true.shape
    for name, t in (("predicate", pred), ("dst", dst)):
        if t.shape[0] != shape[0] or math.prod(t.shape[1:]) != math.prod(shape[1:]):
            raise NKIError(f"select_reduce: {name} has shape {list(t.shape)}; on_true has "
                           f"{list(shape)}", loc)
    if not dt.is_float(on_true.dtype) and on_true.dtype.itemsize == 4:
        raise NKIError(f"select_reduce: on_true cannot be {dt.name(on_true.dtype)}", loc)
    if pred.dtype not in (dt.int8, dt.uint8, dt.int16, dt.uint16, dt.bool_):
        raise NKIError(f"select_reduce: the predicate must be an 8- or 16-bit integer tile, not "
                       f"{dt.name(pred.dtype)}", loc)
    box = plan(tr, shape, mask, (pred, on_true), loc)
    if is_empty(box):
        return
    fields = {"reduce_op": reduce_op, "on_false_value": 0.0}
    tiles = [pred, on_true]
    if isinstance(on_false, Tensor):
        tiles.append(on_false)  # a [P, 1] column, repeated along the lane
    else:
        fields["on_false_value"] = number(on_false, loc, "select_reduce: on_false", tile=True)
    extra = (("reduce_res", reduce_res),) if reduce_res is not None else ()
    record_lanewise(tr, IT.SelectReduce, Engine.DVE, shape, box, tiles, [], dst, fields, loc,
                    "select_reduce", outs_extra=extra)


def refuse_later_generation(tr, opcode, engine, loc, what: str):
    """Raises the rule ``instruction.generation`` when ``opcode`` on ``engine`` is a later
    NeuronCore generation's than the trace's."""
    why = legality.generation(opcode, engine, arch=tr.arch)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)


def range_select(tr, data: Tensor, bound0: Tensor, bound1: Tensor, comp0, comp1, range_start,
                 fill, reduce_res, dtype, loc, mask=None) -> Tensor:
    refuse_later_generation(tr, IT.RangeSelect, Engine.DVE, loc, "range_select")
    shape = data.shape
    box = plan(tr, shape, mask, (data,), loc)
    out = result_tile(tr, None, shape, dtype or data.dtype, "range_select", loc)
    if is_empty(box):
        return masked_out(out)
    fields = {"comp_op0": comp0, "comp_op1": comp1, "range_start": int(range_start),
              "fill_value": number(fill, loc, "range_select: on_false_value")}
    extra = (("reduce_res", reduce_res),) if reduce_res is not None else ()
    record_lanewise(tr, IT.RangeSelect, Engine.DVE, shape, box, [data],
                    [("bound0", bound0), ("bound1", bound1)], out, fields, loc,
                    "range_select", outs_extra=extra)
    return out


def tensor_tensor_scan(tr, data0: Tensor, data1: Tensor, initial, op0, op1, dtype, loc,
                       mask=None) -> Tensor:
    refuse_illegal_alu(IT.TensorTensorScan, Engine.DVE, op0, op1, loc, "tensor_tensor_scan")
    shape = broadcast_shape([data0.shape, data1.shape], loc)
    box = plan(tr, shape, mask, (data0, data1), loc)
    if box is not full_box(shape) and box[1:] != full_box(shape)[1:]:
        raise NKIError("tensor_tensor_scan: a mask may limit partitions only (the scan runs "
                       "along the whole free dimension)", loc)
    out = result_tile(tr, None, shape, dtype or dt.promote(data0.dtype, data1.dtype),
                      "tensor_tensor_scan", loc)
    if is_empty(box):
        return masked_out(out)
    fields = {"op0": op0, "op1": op1, "initial": 0.0}
    pointers = []
    if isinstance(initial, Tensor):
        pointers.append(("initial", initial))
    else:
        fields["initial"] = number(initial, loc, "tensor_tensor_scan: initial", tile=True)
    record_lanewise(tr, IT.TensorTensorScan, Engine.DVE, shape, box, [data0, data1], pointers,
                    out, fields, loc, "tensor_tensor_scan")
    return out


#: The dtypes nc_find_index8 writes its indices in ("uint16 or uint32" on both dialects' pages).
FIND_INDEX8_DTYPES = (dt.uint16, dt.uint32)


def find_index8_dtype(d, loc, what: str):
    """``d``, the dtype of nc_find_index8's indices, if it is one of :data:`FIND_INDEX8_DTYPES`;
    else an error naming ``what``."""
    if d not in FIND_INDEX8_DTYPES:
        raise NKIError(f"{what} must be uint16 or uint32, not {dt.name(d)}", loc)
    return d


def per_lane(tr, opcode, data: Tensor, out_free: int, dtype, loc, mask, what: str,
             extra_in: Tensor | None = None) -> Tensor:
    """Vector Engine instructions with a fixed number of results per lane (bn_stats, max8,
    ...); ``extra_in``: a second input of the same partitions (nc_find_index8's values)."""
    shape = data.shape
    engine = _DVE
    if opcode in _SIZE_RULES:
        st = data.storage
        # (refuse_illegal_size's remembered verdict, without its frame: a kernel's loop asks
        # about one tile shape again and again; anything else is its call)
        if _SIZE_VERDICTS.get((opcode, st.kind, st.dtype, shape, tr.arch), _UNKNOWN) is not None:
            refuse_illegal_size(tr, opcode, data, loc, what)
    # (keeps_all, without its frame: the masks of these instructions are usually new ones)
    if extra_in is None and (mask is None or mask_box(mask, shape) is _FULL_BOXES.get(shape)):
        made = lanewise_plain(tr, opcode, engine, shape, (data,), (), None, (shape[0], out_free),
                              dtype, what, None, loc)
        if made.__class__ is Tensor:
            return made
        if made is not NotImplemented:  # (made, not recorded: the general path records it)
            return _per_lane_general(tr, opcode, data, out_free, dtype, loc, mask, what,
                                     extra_in, made[0])
    return _per_lane_general(tr, opcode, data, out_free, dtype, loc, mask, what, extra_in, None)


def _per_lane_general(tr, opcode, data: Tensor, out_free: int, dtype, loc, mask, what: str,
                      extra_in, out) -> Tensor:
    """:func:`per_lane` past lanewise_plain (``out``: the result it made, if any)."""
    shape = data.shape
    engine = Engine.DVE
    ins = plain_inputs(tr, engine, shape, mask, (data,)) if extra_in is None else None
    box = None if ins is not None else plan(tr, shape, mask, (data,), loc)
    out = result_tile(tr, out, (shape[0], out_free), dtype, what, loc)
    if box is None:  # the usual case (see plain_inputs)
        o = tr.write_plain(out, engine)
        if o is not None:
            tr.record(opcode, engine, ins, [o], None, loc)
            return out
        box = full_box(shape)
    if is_empty(box):
        return masked_out(out)
    ins = [engine_in(tr, lane_view(data, shape, box, loc, what, "data"), loc, what, "data",
                     engine, opcode)]
    if extra_in is not None:
        ins.append(engine_in(tr, extra_in.restrict(0, *box[0]), loc, what, "values", engine,
                             opcode))
    o = engine_out(tr, out.restrict(0, *box[0]), loc, what, "destination", engine, opcode)
    tr.record(opcode, engine, ins, [o], None, loc,
              None if box[0] == (0, shape[0]) else [box[0], (0, out_free)])
    return out


_SIZE_VERDICTS: dict = {}  # (opcode, kind, dtype, shape, arch) -> the rule's verdict
_SIZE_RULES = {IT.BNStats: legality.bn_stats, IT.Max: legality.max8_family,
               IT.MaxIndex: legality.max8_family, IT.MatchReplace: legality.max8_family}


def refuse_illegal_size(tr, opcode, data: Tensor, loc, what: str):
    """Raises the legality rule on the elements per partition of bn_stats and the max8 family
    (``bn-stats.size``, ``max8.size``) that ``data`` breaks; other opcodes have none."""
    rule = _SIZE_RULES.get(opcode)
    if rule is None:
        return
    st = data.storage
    # (the rules are functions of these facts; a kernel's loop asks about one tile shape again
    # and again)
    key = (opcode, st.kind, st.dtype, data.shape, tr.arch)
    why = _SIZE_VERDICTS.get(key, _UNKNOWN)
    if why is _UNKNOWN:
        facts = legal_operand(st.kind, st.dtype, data.shape[0], math.prod(data.shape[1:]))
        why = _SIZE_VERDICTS[key] = rule(facts, arch=tr.arch) if opcode is IT.BNStats else \
            rule(opcode, facts, arch=tr.arch)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)


def matmul(tr, stationary: Tensor, moving: Tensor, loc, what="nc_matmul", fields=None,
           is_transpose=False, out_dtype=None, start=True, out_kind=PSUM) -> Tensor:
    """``stationary.T @ moving`` on the PE array into a new fp32 PSUM tile. In transpose mode
    the result is ``stationary.T`` exactly (``moving`` is the identity) in the input dtype.
    ``out_kind``: the memory of the destination the result will be redirected to (checked)."""
    if fields is None and not is_transpose and out_dtype is None and start is True and \
            out_kind == PSUM:  # (the commonest matmul, in C)
        out = matmul_plain(tr, stationary, moving, loc)
        if out is not NotImplemented:
            return out
    return matmul_general(tr, stationary, moving, loc, what, fields, is_transpose, out_dtype, start,
                          out_kind)


def matmul_general(tr, stationary: Tensor, moving: Tensor, loc, what, fields, is_transpose,
                   out_dtype, start, out_kind) -> Tensor:
    """:func:`matmul` past its plain case (callers that tried ``matmul_plain`` themselves come
    here)."""
    s_shape, m_shape = stationary.shape, moving.shape
    k = s_shape[0]
    m = s_shape[1] if len(s_shape) == 2 else math.prod(s_shape[1:])
    n = m_shape[1] if len(m_shape) == 2 else math.prod(m_shape[1:])
    s_dt = stationary.storage.dtype
    out_dtype = (out_dtype or s_dt) if is_transpose else dt.float32
    refuse_illegal_matmul(tr, stationary, moving.storage.kind, moving.storage.dtype, m_shape[0], n,
                          out_dtype, is_transpose, start, fields, loc, what, out_kind=out_kind)
    if is_transpose:
        out = tr.new_result(PSUM, out_dtype, (m, k), "transpose", loc)
    else:
        out = tr.new_result(PSUM, dt.float32, (m, n), "matmul", loc)
    ins = [engine_in(tr, stationary, loc, what, "stationary", _PE, IT.Matmult),
           engine_in(tr, moving, loc, what, "moving", _PE, IT.Matmult)]
    o = tr.write_fresh(out)
    f = {"start_tensor_calc": start, "stop_tensor_calc": True, "is_transpose": is_transpose}
    if fields is not None:
        f.update(fields)
    tr.record(IT.Matmult, _PE, ins, [o], f, loc)
    return out


def matmul_double_row(tr, stationary: Tensor, moving: Tensor, loc, what="nc_matmul") -> Tensor:
    """``nc_matmul(..., perf_mode="double_row_gen3")`` (NeuronCore-v3, fp8): stationary
    [K, 2, M] and moving [K, 2, N], contracted over K and the pair of rows, as the PE's double
    row mode does in the time of one K-row pass. Recorded as two matmuls flagged DoubleRow (the
    hardware model times each at half a pass), one per row, the second joining the first's
    accumulation group; an assignment or ``+=`` moves both."""
    for name, t in (("stationary", stationary), ("moving", moving)):
        if len(t.shape) != 3 or t.shape[1] != 2:
            raise NKIError(f"{what}: double_row_gen3 takes a [K, 2, F] {name} tile; it is "
                           f"{list(t.shape)}", loc)
    # (the generation and the fp8 operands: the rule matmul.perf-mode, checked by matmul)
    fields = {"perf_mode": bir.PerfMode.DoubleRow}
    out = matmul(tr, stationary[:, 0, :], moving[:, 0, :], loc, what, fields)
    first = tr.ops[-1]
    ins = [engine_in(tr, stationary[:, 1, :], loc, what, "stationary", _PE, IT.Matmult),
           engine_in(tr, moving[:, 1, :], loc, what, "moving", _PE, IT.Matmult)]
    o = tr.write_fresh(out)  # (the pair writes the result once)
    f = {"start_tensor_calc": True, "stop_tensor_calc": True, "is_transpose": False}
    f.update(fields)
    second = tr.record(IT.Matmult, _PE, ins, [o], f, loc)
    core = tr.core
    core.record.matmul_joins.append((first.index, second.index))
    core.double_rows[second.index] = first
    return out


def whole_or_nothing(mask, loc, what: str) -> bool:
    """Whether an instruction that takes no partial tiles runs under ``mask``: None or a mask
    of loop indices alone (a bool by now) that keeps everything, not one that keeps nothing;
    masks that cut the tile are refused (index the operands instead)."""
    if mask is None or mask is True:
        return True
    if mask is False or isinstance(mask, np.bool_):
        return bool(mask)
    raise NKIError(f"{what}: masks that keep part of a tile are not supported; index the "
                   "operand tiles instead", loc)


def masked_matmul(tr, stationary: Tensor, moving: Tensor, loc, transposed: bool) -> Tensor:
    """The PSUM result a masked-out matmul would have made (``masked_out``: see there)."""
    m = stationary.shape[1] if transposed else stationary.shape[0]
    out = tr.new_result(PSUM, dt.float32, (m,) + tuple(moving.shape[1:2]), "matmul", loc)
    return masked_out(out)


def legal_operand(kind: str, dtype, partitions: int, free: int) -> legality.Operand:
    """An operand as the legality rules see it (a tracer's operands are not placed yet)."""
    return legality.Operand(_LEGAL_SPACES.get(kind, legality.Space.DRAM), dt.BIR_DTYPES[dtype], partitions,
                            free)


# The legality rules' verdicts (a Violation or None) on plain matmuls, by the facts they are a
# function of: a kernel's loops ask the rules the same question for matmul after matmul.
_MATMUL_VERDICTS: dict = {}
_UNKNOWN = object()

_core.nki.configure_matmul(Tensor, plain_tile_access, _MATMUL_VERDICTS, IT.Matmult, _PE, PSUM,
                           dt.float32, _core.nki.write_plain, NKIError)
#: ``matmul_plain(tr, stationary, moving, loc)``: :func:`matmul` of two plain 2-D tiles whose
#: verdict ``_MATMUL_VERDICTS`` holds as legal, recorded (its PSUM result); NotImplemented,
#: having changed nothing, for any other. In C (``cpp/python/trace_matmul.cpp``, which states the
#: conditions): a kernel's inner loops record matmul after matmul.
matmul_plain = _core.nki.matmul_plain
#: ``matmul_into(tr, stationary, moving, dst, accumulate, loc, what)``: that matmul recorded
#: writing the PSUM view ``dst`` (of the result's shape) directly, joining (``accumulate`` True)
#: or starting (False) its accumulation group (None: as NKI 0.6's ``_accumulates`` answers where
#: its answer is plain): what ``matmul_plain`` then ``tr.place_matmul(result, dst, accumulate)``
#: leave, without the result tile and its redirect. True; NotImplemented, having changed nothing,
#: where those two are needed (or ``accumulate`` finds nothing written, the caller's refusal). In
#: C (``cpp/python/trace_matmul.cpp``).
matmul_into = _core.nki.matmul_into


def refuse_illegal_matmul(tr, stationary: Tensor, moving_kind: str, moving_dtype, moving_partitions: int,
                          n: int, out_dtype, is_transpose: bool, start: bool, fields, loc, what: str,
                          out_kind: str = PSUM, perf_mode=None):
    """Raises the legality rule (:func:`neuronxsim.bir.legality.matmul`) a matmul of
    ``stationary`` with a moving tile of ``n`` elements per partition into ``out_kind`` breaks,
    with the kernel's source line; ``fields`` may carry the PE tiling (``tile_size``,
    ``tile_position``) and the ``perf_mode``."""
    s_shape = stationary.shape
    k = s_shape[0]
    m = s_shape[1] if len(s_shape) == 2 else math.prod(s_shape[1:])
    s_st = stationary.storage
    if not fields and perf_mode is None:  # (the commonest matmul: its verdict is likely known)
        key = (s_st.kind, s_st.dtype, k, m, moving_kind, moving_dtype, moving_partitions, n,
               out_dtype, is_transpose, start, out_kind, tr.arch)
        why = _MATMUL_VERDICTS.get(key, _UNKNOWN)
        if why is _UNKNOWN:
            why = _MATMUL_VERDICTS[key] = legality.matmul(
                legal_operand(s_st.kind, s_st.dtype, k, m),
                legal_operand(moving_kind, moving_dtype, moving_partitions, n),
                legal_operand(out_kind, out_dtype, m, k if is_transpose else n),
                arch=tr.arch, is_transpose=is_transpose, start=start)
    else:
        fields = fields or {}
        perf_mode = fields.get("perf_mode", perf_mode)
        why = legality.matmul(
            legal_operand(s_st.kind, s_st.dtype, k, m),
            legal_operand(moving_kind, moving_dtype, moving_partitions, n),
            legal_operand(out_kind, out_dtype, m, k if is_transpose else n),
            arch=tr.arch, is_transpose=is_transpose, start=start,
            tile_size=fields.get("tile_size", ()), tile_position=fields.get("tile_position", ()),
            **({} if perf_mode is None else {"perf_mode": perf_mode}))
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)


def identity_tile(tr: Tracer, size: int, dtype, loc) -> Tensor:
    """The [size, size] identity a PE transpose streams as its moving tile (built once per
    core with iota and a compare)."""
    key = (size, dtype)
    cached = tr.core.cache.get(key)
    if cached is not None:
        return cached
    diff = iota(tr, IndexExpr((size, size), 0, (1, -1)), dt.int32, loc)
    ident = tensor_scalar(tr, diff, Alu.is_equal, 0.0, False, None, None, False, dtype, loc,
                          what="identity")
    tr.core.cache[key] = ident
    return ident


def transpose_pe(tr, data: Tensor, dtype, loc, what="nc_transpose", out_kind=PSUM) -> Tensor:
    """PE transpose of an SBUF tile into PSUM: a matmul in transpose mode against the identity
    (checked before the identity is built)."""
    p = data.shape[0]
    st = data.storage
    refuse_illegal_matmul(tr, data, SBUF, st.dtype, p, p, dtype or st.dtype, True, True, None, loc, what,
                          out_kind=out_kind)
    ident = identity_tile(tr, p, data.dtype, loc)
    return matmul(tr, data, ident, loc, what, is_transpose=True, out_dtype=dtype, out_kind=out_kind)


def transpose_dve(tr, data: Tensor, dtype, loc, what="nc_transpose") -> Tensor:
    p = data.shape[0]
    f = math.prod(data.shape[1:])
    why = legality.dve_transpose(legal_operand(data.storage.kind, data.storage.dtype, p, f),
                                 legal_operand(SBUF, dtype or data.dtype, f, p), arch=tr.arch)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)
    out = tr.new_result(SBUF, dtype or data.dtype, (f, p), "transpose", loc)
    ins = [engine_in(tr, data, loc, what, "data", Engine.DVE, IT.StreamTranspose)]
    o = engine_out(tr, out, loc, what, "result", Engine.DVE, IT.StreamTranspose)
    tr.record(IT.StreamTranspose, Engine.DVE, ins, [o], None, loc)
    return out


def dma(tr, opcode, dst: Tensor, src: Tensor, loc, mask=None, rmw=None, what="dma",
        fresh=False, fields=None):
    """A DMA transfer ``dst <- src`` (elements paired in order, cast when dtypes differ);
    ``fresh``: ``dst`` is a tile just created for the result; ``fields``: more BIR fields of
    the transfer (NKI 0.6's descriptor-generation mode)."""
    if mask is None and rmw is None and fields is None:  # (the commonest transfer, in C)
        op = dma_plain(tr, opcode, dst, src, loc, fresh)
        if op is not NotImplemented:
            return op
    return dma_general(tr, opcode, dst, src, loc, mask, rmw, what, fresh, fields)


def dma_general(tr, opcode, dst: Tensor, src: Tensor, loc, mask, rmw, what, fresh, fields):
    """:func:`dma` past its plain case (callers that tried ``dma_plain`` themselves come here)."""
    shape = dst.shape
    s_st, d_st = src.storage, dst.storage
    if s_st.kind == PSUM or d_st.kind == PSUM or (s_st.on_chip and src.shape[0] > NUM_PARTITIONS) \
            or (d_st.on_chip and shape[0] > NUM_PARTITIONS):
        if s_st.kind == PSUM or d_st.kind == PSUM:
            refuse_illegal_dma(tr, opcode, src, dst, loc, what)  # (dma.psum)
        for name, t in (("source", src), ("destination", dst)):
            st = t.storage
            if st.on_chip and t.shape[0] > NUM_PARTITIONS:
                raise NKIError(f"{what}: the {name} tile spans {t.shape[0]} partitions; a tile "
                               f"has at most {NUM_PARTITIONS}", loc)
    if src.shape != shape and math.prod(src.shape) != math.prod(shape):
        refuse_illegal_dma(tr, opcode, src, dst, loc, what)  # (dma.element-count)
    box = None
    if mask is not None:
        if src.shape != shape:
            raise NKIError(f"{what}: a masked transfer needs source and destination of the same "
                           f"shape ({list(src.shape)} vs {list(shape)})", loc)
        box = mask_box(mask, shape)
        if box is full_box(shape):
            box = None  # the mask keeps everything: an unmasked transfer
        elif is_empty(box):
            if fresh:
                masked_out(dst)
            return None
        elif box.__class__ is BoxPieces:  # one transfer per piece
            for piece in box.boxes:
                op = _dma_box(tr, opcode, dst, src, loc, piece, rmw, fresh, fields)
            return op
    return _dma_box(tr, opcode, dst, src, loc, box, rmw, fresh, fields)


def _dma_box(tr, opcode, dst: Tensor, src: Tensor, loc, box, rmw, fresh, fields):
    """Records :func:`dma_general`'s transfer of the elements in ``box`` (None: all of them)."""
    s_st, d_st = src.storage, dst.storage
    if box is not None:
        for axis, (lo, hi) in enumerate(box):
            src = src.restrict(axis, lo, hi)
            dst = dst.restrict(axis, lo, hi)
    s = s_st.state
    if s_st.on_chip:  # (engine_in's plain case: a tile the DMA reads as it is)
        src_acc = plain_tile_access(src, s_st, _DMA) if s.write_count and s.forward is None and \
            s.pending_zero is None and not src.checks else None
    else:
        src_acc = _hbm_access(src, s_st) if s.write_count or s_st.kind == INPUT else None
    ins = [src_acc or tr.read(src, loc)]
    if fresh and box is None:
        outs = [tr.write_fresh(dst)]
    elif d_st.on_chip:
        outs = [tr.write_plain(dst, _DMA) or tr.write(dst, loc)]
    else:
        dst_acc = _hbm_access(dst, d_st) if d_st.kind != INPUT else None
        if dst_acc is not None:  # what tr.write does for it (see there)
            d_st.state.zero_init = False
            d_st.state.write_count += 1
            outs = [dst_acc]
        else:
            outs = [tr.write(dst, loc)]
    queue = next_dma_queue(tr)
    if rmw is None and fields is None:
        fields = _QUEUE_FIELDS[queue]
    else:
        fields = dict(fields or (), queue=queue)
        if rmw is not None:
            fields["dst_rmw_op"] = rmw
    return tr.record(opcode, _DMA, ins, outs, fields, loc, box)


def dma_operand(view: Tensor) -> legality.Operand:
    """A transfer's side as the legality rules see it: its rows (the outermost dimension) and
    the elements of each."""
    st = view.storage
    shape = view.shape
    return legal_operand(st.kind, st.dtype, shape[0] if shape else 1, math.prod(shape[1:]))


def refuse_illegal_dma(tr, opcode, src: Tensor, dst: Tensor, loc, what: str,
                       index: Tensor | None = None, mode=bir.DmaMode.Copy, rmw=None,
                       indirect_dim: int = -1):
    """Raises the legality rule (:func:`neuronxsim.bir.legality.dma`) the transfer
    ``dst <- src`` of ``opcode`` breaks (``index``: a gather's or scatter's indices, or a
    Dynamic transfer's run-time row offset; ``rmw``: its read-modify-write operation), with the
    kernel's source line."""
    why = legality.dma(dma_operand(src), dma_operand(dst), arch=tr.arch, opcode=opcode,
                       index=None if index is None else dma_operand(index), mode=mode,
                       dst_rmw_op=_BYPASS if rmw is None else rmw, indirect_dim=indirect_dim,
                       src_2d=sum(1 for n in src.shape if n > 1) <= 2)
    if why is not None:
        raise NKIError(f"{what}: {why.message}", loc)


def next_dma_queue(tr) -> int:
    """The queue of the next transfer: queues round-robin, so independent transfers overlap."""
    core = tr.core
    queue = core.dma_queue
    core.dma_queue = (queue + 1) % DMA_QUEUES
    return queue


# The fields of a plain transfer on each DMA queue, shared (recorded fields do not change).
_QUEUE_FIELDS = [{"queue": q} for q in range(DMA_QUEUES)]

_core.nki.configure_dma_plain(Access, plain_tile_access, Tracer.write_plain, _DMA, PSUM, INPUT,
                              NUM_PARTITIONS, DMA_QUEUES, _QUEUE_FIELDS)
#: ``dma_plain(tr, opcode, dst, src, loc, fresh)``: :func:`dma`'s steps for an unmasked transfer
#: whose sides need none of the tracer's general reads and writes (same shapes, no PSUM, source
#: written and not forwarded, ...), recorded; NotImplemented, having changed nothing, for any
#: other. In C (``cpp/python/trace_dma.cpp``, which states the conditions): about half of a
#: kernel's instructions are such transfers.
dma_plain = _core.nki.dma_plain


def dma_transpose(tr, opcode, dst: Tensor, src: Tensor, loc, what: str, fields=None):
    """A DMA transfer that lands the 2-D ``src`` ``[a, b]`` transposed in ``dst`` ``[b, a]``
    (the DMA engine's transpose mode); ``fields``: more BIR fields (the descriptor-generation
    mode, :func:`dge_fields`)."""
    refuse_illegal_dma(tr, opcode, src, dst, loc, what, mode=bir.DmaMode.Transpose)
    if len(src.shape) != 2:  # (this API takes the [a, b] source itself, not one with unit dims)
        raise NKIError(f"{what}: the source must be 2-D; it is {list(src.shape)}", loc)
    a, b = src.shape
    if tuple(dst.shape) != (b, a):
        raise NKIError(f"{what}: the destination has shape {list(dst.shape)}; the transposed "
                       f"source is {[b, a]}", loc)
    ins = [tr.read(src, loc)]
    outs = [tr.write(dst, loc)]
    record = {"queue": next_dma_queue(tr), "mode": bir.DmaMode.Transpose}
    if fields:
        record.update(fields)
    return tr.record(opcode, _DMA, ins, outs, record, loc)


def dge_fields(tr, hwdge: bool, swdge: bool, trigger, src_dtype, dst_dtype, loc, what: str,
               opcode=IT.DMACopy) -> dict:
    """The BIR fields of a DMA's descriptor-generation mode (both dialects' ``dge_mode``):
    hardware DGE (triggered by the engine ``trigger``; the rule dma.hwdge says which generations
    and engines have it, and that it moves raw bytes, so no cast) or software DGE; neither: the
    default descriptors (no field)."""
    if hwdge:
        why = legality.dma_trigger(arch=tr.arch, dge_type=bir.DgeType.HWDGE, engine=trigger,
                                   src=dt.BIR_DTYPES[src_dtype], dst=dt.BIR_DTYPES[dst_dtype],
                                   opcode=opcode)
        if why is not None:
            raise NKIError(f"{what}: {why.message}", loc)
        return {"dge_type": bir.DgeType.HWDGE}
    return {"dge_type": bir.DgeType.SWDGE} if swdge else {}


def _picked_rows(tile: Tensor, picked, mask, loc, what: str, kind: str, side: str):
    """The tile of an indirect DMA (a ``kind``, its ``side``) checked against the rows
    ``picked`` (an :class:`~neuronxsim.nki.tensor.IndirectView`), and it and the index limited
    to the rows (partitions) ``mask`` keeps: ``(tile, index)``, or None where it keeps none."""
    shape = tuple(picked.shape)
    if tuple(tile.shape) != shape:
        raise NKIError(f"{what}: the {side} has shape {list(tile.shape)}; the picked rows "
                       f"{list(shape)}", loc)
    index = picked.index
    if mask is not None:
        box = mask_box(mask, shape)
        if is_empty(box):
            return None
        if tuple(box[1:]) != full_box(shape)[1:]:
            raise NKIError(f"{what}: a mask of a {kind} may keep rows (partitions) only", loc)
        lo, hi = box[0]
        tile, index = tile.restrict(0, lo, hi), index.restrict(0, lo, hi)
    return tile, index


def dma_gather(tr, dst: Tensor, src, loc, what: str, mask=None, oob_is_err=True, fields=None):
    """An indirect DMA: row ``r`` of the tile ``dst`` gets row ``src.index[r]`` of
    ``src.rows`` (an :class:`~neuronxsim.nki.tensor.IndirectView`); an index outside the rows
    is an error when the kernel runs (``oob_is_err``) or skips that row. A mask may keep some of
    the rows (partitions); ``fields``: more BIR fields (the descriptor-generation mode)."""
    kept = _picked_rows(dst, src, mask, loc, what, "gather", "destination")
    if kept is None:
        return masked_out(dst)
    dst, index = kept
    ins = [tr.read(src.rows, loc, merge=False), tr.read(index, loc)]
    outs = [tr.write(dst, loc)]
    return tr.record(IT.DMACopy, _DMA, ins, outs,
                     {"queue": next_dma_queue(tr), "indirect_dim": 0, "oob_is_err": oob_is_err,
                      **(fields or {})}, loc)


def dma_scatter(tr, dst, src: Tensor, loc, what: str, mask=None, oob_is_err=True, rmw=None,
                fields=None):
    """The indirect DMA the other way (IndirectSave): row ``r`` of the tile ``src`` lands in row
    ``dst.index[r]`` of ``dst.rows`` (an :class:`~neuronxsim.nki.tensor.IndirectView`), or is
    added there (``rmw`` add); an index outside the rows is an error when the kernel runs
    (``oob_is_err``) or skips that row. A mask may keep some of the rows (partitions)."""
    kept = _picked_rows(src, dst, mask, loc, what, "scatter", "source")
    if kept is None:
        return None
    src, index = kept
    rows = dst.rows
    refuse_illegal_dma(tr, IT.IndirectSave, src, rows, loc, what, index=index, rmw=rmw,
                       indirect_dim=0)
    if rmw is not None:
        tr.read(rows, loc, merge=False)  # (an accumulating scatter reads the rows it adds to)
    ins = [tr.read(src, loc), tr.read(index, loc)]
    outs = [tr.write(rows, loc)]
    extra = {} if rmw is None else {"dst_rmw_op": rmw}
    return tr.record(IT.IndirectSave, _DMA, ins, outs,
                     {"queue": next_dma_queue(tr), "indirect_dim": 0, "oob_is_err": oob_is_err,
                      **extra, **(fields or {})}, loc)


def partition_reduce(tr, op, data: Tensor, dtype, loc, what="tensor_partition_reduce") -> Tensor:
    """``op`` folded across the partitions of ``data`` ``[P, F...]``: a ``[1, F...]`` tile.
    (GpSimd does it in one instruction; recorded through the PE array, whose float32 results
    hold the same values: ``add`` as a matmul of a column of ones with ``data``; ``max`` and
    ``min`` as PE transposes of 128-column slices, a free-axis reduction and a transpose
    back.)"""
    shape = data.shape
    p, free = shape[0], math.prod(shape[1:])
    if data.dtype not in MATMUL_DTYPE_SET:
        raise NKIError(f"{what}: {dt.name(data.dtype)} tiles are not modelled (the simulator "
                       "reduces across partitions through the PE array, which takes "
                       "float8/bfloat16/float16/float32)", loc)
    if op not in (Alu.add, Alu.max, Alu.min):
        raise NKIError(f"{what}: op {op.name} is not modelled; add, max and min are", loc)
    flat = data if len(shape) == 2 else tensor_copy(tr, data, data.dtype, loc, what=what)
    if len(shape) != 2:
        flat = new_view(flat.storage, flat.offset, (p, free), (flat.storage.layout.row, 1), ())
    out = tr.new_result(SBUF, dtype or data.dtype, (1, free), what, loc)
    if op is Alu.add:
        ones = constant_tile(tr, (p, 1), 1.0, flat.dtype, loc)
        for lo in range(0, free, MATMUL_MAX_MOVING):
            hi = min(free, lo + MATMUL_MAX_MOVING)
            ps = matmul(tr, ones, flat[:, lo:hi], loc, what)
            tensor_copy(tr, ps, out.dtype, loc, out=out[:, lo:hi], what=what)
    else:
        for lo in range(0, free, NUM_PARTITIONS):
            hi = min(free, lo + NUM_PARTITIONS)
            tp = transpose_pe(tr, flat[:, lo:hi], flat.dtype, loc, what)  # [hi - lo, P]
            col = tensor_reduce(tr, op, tp, [1], True, False, dt.float32, loc, what=what)
            row = transpose_pe(tr, col, dt.float32, loc, what)  # [1, hi - lo]
            tensor_copy(tr, row, out.dtype, loc, out=out[:, lo:hi], what=what)
    if len(shape) == 2:
        return out
    return new_view(out.storage, 0, (1,) + tuple(shape[1:]),
                    (out.storage.layout.row,) + tuple(
                        math.prod(shape[a + 1:]) for a in range(1, len(shape))), ())


def _hbm_access(view: Tensor, st) -> Access | None:
    """The access of a 2-D view of an HBM tensor without index checks (as ``tr.access`` makes
    it); None for anything else."""
    if st.on_chip or len(view.shape) != 2 or view.checks or st.state.forward is not None or \
            st.state.pending_zero is not None:
        return None
    (n0, n1), (s0, s1) = view.shape, view.strides
    return new_access(st, view.offset, [(s0, n0), (s1, n1) if n1 > 1 else (1, 1)])


def copy_predicated(tr, src: Tensor, predicate: Tensor, dst: Tensor, loc, mask=None):
    """``dst = src`` where ``predicate`` is nonzero; other elements of ``dst`` keep their values
    (which the instruction therefore reads: ``dst`` must have been written)."""
    shape = dst.shape
    for name, t in (("src", src), ("predicate", predicate)):
        if t.shape[0] != shape[0] or math.prod(t.shape[1:]) != math.prod(shape[1:]):
            raise NKIError(f"tensor_copy_predicated: {name} has shape {list(t.shape)}; dst has "
                           f"{list(shape)}", loc)
    box = plan(tr, shape, mask, (dst,), loc)
    if is_empty(box):
        return
    tr.read(out_view(dst, shape, box, loc), loc)  # (the kept elements must be defined)
    ins = [_same_shape(src, shape, loc), _same_shape(predicate, shape, loc)]
    record_lanewise(tr, IT.CopyPredicated, Engine.DVE, shape, box, ins, [], dst, None, loc,
                    "tensor_copy_predicated")


def _same_shape(t: Tensor, shape: tuple, loc) -> Tensor:
    """``t`` (of ``shape``'s partitions and elements) viewed in ``shape``, when it is a
    contiguous row per partition (else as it is)."""
    if t.shape == shape or len(t.shape) != 2 or t.strides[1] != 1:
        return t
    if t.checks:  # (the view in ``shape`` carries none)
        t.check_bounds(loc)
    strides = [t.strides[0]] + [math.prod(shape[a + 1:]) for a in range(1, len(shape))]
    return new_view(t.storage, t.offset, shape, tuple(strides), ())


def stream_shuffle(tr, src: Tensor, dst: Tensor, shuffle_mask, loc, mask=None):
    """Cross-partition moves within each 32-partition quadrant (Vector Engine): output
    partition ``i`` takes input partition ``shuffle_mask[i]`` (255: unmodified)."""
    masks = list(shuffle_mask)
    if len(masks) != 32 or any(not isinstance(m, (int, np.integer)) or not
                               (0 <= m < 32 or m == 255) for m in masks):
        raise NKIError("nc_stream_shuffle: shuffle_mask is 32 integers, each a partition "
                       "0-31 of the quadrant or 255", loc)
    if src.dtype != dst.dtype:
        raise NKIError(f"nc_stream_shuffle: dst ({dt.name(dst.dtype)}) must have src's dtype "
                       f"({dt.name(src.dtype)})", loc)
    if math.prod(src.shape[1:]) != math.prod(dst.shape[1:]):
        raise NKIError(f"nc_stream_shuffle: src {list(src.shape)} and dst {list(dst.shape)} "
                       "must have the same elements per partition", loc)
    if not whole_or_nothing(mask, loc, "nc_stream_shuffle"):
        return
    if 255 in masks:  # (lanes left unmodified keep what dst held)
        tr.read(dst, loc)
    ins = [engine_in(tr, src, loc, "nc_stream_shuffle", "src", Engine.DVE, IT.StreamShuffle)]
    outs = [engine_out(tr, dst, loc, "nc_stream_shuffle", "dst", Engine.DVE, IT.StreamShuffle)]
    tr.record(IT.StreamShuffle, Engine.DVE, ins, outs,
              {"shuffle_mask": [int(m) for m in masks]}, loc)


def device_print(tr, prefix: str, x: Tensor, loc):
    acc = tr.read(x, loc)
    tr.record(IT.DevicePrint, Engine.DVE, [acc], [], {"prefix": str(prefix)}, loc)
