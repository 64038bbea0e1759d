"""``nki.isa`` (``nisa``) of NKI 0.6: one hardware instruction per call, destination first.

Every instruction writes its ``dst`` (a view of an SBUF, PSUM or, for DMA, HBM tensor) and
returns an :class:`NkiInstruction`. Operands pair element by element within each partition:
``dst`` and the tile inputs have the same partition count and the same number of elements per
partition (their free shapes may differ, as the hardware's access patterns may).

The checks, the engines' rules and the BIR each call records come from the shared builders
(``neuronxsim.nki.instructions``), so both dialects emit the same instructions. What a
generation lacks is refused naming it (``activate2``, ``exponential``, ``nc_matmul_mx``,
``quantize_mx``, ``rand2`` are NeuronCore-v4; ``range_select``, ``core_barrier``, hardware DGE
need NeuronCore-v3). What the simulator does not model is refused saying so. A few
instructions the simulator has no node for are recorded as the instructions that compute the
same values (``scalar_tensor_tensor``, ``tensor_scalar_reduce``, ``tensor_scalar_cumulative``,
``dma_compute``); their numerics are exact and their time is that of the sequence (each says so).
"""

from __future__ import annotations

import enum
import math

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import legality, target
from neuronxsim.nki import fused_instructions as _fused
from neuronxsim.nki import gpsimd_instructions as _gpsimd
from neuronxsim.nki import instructions as _ins
from neuronxsim.nki import opcodes as _opcodes
from neuronxsim.nki import tracer as _tracer
from neuronxsim.nki.errors import NKIError, caller_location
from neuronxsim.nki.opcodes import BITVEC, BITVEC_IDS, COMMUTATIVE, REDUCE_IDS, Act, Alu, act_func, alu_op
from neuronxsim.nki.tensor import HBM, PSUM, SBUF, Tensor, new_view, same_view
from neuronxsim.nki.tracer import IT, Engine, current
from neuronxsim.starfish.lib import _core

from . import dtypes as dt
from ._api import api
from .language import _as, _v4_only, dma_record
from .language import equal as _equal, maximum as _maximum
from .registers import (VirtualRegister, register_alloc, register_load,  # noqa: F401
                        register_move, register_store)
from .tensor import NKIObject, NkiTensor, _int, check_written, on_chip_view, same_elements


# ---- enums and constants ----

class engine(enum.Enum):
    """Neuron Device engines."""
    tensor = 1
    vector = 5
    scalar = 2
    gpsimd = 3
    dma = 4
    sync = 6
    unknown = 0


tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown

_HW = {engine.tensor: Engine.PE, engine.vector: Engine.DVE, engine.scalar: Engine.Activation,
       engine.gpsimd: Engine.Pool, engine.dma: Engine.DMA, engine.sync: Engine.SP}


class reduce_cmd(enum.Enum):
    """Engine register reduce commands."""
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4

    __hash__ = object.__hash__  # (as nl's MemoryRegion: _reduce_regs looks one up per call)


_ACC = {reduce_cmd.idle: bir.AccumCmd.Idle, reduce_cmd.reset: bir.AccumCmd.Zero,
        reduce_cmd.reduce: bir.AccumCmd.Accumulate,
        reduce_cmd.reset_reduce: bir.AccumCmd.ZeroAccumulate}


class dge_mode(enum.Enum):
    """Descriptor Generation Engine mode."""
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(enum.Enum):
    """Out-of-bounds access mode."""
    error = 0
    skip = 1


class matmul_perf_mode(enum.Enum):
    """Performance mode for matmul."""
    none = "none"
    double_row = "double_row"


class nc_version(enum.Enum):
    """NeuronCore version."""
    gen2 = 2
    gen3 = 3
    gen4 = 4


class dma_engine(enum.Enum):
    """DMA transfer engine."""
    dma = 1
    gpsimd_dma = 2


# (the classes under other names: parameters of the same names hide them inside functions)
_Engine, _ReduceCmd, _OobMode, _DgeMode = engine, reduce_cmd, oob_mode, dge_mode


class NkiValidationError(Exception):
    """Raised when hardware constraints are violated."""


class NkiInstruction(NKIObject):
    """The instructions one ``nki.isa`` call recorded (``handle``: their list; the calls make
    theirs without this ``__init__``: see neuronxsim.nki06._api.api)."""

    def __init__(self, handle):
        self.handle = handle

    def depends_on(self, *producers):
        """Explicit scheduling dependencies are not modelled."""
        raise NKIError("NkiInstruction.depends_on: explicit scheduling dependencies (semaphore "
                       "waits) are not modelled; the simulator orders instructions by their data "
                       "hazards", caller_location())


@api
def get_nc_version():
    """The nc_version of the target (``gen2`` for trn1, ``gen3`` for trn2): its NeuronCore-vN."""
    return nc_version(target.config(current().arch).neuron_core_version)


@api
def get_nc_sub_version():
    """The silicon revision within the generation (0: the first)."""
    current()
    return 0


def instruction(fn):
    """A public instruction: it returns the NkiInstruction of what it recorded."""
    return api(fn, instruction=NkiInstruction)


# ---- operands ----

def _enum(value, cls, what: str, loc, name: str | None = None):
    """``value``, a member of the enum ``cls``; errors name the argument ``what``, or
    ``"what: name"`` when ``name`` is given (made only for an error: this runs on every call)."""
    if not isinstance(value, cls):
        if name is not None:
            what = f"{what}: {name}"
        members = ", ".join(f"nisa.{cls.__name__}.{m.name}" for m in cls)
        raise NKIError(f"{what} must be one of {members}, not {value!r} (raw values were removed "
                       "in NKI 0.3)", loc)
    return value


def _engine(value, allowed: tuple, default, loc, what: str):
    if value is _ENGINE_UNKNOWN:  # (the commonest, without _enum's message)
        return default
    value = _enum(value, engine, what, loc, "engine")
    if value is engine.unknown:
        return default
    hw = _HW.get(value)
    if hw not in allowed:
        names = ", ".join(f"nisa.engine.{e.name}" for e, h in _HW.items() if h in allowed)
        raise NKIError(f"{what}: engine must be {names} or nisa.engine.unknown, not "
                       f"nisa.engine.{value.name}", loc)
    return hw


def _begin(name, dst, what: str) -> tuple:
    """(tracer, kernel line, what, dst's view) of the instruction ``what`` that called this."""
    loc = caller_location(1)  # (the instruction's caller: the kernel; api adds no frame)
    if name is not None:  # (_name's check: most calls name nothing, and need no frame for it)
        _name(name, loc, what)
    return current(), loc, what, _tile(dst, loc, what, "dst")


def _name(name, loc, what):
    """``name=``: the instruction's label for NKI's scheduling APIs (neuronxsim names
    instructions by their kernel line). (Callers test ``name is not None`` first: most calls
    name nothing, and need no frame for it.)"""
    if name is not None and not isinstance(name, str):
        raise NKIError(f"{what}: name must be a string", loc)


_tile = on_chip_view  # (inputs are checked as written by _paired and _scalar_or_column)


def _scalar_or_column(x, parts: int, loc, what: str, name: str | None = None):
    """A number, or the view of a [P, 1] tile of ``parts`` partitions; errors name the operand
    ``what``, or ``"what: name"`` when ``name`` is given (made only when needed)."""
    c = x.__class__
    if c is float or c is int:  # (the commonest)
        return float(x)
    if name is not None:
        what = f"{what}: {name}"
    if isinstance(x, NkiTensor):
        v = check_written(_tile(x, loc, what), loc, what)
        if v.shape[0] != parts or math.prod(v.shape[1:]) != 1:
            raise NKIError(f"{what} must be a number or a [{parts}, 1] tile; it is "
                           f"{list(v.shape)}", loc)
        return v
    if isinstance(x, (bool, np.bool_)) or not dt.is_number(x):
        raise NKIError(f"{what} must be a number or a [{parts}, 1] tile, not "
                       f"{type(x).__name__}", loc)
    return float(x)


def _number(x, loc, what: str) -> float:
    """A number argument (an int, a float or a NumPy number; not a bool), as a float."""
    if isinstance(x, (bool, np.bool_)) or not dt.is_number(x):
        raise NKIError(f"{what} must be a number, not {x!r}", loc)
    return float(x)


def _integers(values, loc, what: str) -> list:
    """A list or tuple of integer arguments (ints or NumPy integers; not bools, not floats)."""
    if not isinstance(values, (list, tuple)):
        raise NKIError(f"{what} must be a list or tuple of integers, not {values!r}", loc)
    return [_int(v, what, loc) for v in values]


def _paired(dst: Tensor, views: list, loc, what: str) -> list:
    """The input views reshaped to ``dst``'s shape, after checking that each has ``dst``'s
    partitions and elements per partition, and was written."""
    shape = dst.shape
    out = []
    for name, v in views:
        check_written(v, loc, what, name)
        if v.shape == shape:  # (the commonest: nothing to check or reshape)
            out.append(v)
            continue
        p, free = shape[0], math.prod(shape[1:])
        if v.shape[0] != p or math.prod(v.shape[1:]) != free:
            raise NKIError(f"{what}: {name} has shape {list(v.shape)} ({v.shape[0]} partitions of "
                           f"{math.prod(v.shape[1:])}); dst has {list(dst.shape)} ({p} of {free}): "
                           "operands pair element by element", loc)
        out.append(_as(dst.shape, v, loc))
    return out


_alu = alu_op  # (op, what, loc): the ALU operator of an nl function, np.add or an Alu member


# (members of the pybind11 enums read on every call of the instructions below, as module globals:
# reading one through its class costs a pybind11 attribute lookup)
_ABS, _RSQRT, _POW, _PRELU, _TT = Alu.abs, Alu.rsqrt, Alu.pow, Act.Prelu, IT.TensorTensor
_DVE, _POOL = Engine.DVE, Engine.Pool
_DVE_POOL, _DVE_ACT_POOL = (Engine.DVE, Engine.Pool), (Engine.DVE, Engine.Activation, Engine.Pool)


def _unary(alu) -> bool:
    """Whether the ALU operator ``alu`` ignores its second operand. (alu_op answers Alu's own
    members, so identity is their equality; Alu's == is pybind11's, some 40 times as slow.)"""
    return alu is _ABS or alu is _RSQRT


