"""``nki.language`` (``nl``) of NKI 0.6: tensor creation, the value-returning convenience
operations, loops, buffers, data types and ``tile_size``.

Each function records the instructions NKI lowers it to through the shared builders
(``neuronxsim.nki.instructions``): ``nl.load``/``nl.store`` are DMA transfers, ``nl.exp`` and
the other activations Scalar Engine instructions, arithmetic, comparisons and reductions Vector
Engine instructions, ``nl.matmul``/``nl.transpose`` Tensor Engine matmuls (results in PSUM),
everything else a new SBUF tile. Operations NKI builds from several instructions (``nl.sin``'s
range reduction, ``nl.floor``, ``nl.var``, ``nl.rms_norm``, ...) record those instructions, so
their time is that of the sequence.

``nl.sum``, ``nl.max``, ``nl.min``, ``nl.all`` and ``nl.abs`` shadow Python's builtins in this
module: code here calls ``builtins.min`` and friends explicitly.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import os

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import target
from neuronxsim.nki import gpsimd_instructions as _gpsimd
from neuronxsim.nki import instructions as _ins
from neuronxsim.nki import language as _nl22
from neuronxsim.nki.errors import NKIError, caller_location
from neuronxsim.nki.opcodes import Act, Alu, activation as _act_marker, alu as _alu_marker
from neuronxsim.nki.opcodes import FMOD_NOT_ALU as _FMOD_NOT_ALU, not_alu as _not_alu
from neuronxsim.nki.tensor import NUM_PARTITIONS, PSUM, PSUM_BANK_BYTES, SBUF, Tensor, new_view
from neuronxsim.nki.tracer import ARCHS, IT, Engine, current
from neuronxsim.nki.tracer import active as _tracing
from neuronxsim.starfish.lib import _core

from . import dtypes as dt
from ._api import api
from .kernel import launch, target_arch
from .registers import VirtualRegister, dynamic_range, unrolled_for, unrolled_while  # noqa: F401
from .tensor import (STORAGE_KIND, MemoryRegion, NKIObject, NkiTensor,  # noqa: F401
                     _wrap, check_written, on_chip_view, reshape_strides, wrap)

# ---- data types and buffers ----
bool_, int8, int16, int32 = dt.bool_, dt.int8, dt.int16, dt.int32
uint8, uint16, uint32 = dt.uint8, dt.uint16, dt.uint32
float16, float32, bfloat16, tfloat32 = dt.float16, dt.float32, dt.bfloat16, dt.tfloat32
float8_e4m3, float8_e5m2 = dt.float8_e4m3, dt.float8_e5m2
float8_e4m3fn, float8_e8m0fnu = dt.float8_e4m3fn, dt.float8_e8m0fnu
float8_e5m2_x4, float8_e4m3fn_x4 = dt.float8_e5m2_x4, dt.float8_e4m3fn_x4
float4_e2m1fn_x4 = dt.float4_e2m1fn_x4

sbuf = MemoryRegion.sbuf
psum = MemoryRegion.psum
private_hbm = MemoryRegion.private_hbm
hbm = private_hbm
shared_hbm = MemoryRegion.shared_hbm


@api
def is_hbm(buffer) -> bool:
    """True for nl.hbm (nl.private_hbm) and nl.shared_hbm."""
    return _region(buffer, "nl.is_hbm") in (private_hbm, shared_hbm)


@api
def is_on_chip(buffer) -> bool:
    """True for nl.sbuf and nl.psum."""
    return _region(buffer, "nl.is_on_chip") in (sbuf, psum)


@api
def is_psum(buffer) -> bool:
    return _region(buffer, "nl.is_psum") is psum


@api
def is_sbuf(buffer) -> bool:
    return _region(buffer, "nl.is_sbuf") is sbuf


def _region(buffer, what: str) -> MemoryRegion:
    if not isinstance(buffer, MemoryRegion):
        hint = (f" (string buffer names were removed in NKI 0.3: use nl.{buffer})"
                if isinstance(buffer, str) else "")
        raise NKIError(f"{what}: buffer must be nl.sbuf, nl.psum, nl.hbm, nl.private_hbm or "
                       f"nl.shared_hbm, not {buffer!r}{hint}", caller_location())
    return buffer


#: Operator constants of the activation and tensor-scalar instructions.
prelu = Act.Prelu
bypass = Alu.bypass
average = Alu.average


# ---- tile_size ----

def _arch() -> str:
    return current().arch if _tracing() else target_arch()


class _TileSize(NKIObject):
    """Hardware tile size constants of the target generation (the trace's, else
    NEURON_PLATFORM_TARGET_OVERRIDE's)."""

    pmax = NUM_PARTITIONS
    psum_bank_fmax_bytes = target.uniform("psum_bank_bytes")
    psum_bank_fmax = psum_bank_fmax_bytes // 4  # fp32 elements of one PSUM bank
    psum_fmax = psum_bank_fmax  # deprecated alias (NKI 0.4)
    gemm_stationary_fmax = _ins.MATMUL_MAX_STATIONARY
    gemm_moving_fmax = _ins.MATMUL_MAX_MOVING
    bn_stats_fmax = target.uniform("bn_stats_max_free_elements")

    @property
    def psum_num_banks(self) -> int:
        return target.config(_arch()).psum_banks

    @property
    def sbuf_fmax_bytes(self) -> int:
        """Usable SBUF bytes per partition (what neuronxsim's allocator places tiles in)."""
        return ARCHS[_arch()]["sbuf_bytes"]

    @property
    def sbuf_fmax(self) -> int:
        return self.sbuf_fmax_bytes // 4

    @property
    def sbuf_size_bytes(self) -> int:
        return self.sbuf_fmax_bytes * NUM_PARTITIONS

    @property
    def total_available_sbuf_size(self) -> int:
        """Deprecated (NKI 0.4): the usable bytes per partition, as sbuf_fmax_bytes."""
        return self.sbuf_fmax_bytes

    @property
    def psum_min_align(self) -> int:
        raise NKIError("nl.tile_size.psum_min_align: the hardware's minimum PSUM alignment is not "
                       "published, and neuronxsim does not guess it", caller_location())

    @property
    def sbuf_min_align(self) -> int:
        raise NKIError("nl.tile_size.sbuf_min_align: the hardware's minimum SBUF alignment is not "
                       "published, and neuronxsim does not guess it", caller_location())


tile_size = _TileSize()


# ---- loops, programs, scheduling ----

@api
def affine_range(start, stop=None, step=1):
    """``range`` (deprecated in NKI: prefer ``range``); the trace unrolls it."""
    return _nl22._loop_range("nl.affine_range", start, stop, step, caller_location())


@api
def sequential_range(start, stop=None, step=1):
    return _nl22._loop_range("nl.sequential_range", start, stop, step, caller_location())


@api
def static_range(start, stop=None, step=1):
    return _nl22._loop_range("nl.static_range", start, stop, step, caller_location())


@api
def ds(start, size) -> slice:
    """``start:start+size`` (``start`` an int or a register whose value the trace knows)."""
    loc = caller_location()
    if isinstance(start, VirtualRegister):
        start = start.known("nl.ds")
    try:
        start, size = int(start.__index__()), int(size.__index__())
    except (AttributeError, TypeError):
        raise NKIError("nl.ds takes integers (start, size)", loc) from None
    if size < 1:
        raise NKIError(f"nl.ds: size {size} must be positive", loc)
    return slice(start, start + size)


def _check_axis(what: str, axis):
    """Refuses any ``axis`` but 0: an NKI 0.6 launch has the one axis 0 (kernel[lnc])."""
    if isinstance(axis, (tuple, list)):
        problem = "takes the axis 0, not a tuple of axes"
    elif isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        problem = f"a launch axis is an integer, not {type(axis).__name__}"
    elif axis != 0:
        problem = "there is no such axis"
    else:
        return
    raise NKIError(f"{what}({axis!r}): {problem}; an NKI 0.6 launch has the one axis 0 "
                   "(kernel[lnc])", caller_location(1))


@api
def program_id(axis=0) -> int:
    """This instance's physical NeuronCore within its logical core (0 without LNC)."""
    _check_axis("nl.program_id", axis)
    return current().program_ids[0]


@api
def num_programs(axes=0) -> int:
    """The LNC degree of the launch (1 without brackets)."""
    if axes is not None:
        _check_axis("nl.num_programs", axes)
    current()
    return launch()["lnc"]


@api
def program_ndim() -> int:
    """1 for a kernel launched with brackets (kernel[n]), else 0."""
    current()
    return launch()["ndim"]


@contextlib.contextmanager
def _no_reorder():
    tr = current()
    depth = getattr(tr, "nki06_no_reorder", 0)
    tr.nki06_no_reorder = depth + 1
    record = tr.core.record
    recorded = len(record.ops)
    try:
        yield
    finally:
        tr.nki06_no_reorder = depth
        if len(record.ops) > recorded:
            record.keep_order = True  # (the reordering that makes tiles fit must leave them)


@api
def no_reorder():
    """``with nl.no_reorder():`` keeps the block's instructions in program order. The
    simulator issues each engine's instructions in program order and orders engines by data
    hazards only; what the block changes is that a kernel holding one is never reordered to make
    its tiles fit (``neuronxsim.nki.pressure``): it fits in program order or is refused."""
    return _no_reorder()


def _check_not_in_no_reorder(what: str):
    if getattr(current(), "nki06_no_reorder", 0):
        raise NKIError(f"{what} cannot sit inside an nl.no_reorder() block", caller_location())


@api
def fori_loop(lower, upper, body_fun, step=1):
    """``for i in range(lower, upper, step): body_fun(i)`` (``i`` a read-only register), unrolled
    while tracing (see neuronxsim.nki06.registers)."""
    _check_not_in_no_reorder("nl.fori_loop")
    unrolled_for(lower, upper, body_fun, step)


@api
def while_loop(init, body_fun):
    """``r = init; while r != 0: r = body_fun(r)``, unrolled while tracing."""
    _check_not_in_no_reorder("nl.while_loop")
    unrolled_while(init, body_fun)


# ---- creating tensors ----

def _shape(shape, loc, what: str) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(int(n.__index__()) for n in shape)
    except (AttributeError, TypeError):
        raise NKIError(f"{what}: shape {shape!r} must be a tuple of integers", loc) from None
    if not dims or builtins.any(n < 1 for n in dims):
        raise NKIError(f"{what}: shape {list(dims)} needs at least one dimension, all positive",
                       loc)
    return dims


def _dtype(value, loc, what="dtype"):
    return dt.resolve(value, _arch(), loc, what)


def _new(shape, dtype, buffer, name, loc, what: str) -> NkiTensor:
    """A new tensor (contents undefined)."""
    tr = current()
    # Kernels create tensors of a few specs over and over in their loops: a spec of plain ints
    # is checked once per target.
    try:
        spec = _CHECKED.get((shape, dtype, buffer, tr.arch))
    except TypeError:  # an unhashable shape or dtype: the checks below refuse or convert it
        spec = None
    if spec is not None:
        dims, dtype, region, kind = spec
    else:
        dims, dtype, region, kind = spec = _checked_spec(tr, shape, dtype, buffer, loc, what)
        if dims == shape:
            _CHECKED[(shape, spec[1], buffer, tr.arch)] = spec
    if name and not isinstance(name, str):
        raise NKIError(f"{what}: name must be a string", loc)
    if not name and kind in (SBUF, PSUM):
        view = tr.new_result(kind, dtype, dims, what, loc)
    else:
        view = tr.new_storage(kind, dtype, dims, name or what, loc, explicit_name=bool(name)) \
            .full_view()
    return _wrap(view, region)  # (wrap, its region known: one frame fewer per tensor)


_CHECKED: dict = {}  # (shape, dtype, buffer, arch) -> (dims, NumPy dtype, region, storage kind)


def _checked_spec(tr, shape, dtype, buffer, loc, what: str) -> tuple:
    dims = _shape(shape, loc, what)
    dtype = _dtype(dtype, loc, f"{what}: dtype")
    region = _region(buffer, f"{what}: buffer")
    kind = STORAGE_KIND[region]
    if region in (sbuf, psum):
        if dims[0] > NUM_PARTITIONS:
            raise NKIError(f"{what}: shape {list(dims)} puts {dims[0]} rows on the partition "
                           f"dimension; SBUF and PSUM have {NUM_PARTITIONS} partitions", loc)
        per_partition = math.prod(dims[1:]) * dtype.itemsize
        capacity = (ARCHS[tr.arch]["sbuf_bytes"] if region is sbuf
                    else _nl22.tile_size.psum_partition_size)
        if per_partition > capacity:
            raise NKIError(f"{what}: shape {list(dims)} of {dt.name(dtype)} needs {per_partition} "
                           f"bytes per partition; {region.name.upper()} has {capacity} on "
                           f"{tr.arch}", loc)
    return dims, dtype, region, kind


@api
def ndarray(shape, dtype, buffer=sbuf, name="", address=None) -> NkiTensor:
    """A new tensor of ``shape`` and ``dtype`` in ``buffer`` (contents undefined)."""
    loc = caller_location()
    t = _new(shape, dtype, buffer, name, loc, "ndarray")
    if address is not None:
        _pin(t, address, loc)
    return t


# A tensor of a spec _new checked before (plain arguments, no name or address) is made in C, without
# the frames of ndarray, _new and _wrap (cpp/python/trace_nki06_fast.cpp): anything else comes here.
_core.nki.configure_nki06_ndarray(NkiTensor, _CHECKED, sbuf, SBUF, PSUM)
ndarray.fast = _core.nki.ndarray06_fast


def _pin(t: NkiTensor, address, loc):
    """``address=(partition, byte)``: the tensor sits at that byte of every partition (the
    allocator places the others around it)."""
    try:
        partition, byte = (int(v.__index__()) for v in address)
    except (AttributeError, TypeError, ValueError):
        raise NKIError(f"nl.ndarray: address must be (partition_offset, free_offset) integers, "
                       f"not {address!r}", loc) from None
    if not t._on_chip:
        raise NKIError("nl.ndarray: address= places SBUF and PSUM tensors; HBM tensors have none",
                       loc)
    if partition != 0:
        raise NKIError(f"nl.ndarray: a partition offset ({partition}) is not supported: "
                       "neuronxsim's tensors start at partition 0", loc)
    st = t._view.storage
    if byte < 0 or byte % st.dtype.itemsize:
        raise NKIError(f"nl.ndarray: the free offset {byte} must be a non-negative byte address "
                       f"aligned to the {st.dtype.itemsize}-byte elements", loc)
    if st.kind == PSUM and byte % PSUM_BANK_BYTES:
        raise NKIError(f"nl.ndarray: a PSUM tensor starts at a bank (a multiple of 2048 bytes), "
                       f"not at byte {byte}", loc)
    st.placement = (0, byte)


def _on_chip_new(shape, dtype, buffer, name, loc, what) -> NkiTensor:
    t = _new(shape, dtype, buffer, name, loc, what)
    if not t._on_chip:
        raise NKIError(f"nl.{what} creates SBUF or PSUM tensors; HBM tensors are written by DMA "
                       "(nisa.dma_copy)", loc)
    return t


@api
def zeros(shape, dtype, buffer=sbuf, name="") -> NkiTensor:
    """A tensor of zeros. (A matmul accumulating into zeroed PSUM starts its accumulation group
    instead: the memset is emitted only if something else reads the zeros.)"""
    loc = caller_location()
    t = _on_chip_new(shape, dtype, buffer, name, loc, "zeros")
    current().zero_fill(t._view, loc)
    return t


@api
def ones(shape, dtype, buffer=sbuf, name="") -> NkiTensor:
    loc = caller_location()
    t = _on_chip_new(shape, dtype, buffer, name, loc, "ones")
    _ins.memset(current(), t._view, 1, loc)
    return t


@api
def full(shape, fill_value, dtype, buffer=sbuf, name="") -> NkiTensor:
    loc = caller_location()
    t = _on_chip_new(shape, dtype, buffer, name, loc, "full")
    _ins.memset(current(), t._view, number(fill_value, loc, "nl.full: fill_value"), loc)
    return t


@api
def zeros_like(x, dtype=None, buffer=None, name="") -> NkiTensor:
    x = _tensor(x, caller_location(), "nl.zeros_like: x")
    return zeros(x.shape, dtype or x.dtype, buffer or sbuf, name)


@api
def empty_like(x, dtype=None, buffer=None, name="") -> NkiTensor:
    x = _tensor(x, caller_location(), "nl.empty_like: x")
    return ndarray(x.shape, dtype or x.dtype, buffer or x.buffer, name)


@api
def rand(shape, dtype, buffer=sbuf, name="") -> NkiTensor:
    """Uniform random values in [0, 1) from the Vector Engine's generators, which
    nl.random_seed seeds (``gpsimd_instructions.uniform``: a float dtype only)."""
    loc = caller_location()
    t = _on_chip_new(shape, dtype, buffer, name, loc, "rand")
    _gpsimd.uniform(current(), t._view, loc, "nl.rand")
    return t


@api
def random_seed(seed):
    """Seeds the Vector Engine's generators (what nl.rand and nisa.rng draw from) with one
    32-bit value, a [1, 1] SBUF or PSUM tensor."""
    loc = caller_location()
    v = _tile(seed, loc, "nl.random_seed: seed")
    _gpsimd.set_rand_state(current(), v, Engine.DVE, loc, what="nl.random_seed")


@api
def shared_constant(constant) -> NkiTensor:
    """A shared_hbm tensor holding ``constant`` (a NumPy array or a .npy path)."""
    loc = caller_location()
    tr = current()
    if isinstance(constant, (str, os.PathLike)):
        try:
            constant = np.load(constant, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise NKIError(f"nl.shared_constant: cannot read {constant!r}: {e}", loc) from None
    if not isinstance(constant, np.ndarray):
        raise NKIError(f"nl.shared_constant takes a NumPy array or a .npy path, not "
                       f"{type(constant).__name__}", loc)
    dtype = _dtype(constant.dtype, loc, "nl.shared_constant")
    constants = launch()["constants"]
    key = (tr.core.index, len([k for k in constants if k[0] == tr.core.index]))
    name = f"shared_constant_{key[1]}"
    array = np.ascontiguousarray(constant.astype(dtype, copy=False))
    previous = constants.get((0, key[1]))
    if previous is not None and not np.array_equal(previous[1], array):
        raise NKIError("nl.shared_constant: with LNC=2 both cores must create the same constants",
                       loc)
    constants[key] = (name, array)
    shape = array.shape or (1,)
    view = tr.input_storage(name, dtype, tuple(int(n) for n in shape)).full_view()
    return wrap(view, shared_hbm)


@api
def shared_identity_matrix(n, dtype=uint8, dst=None) -> NkiTensor:
    """The [n, n] identity in SBUF (built once per core and dtype), or written into ``dst``."""
    loc = caller_location()
    n = _int(n, loc, "nl.shared_identity_matrix: n")
    if not 1 <= n <= NUM_PARTITIONS:
        raise NKIError(f"nl.shared_identity_matrix: n={n} must be 1..{NUM_PARTITIONS}", loc)
    tr = current()
    ident = _ins.identity_tile(tr, n, _dtype(dtype, loc), loc)
    if dst is None:
        return wrap(ident, sbuf)
    d = _tile(dst, loc, "nl.shared_identity_matrix: dst")
    if d.shape != (n, n) and (d.shape[0] != n or math.prod(d.shape[1:]) != n):
        raise NKIError(f"nl.shared_identity_matrix: dst has shape {list(d.shape)}, not [{n}, {n}]",
                       loc)
    _ins.tensor_copy(tr, ident, d.dtype, loc, out=_as(d.shape, ident, loc), what="identity")
    return dst


# ---- operands ----

def _tensor(x, loc, what: str) -> NkiTensor:
    if not isinstance(x, NkiTensor):
        raise NKIError(f"{what} must be an NkiTensor, not {type(x).__name__}", loc)
    return x


def _tile(x, loc, what: str) -> Tensor:
    """The shared view of an SBUF or PSUM tensor read by an operation (all its partitions
    written)."""
    return check_written(on_chip_view(x, loc, what), loc, what)


def _hbm(x, loc, what: str) -> Tensor:
    if not isinstance(x, NkiTensor) or x._on_chip:
        raise NKIError(f"{what} must be an HBM tensor", loc)
    return x._view_of(what, loc)


def _operand(x, loc, what: str):
    """A tile's shared view, or a number."""
    if isinstance(x, NkiTensor):
        return _tile(x, loc, what)
    return number(x, loc, what)


def number(x, loc, what: str):
    if isinstance(x, (bool, np.bool_)) or not dt.is_number(x):
        raise NKIError(f"{what} must be a number or a tensor, not {type(x).__name__}", loc)
    return x


def _int(x, loc, what: str) -> int:
    try:
        return int(x.__index__())
    except (AttributeError, TypeError):
        raise NKIError(f"{what} must be an integer", loc) from None


def _opt_dtype(dtype, loc):
    return None if dtype is None else _dtype(dtype, loc)


def _as(shape: tuple, view: Tensor, loc) -> Tensor:
    """``view`` with the elements of each partition viewed as ``shape`` (same count per
    partition), when its layout allows it."""
    if view.shape == shape:
        return view
    strides = reshape_strides(view.shape[1:], view.strides[1:], shape[1:])
    if strides is None or view.shape[0] != shape[0]:
        raise NKIError(f"a tile of shape {list(view.shape)} cannot be paired element by element "
                       f"with one of shape {list(shape)}", loc)
    return new_view(view.storage, view.offset, shape, (view.strides[0],) + strides, ())


def _v4_only(what: str, loc):
    arch = current().arch
    raise NKIError(f"{what} is available on NeuronCore-v4 (trn3) and newer; {arch} "
                   f"({dt.CORE_NAMES.get(arch, arch)}) does not have it", loc)


# ---- memory movement ----

@api
def load(src, dtype=None) -> NkiTensor:
    """A new SBUF tile holding ``src`` (HBM); its first dimension lands on partitions."""
    loc = caller_location()
    tr = current()
    view = _hbm(src, loc, "nl.load: src")
    shape = view.shape if len(view.shape) > 1 else (view.shape[0], 1)
    if shape[0] > NUM_PARTITIONS:
        raise NKIError(f"nl.load: the source's first dimension ({shape[0]}) becomes the tile's "
                       f"partition dimension, which has at most {NUM_PARTITIONS}", loc)
    tile = tr.new_result(SBUF, _opt_dtype(dtype, loc) or view.storage.dtype, shape, "load", loc)
    _ins.dma(tr, IT.Load, tile, view, loc, what="nl.load", fresh=True)
    return wrap(tile, sbuf)


@api
def store(dst, value):
    """Writes the SBUF tile ``value`` into ``dst`` (HBM)."""
    loc = caller_location()
    tr = current()
    d = _hbm(dst, loc, "nl.store: dst")
    v = _tile(value, loc, "nl.store: value")
    _ins.dma(tr, IT.Save, d, v, loc, what="nl.store")


@api
def load_transpose2d(src, dtype=None) -> NkiTensor:
    """A new SBUF tile holding the 2-D HBM tensor ``src`` [a, b] transposed ([b, a]), by a DMA
    transpose."""
    loc = caller_location()
    tr = current()
    view = _hbm(src, loc, "nl.load_transpose2d: src")
    if len(view.shape) != 2:
        raise NKIError(f"nl.load_transpose2d: src must be 2-D, not {list(view.shape)}", loc)
    a, b = view.shape
    if b > NUM_PARTITIONS:
        raise NKIError(f"nl.load_transpose2d: the source's second dimension ({b}) becomes the "
                       f"tile's partitions, at most {NUM_PARTITIONS}", loc)
    tile = tr.new_result(SBUF, _opt_dtype(dtype, loc) or view.storage.dtype, (b, a),
                         "load_transpose2d", loc)
    dma_record(tr, [tr.read(view, loc)], [tr.write_fresh(tile)], loc,
               {"mode": bir.DmaMode.Transpose})
    return wrap(tile, sbuf)


def dma_record(tr, ins: list, outs: list, loc, fields: dict, opcode=IT.DMACopy):
    """Records a DMA transfer on the next queue (queues round-robin, as ``instructions.dma``)."""
    tr.record(opcode, Engine.DMA, ins, outs, dict(fields, queue=_ins.next_dma_queue(tr)), loc)


@api
def copy(x, dtype=None) -> NkiTensor:
    """A copy of an SBUF or PSUM tile in SBUF (Vector Engine; bit-exact when dtypes match)."""
    loc = caller_location()
    v = _tile(x, loc, "nl.copy: x")
    out = _ins.tensor_copy(current(), v, _opt_dtype(dtype, loc), loc, engine=Engine.DVE,
                           what="nl.copy")
    return wrap(out, sbuf)


copy.act_func = Act.Copy  # (nisa.activation(op=nl.copy))


def assign(dst: NkiTensor, value):
    """``dst[...] = value``: a copy (tensor_copy on chip, DMA to or from HBM) or, for a number,
    a memset."""
    loc = caller_location(1)
    tr = current()
    d = dst._view_of("assignment", loc)
    if isinstance(value, NkiTensor):
        v = value._view_of("assignment", loc)
        if d.storage.on_chip and v.storage.on_chip:
            _ins.tensor_copy(tr, v, d.storage.dtype, loc, out=_as(v.shape, d, loc),
                             what="assignment")
        else:
            _ins.dma(tr, IT.DMACopy, d, v, loc, what="assignment")
    else:
        if not d.storage.on_chip:
            raise NKIError("an HBM tensor cannot be filled with a number; copy a tile into it",
                           loc)
        _ins.memset(tr, d, number(value, loc, "the assigned value"), loc)


# ---- elementwise arithmetic ----

def _binary(x, y, op, dtype, loc, what: str) -> NkiTensor:
    a, b = _operand(x, loc, f"nl.{what}: x"), _operand(y, loc, f"nl.{what}: y")
    out = _nl22._binary(a, b, op, _opt_dtype(dtype, loc), None, loc, what=what)
    return wrap(out, sbuf)


def _binary_fn(name: str, op, v4: bool = False):
    @_alu_marker(op)
    def fn(x, y, dtype=None):
        loc = caller_location()
        if v4:
            _v4_only(f"nl.{name}", loc)
        return _binary(x, y, op, dtype, loc, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise ``{op.name}`` of two tiles, or of a tile and a number (a [P, 1] "
                  "tile applies to every element of its partition).")
    fn.__module__ = __name__
    return api(fn)


_BINARY = {
    "add": Alu.add, "subtract": Alu.subtract, "multiply": Alu.mult, "divide": Alu.divide,
    "maximum": Alu.max, "minimum": Alu.min, "power": Alu.pow, "mod": Alu.mod,
    "equal": Alu.is_equal, "not_equal": Alu.not_equal, "less": Alu.is_lt,
    "less_equal": Alu.is_le, "greater": Alu.is_gt, "greater_equal": Alu.is_ge,
    "logical_and": Alu.logical_and, "logical_or": Alu.logical_or,
    "logical_xor": Alu.logical_xor, "bitwise_and": Alu.bitwise_and,
    "bitwise_or": Alu.bitwise_or, "bitwise_xor": Alu.bitwise_xor,
    "left_shift": Alu.logical_shift_left, "right_shift": Alu.logical_shift_right,
}
for _name, _op in _BINARY.items():
    globals()[_name] = _binary_fn(_name, _op)
abs_max = _binary_fn("abs_max", Alu.max, v4=True)
abs_min = _binary_fn("abs_min", Alu.min, v4=True)


def _unary_alu(x, op0, operand0, op1, operand1, dtype, loc, what, engine=Engine.DVE) -> Tensor:
    v = _tile(x, loc, f"nl.{what}: x")
    return _ins.tensor_scalar(current(), v, op0, operand0, False, op1, operand1, False,
                              _opt_dtype(dtype, loc) or v.storage.dtype, loc, engine=engine,
                              what=what)


@api
def negative(x, dtype=None) -> NkiTensor:
    return wrap(_unary_alu(x, Alu.mult, -1.0, None, None, dtype, caller_location(), "negative"))


@api
@_alu_marker(Alu.bitwise_not)  # (the Bitwise Not operator of nisa instructions' op fields)
def invert(x, dtype=None) -> NkiTensor:
    """Bitwise NOT of an integer tile."""
    loc = caller_location()
    if not dt.is_int(_tile(x, loc, "nl.invert: x").storage.dtype):
        raise NKIError("nl.invert: the input must be an integer tile", loc)
    return wrap(_unary_alu(x, Alu.bitwise_not, 0, None, None, dtype, loc, "invert"))


@api
def logical_not(x, dtype=None) -> NkiTensor:
    """``x XOR 1`` (for 0/1 inputs)."""
    return wrap(_unary_alu(x, Alu.logical_xor, 1.0, None, None, dtype, caller_location(),
                           "logical_not"))


@api
@_alu_marker(Alu.rsqrt)  # (op0=nl.rsqrt of nisa.tensor_scalar on GpSimd)
@_act_marker(Act.Rsqrt)  # (nisa.activation(op=nl.rsqrt))
def rsqrt(x, dtype=None) -> NkiTensor:
    """``1 / sqrt(x)`` on the GpSimd Engine (SBUF only, since NKI 0.5: the rule
    operand.pool-psum; ``nisa.activation(op=nl.rsqrt)`` takes PSUM)."""
    loc = caller_location()
    return wrap(_unary_alu(x, Alu.rsqrt, 0.0, None, None, dtype, loc, "rsqrt", Engine.Pool))


def _activation(x, func, dtype, loc, what, bias=None, scale=1.0) -> Tensor:
    v = x if isinstance(x, Tensor) else _tile(x, loc, f"nl.{what}: x")
    return _ins.activation(current(), func, v, bias, scale, _opt_dtype(dtype, loc), loc,
                           what=what)


def _activation_fn(name: str, func):
    @_act_marker(func)
    def fn(x, dtype=None):
        loc = caller_location()
        return wrap(_activation(x, func, dtype, loc, name))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{func.name}`` (a Scalar Engine activation)."
    fn.__module__ = __name__
    return api(fn)


_ACTIVATIONS = {
    "exp": Act.Exp, "log": Act.Ln, "tanh": Act.Tanh, "sigmoid": Act.Sigmoid, "relu": Act.Relu,
    "gelu": Act.Gelu, "gelu_apprx_sigmoid": Act.Gelu_apprx_sigmoid,
    "gelu_apprx_tanh": Act.Gelu_apprx_tanh, "gelu_dx": Act.Derivative_Gelu,
    "silu": Act.Silu, "silu_dx": Act.Derivative_silu, "softplus": Act.Softplus,
    "mish": Act.Mish, "erf": Act.Erf, "erf_dx": Act.Derivative_Erf, "sqrt": Act.Sqrt,
    "reciprocal": Act.Reciprocal, "arctan": Act.Arctan, "sign": Act.Sign, "abs": Act.Abs,
    "square": Act.Square,
}
for _name, _func in _ACTIVATIONS.items():
    globals()[_name] = _activation_fn(_name, _func)
# nl.abs is also the ALU's abs: tensor_scalar's docs name it as a unary op0
abs.alu_op = Alu.abs  # noqa: F821 (made in the loop above)


@api
def gelu_apprx_sigmoid_dx(x, dtype=None) -> NkiTensor:
    """Derivative of ``x * sigmoid(1.702 x)``: ``s + 1.702 x s (1 - s)`` with
    ``s = sigmoid(1.702 x)`` (the Scalar Engine has no single function for it)."""
    loc = caller_location()
    tr = current()
    v = _tile(x, loc, "nl.gelu_apprx_sigmoid_dx: x")
    s = _ins.activation(tr, Act.Sigmoid, v, None, 1.702, float32, loc, what="gelu_apprx_sigmoid_dx")
    one_minus = _ins.tensor_scalar(tr, s, Alu.mult, -1.0, False, Alu.add, 1.0, False, float32, loc,
                                   what="gelu_apprx_sigmoid_dx")
    t = _ins.tensor_tensor(tr, s, one_minus, Alu.mult, float32, loc, what="gelu_apprx_sigmoid_dx")
    t = _ins.tensor_tensor(tr, t, v, Alu.mult, float32, loc, what="gelu_apprx_sigmoid_dx")
    t = _ins.tensor_scalar(tr, t, Alu.mult, 1.702, False, None, None, False, float32, loc,
                           what="gelu_apprx_sigmoid_dx")
    out = _ins.tensor_tensor(tr, t, s, Alu.add, _opt_dtype(dtype, loc) or v.storage.dtype, loc,
                             what="gelu_apprx_sigmoid_dx")
    return wrap(out)


gelu_apprx_sigmoid_dx.act_func = None  # (no single Scalar Engine function)


def _sine(x, shift: float, dtype, loc, what: str) -> Tensor:
    """``sin(x + shift)``, the angle reduced to [-pi, pi) for the Scalar Engine's sine."""
    tr = current()
    v = x if isinstance(x, Tensor) else _tile(x, loc, f"nl.{what}: x")
    r = _ins.tensor_scalar(tr, v, Alu.add, shift + math.pi, False, Alu.mod, 2 * math.pi, False,
                           float32, loc, what=what)
    r = _ins.tensor_scalar(tr, r, Alu.subtract, math.pi, False, None, None, False, float32, loc,
                           what=what)
    return _activation(r, Act.Sin, dtype or v.storage.dtype, loc, what)


@api
def sin(x, dtype=None) -> NkiTensor:
    """``sin(x)`` over the whole input range: range reduction to [-pi, pi), then the Scalar
    Engine's sine (whose fit holds on [-pi, pi] only)."""
    loc = caller_location()
    return wrap(_sine(x, 0.0, _opt_dtype(dtype, loc), loc, "sin"))


@api
def cos(x, dtype=None) -> NkiTensor:
    """``cos(x) = sin(x + pi/2)``, range-reduced as nl.sin."""
    loc = caller_location()
    return wrap(_sine(x, math.pi / 2, _opt_dtype(dtype, loc), loc, "cos"))


@api
def tan(x, dtype=None) -> NkiTensor:
    """``sin(x) / cos(x)``."""
    loc = caller_location()
    v = _tile(x, loc, "nl.tan: x")
    s = _sine(v, 0.0, float32, loc, "tan")
    c = _sine(v, math.pi / 2, float32, loc, "tan")
    return wrap(_ins.tensor_tensor(current(), s, c, Alu.divide,
                                   _opt_dtype(dtype, loc) or v.storage.dtype, loc, what="tan"))


def _floor(tr, v: Tensor, loc, what, dtype=float32) -> Tensor:
    """The 2.2x dialect's floor (exact, +-inf included)."""
    return _nl22._floor_tiles(tr, v, dtype, loc, None, what)


@api
def floor(x, dtype=None) -> NkiTensor:
    loc = caller_location()
    v = _tile(x, loc, "nl.floor: x")
    return wrap(_floor(current(), v, loc, "floor", _opt_dtype(dtype, loc) or v.storage.dtype))


@api
def ceil(x, dtype=None) -> NkiTensor:
    """``-floor(-x)``."""
    loc = caller_location()
    tr = current()
    v = _tile(x, loc, "nl.ceil: x")
    neg = _ins.tensor_scalar(tr, v, Alu.mult, -1.0, False, None, None, False, float32, loc,
                             what="ceil")
    f = _floor(tr, neg, loc, "ceil")
    return wrap(_ins.tensor_scalar(tr, f, Alu.mult, -1.0, False, None, None, False,
                                   _opt_dtype(dtype, loc) or v.storage.dtype, loc, what="ceil"))


@api
def trunc(x, dtype=None) -> NkiTensor:
    """``sign(x) * floor(|x|)``."""
    loc = caller_location()
    tr = current()
    v = _tile(x, loc, "nl.trunc: x")
    mag = _ins.tensor_scalar(tr, v, Alu.abs, 0.0, False, None, None, False, float32, loc,
                             what="trunc")
    f = _floor(tr, mag, loc, "trunc")
    s = _ins.activation(tr, Act.Sign, v, None, 1.0, float32, loc, what="trunc")
    return wrap(_ins.tensor_tensor(tr, f, s, Alu.mult, _opt_dtype(dtype, loc) or v.storage.dtype,
                                   loc, what="trunc"))


@api
@_not_alu(_FMOD_NOT_ALU)  # (op=nl.fmod of an instruction: refused, saying why)
def fmod(x, y, dtype=None) -> NkiTensor:
    """Remainder with the sign of ``x``: ``sign(x) * mod(|x|, |y|)``."""
    loc = caller_location()
    tr = current()
    v = _tile(x, loc, "nl.fmod: x")
    w = _tile(y, loc, "nl.fmod: y") if isinstance(y, NkiTensor) else number(y, loc, "nl.fmod: y")
    return wrap(_nl22._fmod_tiles(tr, v, w, _opt_dtype(dtype, loc), None, loc))


@api
def where(condition, x, y, dtype=None) -> NkiTensor:
    """``x`` where ``condition`` is non-zero, else ``y`` (a tile or a number)."""
    loc = caller_location()
    cond = _tile(condition, loc, "nl.where: condition")
    a = _operand(x, loc, "nl.where: x")
    b = _operand(y, loc, "nl.where: y")
    return wrap(_ins.select(current(), cond, a, b, _opt_dtype(dtype, loc), loc))


@api
def dropout(x, rate, dtype=None) -> NkiTensor:
    """Zeroes each element with probability ``rate`` (a number), keeping the others, by draws of
    the Vector Engine's generators (which nl.random_seed seeds)."""
    loc = caller_location()
    tr = current()
    v = _tile(x, loc, "nl.dropout: x")
    if isinstance(rate, NkiTensor):
        raise NKIError("nl.dropout: a per-partition rate tile is not modelled (the simulator's "
                       "Dropout takes one probability); pass a number", loc)
    rate = float(number(rate, loc, "nl.dropout: rate"))
    if not 0.0 <= rate <= 1.0:
        raise NKIError(f"nl.dropout: rate {rate} must be in [0, 1]", loc)
    out = tr.new_result(SBUF, _opt_dtype(dtype, loc) or v.storage.dtype, v.shape, "dropout", loc)
    _ins.record_lanewise(tr, IT.Dropout, Engine.DVE, v.shape, _ins.full_box(v.shape), [v], [],
                         out, {"prob": rate}, loc, "nl.dropout")
    return wrap(out)


# ---- reductions ----

def _two_d(view: Tensor) -> Tensor:
    """On-chip results stay at least 2-D: a [P] reduction result is viewed as [P, 1]."""
    if len(view.shape) != 1:
        return view
    return new_view(view.storage, view.offset, view.shape + (1,), view.strides + (1,), ())


def _reduce(x, op, axis, dtype, keepdims, loc, what) -> Tensor:
    v = _tile(x, loc, f"nl.{what}: x")
    return _two_d(_ins.tensor_reduce(current(), op, v, axis, keepdims, False,
                                     _opt_dtype(dtype, loc), loc, what=what))


def _reduce_fn(name: str, op):
    @_alu_marker(op)
    def fn(x, axis, dtype=None, keepdims=False):
        return wrap(_reduce(x, op, axis, dtype, keepdims, caller_location(), name))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{op.name}``-reduction along free axes ``axis`` (Vector Engine)."
    fn.__module__ = __name__
    return api(fn)


sum = _reduce_fn("sum", Alu.add)  # noqa: A001  (NKI's names)
max = _reduce_fn("max", Alu.max)  # noqa: A001
min = _reduce_fn("min", Alu.min)  # noqa: A001
prod = _reduce_fn("prod", Alu.mult)


@api
def all(x, axis, dtype=None):  # noqa: A001
    """Whether every element along ``axis`` is non-zero (a logical-and reduction)."""
    return wrap(_reduce(x, Alu.logical_and, axis, dtype, False, caller_location(), "all"))


def _mean(tr, v: Tensor, axes, keepdims, loc, what) -> Tensor:
    count = math.prod(v.shape[a] for a in axes)
    total = _ins.tensor_reduce(tr, Alu.add, v, axes, keepdims, False, float32, loc, what=what)
    return _ins.tensor_scalar(tr, total, Alu.mult, 1.0 / count, False, None, None, False, float32,
                              loc, what=what)


@api
def mean(x, axis, dtype=None, keepdims=False) -> NkiTensor:
    """Arithmetic mean along ``axis`` (an fp32 sum, then a scale)."""
    loc = caller_location()
    tr = current()
    v = _tile(x, loc, "nl.mean: x")
    axes = _ins.normalize_axes(axis, len(v.shape), loc, "nl.mean")
    m = _two_d(_mean(tr, v, axes, keepdims, loc, "mean"))
    dtype = _opt_dtype(dtype, loc) or v.storage.dtype
    return wrap(m if dtype == float32 else _ins.tensor_copy(tr, m, dtype, loc, what="mean"))


@api
def var(x, axis, dtype=None, keepdims=False) -> NkiTensor:
    """Population variance along ``axis`` (``mean((x - mean(x))^2)`` in fp32); the result keeps
    the reduced axes at size 1, whatever ``keepdims`` says (as NKI)."""
    loc = caller_location()
    tr = current()
    v = _tile(x, loc, "nl.var: x")
    axes = _ins.normalize_axes(axis, len(v.shape), loc, "nl.var")
    m = _mean(tr, v, axes, True, loc, "var")
    if len(v.shape) != 2 or axes != [1]:
        raise NKIError("nl.var: reduces the free axis of a 2-D tile (axis=1)", loc)
    d = _ins.tensor_scalar(tr, v, Alu.subtract, m, False, None, None, False, float32, loc,
                           what="var")
    sq = _ins.tensor_tensor(tr, d, d, Alu.mult, float32, loc, what="var")
    out = _mean(tr, sq, axes, True, loc, "var")
    dtype = _opt_dtype(dtype, loc) or v.storage.dtype
    return wrap(out if dtype == float32 else _ins.tensor_copy(tr, out, dtype, loc, what="var"))


@api
def softmax(x, axis=-1, dtype=None) -> NkiTensor:
    """``exp(x - max) / sum(exp(x - max))`` along the free axis of a 2-D tile."""
    loc = caller_location()
    tr = current()
    v = _tile(x, loc, "nl.softmax: x")
    axes = _ins.normalize_axes(axis, len(v.shape), loc, "nl.softmax")
    if len(v.shape) != 2 or axes != [1]:
        raise NKIError("nl.softmax works along the free axis of a 2-D tile", loc)
    peak = _ins.tensor_reduce(tr, Alu.max, v, axes, True, True, float32, loc, what="softmax")
    e = _ins.activation(tr, Act.Exp, v, peak, 1.0, float32, loc, what="softmax")
    total = _ins.tensor_reduce(tr, Alu.add, e, axes, True, False, float32, loc, what="softmax")
    return wrap(_ins.tensor_scalar(tr, e, Alu.divide, total, False, None, None, False,
                                   _opt_dtype(dtype, loc) or v.storage.dtype, loc,
                                   what="softmax"))


@api
def rms_norm(x, w, axis, n, epsilon=1e-06, dtype=None, compute_dtype=None) -> NkiTensor:
    """``x / sqrt(sum(x^2) / n + epsilon) * w`` along the free axis of a 2-D tile."""
    loc = caller_location()
    tr = current()
    v = _tile(x, loc, "nl.rms_norm: x")
    weight = _tile(w, loc, "nl.rms_norm: w")
    axes = _ins.normalize_axes(axis, len(v.shape), loc, "nl.rms_norm")
    if len(v.shape) != 2 or axes != [1]:
        raise NKIError("nl.rms_norm normalises along the free axis of a 2-D tile (axis=1)", loc)
    cdt = _opt_dtype(compute_dtype, loc) or float32
    sq = _ins.tensor_tensor(tr, v, v, Alu.mult, cdt, loc, what="rms_norm")
    total = _ins.tensor_reduce(tr, Alu.add, sq, axes, True, False, float32, loc, what="rms_norm")
    ms = _ins.tensor_scalar(tr, total, Alu.mult, 1.0 / number(n, loc, "nl.rms_norm: n"), False,
                            Alu.add, float(epsilon), False, float32, loc, what="rms_norm")
    r = _ins.tensor_scalar(tr, ms, Alu.rsqrt, 0.0, False, None, None, False, float32, loc,
                           engine=Engine.Pool, what="rms_norm")
    normed = _ins.tensor_scalar(tr, v, Alu.mult, r, False, None, None, False, cdt, loc,
                                what="rms_norm")
    out = _nl22._binary(normed, weight, Alu.mult, _opt_dtype(dtype, loc) or v.storage.dtype, None,
                        loc, what="rms_norm")
    return wrap(out)


# ---- the Tensor Engine ----

@api
def matmul(x, y, transpose_x=False) -> NkiTensor:
    """``x @ y`` (``x.T @ y`` with ``transpose_x``) into a new fp32 PSUM tile. Without
    ``transpose_x``, ``x`` [M, K] is first transposed on the Tensor Engine."""
    loc = caller_location()
    tr = current()
    a = _tile(x, loc, "nl.matmul: x")
    b = _tile(y, loc, "nl.matmul: y")
    if not transpose_x:
        xt = _ins.transpose_pe(tr, a, a.storage.dtype, loc, what="nl.matmul")
        a = _ins.tensor_copy(tr, xt, a.storage.dtype, loc, what="nl.matmul")
    return wrap(_ins.matmul(tr, a, b, loc, what="nl.matmul"), psum)


@api
def transpose(x, dtype=None) -> NkiTensor:
    """Swaps the partition and free dimension of a 2-D SBUF tile on the Tensor Engine; the
    result is in PSUM."""
    loc = caller_location()
    v = _tile(x, loc, "nl.transpose: x")
    return wrap(_ins.transpose_pe(current(), v, _opt_dtype(dtype, loc), loc,
                                  what="nl.transpose"), psum)


# ---- shapes ----

@api
def broadcast_to(x, shape, dtype=None) -> NkiTensor:
    """A new SBUF tile of ``shape`` repeating ``x`` along its size-1 dimensions (a single
    partition reaches all partitions through the Tensor Engine)."""
    loc = caller_location()
    v = _tile(x, loc, "nl.broadcast_to: x")
    dims = _shape(shape, loc, "nl.broadcast_to")
    if len(dims) != len(v.shape) or builtins.any(a != b and a != 1 for a, b in zip(v.shape, dims)):
        raise NKIError(f"nl.broadcast_to: cannot broadcast {list(v.shape)} to {list(dims)} (same "
                       "rank; each dimension equal or from 1)", loc)
    tr = current()
    dtype = _opt_dtype(dtype, loc) or v.storage.dtype
    if dims == v.shape and dtype == v.storage.dtype:
        return x
    if dims[1:] != v.shape[1:]:  # free dimensions: a copy reading them with step 0
        strides = (v.strides[0],) + tuple(0 if n == 1 else s
                                          for n, s in zip(v.shape[1:], v.strides[1:]))
        src = new_view(v.storage, v.offset, (v.shape[0],) + dims[1:], strides, ())
        out = tr.new_result(SBUF, dtype if dims[0] == v.shape[0] else v.storage.dtype,
                            src.shape, "broadcast_to", loc)
        v = _ins.tensor_copy(tr, src, out.storage.dtype, loc, out=out, what="broadcast_to")
    if dims[0] != v.shape[0]:  # one partition to all: the Tensor Engine (a ones-row matmul)
        flat = _as((v.shape[0], math.prod(v.shape[1:])), v, loc)
        wide = _nl22._broadcast_tile(flat, (dims[0], flat.shape[1]), loc)
        v = _as(dims, wide, loc)
    if v.storage.dtype != dtype:
        v = _ins.tensor_copy(tr, v, dtype, loc, what="broadcast_to")
    return wrap(v)


@api
def expand_dims(x, axis) -> NkiTensor:
    """A view of ``x`` with a new size-1 dimension at ``axis``."""
    return _tensor(x, caller_location(), "nl.expand_dims: x").expand_dim(axis)


@api
def gather_flattened(data, indices, axis=0, dtype=None) -> NkiTensor:
    """``result[p, j] = data[p, indices[p, j]]``, data's free dimensions flattened, on the GpSimd
    Engine (nisa.nc_n_gather); a ``dtype`` other than data's adds a copy."""
    loc = caller_location()
    tr = current()
    if axis != 0:
        raise NKIError(f"nl.gather_flattened: axis={axis!r} is not modelled: the documentation "
                       "describes the gather along the flattened free dimensions (axis=0) only",
                       loc)
    v = _tile(data, loc, "nl.gather_flattened: data")
    i = _tile(indices, loc, "nl.gather_flattened: indices")
    out = _gpsimd.gather(tr, v, i, loc, what="nl.gather_flattened")
    want = _opt_dtype(dtype, loc)
    if want is not None and want != out.dtype:
        out = _ins.tensor_copy(tr, out, want, loc, what="nl.gather_flattened")
    return wrap(out)


# ---- debugging ----

@api
def device_print(print_prefix, tensor):
    """Prints ``print_prefix`` and the tensor's values when the kernel is simulated."""
    loc = caller_location()
    if not isinstance(print_prefix, str):
        raise NKIError("nl.device_print: print_prefix must be a string", loc)
    view = _tensor(tensor, loc, "nl.device_print: tensor")._view_of("nl.device_print", loc)
    _ins.device_print(current(), print_prefix, view, loc)


__all__ = sorted(set(
    ["NkiTensor", "NKIObject", "MemoryRegion", "tile_size", "prelu", "bypass", "average",
     "sbuf", "psum", "hbm", "private_hbm", "shared_hbm", "is_hbm", "is_on_chip", "is_psum",
     "is_sbuf", "affine_range", "sequential_range", "static_range", "dynamic_range", "ds",
     "fori_loop", "while_loop", "program_id", "num_programs", "program_ndim", "no_reorder",
     "ndarray", "zeros", "ones", "full", "zeros_like", "empty_like", "rand", "random_seed",
     "shared_constant", "shared_identity_matrix", "load", "store", "load_transpose2d", "copy",
     "negative", "invert", "logical_not", "rsqrt", "gelu_apprx_sigmoid_dx", "sin", "cos", "tan",
     "floor", "ceil", "trunc", "fmod", "where", "dropout", "sum", "max", "min", "prod", "all",
     "mean", "var", "softmax", "rms_norm", "matmul", "transpose", "broadcast_to", "expand_dims",
     "gather_flattened", "device_print", "abs_max", "abs_min"]
    + list(_BINARY) + list(_ACTIVATIONS) + list(dt.NAMES)))