def _one_psum_input(opcode, views, loc, what):
    """The rule operand.psum-inputs on the two tensor inputs ``opcode`` pairs (a number: none)."""
    psum = [v for v in views if isinstance(v, Tensor) and v.storage.kind == PSUM]
    if len(psum) > 1:
        _ins.refuse_psum_inputs(current(), opcode, psum, loc, what)


def _full(shape):
    return _ins.full_box(shape)


def _record(tr, opcode, engine_, ins: list, outs: list, fields, loc, what: str):
    """Records one instruction over on-chip views (checked as the engine's operands)."""
    in_accs = [_ins.engine_in(tr, v, loc, what, name, engine_, opcode) for name, v in ins]
    out_accs = [_ins.engine_out(tr, v, loc, what, name, engine_, opcode) for name, v in outs]
    return tr.record(opcode, engine_, in_accs, out_accs, fields, loc)


# ---- DMA ----

@instruction
def dma_copy(dst, src, priority=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown,
             engine=engine.unknown, name=None):
    """``dst = src`` by DMA (HBM or SBUF, either way; cast through fp32 when dtypes differ).
    ``src.ap(vector_offset=idx)`` / ``src.vector_select(0, idx)`` gathers rows."""
    loc = caller_location()
    tr = current()
    what = "nisa.dma_copy"
    # (the checks of the defaults and of two NkiTensors, without a frame each: every call)
    if name is not None:
        _name(name, loc, what)
    if dst.__class__ is not NkiTensor or src.__class__ is not NkiTensor:
        for arg, t in (("dst", dst), ("src", src)):
            if not isinstance(t, NkiTensor):
                raise NKIError(f"{what}: {arg} must be a tensor, not {type(t).__name__}", loc)
    if priority is not None:
        _priority(priority, loc, what)
    skip = oob_mode is not _OOB_ERROR and \
        _enum(oob_mode, _OobMode, what, loc, "oob_mode") is _OobMode.skip
    if dge_mode is _DGE_UNKNOWN and engine is _ENGINE_UNKNOWN:  # (the defaults: no fields)
        fields = {}
    else:
        fields = _dge_fields(dge_mode, engine, dst, src, loc, what,
                             IT.DMACopy if dst._indirect is None else IT.IndirectSave)
    if dst._indirect is not None:
        if src._indirect is not None:
            raise NKIError(f"{what}: src and dst cannot both be indirect", loc)
        ind = dst._indirect
        if ind.kind != "vector":
            _offset_dma(tr, dst, src, ind, True, not skip, fields, loc, what)
            return
        _scatter(tr, dst, src, ind, not skip, fields, loc, what)
        return
    ind = src._indirect
    if ind is None:
        if skip:
            raise NKIError(f"{what}: oob_mode=skip applies to indirect (runtime-indexed) "
                           "accesses only", loc)
        d, s = dst._view, src._view
        if fields or _dma_plain(tr, _DMA_COPY, d, s, loc, False) is NotImplemented:
            # (_ins.dma, its plain case tried here without its frame: every transfer comes here)
            _ins.dma_general(tr, _DMA_COPY, d, s, loc, None, None, what, False, fields or None)
        return
    if ind.kind != "vector":
        _offset_dma(tr, src, dst, ind, False, not skip, fields, loc, what)
        return
    _gather(tr, dst, src, ind, not skip, fields, loc, what)


def _offset_dma(tr, indexed: NkiTensor, other: NkiTensor, ind, to_indexed: bool, oob_is_err,
                fields, loc, what):
    """A transfer whose ``indexed`` side starts a run-time number of rows further: the value of
    the one-element tensor of ``.ap(scalar_offset=...)`` (a DMA of mode Dynamic; the rows it may
    reach are its footprint). ``to_indexed``: the indexed side is the destination."""
    if isinstance(ind.index, VirtualRegister):
        ind.index.known(f"{what}: scalar_offset")  # (a register loaded from memory: refused)
    view = indexed._view
    offset = ind.index._view_of(f"{what}: scalar_offset", loc)
    o = other._view_of(what, loc)
    # (dma.indirect-dim, dma.dynamic-offset, dma.row-size)
    src, dst = (o, view) if to_indexed else (view, o)
    _ins.refuse_illegal_dma(tr, IT.IndirectSave if to_indexed else IT.DMACopy, src, dst, loc, what,
                            index=offset, mode=bir.DmaMode.Dynamic, indirect_dim=ind.dim)
    if view.strides[0] != ind.row_step:
        raise NKIError(f"{what}: a run-time scalar_offset is modelled on the outermost dimension "
                       "of a pattern that walks it row by row (indirect_dim=0)", loc)
    if view.shape[0] != o.shape[0]:
        raise NKIError(f"{what}: src and dst must have the same rows "
                       f"({list(view.shape)} vs {list(o.shape)})", loc)
    table = _indexed_rows(view, ind)
    one = offset if len(offset.shape) == 2 else new_view(offset.storage, offset.offset, (1, 1),
                                                         (1, 1), ())
    fields = dict(fields, mode=bir.DmaMode.Dynamic, indirect_dim=0, oob_is_err=oob_is_err)
    if to_indexed:
        dma_record(tr, [tr.read(o, loc), tr.read(one, loc)], [tr.write(table, loc)], loc, fields,
                   opcode=IT.IndirectSave)
    else:
        dma_record(tr, [tr.read(table, loc), tr.read(one, loc)], [tr.write(o, loc)], loc, fields)


def _priority(priority, loc, what):
    if priority is not None:
        arch = current().arch
        raise NKIError(f"{what}: priority is a NeuronCore-v4 (trn3) feature; {arch} "
                       f"({dt.CORE_NAMES.get(arch, arch)}) does not have it", loc)


_DGE_UNKNOWN, _ENGINE_UNKNOWN, _OOB_ERROR = dge_mode.unknown, engine.unknown, oob_mode.error
_dma_plain, _matmul_plain, _DMA_COPY = _ins.dma_plain, _ins.matmul_plain, IT.DMACopy


def _dge_fields(mode, eng, dst, src, loc, what, opcode=IT.DMACopy) -> dict:
    mode = _enum(mode, dge_mode, what, loc, "dge_mode")
    eng = _enum(eng, engine, what, loc, "engine")
    if mode is not dge_mode.hwdge and eng is not engine.unknown:
        raise NKIError(f"{what}: engine applies to dge_mode=nisa.dge_mode.hwdge only", loc)
    # (hardware DGE's trigger engine: unknown means the SP queue's)
    return _ins.dge_fields(current(), mode is dge_mode.hwdge, mode is dge_mode.swdge,
                           Engine.SP if eng is engine.unknown else _HW[eng], src.dtype, dst.dtype,
                           loc, what, opcode)


def _gather(tr, dst: NkiTensor, src: NkiTensor, ind, oob_is_err: bool, fields, loc, what):
    """Row ``r`` of ``dst`` reads row ``index[r]`` of the source's indirect dimension."""
    d = dst._view_of(what, loc)
    index = ind.index._view_of(f"{what}: the indices", loc)
    sv = src._view
    # (dma.index, dma.row-size)
    _ins.refuse_illegal_dma(tr, IT.DMACopy, sv, d, loc, what, index=index,
                            rmw=fields.get("dst_rmw_op"), indirect_dim=0)
    table = _indexed_rows(sv, ind)  # every row the index may name, inside the source tensor
    if "dst_rmw_op" in fields:
        tr.read(d, loc)  # (an accumulating gather reads the rows it adds to)
    ins = [tr.read(table, loc), tr.read(index, loc)]
    outs = [tr.write(d, loc)]
    dma_record(tr, ins, outs, loc, dict(fields, indirect_dim=0, oob_is_err=oob_is_err))


def _indexed_rows(view, ind) -> Tensor:
    """The rows an index may name: the whole indirect dimension of ``view``'s tensor that stays
    inside it, one row per index value."""
    rows = ind.rows
    span = view.offset + sum(s * (n - 1) for s, n in zip(view.strides[1:], view.shape[1:]))
    total = math.prod(view.storage.shape)
    rows = min(rows, (total - 1 - span) // ind.row_step + 1) if ind.row_step else rows
    return new_view(view.storage, view.offset, (rows,) + view.shape[1:],
                    (ind.row_step,) + view.strides[1:], ())


def _scatter(tr, dst: NkiTensor, src: NkiTensor, ind, oob_is_err: bool, fields, loc, what,
             rmw=None):
    """Row ``r`` of ``src`` lands in row ``index[r]`` of the destination's indirect dimension
    (IndirectSave); with ``rmw`` add, it adds there."""
    s = src._view_of(what, loc)
    index = ind.index._view_of(f"{what}: the indices", loc)
    d = dst._view
    _ins.refuse_illegal_dma(tr, IT.IndirectSave, s, d, loc, what, index=index, rmw=rmw,
                            indirect_dim=0)  # (dma.index, dma.row-size)
    table = _indexed_rows(d, ind)
    if rmw is not None:
        tr.read(table, loc)  # (an accumulating scatter reads the rows it adds to)
    ins = [tr.read(s, loc), tr.read(index, loc)]
    outs = [tr.write(table, loc)]
    extra = {"dst_rmw_op": rmw} if rmw is not None else {}
    dma_record(tr, ins, outs, loc, dict(fields, indirect_dim=0, oob_is_err=oob_is_err, **extra),
               opcode=IT.IndirectSave)


@instruction
def dma_transpose(dst, src, axes=None, priority=None, dge_mode=dge_mode.unknown,
                  oob_mode=oob_mode.error, name=None):
    """A 2-D transpose by DMA: ``dst`` [b, a] (SBUF) from ``src`` [a, b] (HBM or SBUF)."""
    loc = caller_location()
    tr = current()
    what = "nisa.dma_transpose"
    if name is not None:
        _name(name, loc, what)
    _priority(priority, loc, what)
    d = _tile(dst, loc, what, "dst")
    if d.storage.kind != SBUF:
        raise NKIError(f"{what}: dst must be in SBUF", loc)
    if not isinstance(src, NkiTensor):
        raise NKIError(f"{what}: src must be a tensor", loc)
    s = src._view_of(what, loc)
    if axes not in (None, (1, 0), [1, 0]):
        raise NKIError(f"{what}: axes {axes} (3-D and 4-D transposes) are not modelled; the "
                       "simulator's DMA transposes 2-D tensors (axes=(1, 0))", loc)
    _ins.refuse_illegal_dma(tr, IT.DMACopy, s, d, loc, what, mode=bir.DmaMode.Transpose)
    if len(s.shape) != 2:  # (axes=(1, 0) names the two dims of an [a, b] src, unit ones too)
        raise NKIError(f"{what}: src must be 2-D for axes=(1, 0); it is {list(s.shape)}", loc)
    if d.shape != (s.shape[1], s.shape[0]):
        raise NKIError(f"{what}: dst has shape {list(d.shape)}; the transposed src is "
                       f"{[s.shape[1], s.shape[0]]}", loc)
    if d.storage.dtype != s.storage.dtype:
        raise NKIError(f"{what}: src.dtype ({dt.name(s.storage.dtype)}) must equal dst.dtype "
                       f"({dt.name(d.storage.dtype)})", loc)
    if _enum(oob_mode, _OobMode, what, loc, "oob_mode") is not _OobMode.error:
        raise NKIError(f"{what}: oob_mode=skip applies to indirect sources only", loc)
    # A direct transpose is lowered to hardware DGE's transpose, whose limits its docs list.
    mode = _enum(dge_mode, _DgeMode, what, loc, "dge_mode")
    if mode not in (_DgeMode.unknown, _DgeMode.hwdge):
        raise NKIError(f"{what}: a direct transpose takes dge_mode unknown or hwdge, not "
                       f"{mode.name}", loc)
    cfg = target.config(tr.arch)
    rows, columns = cfg.dma_hwdge_transpose_rows, cfg.dma_hwdge_transpose_column_multiple
    size = cfg.dma_hwdge_transpose_dtype_bytes
    if mode is _DgeMode.hwdge and (s.shape[0] != rows or s.shape[-1] % columns or
                                   s.storage.dtype.itemsize != size):
        raise NKIError(f"{what}: a hardware DGE transpose takes a src of {rows} rows, a multiple "
                       f"of {columns} columns and a {size}-byte dtype; it is {list(s.shape)} "
                       f"{dt.name(s.storage.dtype)}", loc)
    fields = _dge_fields(mode, engine.unknown, dst, src, loc, what)
    dma_record(tr, [tr.read(s, loc)], [tr.write(d, loc)], loc,
               dict(fields, mode=bir.DmaMode.Transpose))


@instruction
def dma_compute(dst, srcs, reduce_op, scales=None, unique_indices=True,
                oob_mode=oob_mode.error, name=None):
    """``dst = srcs[0] + srcs[1] + ...`` by DMA. With ``vector_offset`` on one side, one
    read-modify-write DMA: a scatter (dst in HBM indirect, ``srcs`` = [dst, data]) or a gather
    (``srcs`` = [dst, HBM data indirect]). Otherwise, where ``dst`` is one of the sources, one
    ``+=`` transfer per other source; else a copy of the first source and ``+=`` transfers of the
    others (dma_compute's own cost is not published: these are timed as those transfers); through
    an fp32 scratch tensor where those would round more than once or overwrite a source first."""
    loc = caller_location()
    tr = current()
    what = "nisa.dma_compute"
    if name is not None:
        _name(name, loc, what)
    op = _alu(reduce_op, f"{what}: reduce_op", loc)
    if not isinstance(srcs, (list, tuple)) or not 1 <= len(srcs) <= 16:
        raise NKIError(f"{what}: srcs must be a list of 1 to 16 tensors", loc)
    if scales is not None and any(float(s) != 1.0 for s in scales):
        raise NKIError(f"{what}: every scale must be 1.0", loc)
    if scales is not None and len(scales) != len(srcs):
        raise NKIError(f"{what}: {len(scales)} scales for {len(srcs)} sources", loc)
    if unique_indices is not True:
        raise NKIError(f"{what}: unique_indices must be True", loc)
    skip = _enum(oob_mode, _OobMode, what, loc, "oob_mode") is _OobMode.skip
    if not isinstance(dst, NkiTensor):
        raise NKIError(f"{what}: dst must be a tensor", loc)
    for i, s in enumerate(srcs):
        if not isinstance(s, NkiTensor):
            raise NKIError(f"{what}: srcs[{i}] must be a tensor", loc)
    if op is not Alu.add:  # (the transfers add into dst: the rule dma.rmw-op)
        _ins.refuse_illegal_dma(tr, IT.DMACopy, srcs[-1]._view, dst._view, loc, what, rmw=op)
    indirect = [s for s in srcs if s._indirect is not None]
    if dst._indirect is not None or indirect:
        _indirect_rmw(tr, dst, list(srcs), indirect, not skip, loc, what)
        return
    if skip:
        raise NKIError(f"{what}: oob_mode=skip applies to indirect (vector_offset) accesses only",
                       loc)
    d = dst._view_of(what, loc)
    views = [s._view_of(f"{what}: srcs[{i}]", loc) for i, s in enumerate(srcs)]
    accumulator = [v for v in views if same_view(v, d)]
    others = [v for v in views if not same_view(v, d)]
    if len(accumulator) > 1:
        raise NKIError(f"{what}: dst appears twice among srcs", loc)
    # Each transfer rounds its sum to dst's dtype and reads its source when it runs; the
    # instruction sums in fp32 and casts once, having read every source. Where the transfers would
    # differ (more than one rounding into a dst that is not fp32, or a source that is dst's own
    # bytes under another view, which an earlier transfer would overwrite), they sum into an fp32
    # HBM scratch tensor, copied into dst at the end.
    first_cast = not accumulator and others[0].storage.dtype != d.storage.dtype
    roundings = len(others) - (0 if accumulator else 1) + first_cast
    if any(v.storage is d.storage for v in others) or \
            (d.storage.dtype != np.float32 and roundings > 1):
        scratch = tr.new_storage(HBM, np.dtype(np.float32), d.shape, what, loc).full_view()
        _ins.dma(tr, IT.DMACopy, scratch, views[0], loc, what=what)
        for v in views[1:]:
            _ins.dma(tr, IT.DMACopy, scratch, v, loc, rmw=Alu.add, what=what)
        _ins.dma(tr, IT.DMACopy, d, scratch, loc, what=what)
        return
    if not accumulator:
        _ins.dma(tr, IT.DMACopy, d, others.pop(0), loc, what=what)
    for v in others:
        _ins.dma(tr, IT.DMACopy, d, v, loc, rmw=Alu.add, what=what)


def _indirect_rmw(tr, dst: NkiTensor, srcs: list, indirect: list, oob_is_err: bool, loc, what):
    """dma_compute's read-modify-write modes: exactly two sources, one of them ``dst``."""
    if len(srcs) != 2 or sum(1 for s in srcs if same_elements(s, dst)) != 1:
        raise NKIError(f"{what}: with vector_offset, srcs holds dst and one data tensor", loc)
    (data,) = [s for s in srcs if not same_elements(s, dst)]
    if dst._indirect is not None:  # scatter: dst(HBM)[indices] += data(SBUF)
        if dst._indirect.kind != "vector" or data._indirect is not None or not data._on_chip:
            raise NKIError(f"{what}: a scatter read-modify-write adds an SBUF tile into HBM rows "
                           "chosen by vector_offset", loc)
        _scatter(tr, dst, data, dst._indirect, oob_is_err, {}, loc, what, rmw=Alu.add)
        return
    ind = data._indirect  # gather: dst(SBUF) += data(HBM)[indices]
    if ind is None or ind.kind != "vector" or data._on_chip or not dst._on_chip:
        raise NKIError(f"{what}: a gather read-modify-write adds HBM rows chosen by vector_offset "
                       "into an SBUF dst", loc)
    _gather(tr, dst, data, ind, oob_is_err, {"dst_rmw_op": Alu.add}, loc, what)


# ---- copies and fills ----

@instruction
def tensor_copy(dst, src, engine=engine.unknown, name=None):
    """``dst = src`` on the Vector, Scalar or GpSimd Engine (bit-exact when dtypes match)."""
    tr, loc, what, d = _begin(name, dst, "nisa.tensor_copy")
    s = _tile(src, loc, what, "src")
    hw = _engine(engine, (Engine.DVE, Engine.Activation, Engine.Pool), None, loc, what)
    if hw is Engine.Activation and not target.config(tr.arch).act_tensor_copy:
        raise NKIError(f"{what}: the Scalar Engine of {dt.CORE_NAMES[tr.arch]} ({tr.arch}) has no "
                       "tensor_copy; use nisa.activation(op=nl.copy)", loc)
    (s,) = _paired(d, [("src", s)], loc, what)
    _ins.tensor_copy(tr, s, d.storage.dtype, loc, out=d, engine=hw, what=what)


@instruction
def memset(dst, value, engine=engine.unknown, name=None):
    """Fills ``dst`` with ``value`` (an int for integer tensors)."""
    tr, loc, what, d = _begin(name, dst, "nisa.memset")
    hw = _engine(engine, (Engine.DVE, Engine.Pool), Engine.DVE, loc, what)
    if isinstance(value, (bool, np.bool_)) or not dt.is_number(value):
        raise NKIError(f"{what}: value must be a number, not {type(value).__name__}", loc)
    if dt.is_int(d.storage.dtype) and not float(value).is_integer():
        raise NKIError(f"{what}: value {value} must match the {dt.name(d.storage.dtype)} "
                       "destination (pass an integer)", loc)
    _ins.memset(tr, d, value, loc, engine=hw)


@instruction
def tensor_copy_predicated(dst, src, predicate, reverse_pred=False, name=None):
    """``dst = src`` where ``predicate`` is non-zero (zero with ``reverse_pred``); other elements
    of ``dst`` keep their values (Vector Engine)."""
    tr, loc, what, d = _begin(name, dst, "nisa.tensor_copy_predicated")
    p = _tile(predicate, loc, what, "predicate")
    if p.storage.dtype not in (dt.uint8, dt.uint16, dt.uint32):
        raise NKIError(f"{what}: predicate must be uint8, uint16 or uint32, not "
                       f"{dt.name(p.storage.dtype)}", loc)
    if isinstance(src, NkiTensor):
        s = _tile(src, loc, what, "src")
        if s.storage.dtype != d.storage.dtype:
            raise NKIError(f"{what}: src and dst must share a dtype", loc)
    elif dt.is_number(src) and not isinstance(src, (bool, np.bool_)):
        s = _ins.constant_tile(tr, d.shape, float(src), d.storage.dtype, loc)
    else:
        raise NKIError(f"{what}: src must be a tile or a number, not {type(src).__name__}", loc)
    s, p = _paired(d, [("src", s), ("predicate", p)], loc, what)
    _one_psum_input(IT.CopyPredicated, [s, p], loc, what)
    if reverse_pred:
        p = _ins.tensor_scalar(tr, p, Alu.is_equal, 0.0, False, None, None, False, dt.uint8, loc,
                               what=what)
    tr.read(d, loc)  # dst keeps its unselected elements: they must have been written
    _record(tr, IT.CopyPredicated, Engine.DVE, [("src", s), ("predicate", p)], [("dst", d)],
            None, loc, what)


# ---- the Tensor Engine ----

_PERF_NONE = matmul_perf_mode.none


@instruction
def nc_matmul(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, accumulate=None, tile_position=(), tile_size=(),
              perf_mode=matmul_perf_mode.none, name=None):
    """``dst (=, +=) stationary.T @ moving`` on the Tensor Engine: stationary [K, M], moving
    [K, N] in SBUF, dst [M, N] fp32 in PSUM. ``accumulate``: True adds to the accumulation group
    open on ``dst``, False starts one, None (default) adds when one is open there (or ``dst``
    holds nl.zeros) and starts one otherwise."""
    tr, loc, what, d = _begin(name, dst, "nisa.nc_matmul")
    st = _tile(stationary, loc, what, "stationary")
    mv = _tile(moving, loc, what, "moving")
    fields = None
    if tile_position or tile_size:  # (their form and fit: the rule matmul.pe-tile)
        fields = {"tile_position": _integers(tile_position, loc, f"{what}: tile_position"),
                  "tile_size": _integers(tile_size, loc, f"{what}: tile_size")}
    if perf_mode is not _PERF_NONE and \
            _enum(perf_mode, matmul_perf_mode, what, loc, "perf_mode") is not _PERF_NONE:
        mv_st = mv.storage
        _ins.refuse_illegal_matmul(tr, st, mv_st.kind, mv_st.dtype, mv.shape[0], math.prod(mv.shape[1:]),
                                   mv_st.dtype if is_transpose else dt.float32, is_transpose, True, fields,
                                   loc, what, out_kind=d.storage.kind,
                                   perf_mode=bir.PerfMode.DoubleRow)
        raise NKIError(f"{what}: perf_mode=double_row is not modelled: the simulator computes "
                       "Matmult as a plain matmul", loc)
    if is_stationary_onezero or is_moving_onezero:  # (rare: no tuples built on every call)
        for hint, t, arg in ((is_stationary_onezero, st, "is_stationary_onezero"),
                             (is_moving_onezero, mv, "is_moving_onezero")):
            if hint and t.storage.dtype == dt.float32:
                raise NKIError(f"{what}: {arg}=True on a float32 operand (a 2x faster PE mode) is "
                               "not modelled", loc)
    if is_transpose:
        value = _ins.matmul(tr, st, mv, loc, what, fields, is_transpose=True,
                            out_dtype=d.storage.dtype, start=not accumulate, out_kind=d.storage.kind)
        _assign_result(tr, value, d, loc, what)
        return
    # (_ins.matmul, its plain case tried here without its frame: every matmul comes here)
    out_kind = d.storage.kind
    value = _matmul_plain(tr, st, mv, loc) if fields is None and out_kind == PSUM else \
        NotImplemented
    if value is NotImplemented:
        value = _ins.matmul_general(tr, st, mv, loc, what, fields, False, None, True, out_kind)
    _place_matmul(tr, value, d, accumulate, loc, what)


def _place_matmul(tr, value: Tensor, d: Tensor, accumulate, loc, what: str):
    """nc_matmul's last step: the matmul just recorded (its result ``value``) writes ``dst``'s
    view ``d``, adding to its accumulation group or starting one. (Also the last step of its C
    path, cpp/python/trace_nki06_fast.cpp.)"""
    if d.shape != value.shape:
        if d.shape[0] != value.shape[0] or math.prod(d.shape[1:]) != value.shape[1]:
            raise NKIError(f"{what}: dst has shape {list(d.shape)}; stationary.T @ moving is "
                           f"{list(value.shape)}", loc)
        d = _as(value.shape, d, loc)
    if accumulate is None:
        accumulate = _accumulates(tr, d, loc, what)
    elif accumulate and d.storage.state.write_count == 0:
        raise NKIError(f"{what}: accumulate=True onto PSUM tensor {d.storage.describe()}, which "
                       "nothing wrote: there is no accumulation group to add to (pass "
                       "accumulate=False or None to start one)", loc)
    try:
        tr.place_matmul(value, d, bool(accumulate))
    except NKIError as e:
        raise NKIError(f"{what}: {e.reason}", loc) from None


# The commonest dma_copy and nc_matmul calls (plain NkiTensors) are recorded in C, without the
# definitions' frames (cpp/python/trace_nki06_fast.cpp says which): anything else comes here.
_core.nki.configure_nki06_fast(NkiTensor, _dma_plain, _ins.dma_general, _DMA_COPY, _matmul_plain,
                               _place_matmul, PSUM, _ins.matmul_into)
dma_copy.fast = _core.nki.dma_copy06_fast
nc_matmul.fast = _core.nki.nc_matmul06_fast


def _accumulates(tr, d: Tensor, loc, what: str) -> bool:
    """``accumulate=None``: whether the matmul adds to what ``d`` holds."""
    st = d.storage
    s = st.state
    if s.zero_init:
        return True
    if s.write_count == 0:
        return False
    groups = s.groups.open if s.groups is not None else None
    if not groups:
        raise NKIError(f"{what}: accumulate=None onto PSUM tensor {st.describe()}, which a "
                       "non-matmul instruction wrote: accumulating onto it is undefined on "
                       "NeuronCore-v2/v3 (pass accumulate=False to overwrite)", loc)
    region = _tracer._extent(tr.access(d, loc, merge=False))
    for key, op in groups.items():
        ext = _tracer._extent(tr.core.first_output(op))
        if ext == region:
            return True
        if _tracer._overlaps(ext, region):
            raise NKIError(f"{what}: this PSUM region partly overlaps an open accumulation group "
                           "of another shape; accumulating into overlapping regions is not "
                           "modelled", loc)
    return False


def _assign_result(tr, value: Tensor, d: Tensor, loc, what):
    """Points the instruction that just produced ``value`` at ``d``."""
    if d.shape != value.shape:
        if d.shape[0] != value.shape[0] or math.prod(d.shape[1:]) != math.prod(value.shape[1:]):
            raise NKIError(f"{what}: dst has shape {list(d.shape)}; the result is "
                           f"{list(value.shape)}", loc)
        d = _as(value.shape, d, loc)
    op = tr.fresh_result(value)
    tr.redirect(op, value, d, loc, checked_as=(what, "dst"))


@instruction
def nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None,
                 tile_size=None, accumulate=None, name=None):
    """MXFP8/MXFP4 matmul (NeuronCore-v4)."""
    _v4_only("nisa.nc_matmul_mx", caller_location())


@instruction
def nc_transpose(dst, data, engine=engine.unknown, name=None):
    """``dst = data.T`` on the Tensor Engine (up to [128, 128], into PSUM) or the Vector Engine
    (up to [32, 32]). By default the Vector Engine takes tiles that fit it and an SBUF ``dst``."""
    tr, loc, what, d = _begin(name, dst, "nisa.nc_transpose")
    v = _tile(data, loc, what, "data")
    small = v.shape[0] <= 32 and math.prod(v.shape[1:]) <= 32
    default = Engine.PE if d.storage.kind == PSUM and not small else \
        Engine.DVE if small else Engine.PE
    hw = _engine(engine, (Engine.PE, Engine.DVE), default, loc, what)
    if d.storage.dtype != v.storage.dtype:
        raise NKIError(f"{what}: dst ({dt.name(d.storage.dtype)}) must have data's dtype "
                       f"({dt.name(v.storage.dtype)})", loc)
    if hw is Engine.PE:
        value = _ins.transpose_pe(tr, v, d.storage.dtype, loc, what=what, out_kind=d.storage.kind)
    else:
        value = _ins.transpose_dve(tr, v, d.storage.dtype, loc, what=what)
    _assign_result(tr, value, d, loc, what)


# ---- the Scalar Engine ----

def _activation(tr, d: Tensor, op, data, bias, scale, acc, loc, what):
    func = act_func(op, loc)
    if func is _PRELU:
        raise NKIError(f"{what}: nl.prelu takes its slope from nisa.activate2's relu_param "
                       "(NeuronCore-v4); nisa.activation has none", loc)
    v = _tile(data, loc, what, "data")
    (v,) = _paired(d, [("data", v)], loc, what)
    p = d.shape[0]
    bias = None if bias is None else _scalar_or_column(bias, p, loc, what, "bias")
    if isinstance(bias, float) and bias != 0.0 and not target.config(tr.arch).act_bias_immediate:
        raise NKIError(f"{what}: on {dt.CORE_NAMES[tr.arch]} ({tr.arch}) the bias is a [{p}, 1] "
                       "tile, not a number (a scalar bias needs NeuronCore-v3)", loc)
    scale = _scalar_or_column(scale, p, loc, what, "scale")
    _ins.activation(tr, func, v, bias, scale, d.storage.dtype, loc, out=d, acc=acc, what=what)


def _reduce_regs(tr, reduce_op, cmd, reduce_res, loc, what):
    cmd = _enum(cmd, reduce_cmd, what, loc, "reduce_cmd")
    if cmd is _LOAD_REDUCE:
        raise NKIError(f"{what}: reduce_cmd=load_reduce is not modelled by the simulator's "
                       "accumulation registers", loc)
    if reduce_res is not None or cmd is _REDUCE or cmd is _RESET_REDUCE:
        if reduce_op is None:
            raise NKIError(f"{what}: the Scalar Engine's reduction registers add (reduce_op=nl.add)",
                           loc)
        _ins.refuse_illegal_reduce(tr, _alu(reduce_op, f"{what}: reduce_op", loc), loc, what)
    return _ACC[cmd]


# (an Enum's member read through its class costs a descriptor call, its hash a Python frame:
# what runs on every call reads these constants, and reduce_cmd hashes by identity)
_LOAD_REDUCE, _REDUCE, _RESET_REDUCE = reduce_cmd.load_reduce, reduce_cmd.reduce, \
    reduce_cmd.reset_reduce


@instruction
def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=reduce_cmd.idle, name=None):
    """``dst = op(data * scale + bias)`` on the Scalar Engine; with ``reduce_cmd`` the results
    also add into the engine's per-partition registers, read into ``reduce_res``."""
    tr, loc, what, d = _begin(name, dst, "nisa.activation")
    acc = _reduce_regs(tr, reduce_op, reduce_cmd, reduce_res, loc, what)
    _activation(tr, d, op, data, bias, scale, acc, loc, what)
    if reduce_res is not None:
        _ins.read_accumulator(tr, _tile(reduce_res, loc, what, "reduce_res"), d.shape[0], loc)


@instruction
def activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None):
    """``activation`` with ``reduce_cmd=reset_reduce``, the per-partition sums read into
    ``reduce_res``."""
    tr, loc, what, d = _begin(name, dst, "nisa.activation_reduce")
    acc = _reduce_regs(tr, reduce_op, _RESET_REDUCE, reduce_res, loc, what)
    _activation(tr, d, op, data, bias, scale, acc, loc, what)
    _ins.read_accumulator(tr, _tile(reduce_res, loc, what, "reduce_res"), d.shape[0], loc)


@instruction
def activate2(dst, op, data, imm0, imm1, op0, op1, relu_param=0.0, reverse0=False,
              reverse1=False, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle,
              name=None):
    """Tensor-scalar stage, activation and reduction in one Scalar Engine instruction
    (NeuronCore-v4)."""
    _v4_only("nisa.activate2", caller_location())


@instruction
def exponential(dst, src, max_value=0.0, reduce_res=None, reduce_cmd=reduce_cmd.idle,
                reduce_init=0.0, name=None):
    """``exp(src - max_value)`` on the Vector Engine (NeuronCore-v4)."""
    _v4_only("nisa.exponential", caller_location())


# ---- the Vector and GpSimd engines ----

_INTS = (dt.int32, dt.uint32)


@instruction
def tensor_tensor(dst, data1, data2, op, engine=engine.unknown, name=None):
    """``dst = data1 op data2`` elementwise (Vector Engine; GpSimd for ``nl.power`` and for an
    arithmetic ``op`` of all-int32 operands outside PSUM)."""
    loc = caller_location()
    tr = current()
    what = "nisa.tensor_tensor"
    if name is not None:
        _name(name, loc, what)
    alu = _alu(op, f"{what}: op", loc)
    d = _tile(dst, loc, what, "dst")
    a = _tile(data1, loc, what, "data1")
    b = _tile(data2, loc, what, "data2")
    a, b = _paired(d, [("data1", a), ("data2", b)], loc, what)
    _one_psum_input(_TT, [a, b], loc, what)
    in_psum = PSUM in (a.storage.kind, b.storage.kind, d.storage.kind)
    ints = a.storage.dtype in _INTS and b.storage.dtype in _INTS and d.storage.dtype in _INTS
    # (GpSimd for power and integers where the rules let it: bit-vector operators are the DVE's)
    pool = (alu is _POW or ints) and not in_psum and alu not in BITVEC
    default = _POOL if pool else _DVE
    hw = _engine(engine, _DVE_POOL, default, loc, what)
    _ins.tensor_tensor(tr, a, b, alu, d.storage.dtype, loc, out=d, engine=hw, what=what)


@instruction
def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                  reverse1=False, engine=engine.unknown, name=None):
    """``dst = (data op0 operand0) op1 operand1`` with numbers or [P, 1] tiles as operands."""
    tr, loc, what, d = _begin(name, dst, "nisa.tensor_scalar")
    v = _tile(data, loc, what, "data")
    (v,) = _paired(d, [("data", v)], loc, what)
    a0 = _alu(op0, f"{what}: op0", loc)
    a1 = None if op1 is None else _alu(op1, f"{what}: op1", loc)
    if a1 is None and operand1 is not None:
        raise NKIError(f"{what}: operand1 given without op1", loc)
    if a1 is not None and operand1 is None:
        raise NKIError(f"{what}: op1 needs operand1", loc)
    if _unary(a0) and operand0 not in (None, 0, 0.0):
        raise NKIError(f"{what}: operand0 must be None or 0 for the unary {a0.name}", loc)
    if operand0 is None:
        operand0 = 0.0
    hw = _engine(engine, _DVE_ACT_POOL, _DVE, loc, what)
    # (the operators' kinds and dtypes: alu.tensor-scalar-op-kinds, alu.bitvec-dtype, asked by
    # the builder; the engine argument takes gpsimd for rsqrt alone, an API fact of NKI's)
    if hw is _POOL and (a0, a1) != (_RSQRT, None):
        raise NKIError(f"{what}: the GpSimd Engine is allowed for rsqrt only", loc)
    o0 = _scalar_or_column(operand0, d.shape[0], loc, what, "operand0")
    o1 = None if a1 is None else _scalar_or_column(operand1, d.shape[0], loc, what, "operand1")
    _ins.tensor_scalar(tr, v, a0, o0, reverse0, a1, o1, reverse1, d.storage.dtype, loc, out=d,
                       engine=hw, what=what)


def _reduce_axes(axis, rank: int, loc, what) -> list:
    axes = _ins.normalize_axes(axis, rank, loc, what)
    if axes != list(range(axes[0], rank)):
        raise NKIError(f"{what}: axis {axis} must be the last contiguous free dimension(s), "
                       f"ending at dimension {rank - 1}", loc)
    return axes


@instruction
def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name=None):
    """Reduces ``data`` with ``op`` along its last free axes ``axis`` (Vector Engine)."""
    loc = caller_location()
    tr = current()
    what = "nisa.tensor_reduce"
    if name is not None:
        _name(name, loc, what)
    alu = _alu(op, f"{what}: op", loc)
    d = _tile(dst, loc, what, "dst")
    v = _tile(data, loc, what, "data")
    axes = _reduce_axes(axis, len(v.shape), loc, what)
    kept = v.shape[:axes[0]]
    out_shape = kept + (1,) * len(axes) if keepdims else kept
    if len(out_shape) == 1:
        out_shape = out_shape + (1,)
        keepdims = True
    if d.shape[0] != v.shape[0] or math.prod(d.shape[1:]) != math.prod(out_shape[1:]):
        raise NKIError(f"{what}: dst has shape {list(d.shape)}; the reduction of "
                       f"{list(v.shape)} along {axes} has {math.prod(out_shape[1:])} elements per "
                       "partition", loc)
    _ins.tensor_reduce(tr, alu, v, axes, keepdims, negate, d.storage.dtype, loc,
                       out=_as(out_shape, d, loc), what=what)


# The commonest tensor_scalar, tensor_tensor, activation, activation_reduce, tensor_reduce and tensor_copy
# calls (plain NkiTensors, numbers and [P, 1] tiles, operators seen before) are recorded in C, by
# the builders' lanewise_plain call and general part, without these definitions' frames
# (cpp/python/trace_nki06_lanewise.cpp says which): anything else comes here.
_core.nki.configure_nki06_lanewise(
    NkiTensor, Tensor, _ins, _opcodes._ALU_BY_FUNCTION, _opcodes._ACT_BY_FUNCTION, BITVEC_IDS,
    {"engine_unknown": engine.unknown, "engine_vector": engine.vector,
     "reduce_idle": reduce_cmd.idle, "tensor_scalar": IT.TensorScalar,
     "tensor_scalar_ptr": IT.TensorScalarPtr, "tensor_tensor": IT.TensorTensor,
     "activation": IT.Activation, "dve": Engine.DVE, "act_engine": Engine.Activation,
     "bypass": Alu.bypass, "alu_add": Alu.add, "alu_pow": _POW, "alu_abs": _ABS,
     "alu_rsqrt": _RSQRT, "prelu": _PRELU, "acc_idle": _ACC[reduce_cmd.idle],
     "acc_zero_accumulate": _ACC[reduce_cmd.reset_reduce], "psum": PSUM, "int_dtypes": _INTS,
     "act_bias_dtypes": _ins._ACT_BIAS_DTYPES, "tensor_reduce": IT.TensorReduce,
     "reduce_x": _ins._REDUCE_X, "reduce_ids": REDUCE_IDS,
     "reduce_add_archs": _ins._REDUCE_ADD_ARCHS, "write_plain": _core.nki.write_plain,
     "read_act_acc": IT.ReadActivationAccumulator, "tensor_copy": IT.TensorCopy})
tensor_scalar.fast = _core.nki.tensor_scalar06_fast
tensor_tensor.fast = _core.nki.tensor_tensor06_fast
activation.fast = _core.nki.activation06_fast
activation_reduce.fast = _core.nki.activation_reduce06_fast
tensor_reduce.fast = _core.nki.tensor_reduce06_fast
tensor_copy.fast = _core.nki.tensor_copy06_fast


@instruction
def tensor_partition_reduce(dst, op, data, name=None):
    """``op`` (add, maximum, bitwise_or, bitwise_and) folded over the partitions of ``data`` into
    the one-partition ``dst`` (GpSimd)."""
    tr, loc, what, d = _begin(name, dst, "nisa.tensor_partition_reduce")
    alu = _alu(op, f"{what}: op", loc)
    v = check_written(_tile(data, loc, what, "data"), loc, what, "data")
    if d.shape[0] != 1 or math.prod(d.shape[1:]) != math.prod(v.shape[1:]):
        raise NKIError(f"{what}: dst must have one partition of data's "
                       f"{math.prod(v.shape[1:])} elements; it is {list(d.shape)}", loc)
    _gpsimd.partition_reduce(tr, alu, v, d.storage.dtype, loc,
                                 out=_as((1,) + tuple(v.shape[1:]), d, loc), what=what)


@instruction
def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False,
                       name=None):
    """Per partition: ``r[i] = op1(op0(data0[i], r[i-1]), data1[i])`` from ``r[-1] = initial``
    (a number or a [P, 1] tile)."""
    loc = caller_location()
    tr = current()
    what = "nisa.tensor_tensor_scan"
    if name is not None:
        _name(name, loc, what)
    a0 = _alu(op0, f"{what}: op0", loc)
    a1 = _alu(op1, f"{what}: op1", loc)
    for rev, a, arg in ((reverse0, a0, "op0"), (reverse1, a1, "op1")):
        if rev and a not in COMMUTATIVE:
            raise NKIError(f"{what}: reversing the non-commutative {arg} ({a.name}) is not "
                           "modelled (the simulator's scan has no operand swap)", loc)
    d = _tile(dst, loc, what, "dst")
    x0 = _tile(data0, loc, what, "data0")
    x1 = _tile(data1, loc, what, "data1")
    x0, x1 = _paired(d, [("data0", x0), ("data1", x1)], loc, what)
    _one_psum_input(IT.TensorTensorScan, [x0, x1], loc, what)
    init = _scalar_or_column(initial, d.shape[0], loc, what, "initial")
    _scan(tr, d, x0, x1, a0, a1, init, loc, what)


def _scan(tr, d: Tensor, data0: Tensor, data1: Tensor, op0, op1, initial, loc, what: str):
    """Records ``d[i] = op1(op0(data0[i], r), data1[i])`` from ``r = initial`` (a number or a
    [P, 1] view)."""
    _ins.refuse_illegal_alu(IT.TensorTensorScan, Engine.DVE, op0, op1, loc, what)
    fields = {"op0": op0, "op1": op1, "initial": 0.0}
    pointers = []
    if isinstance(initial, Tensor):
        pointers.append(("initial", initial))
    else:
        fields["initial"] = initial
    _ins.record_lanewise(tr, IT.TensorTensorScan, Engine.DVE, d.shape, _full(d.shape),
                         [data0, data1], pointers, d, fields, loc, what)


@instruction
def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False,
                         reverse1=False, name=None):
    """``dst = (data op0 operand0) op1 operand1`` in one Vector Engine instruction, operand0 a
    number or [P, 1] tile, operand1 a tile."""
    tr, loc, what, d = _begin(name, dst, "nisa.scalar_tensor_tensor")
    v = _tile(data, loc, what, "data")
    w = _tile(operand1, loc, what, "operand1")
    v, w = _paired(d, [("data", v), ("operand1", w)], loc, what)
    _one_psum_input(IT.ScalarTensorTensor, [v, w], loc, what)
    a0, a1 = _alu(op0, f"{what}: op0", loc), _alu(op1, f"{what}: op1", loc)
    o0 = _scalar_or_column(operand0, d.shape[0], loc, what, "operand0")
    _fused.scalar_tensor_tensor(tr, v, a0, o0, reverse0, a1, w, reverse1, d.storage.dtype, loc,
                              out=d, what=what)


_REGISTER_CMD = {reduce_cmd.reset_reduce: bir.AccumCmd.ZeroAccumulate,
                 reduce_cmd.reduce: bir.AccumCmd.Accumulate,
                 reduce_cmd.load_reduce: bir.AccumCmd.LoadAccumulate}


def _register_cmd(reduce_cmd, init, init_name: str, loc, what: str):
    """The accumulation-register command of ``reduce_cmd``; ``init`` (the load_reduce start
    value, named ``init_name``) is given with load_reduce, and only then."""
    cmd = _enum(reduce_cmd, _ReduceCmd, what, loc, "reduce_cmd")
    if cmd not in _REGISTER_CMD:
        raise NKIError(f"{what}: reduce_cmd must be reset_reduce, reduce or load_reduce, not "
                       f"{cmd.name}", loc)
    if (init is not None) != (cmd is _ReduceCmd.load_reduce):
        raise NKIError(f"{what}: {init_name} is given with reduce_cmd=load_reduce, and only then",
                       loc)
    return _REGISTER_CMD[cmd]


@instruction
def tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res=None, reverse0=False,
                         reduce_cmd=reduce_cmd.reset_reduce, reduce_init=None,
                         reduce_res_negate=False, name=None):
    """``dst = data op0 operand0`` and, in the same Vector Engine instruction, ``reduce_op`` of
    those values into the engine's accumulation registers (``reduce_cmd``: reset_reduce starts
    from the operation's identity, reduce continues, load_reduce starts from ``reduce_init``),
    read into ``reduce_res`` (negated with ``reduce_res_negate``) when given."""
    loc = caller_location()
    tr = current()
    what = "nisa.tensor_scalar_reduce"
    if name is not None:
        _name(name, loc, what)
    accum = _register_cmd(reduce_cmd, reduce_init, "reduce_init", loc, what)
    if reverse0:
        raise NKIError(f"{what}: reverse0 is not supported (as in NKI)", loc)
    red = _alu(reduce_op, f"{what}: reduce_op", loc)  # (alu.tensor-scalar-reduce-fold: checked
    # with the instruction, tensor_scalar_accumulate)
    d = _tile(dst, loc, what, "dst")
    v = _tile(data, loc, what, "data")
    (v,) = _paired(d, [("data", v)], loc, what)
    a0 = _alu(op0, f"{what}: op0", loc)
    if _unary(a0) and operand0 not in (None, 0, 0.0):
        raise NKIError(f"{what}: operand0 must be None or 0 for the unary {a0.name}", loc)
    o0 = _scalar_or_column(0.0 if operand0 is None else operand0, d.shape[0], loc, what, "operand0")
    init = None if reduce_init is None else \
        _scalar_or_column(reduce_init, d.shape[0], loc, what, "reduce_init")
    r = None
    if reduce_res is not None:
        r = _tile(reduce_res, loc, what, "reduce_res")
        if r.shape[0] != d.shape[0] or math.prod(r.shape[1:]) != 1:
            raise NKIError(f"{what}: reduce_res must be [{d.shape[0]}, 1]; it is {list(r.shape)}",
                           loc)
    _fused.tensor_scalar_accumulate(tr, v, a0, o0, False, red, accum, init,
                              bool(reduce_res_negate), False, d.storage.dtype, loc, out=d,
                              reduce_res=r, what=what)


@instruction
def tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1=None,
                             reduce_cmd=reduce_cmd.reset_reduce, name=None):
    """Per partition, ``reg = op1(op0(src[i], imm0), reg); dst[i] = reg`` in one Vector Engine
    instruction; ``reg`` is the engine's accumulation register (``reduce_cmd``: reset_reduce
    starts from op1's identity, reduce continues, load_reduce starts from ``imm1``)."""
    loc = caller_location()
    tr = current()
    what = "nisa.tensor_scalar_cumulative"
    if name is not None:
        _name(name, loc, what)
    accum = _register_cmd(reduce_cmd, imm1, "imm1", loc, what)
    a0, a1 = _alu(op0, f"{what}: op0", loc), _alu(op1, f"{what}: op1", loc)
    d = _tile(dst, loc, what, "dst")
    v = _tile(src, loc, what, "src")
    (v,) = _paired(d, [("src", v)], loc, what)
    o0 = _scalar_or_column(imm0, d.shape[0], loc, what, "imm0")
    init = None if imm1 is None else _scalar_or_column(imm1, d.shape[0], loc, what, "imm1")
    _fused.tensor_scalar_accumulate(tr, v, a0, o0, False, a1, accum, init, False, True,
                              d.storage.dtype, loc, out=d, what=what)


@instruction
def reciprocal(dst, data, name=None):
    """``dst = 1 / data`` (Vector Engine)."""
    tr, loc, what, d = _begin(name, dst, "nisa.reciprocal")
    (v,) = _paired(d, [("data", _tile(data, loc, what, "data"))], loc, what)
    _ins.record_lanewise(tr, IT.Reciprocal, Engine.DVE, d.shape, _full(d.shape), [v], [], d,
                         None, loc, what)


@instruction
def iota(dst, pattern, offset=0, channel_multiplier=0, name=None):
    """``dst[p, i...] = offset + channel_multiplier * p + sum(i_k * step_k)`` over ``pattern``
    ``[[step, num], ...]`` (GpSimd, int32 arithmetic, cast to dst's dtype)."""
    tr, loc, what, d = _begin(name, dst, "nisa.iota")
    if d.storage.kind != SBUF:
        raise NKIError(f"{what}: dst must be in SBUF", loc)
    fields = {"base": _int(offset, f"{what}: offset", loc),
              "channel_multiplier": _int(channel_multiplier, f"{what}: channel_multiplier", loc),
              "pattern": _affine_pattern(pattern, d, loc, what)}
    _ins.refuse_non_int32_affine(fields, loc, what)
    _record(tr, IT.Iota, Engine.Pool, [], [("dst", d)], fields, loc, what)


def _affine_pattern(pattern, d: Tensor, loc, what) -> list:
    try:
        pairs = [(step, num) for step, num in pattern]
    except (TypeError, ValueError):
        raise NKIError(f"{what}: pattern must be a list of [step, num] pairs", loc) from None
    pairs = [(_int(step, f"{what}: pattern", loc), _int(num, f"{what}: pattern", loc))
             for step, num in pairs]
    if not 1 <= len(pairs) <= 4:
        raise NKIError(f"{what}: pattern has {len(pairs)} pairs; it takes 1 to 4", loc)
    if math.prod(n for _, n in pairs) != math.prod(d.shape[1:]):
        raise NKIError(f"{what}: pattern {pattern} spans {math.prod(n for _, n in pairs)} "
                       f"elements; dst has {math.prod(d.shape[1:])} per partition", loc)
    return pairs


@instruction
def affine_select(dst, pattern, channel_multiplier, on_true_tile, on_false_value,
                  cmp_op=_equal, offset=0, name=None):
    """``dst = on_true_tile where cmp_op(affine value, 0) else on_false_value`` with the affine
    value of ``nisa.iota`` (GpSimd)."""
    loc = caller_location()
    tr = current()
    what = "nisa.affine_select"
    if name is not None:
        _name(name, loc, what)
    cmp = _alu(cmp_op, f"{what}: cmp_op", loc)
    if cmp not in (Alu.is_equal, Alu.not_equal, Alu.is_lt, Alu.is_le, Alu.is_gt, Alu.is_ge):
        raise NKIError(f"{what}: cmp_op must be a comparison (nl.equal, nl.greater, ...)", loc)
    d = _tile(dst, loc, what, "dst")
    t = _tile(on_true_tile, loc, what, "on_true_tile")
    if d.storage.kind != SBUF or t.storage.kind != SBUF:
        raise NKIError(f"{what}: dst and on_true_tile must be in SBUF", loc)
    (t,) = _paired(d, [("on_true_tile", t)], loc, what)
    fields = {"base": _int(offset, f"{what}: offset", loc),
              "channel_multiplier": _int(channel_multiplier, f"{what}: channel_multiplier", loc),
              "pattern": _affine_pattern(pattern, d, loc, what), "compare_op": cmp,
              "fill_value": _number(on_false_value, loc, f"{what}: on_false_value")}
    _ins.refuse_non_int32_affine(fields, loc, what)
    _ins.record_lanewise(tr, IT.TensorScalarAffineSelect, Engine.Pool, d.shape, _full(d.shape),
                         [t], [], d, fields, loc, what)


def _select_register_cmd(reduce_cmd, loc, what: str):
    """range_select's and select_reduce's ``reduce_cmd``, idle or reset_reduce: the recorded
    instruction carries no command (its reduction output resets the Vector Engine's registers to
    its maximum, docs/isa-semantics.md §5), so the commands that continue or load the registers,
    and reset, which resets them without the current results, are refused."""
    cmd = _enum(reduce_cmd, _ReduceCmd, what, loc, "reduce_cmd")
    if cmd in (_ReduceCmd.reduce, _ReduceCmd.load_reduce):
        raise NKIError(f"{what}: reduce_cmd={cmd.name} (continuing the Vector Engine's registers "
                       "across instructions) is not modelled", loc)
    if cmd is _ReduceCmd.reset:
        raise NKIError(f"{what}: reduce_cmd=reset (resetting the Vector Engine's registers "
                       "without the current results) is not modelled", loc)
    return cmd


@instruction
def range_select(dst, on_true_tile, comp_op0, comp_op1, bound0, bound1,
                 reduce_cmd=reduce_cmd.reset_reduce, reduce_res=None, reduce_op=_maximum,
                 range_start=0, on_false_value=float(np.finfo(np.float32).min), name=None):
    """Keeps element ``j`` where ``comp_op0(j + range_start, bound0)`` and ``comp_op1(...,
    bound1)``, else ``on_false_value`` (FP32_MIN); the per-partition max into ``reduce_res``
    (Vector Engine, NeuronCore-v3)."""
    loc = caller_location()
    tr = current()
    what = "nisa.range_select"
    if name is not None:
        _name(name, loc, what)
    _ins.refuse_later_generation(tr, IT.RangeSelect, Engine.DVE, loc, what)
    cmd = _select_register_cmd(reduce_cmd, loc, what)
    if _alu(reduce_op, f"{what}: reduce_op", loc) is not Alu.max:
        raise NKIError(f"{what}: reduce_op must be nl.maximum", loc)
    fill = _number(on_false_value, loc, f"{what}: on_false_value")
    if np.float32(fill) != np.finfo(np.float32).min:
        raise NKIError(f"{what}: on_false_value must be FP32_MIN (-3.4028235e+38)", loc)
    c0, c1 = _alu(comp_op0, f"{what}: comp_op0", loc), _alu(comp_op1, f"{what}: comp_op1", loc)
    d = _tile(dst, loc, what, "dst")
    t = _tile(on_true_tile, loc, what, "on_true_tile")
    (t,) = _paired(d, [("on_true_tile", t)], loc, what)
    b0 = _scalar_or_column(bound0, d.shape[0], loc, what, "bound0")
    b1 = _scalar_or_column(bound1, d.shape[0], loc, what, "bound1")
    if not isinstance(b0, Tensor) or not isinstance(b1, Tensor):
        raise NKIError(f"{what}: bound0 and bound1 must be [P, 1] tiles", loc)
    fields = {"comp_op0": c0, "comp_op1": c1,
              "range_start": _int(range_start, f"{what}: range_start", loc),
              "fill_value": fill}
    extra = ()
    if reduce_res is not None and cmd is not _ReduceCmd.idle:
        extra = (("reduce_res", _tile(reduce_res, loc, what, "reduce_res")),)
    _ins.record_lanewise(tr, IT.RangeSelect, Engine.DVE, d.shape, _full(d.shape), [t],
                         [("bound0", b0), ("bound1", b1)], d, fields, loc, what,
                         outs_extra=extra)


@instruction
def select_reduce(dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=reduce_cmd.idle,
                  reduce_op=_maximum, reverse_pred=False, name=None):
    """``dst = on_true where predicate else on_false``; the per-partition max into
    ``reduce_res`` (Vector Engine)."""
    loc = caller_location()
    tr = current()
    what = "nisa.select_reduce"
    if name is not None:
        _name(name, loc, what)
    cmd = _select_register_cmd(reduce_cmd, loc, what)
    if _alu(reduce_op, f"{what}: reduce_op", loc) is not Alu.max:
        raise NKIError(f"{what}: reduce_op must be nl.maximum", loc)
    d = _tile(dst, loc, what, "dst")
    p = _tile(predicate, loc, what, "predicate")
    t = _tile(on_true, loc, what, "on_true")
    p, t = _paired(d, [("predicate", p), ("on_true", t)], loc, what)
    _one_psum_input(IT.SelectReduce, [p, t], loc, what)
    f = _scalar_or_column(on_false, d.shape[0], loc, what, "on_false")
    if reverse_pred:
        p = _ins.tensor_scalar(tr, p, Alu.is_equal, 0.0, False, None, None, False, dt.uint8, loc,
                               what=what)
    r = None
    if reduce_res is not None and cmd is not _ReduceCmd.idle:
        r = _tile(reduce_res, loc, what, "reduce_res")
    _ins.select_reduce(tr, d, p, t, f, r, Alu.max, loc)


@instruction
def bn_stats(dst, data, name=None):
    """Per partition, six values: count, mean and count*variance of the even and of the odd
    elements (at most 512 per partition)."""
    loc = caller_location()
    _per_lane(IT.BNStats, dst, data, 6, loc, "nisa.bn_stats", name)


@instruction
def bn_aggr(dst, data, name=None):
    """Mean and variance per partition from bn_stats records."""
    loc = caller_location()
    _per_lane(IT.BNStatsAggregate, dst, data, 2, loc, "nisa.bn_aggr", name)


@instruction
def max8(dst, src, name=None):
    """The 8 largest values of each partition, descending."""
    loc = caller_location()
    _per_lane(IT.Max, dst, src, 8, loc, "nisa.max8", name)


def _per_lane(opcode, dst, data, count: int, loc, what, name, extra=None):
    tr = current()
    if name is not None:
        _name(name, loc, what)
    d = _tile(dst, loc, what, "dst")
    v = _tile(data, loc, what, "data")
    n = math.prod(v.shape[1:])
    _ins.refuse_illegal_size(tr, opcode, v, loc, what)
    if opcode is IT.BNStatsAggregate and n % 3:
        raise NKIError(f"{what}: {n} elements per partition is not a whole number of "
                       "(count, mean, variance*count) records", loc)
    if d.shape[0] != v.shape[0] or math.prod(d.shape[1:]) != count:
        raise NKIError(f"{what}: dst must be [{v.shape[0]}, {count}]; it is {list(d.shape)}",
                       loc)
    ins = [("data", v)] + ([extra] if extra is not None else [])
    _record(tr, opcode, Engine.DVE, ins, [("dst", d)], None, loc, what)


def _vals8(vals, data, loc, what) -> tuple:
    v = _tile(vals, loc, what, "vals")
    p = _tile(data, loc, what, "data").shape[0]
    if v.shape[0] != p or math.prod(v.shape[1:]) != 8:
        raise NKIError(f"{what}: vals must be [{p}, 8]; it is {list(v.shape)}", loc)
    return ("vals", v)


@instruction
def nc_find_index8(dst, data, vals, name=None):
    """Per partition, the index of the first occurrence of each of the 8 values ``vals``
    (all-ones where a value does not occur)."""
    loc = caller_location()
    what = "nisa.nc_find_index8"
    _ins.find_index8_dtype(_tile(dst, loc, what, "dst").storage.dtype, loc, f"{what}: dst")
    _per_lane(IT.MaxIndex, dst, data, 8, loc, what, name, _vals8(vals, data, loc, what))


@instruction
def nc_match_replace8(dst, data, vals, imm, dst_idx=None, name=None):
    """``dst`` = ``data`` with the first occurrence of each of the 8 values ``vals`` replaced by
    ``imm``; their indices into ``dst_idx`` if given."""
    tr, loc, what, d = _begin(name, dst, "nisa.nc_match_replace8")
    v = _tile(data, loc, what, "data")
    (v,) = _paired(d, [("data", v)], loc, what)
    _ins.refuse_illegal_size(tr, IT.MatchReplace, v, loc, what)
    outs = [("dst", d)]
    if dst_idx is not None:
        i = _tile(dst_idx, loc, what, "dst_idx")
        if i.shape[0] != d.shape[0] or math.prod(i.shape[1:]) != 8:
            raise NKIError(f"{what}: dst_idx must be [{d.shape[0]}, 8]", loc)
        outs.append(("dst_idx", i))
    _record(tr, IT.MatchReplace, Engine.DVE, [("data", v), _vals8(vals, data, loc, what)], outs,
            {"imm_value": _number(imm, loc, f"{what}: imm")}, loc, what)


@instruction
def nc_stream_shuffle(dst, src, shuffle_mask, name=None):
    """Within each 32-partition quadrant, dst partition ``i`` takes src partition
    ``shuffle_mask[i]`` (255: left unwritten) (Vector Engine)."""
    tr, loc, what, d = _begin(name, dst, "nisa.nc_stream_shuffle")
    s = _tile(src, loc, what, "src")
    if d.storage.dtype != s.storage.dtype:
        raise NKIError(f"{what}: dst must have src's dtype", loc)
    if math.prod(d.shape[1:]) != math.prod(s.shape[1:]):
        raise NKIError(f"{what}: dst and src must have the same elements per partition", loc)
    mask = _integers(shuffle_mask, loc, f"{what}: shuffle_mask")
    if len(mask) != 32 or any(not (0 <= m < 32 or m == 255) for m in mask):
        raise NKIError(f"{what}: shuffle_mask is 32 values in 0..31 or 255", loc)
    _record(tr, IT.StreamShuffle, Engine.DVE, [("src", s)], [("dst", d)],
            {"shuffle_mask": mask}, loc, what)


@instruction
def dropout(dst, data, prob, name=None):
    """Zeroes each element with probability ``prob`` (a number), keeping the others, by draws of
    the Vector Engine's generators (which set_rng_seed / nl.random_seed seed)."""
    tr, loc, what, d = _begin(name, dst, "nisa.dropout")
    (v,) = _paired(d, [("data", _tile(data, loc, what, "data"))], loc, what)
    if d.storage.dtype != v.storage.dtype:
        raise NKIError(f"{what}: dst.dtype must match data.dtype", loc)
    if isinstance(prob, NkiTensor):
        raise NKIError(f"{what}: a per-partition probability tile is not modelled (the "
                       "simulator's Dropout takes one probability); pass a number", loc)
    p = _number(prob, loc, f"{what}: prob")
    if not 0.0 <= p <= 1.0:
        raise NKIError(f"{what}: prob {p} must be in [0, 1]", loc)
    _ins.record_lanewise(tr, IT.Dropout, Engine.DVE, d.shape, _full(d.shape), [v], [], d,
                         {"prob": p}, loc, what)


@instruction
def rng(dst, engine=engine.vector, name=None):
    """32 pseudo-random bits per element of ``dst`` (an 8-, 16- or 32-bit integer tile, the low
    bits kept) from the Vector Engine's generators, or the GpSimd Engine's (NeuronCore-v3)."""
    tr, loc, what, d = _begin(name, dst, "nisa.rng")
    hw = _engine(engine, (Engine.DVE, Engine.Pool), Engine.DVE, loc, what)
    _ins.refuse_later_generation(tr, IT.Rand, hw, loc, what)
    _gpsimd.rand_bits(tr, d, hw, loc, what=what)


@instruction
def set_rng_seed(src_seeds, name=None):
    """Seeds the Vector Engine's generators from one 32-bit value (a [1, 1] tile)."""
    loc = caller_location()
    tr = current()
    what = "nisa.set_rng_seed"
    if name is not None:
        _name(name, loc, what)
    s = check_written(_tile(src_seeds, loc, what, "src_seeds"), loc, what, "src_seeds")
    _gpsimd.set_rand_state(tr, s, Engine.DVE, loc, what=what)


@instruction
def rand_set_state(src_seeds, engine=engine.gpsimd, name=None):
    """The GpSimd Engine's generator of each partition of ``src_seeds`` takes the XORWOW state
    in it (six uint32 words; NeuronCore-v3)."""
    loc = caller_location()
    tr = current()
    what = "nisa.rand_set_state"
    if name is not None:
        _name(name, loc, what)
    if _enum(engine, _Engine, what, loc, "engine") is _Engine.vector:
        _v4_only(f"{what}(engine=nisa.engine.vector)", loc)
    _engine(engine, (Engine.Pool,), Engine.Pool, loc, what)
    _ins.refuse_later_generation(tr, IT.SetRandState, Engine.Pool, loc, what)
    s = check_written(_tile(src_seeds, loc, what, "src_seeds"), loc, what, "src_seeds")
    _gpsimd.set_rand_state(tr, s, Engine.Pool, loc, what=what)


@instruction
def rand_get_state(dst, engine=engine.gpsimd, name=None):
    """Each partition's GpSimd generator state (six uint32 words) into ``dst`` (NeuronCore-v3)."""
    tr, loc, what, d = _begin(name, dst, "nisa.rand_get_state")
    if _enum(engine, _Engine, what, loc, "engine") is _Engine.vector:
        _v4_only(f"{what}(engine=nisa.engine.vector)", loc)
    _engine(engine, (Engine.Pool,), Engine.Pool, loc, what)
    _ins.refuse_later_generation(tr, IT.GetRandState, Engine.Pool, loc, what)
    _gpsimd.get_rand_state(tr, d, loc, what=what)


@instruction
def rand2(dst, min, max, name=None):  # noqa: A002  (NKI's names)
    _v4_only("nisa.rand2", caller_location())


@instruction
def quantize_mx(dst, src, dst_scale, name=None):
    _v4_only("nisa.quantize_mx", caller_location())


@instruction
def local_gather(dst, src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, name=None):
    """Per GpSimd core (16 partitions), its ``index`` values (uint16 element offsets, read
    partition first) gather ``num_elem_per_idx`` elements each from every partition's own row of
    ``src_buffer`` into ``dst``."""
    tr, loc, what, d = _begin(name, dst, "nisa.local_gather")
    s = check_written(_tile(src_buffer, loc, what, "src_buffer"), loc, what, "src_buffer")
    i = check_written(_tile(index, loc, what, "index"), loc, what, "index")
    _gpsimd.local_gather(tr, s, i, num_elem_per_idx, num_valid_indices, loc, out=d, what=what)


@instruction
def nc_n_gather(dst, data, indices, name=None):
    """``dst[p, j] = data[p, indices[p, j]]`` within each partition, data's free dimensions
    flattened (GpSimd)."""
    tr, loc, what, d = _begin(name, dst, "nisa.nc_n_gather")
    v = check_written(_tile(data, loc, what, "data"), loc, what, "data")
    i = check_written(_tile(indices, loc, what, "indices"), loc, what, "indices")
    if i.storage.dtype != dt.uint32:
        raise NKIError(f"{what}: indices must be uint32, not {dt.name(i.storage.dtype)}", loc)
    if d.shape[0] != i.shape[0] or math.prod(d.shape[1:]) != math.prod(i.shape[1:]):
        raise NKIError(f"{what}: dst has shape {list(d.shape)}; it needs indices' partitions and "
                       f"elements per partition ({list(i.shape)})", loc)
    _gpsimd.gather(tr, v, i, loc, out=_as(i.shape, d, loc), what=what)


@instruction
def sequence_bounds(dst, segment_ids, name=None):
    """For a one-partition tile of segment ids (0: padding), each element's segment start and end
    (exclusive): ``dst`` [1, 2, n] (GpSimd)."""
    tr, loc, what, d = _begin(name, dst, "nisa.sequence_bounds")
    v = check_written(_tile(segment_ids, loc, what, "segment_ids"), loc,
                      f"{what}: segment_ids")
    n = math.prod(v.shape[1:])
    if d.shape[0] != 1 or math.prod(d.shape[1:]) != 2 * n:
        raise NKIError(f"{what}: dst must be [1, 2, {n}]; it is {list(d.shape)}", loc)
    _gpsimd.sequence_bounds(tr, v, loc, out=_as((1, 2, n), d, loc), what=what)


@instruction
def nonzero_with_count(dst, src, index_offset=0, padding_val=-1, name=None):
    """On partitions 0, 16, ..., 112 (each GpSimd core's first): the indices of src's non-zero
    elements plus ``index_offset``, ``padding_val`` up to src's length, then their count."""
    tr, loc, what, d = _begin(name, dst, "nisa.nonzero_with_count")
    _ins.refuse_later_generation(tr, IT.NonzeroWithCount, Engine.Pool, loc, what)
    v = _tile(src, loc, what, "src")
    for arg, value in (("index_offset", index_offset), ("padding_val", padding_val)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise NKIError(f"{what}: {arg} must be an int32 integer, not {value!r}", loc)
    p = v.shape[0]
    for lane in range(0, p, _gpsimd.GPSIMD_CORE_PARTITIONS):  # the partitions it reads
        check_written(v.restrict(0, lane, lane + 1), loc, f"{what}: src")
    if d.shape[0] != p or math.prod(d.shape[1:]) != math.prod(v.shape[1:]) + 1:
        raise NKIError(f"{what}: dst must have src's {p} partitions and one more element per "
                       f"partition ({math.prod(v.shape[1:]) + 1}); it is {list(d.shape)}", loc)
    _gpsimd.nonzero_with_count(tr, v, int(index_offset), int(padding_val), loc, out=d, what=what)


@instruction
def topk(val_dst, idx_dst, src, n, name=None):
    """Not modelled: the documentation leaves the result's placement open (see the error)."""
    raise NKIError("nisa.topk is not modelled: its documentation says both that each partition "
                   "works independently and that the source is one 16-partition 'snake', and "
                   "does not say which partitions of val_dst / idx_dst receive a snake's top K "
                   "or how ties are ordered", caller_location())


def _cross_core(what: str):
    tr = current()
    if target.config(tr.arch).max_logical_cores < 2:
        raise NKIError(f"{what} needs NeuronCore-v3 (trn2) with LNC=2; {tr.arch} "
                       f"({dt.CORE_NAMES[tr.arch]}) does not have it", caller_location())
    raise NKIError(f"{what}: synchronisation and transfers between the NeuronCores of an LNC=2 "
                   "launch are not modelled (the simulator runs the cores side by side on shared "
                   "HBM)", caller_location())


@instruction
def core_barrier(data, cores, engine=engine.gpsimd, name=None):
    _cross_core("nisa.core_barrier")


@instruction
def sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id, dma_engine=dma_engine.dma,
             name=None):
    _cross_core("nisa.sendrecv")


__all__ = [
    "engine", "tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine",
    "unknown_engine", "reduce_cmd", "dge_mode", "oob_mode", "matmul_perf_mode", "nc_version",
    "dma_engine", "NkiInstruction", "NkiValidationError", "VirtualRegister", "get_nc_version",
    "get_nc_sub_version", "dma_copy", "dma_transpose", "dma_compute", "tensor_copy", "memset",
    "tensor_copy_predicated", "nc_matmul", "nc_matmul_mx", "nc_transpose", "activation",
    "activation_reduce", "activate2", "exponential", "tensor_tensor", "tensor_scalar",
    "tensor_reduce", "tensor_partition_reduce", "tensor_tensor_scan", "scalar_tensor_tensor",
    "tensor_scalar_reduce", "tensor_scalar_cumulative", "reciprocal", "iota", "affine_select",
    "range_select", "select_reduce", "bn_stats", "bn_aggr", "max8", "nc_find_index8",
    "nc_match_replace8", "nc_stream_shuffle", "dropout", "rng", "set_rng_seed", "rand_set_state",
    "rand_get_state", "rand2", "quantize_mx", "local_gather", "nc_n_gather", "sequence_bounds",
    "nonzero_with_count", "topk", "core_barrier", "sendrecv", "register_alloc", "register_move",
    "register_load", "register_store",
]
