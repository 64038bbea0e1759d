"""``neuronxsim.nki.language`` (``nl``): the NKI language as kernels of the 2.2x SDKs use it.

Tiles combine with NKI's broadcasting and type promotion; each call records the ISA instructions
NKI would emit on the engines NKI would use: ``nl.load``/``nl.store`` are DMA transfers, the
transcendental functions (``nl.exp``, ``nl.gelu``, ...) Scalar Engine activations, arithmetic,
comparisons and reductions Vector Engine instructions, ``nl.matmul``/``nl.transpose`` Tensor
Engine (PE) matmuls. Results are new SBUF tiles (PSUM for matmuls); ``dst[...] = expr`` makes
the instruction that computes ``expr`` write ``dst`` directly.

``nl.sum``, ``nl.max``, ``nl.min``, ``nl.all`` and ``nl.abs`` shadow Python's builtins in this
module: code here calls ``builtins.min`` and friends explicitly.
"""

from __future__ import annotations

import builtins
import math
import sys

import ml_dtypes
import numpy as np

from neuronxsim import bir
from neuronxsim.bir import target
from neuronxsim.starfish.lib import _core

from . import compiler as _ncc
from . import dtypes as _dt
from . import fused_instructions as _fused
from . import gpsimd_instructions as _gpsimd
from . import instructions as _ins
from .errors import NKIError, caller_location
from .indexing import arange, ds, mgrid  # noqa: F401  (public names of nl)
from .indexing import IndexExpr as _IndexExpr
from .opcodes import Act, Alu, activation as _act_marker, alu as _alu_marker
from .opcodes import FMOD_NOT_ALU as _FMOD_NOT_ALU, alu_op as _alu_op, not_alu as _not_alu
from .compiler import DirectAllocation
from .tensor import (HBM, PSUM, PSUM_BANK_BYTES, SBUF, SHARED_HBM, BlockedTensor, IndirectView,
                     Tensor, new_view, same_view)
from .tracer import IT, PSUM_BYTES, Engine, current, write_plain

_new_slotted = _core.nki.new_slotted  # (a slotted object without its __init__ frame, see _blocked)

# ---- data types and buffers ----
bfloat16 = _dt.bfloat16
float16 = _dt.float16
float32 = _dt.float32
float8_e4m3 = _dt.float8_e4m3
float8_e5m2 = _dt.float8_e5m2
int8, int16, int32 = _dt.int8, _dt.int16, _dt.int32
uint8, uint16, uint32 = _dt.uint8, _dt.uint16, _dt.uint32
bool_ = _dt.bool_

sbuf = _ncc.sbuf  # (the strings "sbuf" and "psum", which also make direct allocations)
psum = _ncc.psum
hbm = HBM
private_hbm = HBM
shared_hbm = SHARED_HBM


class par_dim(int):
    """Marks the partition dimension in an ``nl.ndarray`` shape: ``(4, nl.par_dim(128), 512)``
    is four [128, 512] tiles."""


class tile_size:
    """The hardware's tile limits, NKI's documented values (from the target description,
    neuronxsim.bir.target)."""
    pmax = target.uniform("num_partitions")  # partitions
    # free-dimension elements of a PSUM tile: one bank of fp32 (NKI's programming model)
    psum_fmax = target.uniform("psum_bank_bytes") // np.dtype(np.float32).itemsize
    psum_partition_size = target.uniform("psum_bytes_per_partition")  # bytes per partition of PSUM
    gemm_stationary_fmax = target.uniform("pe_cols")  # M of nc_matmul
    gemm_moving_fmax = target.uniform("pe_max_moving_free_elements")  # N of nc_matmul
    bn_stats_fmax = target.uniform("bn_stats_max_free_elements")  # elements per partition nisa.bn_stats takes


class fp32:
    """FP32 constants: ``min``, the bit pattern 0xff7fffff (the most negative finite fp32)."""
    min = float(np.array(0xFF7FFFFF, dtype=np.uint32).view(np.float32))


class bfp16:
    """BFLOAT16 constants: ``min``, the bit pattern 0xff80 (which is bfloat16's -inf)."""
    min = float(np.array(0xFF80, dtype=np.uint16).view(_dt.bfloat16))


def finfo(dtype):
    """Machine limits of a floating-point NKI dtype (``min``, ``max``, ``eps``, ``tiny``, ...),
    as ``numpy.finfo`` (``ml_dtypes.finfo`` for bfloat16 and the fp8 types)."""
    d = _dtype(dtype, caller_location())
    if not _dt.is_float(d):
        raise NKIError(f"nl.finfo: {_dt.name(d)} is not a floating-point type (numpy.iinfo "
                       "describes integers)", caller_location())
    return ml_dtypes.finfo(d)


def static_cast(input_data, dtype):
    """A scalar or NumPy array cast to ``dtype`` (a NumPy operation, outside and inside
    kernels: it does not touch tiles)."""
    d = _dtype(dtype, caller_location())
    if isinstance(input_data, (Tensor, BlockedTensor)):
        raise NKIError("nl.static_cast casts NumPy arrays and scalars; cast a tile with nl.copy"
                       "(x, dtype=...)", caller_location())
    return np.asarray(input_data).astype(d) if np.ndim(input_data) else d.type(input_data)


# ---- loops and SPMD programs ----

def _loop_range(what: str, start, stop, step, loc) -> range:
    """The values of loop ``what`` (``nl.affine_range`` and its kin, in both dialects): Python's
    ``range(start, stop, step)``, or ``range(start)`` without ``stop``; an NKIError at ``loc``
    for bounds ``range`` refuses (a float, a zero step) and for a step without a stop."""
    bounds = (start,) if stop is None else (start, stop, step)
    default_step = step.__class__ is int and step == 1
    problem = None
    if stop is None and not default_step:
        problem = f"a step needs a stop ({what}(start, stop, step))"
    elif not builtins.all(hasattr(b, "__index__") for b in bounds):
        b = next(b for b in bounds if not hasattr(b, "__index__"))
        problem = f"loop bounds are integers, not {type(b).__name__} {b!r}"
    elif stop is not None and step == 0:
        problem = "the step must not be zero"
    if problem is None:
        return range(*bounds)
    given = [repr(start)] + ([] if stop is None else [repr(stop)]) + \
        ([] if default_step else [f"step={step!r}"])
    raise NKIError(f"{what}({', '.join(given)}): {problem}", loc)


def _traced_loop(kind: str, start, stop, step, directives):
    """The values of a loop the trace unrolls, each iteration recorded as one of a ``kind``
    loop (see :class:`~neuronxsim.nki.record.Loop`) with its ``directives``."""
    loc = caller_location(1)
    values = _loop_range(f"nl.{kind}_range", start, stop, step, loc)
    if directives is None:  # (the commonest: no directives to check)
        return current().iterate(kind, values, loc)
    if not isinstance(directives, (tuple, list)):
        directives = (directives,)
    for d in directives:
        if not isinstance(d, _ncc.Directive):
            raise NKIError(f"directives takes nki.compiler.no_reorder() and "
                           f"nki.compiler.multi_buffer(n), not {d!r}", loc)
    return current().iterate(kind, values, loc, tuple(directives))


def affine_range(start, stop=None, step=1, *, directives=None):
    """A loop whose iterations are independent; the trace unrolls it. ``directives``:
    ``nki.compiler.no_reorder()`` / ``multi_buffer(n)`` (see :class:`~neuronxsim.nki.compiler.
    Directive`)."""
    return _traced_loop("affine", start, stop, step, directives)


def sequential_range(start, stop=None, step=1, *, directives=None):
    """A loop whose iterations depend on each other (run in order); the trace unrolls it."""
    return _traced_loop("sequential", start, stop, step, directives)


def static_range(start, stop=None, step=1):
    """A loop the compiler unrolls; the trace unrolls it."""
    return _traced_loop("static", start, stop, step, None)


# A loop over plain ints (no directives) is recorded in C (cpp/python/trace_loop_iterate.cpp's
# range_fast, through a FastCall: cpp/python/trace_fast_call.cpp); any other call runs the
# definitions above, which stay the home of every check and error.
affine_range = _core.nki.FastCall(affine_range, _core.nki.range_fast("affine"))
sequential_range = _core.nki.FastCall(sequential_range, _core.nki.range_fast("sequential"))
static_range = _core.nki.FastCall(static_range, _core.nki.range_fast("static"))


def _grid_axis(axis, grid: tuple, what: str, loc) -> int:
    """``axis`` of the launch grid ``grid``, checked: an integer from 0 to the grid's last."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise NKIError(f"{what}: a launch grid axis is an integer, not {type(axis).__name__} "
                       f"{axis!r}", loc)
    if not 0 <= axis < len(grid):
        raise NKIError(f"{what}: the launch grid has {len(grid)} dimension(s), no axis {axis}", loc)
    return int(axis)


def program_id(axis: int) -> int:
    """Index of this SPMD instance along launch-grid ``axis`` (the NeuronCore index for an
    ``nl.nc(n)`` axis)."""
    tr = current()
    ids = tr.program_ids
    if axis.__class__ is int and 0 <= axis < len(ids):
        return ids[axis]
    return ids[_grid_axis(axis, ids, f"nl.program_id({axis!r})", caller_location())]


def num_programs(axes=None):
    """The number of SPMD instances along launch-grid axis ``axes`` (a tuple of them for a
    tuple of axes; the whole grid's for None)."""
    tr = current()
    if axes is None:
        return math.prod(tr.grid)
    what = f"nl.num_programs({axes!r})"
    if isinstance(axes, (tuple, list)):
        loc = caller_location()
        return tuple(tr.grid[_grid_axis(a, tr.grid, what, loc)] for a in axes)
    return tr.grid[_grid_axis(axes, tr.grid, what, caller_location())]


def program_ndim() -> int:
    return len(current().grid)


class nc:
    """A launch-grid dimension spread over NeuronCores: ``kernel[nl.nc(2)]`` traces one BIR
    function per core, with ``nl.program_id`` of that axis the core index. ``nl.nc(2) * 4`` and
    ``4 * nl.nc(2)`` are ``nl.spmd_dim(nl.nc(2), 4)`` and ``nl.spmd_dim(4, nl.nc(2))``."""

    def __init__(self, n: int):
        if type(n) is not int or n < 1:
            raise NKIError(f"nl.nc({n!r}) needs a positive number of cores", caller_location())
        self.n = n

    def __mul__(self, other):
        return spmd_dim(self, other)

    def __rmul__(self, other):
        return spmd_dim(other, self)

    def __repr__(self):
        return f"nl.nc({self.n})"


class spmd_dim:
    """A launch-grid dimension of ``outer * inner`` instances, ``program_id = i_outer * inner +
    i_inner``, with one factor an ``nl.nc(n)``: ``spmd_dim(nl.nc(2), 4)`` puts instances 0-3 on
    core 0 and 4-7 on core 1; ``spmd_dim(4, nl.nc(2))`` puts the even ones on core 0 and the
    odd ones on core 1 (or no ``nc``: a plain dimension of that size)."""

    def __init__(self, outer, inner):
        loc = caller_location()
        for part in (outer, inner):
            if not isinstance(part, nc) and (type(part) is not int or part < 1):
                raise NKIError(f"nl.spmd_dim takes positive integers and nl.nc(n), not "
                               f"{part!r}", loc)
        if isinstance(outer, nc) and isinstance(inner, nc):
            raise NKIError("nl.spmd_dim: only one factor can be spread over NeuronCores", loc)
        self.outer = outer
        self.inner = inner

    @property
    def size(self) -> int:
        return (getattr(self.outer, "n", self.outer)) * (getattr(self.inner, "n", self.inner))

    @property
    def cores(self) -> int:
        for part in (self.outer, self.inner):
            if isinstance(part, nc):
                return part.n
        return 1

    def core_of(self, index: int) -> int:
        """The NeuronCore of instance ``index`` along this dimension."""
        inner = getattr(self.inner, "n", self.inner)
        if isinstance(self.outer, nc):
            return index // inner
        if isinstance(self.inner, nc):
            return index % inner
        return 0

    def __repr__(self):
        return f"nl.spmd_dim({self.outer!r}, {self.inner!r})"


# ---- creating tensors ----

def _parse_shape(shape, loc) -> tuple[tuple, int]:
    if type(shape) is tuple and shape:  # the common cases: plain positive ints, one nl.par_dim
        pidx = -1
        i = 0
        for n in shape:
            c = n.__class__
            if c is par_dim:
                if pidx >= 0 or n <= 0:
                    break  # (the loop below says what is wrong)
                pidx = i
            elif c is not int or n <= 0:
                break
            i += 1
        else:
            return (shape, 0) if pidx < 0 else (tuple(map(int, shape)), pidx)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    dims, pidx = [], None
    for i, n in enumerate(shape):
        if isinstance(n, par_dim):
            if pidx is not None:
                raise NKIError("a shape can have only one nl.par_dim", loc)
            pidx = i
        try:
            n = int(n)
        except TypeError:
            raise NKIError(f"shape entries must be integers, got {type(n).__name__}", loc) from None
        if n <= 0:
            raise NKIError(f"shape {list(shape)} has a non-positive dimension", loc)
        dims.append(n)
    if not dims:
        raise NKIError("a tensor needs at least one dimension", loc)
    return tuple(dims), pidx or 0


def _dtype(value, loc, what="dtype"):
    d = _dt.as_dtype(value)
    if d is None:
        raise NKIError(f"{what} {value!r} is not an NKI data type ({_dt.supported_names()})", loc)
    return d


def _new_tensor(shape, dtype, buffer, name, loc, what: str):
    """A new tensor: a :class:`Tensor` view of a new storage, or a :class:`BlockedTensor` for an
    on-chip shape with block dimensions."""
    tr = current()
    dims, pidx = _parse_shape(shape, loc)
    # Kernels create tensors of a few shapes over and over in their loops: a shape of plain
    # ints (_parse_shape hands it back as it is) has its dtype and buffer checked once.
    spec = None
    dtype_arg = dtype
    cached = buffer.__class__ is not DirectAllocation
    # (a shape with nl.par_dim equals the same ints without it: its parsed form is the key)
    key = (shape, dtype, buffer) if dims is shape else (dims, pidx, dtype, buffer)
    if cached:
        try:
            spec = _CHECKED_SPECS.get(key)
        except TypeError:  # an unhashable dtype or buffer: _tensor_spec refuses it
            pass
    if spec is None:
        spec = _tensor_spec(dims, pidx, dtype, buffer, loc, what)
        if cached:
            _CHECKED_SPECS[key] = spec
    dtype, kind = spec
    allocation = None
    if buffer.__class__ is DirectAllocation and not tr.force_auto_alloc:
        allocation = tr.direct_allocation(buffer, loc)
    if pidx and (kind == SBUF or kind == PSUM):  # (in HBM, nl.par_dim marks nothing)
        if allocation is None and not name and cached:  # (the next such call is C's: ndarray)
            _NEW_BLOCKED[(dims, pidx, dtype_arg, buffer)] = (dims[:pidx], dims[pidx:], dtype, kind)
        return _blocked(tr, dims, pidx, dtype, kind, allocation, name or what, bool(name), loc)
    if allocation is None and not name and (kind == SBUF or kind == PSUM):
        # an unnamed tile, named and placed as an instruction's result is (what tr.new_storage
        # and full_view do for it)
        if cached and dims is shape:  # (see ndarray)
            _NEW_TILES[key] = (kind, dtype, dims)
        return tr.new_result(kind, dtype, dims, what, loc)
    if name and kind == SHARED_HBM:
        return tr.named_shared_storage(dtype, dims, name, loc).full_view()
    placement = None
    if allocation is not None:
        placement = _placement(tr, allocation, (), dims, dtype, loc)
    return tr.new_storage(kind, dtype, dims, name or what, loc, explicit_name=bool(name),
                          placement=placement).full_view()


def _blocked(tr, dims: tuple, pidx: int, dtype, kind: str, allocation, name: str,
             explicit: bool, loc) -> BlockedTensor:
    """A tensor of ``dims`` with block dimensions ``dims[:pidx]`` (see BlockedTensor)."""
    tile = dims[pidx:]
    if allocation is None and not explicit:
        new_result = tr.new_result

        def make_block(index: tuple) -> Tensor:  # (what the general one below does for it)
            return new_result(kind, dtype, tile, name, loc)
    else:
        def make_block(index: tuple) -> Tensor:
            placement = None if allocation is None else \
                _placement(tr, allocation, index, tile, dtype, loc)
            label = f"{name}[{', '.join(map(str, index))}]" if explicit else name
            return tr.new_storage(kind, dtype, tile, label, loc, explicit_name=explicit,
                                  placement=placement).full_view()
    # (BlockedTensor(dims[:pidx], tile, dtype, kind, name, loc, make_block), without the
    # __init__ frame: its slots in order, blocks {} and last_subscript None)
    return _new_slotted(BlockedTensor, dims[:pidx], tile, dtype, kind, name, loc, {}, make_block)


def _placement(tr, allocation, index: tuple, tile: tuple, dtype, loc) -> tuple:
    """(start partition, byte address) of block ``index`` of a directly allocated tensor."""
    if allocation.space == SBUF:
        capacity = tr.sbuf_bytes
    else:
        capacity = PSUM_BYTES
    return allocation.placement(index, tile[0], math.prod(tile[1:]) * dtype.itemsize, capacity,
                                loc)


_CHECKED_SPECS: dict = {}  # (shape, dtype, buffer) -> (NumPy dtype, buffer), see _new_tensor
#: (shape, dtype, buffer) -> (kind, NumPy dtype, dims) of the unnamed tiles nl.ndarray made
#: (plain int shapes, no nl.par_dim, no direct allocation): the next such call is new_result.
_NEW_TILES: dict = {}
#: (dims, partition axis, dtype, buffer) -> (block shape, tile shape, NumPy dtype, kind) of the
#: unnamed tensors with block dimensions nl.ndarray / nl.zeros made (no direct allocation): the
#: next such call is made in C (cpp/python/trace_new_blocked.cpp), as _blocked makes it.
_NEW_BLOCKED: dict = {}


def _tensor_spec(dims: tuple, pidx: int, dtype, buffer, loc, what: str) -> tuple:
    """(NumPy dtype, buffer kind) of a new tensor of shape ``dims`` (partition axis ``pidx``),
    checked; ``buffer`` a buffer name or a direct allocation."""
    dtype = _dtype(dtype, loc)
    if buffer is None:
        buffer = SBUF
    elif buffer.__class__ is DirectAllocation:
        buffer = buffer.space
    if buffer not in (SBUF, PSUM, HBM, SHARED_HBM):
        raise NKIError(f"unknown buffer {buffer!r}: use nl.sbuf, nl.psum, nl.hbm, nl.shared_hbm "
                       "or an nki.compiler allocation", loc)
    # (interned, as the C fast paths' "psum" and "sbuf" are: they compare a storage's kind with
    # those several times per instruction, by identity first, trace_equal.h)
    buffer = sys.intern(str(buffer))
    if buffer in (SBUF, PSUM):
        if dims[pidx] > tile_size.pmax:
            raise NKIError(f"{what} of shape {list(dims)} puts {dims[pidx]} rows on the partition "
                           f"dimension; a tile has at most {tile_size.pmax} partitions (tile the "
                           "tensor, or mark another dimension with nl.par_dim)", loc)
        if buffer == PSUM:
            per_block = math.prod(dims[pidx + 1:]) * dtype.itemsize
            if per_block > PSUM_BANK_BYTES:
                raise NKIError(f"PSUM tile of shape {list(dims)} needs {per_block} bytes per "
                               "partition; a PSUM tile must fit one 2 KiB bank", loc)
    return dtype, buffer


def ndarray(shape, dtype, *, buffer=None, name: str = ""):
    """A new tensor (contents undefined until written): a tile, an HBM tensor, or an on-chip
    tensor with block dimensions (dimensions before ``nl.par_dim``: one tile per block).
    ``buffer``: ``nl.sbuf`` (the default), ``nl.psum``, ``nl.hbm``, ``nl.shared_hbm`` or a direct
    allocation of ``nki.compiler``."""
    if not name and shape.__class__ is tuple:  # (a tile like one made before: _new_tensor's steps)
        try:
            tile = _NEW_TILES.get((shape, dtype, buffer))
        except TypeError:  # (an unhashable argument: _new_tensor refuses it)
            tile = None
        # (an nl.par_dim equals its int: (2, nl.par_dim(128), 4), blocks of [128, 4] tiles, finds
        # the entry of the [2, 128, 4] tile)
        if tile is not None:
            for n in shape:
                if n.__class__ is par_dim:
                    break
            else:
                return current().new_result(tile[0], tile[1], tile[2], "ndarray",
                                            caller_location())
    return _new_tensor(shape, dtype, buffer, name, caller_location(), "ndarray")


def _flag(value, name: str, loc):
    if value is not True and value is not False:
        raise NKIError(f"{name} is True or False, not {value!r}", loc)


def _filled(shape, dtype, buffer, name, loc, what):
    """A new on-chip tensor and the tiles to fill (one per block)."""
    t = _new_tensor(shape, dtype, buffer, name, loc, what)
    if t.__class__ is BlockedTensor:
        return t, t.all_blocks()
    if not t.storage.on_chip:
        raise NKIError(f"nl.{what} creates on-chip tiles; HBM tensors are written by DMA", loc)
    return t, (t,)


def zeros(shape, dtype, *, buffer=None, name: str = "", lazy_initialization: bool = False):
    """A tile of zeros. The memset is emitted only if something reads the zeros: a matmul
    accumulating into a zeroed PSUM tile starts its accumulation group instead.
    (``lazy_initialization``, which lets the compiler place the fill late, changes nothing
    here: the trace keeps program order and the fill's values are the same.)"""
    loc = caller_location()
    _flag(lazy_initialization, "lazy_initialization", loc)
    t, tiles = _filled(shape, dtype, buffer, name, loc, "zeros")
    tr = current()
    for tile in tiles:
        tr.zero_fill(tile, loc)
    return t


def full(shape, fill_value, dtype, *, buffer=None, name: str = "",
         lazy_initialization: bool = False):
    """A tile filled with ``fill_value`` (``lazy_initialization``: see :func:`zeros`)."""
    loc = caller_location()
    _flag(lazy_initialization, "lazy_initialization", loc)
    t, tiles = _filled(shape, dtype, buffer, name, loc, "full")
    for tile in tiles:
        _ins.memset(current(), tile, fill_value, loc, what="full: fill_value")
    return t


def ones(shape, dtype, *, buffer=None, name: str = "", lazy_initialization: bool = False):
    """A tile of ones (``lazy_initialization``: see :func:`zeros`)."""
    loc = caller_location()
    _flag(lazy_initialization, "lazy_initialization", loc)
    t, tiles = _filled(shape, dtype, buffer, name, loc, "ones")
    for tile in tiles:
        _ins.memset(current(), tile, 1.0, loc)
    return t


def zeros_like(a: Tensor, dtype=None, *, buffer=None, name: str = "") -> Tensor:
    """A tile of zeros of ``a``'s shape (and dtype and buffer unless given)."""
    return zeros(a.shape, dtype or a.dtype, buffer=buffer or a.buffer, name=name)


def empty_like(a: Tensor, dtype=None, *, buffer=None, name: str = "") -> Tensor:
    """A new tensor of ``a``'s shape (and dtype and buffer unless given), contents undefined."""
    return ndarray(a.shape, dtype or a.dtype, buffer=buffer or a.buffer, name=name)


def shared_constant(constant, dtype=None):
    """An HBM tensor holding ``constant`` (a NumPy array, cast to ``dtype`` if given): an input
    of the traced module bound to these values when the kernel runs."""
    loc = caller_location()
    if isinstance(constant, (Tensor, BlockedTensor)):
        raise NKIError("nl.shared_constant takes a NumPy array (values known when the kernel is "
                       "traced), not a tensor", loc)
    values = np.asarray(constant)
    if values.ndim == 0:
        raise NKIError("nl.shared_constant needs an array of at least one dimension", loc)
    d = _dtype(values.dtype if dtype is None else dtype, loc)
    values = np.ascontiguousarray(values.astype(d))
    return current().constant_storage(values, loc).full_view()


def shared_identity_matrix(n, dtype=_dt.uint8):
    """The ``[n, n]`` identity as a shared constant of ``dtype``."""
    loc = caller_location()
    if type(n) is not int or n < 1:
        raise NKIError(f"nl.shared_identity_matrix: n must be a positive integer, not {n!r}", loc)
    d = _dtype(dtype, loc)
    return current().constant_storage(np.identity(n, dtype=d), loc).full_view()


# ---- memory movement ----

def _tile(x, loc, what: str, arg: str = "") -> Tensor:
    """``x``, checked to be an SBUF or PSUM tile. The errors call it ``what``, or
    ``nl.<what>: <arg>`` when ``arg`` is given (formatted only for an error)."""
    if x.__class__ is Tensor and x.storage.on_chip:
        return x
    if arg:
        what = f"nl.{what}: {arg}"
    if x.__class__ is BlockedTensor:
        raise NKIError(f"{what} is {x.hint}, a tensor of {len(x.block_shape)} block "
                       f"dimension(s) {list(x.block_shape)}: index a block (t[i, ...]); "
                       "instructions work on one tile at a time", loc)
    if not isinstance(x, Tensor):
        raise NKIError(f"{what} must be a tile, not {_not_a_tensor(x)}", loc)
    if not x.storage.on_chip:
        raise NKIError(f"{what} is the HBM tensor {x.storage.describe()}; compute engines work on "
                       "SBUF/PSUM tiles (nl.load it first)", loc)
    return x


def _not_a_tensor(x) -> str:
    """What ``x``, which an instruction takes for a tensor, is instead (for its refusal)."""
    if isinstance(x, np.ndarray):
        return ("a NumPy array: only the kernel's own array arguments become its input tensors, "
                "not arrays inside a list, tuple or other object (pass each as an argument)")
    return type(x).__name__


def _hbm(x, loc, what: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise NKIError(f"{what} must be an HBM tensor, not {_not_a_tensor(x)}", loc)
    if x.storage.on_chip:
        raise NKIError(f"{what} must be an HBM tensor, not the {x.storage.kind.upper()} tile "
                       f"{x.storage.describe()}", loc)
    return x


def load(src, *, mask=None, dtype=None) -> Tensor:
    """Copies ``src`` (HBM) into a new SBUF tile of the same shape; ``src``'s first dimension
    lands on partitions."""
    loc = caller_location()
    tr = current()
    if src.__class__ is IndirectView:  # t[idx_tile, ...]: a gather of rows
        tile = tr.new_result(SBUF, _dtype(dtype, loc) if dtype is not None else src.dtype,
                             src.shape, "load", loc)
        _ins.dma_gather(tr, tile, src, loc, "nl.load", mask)
        return tile
    if src.__class__ is not Tensor or src.storage.on_chip:
        _hbm(src, loc, "nl.load: src")  # (raises)
    shape = src.shape if len(src.shape) else (1,)
    if shape[0] > tile_size.pmax:
        raise NKIError(f"nl.load: the source's first dimension ({shape[0]}) becomes the tile's "
                       f"partition dimension, which has at most {tile_size.pmax} partitions", loc)
    dtype = _dtype(dtype, loc) if dtype is not None else src.storage.dtype
    tile = tr.new_result(SBUF, dtype, shape, "load", loc)
    if mask is not None and shape is src.shape and _ins.keeps_all(mask, shape):
        mask = None  # (dma_general's first step for it, before its checks none of which fail)
    # (_ins.dma's steps, its plain case first, without its frame: most loads are plain)
    if mask is not None or _dma_plain(tr, _LOAD, tile, src, loc, True) is NotImplemented:
        _ins.dma_general(tr, _LOAD, tile, src, loc, mask, None, "nl.load", True, None)
    return tile


def load_transpose2d(src, *, mask=None, dtype=None) -> Tensor:
    """Loads the 2-D HBM tensor ``src`` ``[a, b]`` transposed into a new SBUF tile ``[b, a]``
    (one DMA in the engine's transpose mode; ``b`` at most 128)."""
    loc = caller_location()
    tr = current()
    if src.__class__ is not Tensor or src.storage.on_chip:
        _hbm(src, loc, "nl.load_transpose2d: src")  # (raises)
    if mask is not None:
        raise NKIError("nl.load_transpose2d: masks are not supported; slice the source", loc)
    if len(src.shape) != 2:
        raise NKIError(f"nl.load_transpose2d: src must be 2-D; it is {list(src.shape)}", loc)
    a, b = src.shape
    if b > tile_size.pmax:
        raise NKIError(f"nl.load_transpose2d: the source's second dimension ({b}) becomes the "
                       f"tile's partition dimension, which has at most {tile_size.pmax}", loc)
    tile = tr.new_result(SBUF, _dtype(dtype, loc) if dtype is not None else src.dtype, (b, a),
                         "load_transpose2d", loc)
    _ins.dma_transpose(tr, IT.Load, tile, src, loc, "nl.load_transpose2d")
    return tile


def _filled_like(dst: Tensor, value, loc) -> Tensor:
    """An SBUF tile of ``dst``'s shape and dtype filled with the number ``value``."""
    if not dst.shape or dst.shape[0] > _ins.NUM_PARTITIONS:
        raise NKIError(f"nl.store of a number fills a tile of dst's shape {list(dst.shape)}, "
                       f"whose first dimension must be at most {_ins.NUM_PARTITIONS} partitions",
                       loc)
    t, _ = _filled(dst.shape, dst.dtype, None, "", loc, "store")
    _ins.memset(current(), t, value, loc)
    return t


def store(dst, value, *, mask=None):
    """Copies the tile ``value`` into ``dst`` (HBM; rows picked by an index tile,
    ``t[idx, ...]``, are scattered to); a number fills ``dst`` with it."""
    loc = caller_location()
    tr = current()
    scatter = dst.__class__ is IndirectView
    if not scatter and (dst.__class__ is not Tensor or dst.storage.on_chip):
        _hbm(dst, loc, "nl.store: dst")  # (raises)
    if _dt.is_number(value):
        value = _filled_like(dst, value, loc)  # (the API page's example: "effectively a memset")
    if value.__class__ is not Tensor or not value.storage.on_chip:
        _tile(value, loc, "nl.store: value")  # (raises)
    if value.storage.kind == PSUM:
        value = _ins.tensor_copy(tr, value, value.dtype, loc, mask=mask, what="nl.store")
    if scatter:
        _ins.dma_scatter(tr, dst, value, loc, "nl.store", mask)
        return
    shape = value.shape
    if mask is not None and shape == dst.shape and shape and shape[0] <= _ins.NUM_PARTITIONS and \
            _ins.keeps_all(mask, shape):
        mask = None  # (dma_general's first step for it, past its checks none of which fail)
    _ins.dma(tr, IT.Save, dst, value, loc, mask, what="nl.store")


def copy(src, *, mask=None, dtype=None) -> Tensor:
    """A copy of a tile (cast to ``dtype``) in SBUF."""
    loc = caller_location()
    src = _tile(src, loc, "nl.copy: src")
    return _ins.tensor_copy(current(), src, _opt_dtype(dtype, loc), loc, mask=mask, what="copy")


copy.act_func = Act.Copy


def _opt_dtype(dtype, loc):
    return None if dtype is None else _dtype(dtype, loc)


# copy(src, dtype=...) of an on-chip tile, dtype None or one looked up before, makes its
# tensor_copy call in C (cpp/python/trace_lane_fast.cpp's copy_fast, through a FastCall:
# cpp/python/trace_fast_call.cpp); any other call runs the definition above, the home of every check.
copy = _core.nki.FastCall(copy, _core.nki.copy_fast())


def broadcast_to(src, *, shape) -> Tensor:
    """``src`` repeated to ``shape``. Free dimensions repeat by a copy; a single partition is
    copied to all partitions through the PE array (a matmul against a row of ones)."""
    return _broadcast_tile(src, shape, caller_location())


def _broadcast_tile(x, shape, loc) -> Tensor:
    """:func:`broadcast_to` for the kernel line ``loc`` (``Tensor.broadcast_to`` finds it):
    size-1 free dimensions repeat by a copy that reads them with step 0; a single partition
    reaches all partitions through the PE array (a matmul with a row of ones). A 1-D ``[P]``
    tile is a column: one value per partition."""
    tr = current()
    made = _broadcast_row(tr, x, shape, loc)  # (the commonest: a [1, F] row to [P, F], in C)
    if made is not NotImplemented:
        return made
    x = _tile(x, loc, "broadcast_to")
    shape = tuple([int(n) for n in shape])
    if x.shape == shape:
        return x
    if len(x.shape) == 1 and not x.checks:
        x = new_view(x.storage, x.offset, (x.shape[0], 1), (x.strides[0], 0), ())
    xs = x.shape
    if len(xs) != len(shape) or xs[0] not in (1, shape[0]) or shape[0] > tile_size.pmax or \
            any(a != b and a != 1 for a, b in zip(xs[1:], shape[1:])):
        raise NKIError(f"cannot broadcast {list(xs)} to {list(shape)}: a tile broadcasts its "
                       "size-1 dimensions (a single partition to all partitions, a [P] or "
                       "[P, 1] column along the free dimensions)", loc)
    if xs[0] == shape[0]:
        return _free_broadcast(tr, x, shape, loc)
    row = (1,) + shape[1:]
    if xs != row or not _is_flat_row(x):
        x = _free_broadcast(tr, x, row, loc)
    return _partition_broadcast(tr, x, shape, loc)


#: ``_broadcast_row(tr, x, shape, loc)``: :func:`_broadcast_tile` of an on-chip [1, F] row walked
#: contiguously, of a dtype the PE reads, to an exact (P, F), recorded as
#: :func:`_partition_broadcast` records it; NotImplemented, having changed nothing, for anything
#: else. In C (``cpp/python/trace_broadcast.cpp``, which states the conditions): a state-space
#: kernel broadcasts two rows per inner iteration.
_broadcast_row = _core.nki.broadcast_row
_tensor_broadcast_to = Tensor.broadcast_to  # (the Python method, tensor.py: the C method's fallback)
_core.nki.configure_broadcast(Tensor, _ins, sys.modules[__name__], _tensor_broadcast_to, SBUF,
                              tile_size.pmax, IT.Memset, Engine.DVE, Engine.Activation,
                              _ins._MEMSET_CONST)
#: ``t.broadcast_to(shape)``, in C (same file): ``_broadcast_row`` with the kernel's line, anything
#: else ``_broadcast_tile``'s (other arguments: the Python method, tensor.py).
Tensor.broadcast_to = _core.nki.broadcast_method()


def _free_broadcast(tr, x: Tensor, shape: tuple, loc) -> Tensor:
    """A new tile of ``shape`` with ``x`` (of the same partitions) repeated along its size-1
    free dimensions."""
    out = tr.new_result(SBUF, x.dtype, shape, "broadcast", loc)
    view = _ins.lane_view(x, shape, _ins.full_box(shape), loc, "broadcast_to", "src")
    return _ins.tensor_copy(tr, view, x.dtype, loc, out=out, what="broadcast_to")


def _is_flat_row(x: Tensor) -> bool:
    """Whether the one-partition tile ``x`` walks its elements contiguously."""
    step = 1
    for n, s in zip(reversed(x.shape[1:]), reversed(x.strides[1:])):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def _partition_broadcast(tr, x: Tensor, shape: tuple, loc) -> Tensor:
    """The contiguous one-partition tile ``x`` copied to ``shape[0]`` partitions: a matmul of a
    [1, P] row of ones with it, 512 columns at a time, and a copy out of PSUM."""
    parts, width = shape[0], math.prod(shape[1:])
    if x.checks:  # (the flat view below carries none)
        x.check_bounds(loc)
    src = x if x.dtype in _ins.MATMUL_DTYPE_SET else _ins.tensor_copy(tr, x, float32, loc)
    src = new_view(src.storage, src.offset, (1, width), (src.storage.layout.row, 1), ())
    ones_row = _ins.constant_tile(tr, (1, parts), 1.0, src.dtype, loc)
    out = tr.new_result(SBUF, x.dtype, shape, "broadcast", loc)
    flat = new_view(out.storage, 0, (parts, width), (out.storage.layout.row, 1), ())
    step = _ins.MATMUL_MAX_MOVING
    for lo in range(0, width, step):
        hi = builtins.min(width, lo + step)
        ps = _ins.matmul(tr, ones_row, src[:, lo:hi], loc, what="broadcast_to")
        _ins.tensor_copy(tr, ps, x.dtype, loc, out=flat[:, lo:hi], what="broadcast_to")
    return out


# ---- assignment: dst[...] = value, dst[...] op= value ----

def assign(dst: Tensor, value):
    """``dst[...] = value``. The instruction that just computed ``value`` is made to write
    ``dst`` when it can; otherwise a copy (or, for a number, a memset) writes ``dst``. Errors
    locate the kernel line themselves; only recorded instructions need ``caller_location``."""
    tr = current()
    if assign_redirect(tr, dst, value):  # (the commonest assignment, in C)
        return
    _assign_general(tr, dst, value)


def _assign_general(tr, dst: Tensor, value):
    """:func:`assign` past ``assign_redirect`` (``Tensor.__setitem__`` tries that itself)."""
    if not dst.shape and dst.storage.on_chip:
        _assign_element(tr, dst, value)
        return
    if isinstance(value, Tensor):
        d_st = dst.storage
        if value.storage is d_st and same_view(dst, value):
            return  # `t[...] += x` stores back the view the += already updated
        if value.storage.state.masked_out:
            return  # the instruction computing the value was masked out
        if not d_st.on_chip:
            raise NKIError(f"assignment to HBM tensor {d_st.describe()}; write HBM with "
                           "nl.store")
        if not value.storage.on_chip:
            _tile(value, None, "the assigned value")  # (the error for an HBM tensor)
        if d_st.kind == PSUM and tr.place_matmul(value, dst, False):
            return
        op = tr.fresh_result(value)
        if op is not None and _can_write(op, dst):
            if op.out_box is not None or dst.shape != value.shape:  # the shapes must agree
                _ins.out_view(dst, value.shape, op.out_box or _ins.full_box(value.shape), None)
            tr.redirect(op, value, dst, None,
                        checked_as=None if op.engine is _DMA else _ASSIGNED)
            return
        _ins.tensor_copy(tr, value, dst.dtype, caller_location(), out=dst, what="assignment")
    elif _dt.is_number(value):
        if not dst.storage.on_chip:
            raise NKIError("HBM tensors cannot be filled with a constant; store a tile")
        _ins.memset(tr, dst, value, caller_location())
    elif value.__class__ is LoopReduction:
        value.apply(tr, dst)
    else:
        raise NKIError(f"cannot assign {type(value).__name__} to a tile")


def _assign_element(tr, dst: Tensor, value):
    """``t[i, j] = x``: one element of a tile, the [1, 1] tile at its place. A compute engine
    reaches a single partition only from partition 0, 32, 64 or 96 (the start-partition rule);
    elsewhere ``x`` is first written to a [1, 1] tile (at partition 0) and a DMA, which the rule
    does not bind, moves it into place."""
    st = dst.storage
    row = st.layout.row
    one = new_view(st, dst.offset, (1, 1), (row, 1), ())
    if isinstance(value, Tensor) and not value.shape and value.storage.on_chip:
        value = new_view(value.storage, value.offset, (1, 1), (value.storage.layout.row, 1), ())
    start = dst.offset // row + (st.placement[0] if st.placement is not None else 0)
    if not bir.check_start_partition(start, 1):  # ("" when the rule holds)
        _assign_general(tr, one, value)
        return
    loc = caller_location()
    if not isinstance(value, Tensor):
        scratch = tr.new_result(SBUF, st.dtype, (1, 1), "element", loc)
        _assign_general(tr, scratch, value)
        value = scratch
    _ins.dma(tr, IT.DMACopy, one, value, loc, what="assignment")


_ASSIGNED = ("assignment", "the destination")  # how errors name an assignment's target
_DMA, _POOL = Engine.DMA, Engine.Pool  # (module globals: see instructions._PE)

_core.nki.configure_assign(Tensor, write_plain, IT.Matmult, _DMA, _POOL, PSUM, SBUF)
#: ``assign_redirect(tr, dst, value)``: :func:`assign` of the untouched result of the instruction
#: just recorded, made to write ``dst`` (``Tracer.redirect`` without a mask box, into a
#: destination ``write_plain`` takes); True when done, False, having changed nothing, for any
#: other assignment. In C (``cpp/python/trace_assign.cpp``, which states the conditions): most
#: ``dst[...] = expr`` of a kernel are such redirects.
assign_redirect = _core.nki.assign_redirect
_dma_plain, _matmul_plain, _LOAD = _ins.dma_plain, _ins.matmul_plain, IT.Load

# nl.ndarray and nl.zeros of a tile made before, nl.load of an HBM tensor (no dtype) and nl.store
# of an SBUF tile into one, without a mask or with one keeps_all says keeps them whole (what load
# and store test first), are recorded in C (cpp/python/trace_language_fast.cpp, through a
# FastCall: cpp/python/trace_fast_call.cpp); any other call runs the definitions above, the home
# of every check and error.
_core.nki.configure_language_fast(Tensor, _NEW_TILES, par_dim, SBUF, _LOAD, tile_size.pmax,
                                  _dma_plain, _ins.dma_general, IT.Save, PSUM, _ins.keeps_all,
                                  _ins.NUM_PARTITIONS)
_core.nki.configure_new_blocked(BlockedTensor, par_dim, _NEW_BLOCKED)
ndarray = _core.nki.FastCall(ndarray, _core.nki.ndarray_fast)
zeros = _core.nki.FastCall(zeros, _core.nki.zeros_fast)
load = _core.nki.FastCall(load, _core.nki.load_fast)
store = _core.nki.FastCall(store, _core.nki.store_fast)


def _can_write(op, dst: Tensor) -> bool:
    """Whether ``op``'s engine can write ``dst``'s memory."""
    kind = dst.storage.kind
    if op.opcode is IT.Matmult:
        return kind == PSUM
    if op.engine is _DMA or op.engine is _POOL:
        return kind == SBUF
    return True


def _accumulate_general(tr, dst: Tensor, value, name: str) -> Tensor:
    """``dst op= value`` (returns ``dst``) past what Tensor's in-place operators (C,
    ``cpp/python/trace_accumulate.cpp``) do themselves (a masked-out value: nothing; a matmul
    result added to PSUM: joins its accumulation group; two on-chip tiles of one shape that
    ``lanewise_plain`` takes: its instruction, as recorded here): one lane-wise instruction
    reading and writing ``dst``. (The operators call it straight from C: the kernel's frame is
    the next.)"""
    loc = caller_location()
    if dst.__class__ is not Tensor or not dst.storage.on_chip:
        _tile(dst, loc, f"the target of '{name}='")
    _binary(dst, value, _BINARY_ALU[name], dst.dtype, None, loc, out=dst, what=name)
    return dst


def _apply_operator(x, y, name: str, loc):
    """``x <op> y`` written with Python's operators on tiles: ``nl.<name>(x, y)`` (with its
    default dtype: bool for comparisons)."""
    return _binary(x, y, _BINARY_ALU[name], _dt.bool_ if name in _BOOL_RESULTS else None, None,
                   loc, what=name)


# ---- arithmetic ----


def _binary(x, y, op, dtype, mask, loc, out=None, what="") -> Tensor:
    tr = current()
    xt, yt = isinstance(x, Tensor), isinstance(y, Tensor)
    if not xt and not yt:
        raise NKIError(f"nl.{what} needs at least one tile operand", loc)
    if xt and not x.storage.on_chip:
        _tile(x, loc, what, "x")  # (raises)
    if yt and not y.storage.on_chip:
        _tile(y, loc, what, "y")
    if dtype is not None:
        dtype = _dtype(dtype, loc)
    elif op is Alu.divide and not (
            _dt.is_float(x.dtype) if x.__class__ is Tensor else isinstance(x, _dt.FLOAT_SCALARS)) and not (
            _dt.is_float(y.dtype) if y.__class__ is Tensor else isinstance(y, _dt.FLOAT_SCALARS)):
        dtype = float32  # a true division, as NumPy's: integers divide to a float
    if xt and yt:
        x_shape, y_shape = x.shape, y.shape
        if x_shape == y_shape:  # (the commonest: no broadcast, no lane constant)
            return _ins.tensor_tensor(tr, x, y, op, dtype, loc, mask, out, what=what)
        if x_shape[0] != y_shape[0]:  # a one-partition operand reaches all partitions
            if x_shape[0] == 1:
                x = _broadcast_tile(x, (y_shape[0],) + (x_shape[1:] or (1,)), loc)
            elif y_shape[0] == 1:
                y = _broadcast_tile(y, (x_shape[0],) + (y_shape[1:] or (1,)), loc)
        x_shape, y_shape = x.shape, y.shape
        if x_shape != y_shape:  # (of equal shapes, both are lane constants or neither is)
            # lane constants: one element per partition ([P, 1], [P], [P, 1, 1], ...)
            x_column = x_shape[1] == 1 if len(x_shape) == 2 else math.prod(x_shape[1:]) == 1
            y_column = y_shape[1] == 1 if len(y_shape) == 2 else math.prod(y_shape[1:]) == 1
            if y_column and not x_column and y.shape[0] == x.shape[0]:
                return _ins.tensor_scalar(tr, x, op, y, False, None, None, False,
                                          dtype or _dt.promote(x.dtype, y.dtype), loc, mask, out,
                                          what=what)
            if x_column and not y_column and y.shape[0] == x.shape[0]:
                return _ins.tensor_scalar(tr, y, op, x, True, None, None, False,
                                          dtype or _dt.promote(x.dtype, y.dtype), loc, mask, out,
                                          what=what)
        return _ins.tensor_tensor(tr, x, y, op, dtype, loc, mask, out, what=what)
    tile, scalar, reverse = (x, y, False) if xt else (y, x, True)
    if not (_dt.is_number(scalar) or isinstance(scalar, np.bool_)):  # (a bool is an int)
        raise NKIError(f"nl.{what}: cannot combine a tile with {type(scalar).__name__}", loc)
    if dtype is None:  # (a Python number is weakly typed: uint8 for a bool, int32, float32)
        dtype = _dt.promote_scalar(tile.dtype, scalar)
    return _ins.tensor_scalar(tr, tile, op, scalar, reverse, None, None, False, dtype, loc,
                              mask, out, what=what)


def _binary_fn(name: str, op):
    """``nl.<name>(x, y, *, dtype=None, mask=None)``: comparisons and logical operations give
    bool tiles by default (``dtype=bool``); ``mod`` and ``fmod`` take dtype and mask by position
    too (their documented signatures)."""
    if name in _BOOL_RESULTS:
        def fn(x, y, *, dtype=bool, mask=None):
            return _binary(x, y, op, dtype, mask, caller_location(), what=name)
    elif name in ("mod", "fmod"):
        def fn(x, y, dtype=None, mask=None):
            return _binary(x, y, op, dtype, mask, caller_location(), what=name)
    else:
        def fn(x, y, *, dtype=None, mask=None):
            return _binary(x, y, op, dtype, mask, caller_location(), what=name)
    fn = _alu_marker(op)(fn)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{op.name}`` of two tiles, or a tile and a number (Vector Engine)."
    return fn


def _fmod_tiles(tr, x, y, dtype, mask, loc) -> Tensor:
    """numpy.fmod, the remainder with the sign of the dividend ``x``, as ``sign(x) * mod(|x|,
    |y|)``: no ALU op computes it (``mod`` takes the divisor's sign). ``x`` a tile, ``y`` a tile
    or a number; ``dtype`` None keeps x's. (nl.fmod of both dialects.)"""
    mag = _ins.tensor_scalar(tr, x, Alu.abs, 0.0, False, None, None, False, float32, loc, mask,
                             what="fmod")
    if isinstance(y, Tensor):
        w = _ins.tensor_scalar(tr, y, Alu.abs, 0.0, False, None, None, False, float32, loc, mask,
                               what="fmod")
        m = _binary(mag, w, Alu.mod, float32, mask, loc, what="fmod")
    else:
        m = _ins.tensor_scalar(tr, mag, Alu.mod, builtins.abs(float(y)), False, None, None, False,
                               float32, loc, mask, what="fmod")
    s = _ins.activation(tr, Act.Sign, x, None, 1.0, float32, loc, mask, what="fmod")
    return _ins.tensor_tensor(tr, m, s, Alu.mult, dtype or x.dtype, loc, mask, what="fmod")


def fmod(x, y, dtype=None, mask=None) -> Tensor:
    """Remainder of ``x / y`` with the sign of ``x`` (numpy.fmod, as NKI documents it)."""
    loc = caller_location()
    if not isinstance(x, Tensor):  # a number x, broadcast to y: sign(x) * mod(|y| reversed)
        w = _ins.tensor_scalar(current(), _tile(y, loc, "fmod", "y"), Alu.abs, 0.0, False, None,
                               None, False, float32, loc, mask, what="fmod")
        return _ins.tensor_scalar(current(), w, Alu.mod, builtins.abs(float(x)), True, Alu.mult,
                                  float(np.sign(x)), False, _opt_dtype(dtype, loc) or y.dtype, loc,
                                  mask, what="fmod")
    return _fmod_tiles(current(), _tile(x, loc, "fmod", "x"), y, _opt_dtype(dtype, loc), mask, loc)


fmod = _not_alu(_FMOD_NOT_ALU)(fmod)  # (op=nl.fmod: refused, never taken as mod)


_BOOL_RESULTS = frozenset(("equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
                           "logical_and", "logical_or", "logical_xor"))


_BINARY_ALU = {
    "add": Alu.add, "subtract": Alu.subtract, "multiply": Alu.mult, "divide": Alu.divide,
    "power": Alu.pow, "maximum": Alu.max, "minimum": Alu.min, "mod": Alu.mod,
    "equal": Alu.is_equal, "not_equal": Alu.not_equal, "greater": Alu.is_gt,
    "greater_equal": Alu.is_ge, "less": Alu.is_lt, "less_equal": Alu.is_le,
    "logical_and": Alu.logical_and, "logical_or": Alu.logical_or, "logical_xor": Alu.logical_xor,
    "bitwise_and": Alu.bitwise_and, "bitwise_or": Alu.bitwise_or, "bitwise_xor": Alu.bitwise_xor,
    # (nl.right_shift is the Logical Shift Right; NKI has no arithmetic one: "Supported Math
    # Operators for NKI ISA", Neuron 2.26 and NKI 0.6 alike)
    "left_shift": Alu.logical_shift_left, "right_shift": Alu.logical_shift_right,
}
for _name, _op in _BINARY_ALU.items():
    globals()[_name] = _binary_fn(_name, _op)

# ``t op= x`` of two on-chip Tensors of one shape (``res += psum_tile``) is recorded by the
# in-place operators in C (``cpp/python/trace_accumulate.cpp``) with the ``lanewise_plain`` call
# _accumulate_general -> _binary -> instructions.tensor_tensor makes for it; that holds because
# these ALU ops are not bitvec ops (tensor_tensor's only other check on them) and the C path
# takes only destinations of an NKI dtype (a key of _dt._TO_BIR, which _dtype accepts as it is).
# ``x op y`` of two such tiles (Tensor's operator methods, same file) makes the call
# _apply_operator -> _binary -> tensor_tensor makes, with the dtype _dt.promote gives; it leaves
# a division to Python unless an operand's dtype is a float (``_FLOAT_DTYPES``: _binary's
# integer-division rule then does not apply); ``tile op number`` of a float tile and an int or
# a float makes _binary's tensor_scalar call (dtype _dt.promote of the tile's and the number's,
# _dt.WEAK_SCALARS: _dt.promote_scalar).
_IN_PLACE_ALU = {name: _BINARY_ALU[name] for name in ("add", "subtract", "multiply", "divide")}
if any(id(op) in _ins.BITVEC_IDS for op in _IN_PLACE_ALU.values()):
    raise ImportError("a bitvec ALU op among the in-place operators': update "
                      "trace_accumulate.cpp's lanewisePlain")
_FLOAT_DTYPES = {d: None for d in _dt._TO_BIR if _dt.is_float(d)}
_core.nki.configure_accumulate_plain(_ins, IT.TensorTensor, Engine.DVE, _IN_PLACE_ALU,
                                     _dt._TO_BIR, _dt.promote, _FLOAT_DTYPES, _dt.WEAK_SCALARS)
# (their tensor_scalar calls without a mask make the builder's lanewise_plain call themselves,
# then its general part, tensor_scalar_general, if that declines)
_core.nki.configure_tensor_scalar_plain(IT.TensorScalar, IT.TensorScalarPtr, Alu.bypass)
# (and nl.<op>(x, y, mask=m) of two tiles of one shape, when m's box, as keeps_all finds it through
# indexing's mask_box C path, keeps the whole tile, makes tensor_tensor's lanewise_plain call as
# without a mask)
# nl.add, nl.subtract, nl.multiply and nl.divide called as functions take the operators' shortcuts
# (with their mask handed on) through a FastCall (cpp/python/trace_fast_call.cpp): the definition
# above is _apply_operator's _binary call plus the mask. They stay the definitions everywhere else
# (name, docs, signature, alu_op marker: the FastCall forwards them); what the C path declines (a
# dtype, other operands) is the definition's.
for _name in _IN_PLACE_ALU:
    globals()[_name] = _core.nki.FastCall(globals()[_name], _core.nki.binary_fast(_name))


def _activation_fn(name: str, func):
    @_act_marker(func)
    def fn(x, *, dtype=None, mask=None):
        loc = caller_location()
        if x.__class__ is not Tensor or not x.storage.on_chip:  # (_tile's test, without its frame)
            x = _tile(x, loc, name, "x")
        return _ins.activation(current(), func, x, None, 1.0,
                               None if dtype is None else _dtype(dtype, loc), loc, mask, what=name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{func.name}`` (Scalar Engine activation)."
    return fn


_ACTIVATIONS = {
    "exp": Act.Exp, "log": Act.Ln, "tanh": Act.Tanh, "sigmoid": Act.Sigmoid, "gelu": Act.Gelu,
    "gelu_apprx_tanh": Act.Gelu_apprx_tanh, "gelu_apprx_sigmoid": Act.Gelu_apprx_sigmoid,
    "gelu_dx": Act.Derivative_Gelu, "silu": Act.Silu, "silu_dx": Act.Derivative_silu,
    "relu": Act.Relu, "rsqrt": Act.Rsqrt, "sqrt": Act.Sqrt, "square": Act.Square,
    "reciprocal": Act.Reciprocal, "abs": Act.Abs, "sin": Act.Sin, "arctan": Act.Arctan,
    "erf": Act.Erf, "erf_dx": Act.Derivative_Erf, "softplus": Act.Softplus, "mish": Act.Mish,
    "sign": Act.Sign, "identity": Act.Identity,
}
# Called without a dtype, on an on-chip tile, each is its one activation call, made in C
# (cpp/python/trace_lane_fast.cpp, through a FastCall: cpp/python/trace_fast_call.cpp); any other
# call runs the definition above, the home of every check and error.
_core.nki.configure_lane_fast(Tensor, _ins, _dt._LOOKUPS, IT.BNStats)
# Without a mask they make the builders' lanewise_plain call themselves (activation's and
# tensor_reduce's first step for such operands), then the builders' general parts if it declines.
_core.nki.configure_lane_fast_plain(IT.Activation, Engine.Activation, _ins.bir.AccumCmd.Idle,
                                    Alu.add, IT.TensorReduce, Engine.DVE, _ins._REDUCE_X,
                                    _ins.REDUCE_IDS, _ins.BITVEC_IDS)
# (and bn_stats' and bn_aggr's per_lane's, when the size rule's verdict, if the opcode has a size
# rule, and the mask's box are remembered)
_core.nki.configure_per_lane_plain(_ins._SIZE_VERDICTS, _ins._SIZE_RULES)
for _name, _func in _ACTIVATIONS.items():
    globals()[_name] = _core.nki.FastCall(_activation_fn(_name, _func),
                                          _core.nki.activation_fast(_func, _name))


def negative(x, *, dtype=None, mask=None) -> Tensor:
    loc = caller_location()
    x = _tile(x, loc, "nl.negative: x")
    return _ins.tensor_scalar(current(), x, Alu.mult, -1.0, False, None, None, False,
                              _opt_dtype(dtype, loc), loc, mask, what="negative")


@_alu_marker(Alu.bitwise_not)  # (the Bitwise Not operator of nisa instructions' op fields)
def invert(x, *, dtype=None, mask=None) -> Tensor:
    loc = caller_location()
    x = _tile(x, loc, "nl.invert: x")
    return _ins.tensor_scalar(current(), x, Alu.bitwise_not, 0.0, False, None, None, False,
                              _opt_dtype(dtype, loc), loc, mask, what="invert")


bitwise_not = invert


def logical_not(x, *, dtype=bool, mask=None) -> Tensor:
    loc = caller_location()
    x = _tile(x, loc, "nl.logical_not: x")
    return _ins.tensor_scalar(current(), x, Alu.is_equal, 0.0, False, None, None, False,
                              _opt_dtype(dtype, loc), loc, mask, what="logical_not")


def where(condition, x, y, *, dtype=None, mask=None) -> Tensor:
    """``x`` where ``condition`` is non-zero, else ``y`` (a tile or a number)."""
    loc = caller_location()
    condition = _tile(condition, loc, "nl.where: condition")
    return _ins.select(current(), condition, x, y, _opt_dtype(dtype, loc), loc, mask)


# ---- reductions ----

def _reduce_fn(name: str, op):
    @_alu_marker(op)
    def fn(x, axis, *, dtype=None, mask=None, keepdims=False):
        loc = caller_location()
        if x.__class__ is not Tensor or not x.storage.on_chip:  # (_tile's test, without its frame)
            x = _tile(x, loc, name, "x")
        return _ins.tensor_reduce(current(), op, x, axis, keepdims, False,
                                  None if dtype is None else _dtype(dtype, loc), loc, mask,
                                  what=name)
    if name == "all":  # (a bool result by default, as NKI's)
        def fn(x, axis, *, dtype=bool, mask=None, keepdims=False):
            loc = caller_location()
            x = _tile(x, loc, name, "x")
            return _ins.tensor_reduce(current(), op, x, axis, keepdims, False, _dtype(dtype, loc),
                                      loc, mask, what=name)
        fn = _alu_marker(op)(fn)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{op.name}``-reduction along free axes ``axis`` (Vector Engine)."
    return fn


sum = _reduce_fn("sum", Alu.add)  # noqa: A001  (NKI's name)
max = _reduce_fn("max", Alu.max)  # noqa: A001
min = _reduce_fn("min", Alu.min)  # noqa: A001
prod = _reduce_fn("prod", Alu.mult)
all = _reduce_fn("all", Alu.logical_and)  # noqa: A001
# sum, max, min and prod called without a dtype on an on-chip tile: their one tensor_reduce call,
# made in C (cpp/python/trace_lane_fast.cpp, through a FastCall); anything else is the definition's.
for _name in ("sum", "max", "min", "prod"):
    globals()[_name] = _core.nki.FastCall(globals()[_name],
                                          _core.nki.reduce_fast(globals()[_name].alu_op, _name))


def mean(x, axis, *, dtype=None, mask=None, keepdims=False) -> Tensor:
    """Arithmetic mean along free axes (a sum in fp32, then a scale). Without ``dtype`` the
    result has the input's dtype, except that an integer input gives float32 (NKI's page:
    "float32 intermediate and return values are used for integer inputs")."""
    loc = caller_location()
    tr = current()
    x = _tile(x, loc, "nl.mean: x")
    axes = _ins.normalize_axes(axis, len(x.shape), loc, "nl.mean")
    count = math.prod(x.shape[a] for a in axes)
    total = _ins.tensor_reduce(tr, Alu.add, x, axes, keepdims, False, float32, loc, mask,
                               what="mean")
    out_dtype = _opt_dtype(dtype, loc) or (x.dtype if _dt.is_float(x.dtype) else float32)
    return _ins.tensor_scalar(tr, total, Alu.mult, 1.0 / count, False, None, None, False,
                              out_dtype, loc, None, what="mean")


def softmax(x, axis, *, dtype=None, compute_dtype=None, mask=None) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along the last free axis, computed in
    ``compute_dtype`` (float32 unless given)."""
    loc = caller_location()
    tr = current()
    x = _tile(x, loc, "nl.softmax: x")
    axes = _ins.normalize_axes(axis, len(x.shape), loc, "nl.softmax")
    if axes != [len(x.shape) - 1] or len(x.shape) != 2:
        raise NKIError("nl.softmax works along the free axis of a 2-D tile", loc)
    cdt = _opt_dtype(compute_dtype, loc) or float32
    peak = _ins.tensor_reduce(tr, Alu.max, x, axes, True, True, cdt, loc, mask, what="softmax")
    e = _ins.activation(tr, Act.Exp, x, peak, 1.0, cdt, loc, mask, what="softmax")
    total = _ins.tensor_reduce(tr, Alu.add, e, axes, True, False, cdt, loc, mask,
                               what="softmax")
    return _ins.tensor_scalar(tr, e, Alu.divide, total, False, None, None, False,
                              _opt_dtype(dtype, loc) or x.dtype, loc, mask, what="softmax")


class LoopReduction:
    """The value of ``nl.loop_reduce(x, op, loop_indices)``: the assignment that takes it,
    ``dst[...] = nl.loop_reduce(...)``, records ``dst = op(dst, x)``. (A value no assignment
    takes is an error at the end of the kernel: it would otherwise be dropped.)"""

    __slots__ = ("x", "op", "dtype", "mask", "loc")

    def __init__(self, x, op, dtype, mask, loc):
        self.x, self.op, self.dtype, self.mask, self.loc = x, op, dtype, mask, loc

    def apply(self, tr, dst: Tensor):
        tr.unassigned_reductions.remove(self)
        _ins.tensor_tensor(tr, dst, self.x, self.op, self.dtype or dst.dtype, self.loc,
                           self.mask, out=dst, what="nl.loop_reduce")

    def _misuse(self, *_):
        raise NKIError("the value of nl.loop_reduce is the reduction into the tile it is "
                       "assigned to (dst[...] = nl.loop_reduce(x, op, loop_indices)); it is not "
                       "a tile", caller_location())

    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = _misuse
    __getitem__ = __setitem__ = __bool__ = _misuse


def loop_reduce(x, op, loop_indices, *, dtype=None, mask=None):
    """``dst[...] = nl.loop_reduce(x, op, loop_indices)`` reduces ``x`` into ``dst`` across the
    iterations of the loops ``loop_indices`` (loop indices or integers: a hint to the compiler's
    loop optimisations): each assignment records ``dst = op(dst, x)`` (Vector Engine)."""
    loc = caller_location()
    x = _tile(x, loc, "loop_reduce", "x")
    alu = _alu_op(op, "nl.loop_reduce: op", loc)
    indices = loop_indices if isinstance(loop_indices, (tuple, list)) else (loop_indices,)
    for i in indices:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise NKIError(f"nl.loop_reduce: loop_indices are loop indices or integers, not "
                           f"{type(i).__name__}", loc)
    value = LoopReduction(x, alu, _opt_dtype(dtype, loc), mask, loc)
    current().unassigned_reductions.append(value)
    return value


# Every float of magnitude 2^23 or more is an integer, so mod(x, 1) of x clamped to +-2^23 is
# x's fraction, and finite at +-inf, where numpy.mod (the ALU's mod) gives NaN: floor(+-inf) is
# +-inf, as numpy.floor gives it (a NaN stays NaN through max / min).
_WHOLE = float(2 ** 23)


def _floor_tiles(tr, x: Tensor, dtype, loc, mask, what: str, divisor: float = 1.0) -> Tensor:
    """``x - mod(clamp(x, -2^23, 2^23), 1)``: the floor of every float, +-inf included, in two
    Vector Engine instructions (NKI 0.6's nl.floor too); ``divisor`` -1 gives the ceiling (the
    remainder takes the divisor's sign, in (-1, 0])."""
    clamped = _ins.tensor_scalar(tr, x, Alu.max, -_WHOLE, False, Alu.min, _WHOLE, False, float32, loc,
                                 mask, what=what)
    return _fused.scalar_tensor_tensor(tr, clamped, Alu.mod, divisor, False, Alu.subtract, x, True,
                                       dtype, loc, mask, what=what)


def floor(x, *, dtype=None, mask=None) -> Tensor:
    """The largest integer not above each element (``mod`` floored, as NumPy's; exact for every
    float): see _floor_tiles."""
    loc = caller_location()
    x = _tile(x, loc, "floor", "x")
    return _floor_tiles(current(), x, _opt_dtype(dtype, loc) or x.dtype, loc, mask, "floor")


def ceil(x, *, dtype=None, mask=None) -> Tensor:
    """The smallest integer not below each element: ``x - mod(c, -1)``, ``c`` x clamped to
    +-2^23 (_floor_tiles), two Vector Engine instructions."""
    loc = caller_location()
    x = _tile(x, loc, "ceil", "x")
    return _floor_tiles(current(), x, _opt_dtype(dtype, loc) or x.dtype, loc, mask, "ceil", -1.0)


def trunc(x, *, dtype=None, mask=None) -> Tensor:
    """Each element with its fraction dropped (towards zero): ``sign(x) * floor(|x|)``, exact,
    in five Vector / Scalar Engine instructions."""
    loc = caller_location()
    tr = current()
    x = _tile(x, loc, "trunc", "x")
    mag = _ins.tensor_scalar(tr, x, Alu.abs, 0.0, False, None, None, False, float32, loc, mask,
                             what="trunc")
    whole = _floor_tiles(tr, mag, float32, loc, mask, "trunc")
    sign = _ins.activation(tr, Act.Sign, x, None, 1.0, float32, loc, mask, what="trunc")
    return _ins.tensor_tensor(tr, whole, sign, Alu.mult, _opt_dtype(dtype, loc) or x.dtype, loc,
                              mask, what="trunc")


def _reduced_sine(tr, x: Tensor, shift: float, loc, mask, what: str) -> Tensor:
    """``sin(x + shift)`` on the Scalar Engine, the argument first brought to [-pi, pi) on the
    Vector Engine (``mod(x + shift + pi, 2 pi) - pi``, in fp32)."""
    r = _ins.tensor_scalar(tr, x, Alu.add, shift + math.pi, False, Alu.mod, 2 * math.pi, False,
                           float32, loc, mask, what=what)
    r = _ins.tensor_scalar(tr, r, Alu.subtract, math.pi, False, None, None, False, float32, loc,
                           mask, what=what)
    return _ins.activation(tr, Act.Sin, r, None, 1.0, float32, loc, mask, what=what)


def cos(x, *, dtype=None, mask=None) -> Tensor:
    """Cosine, as the Scalar Engine's sine of the range-reduced ``x + pi/2``."""
    loc = caller_location()
    x = _tile(x, loc, "cos", "x")
    c = _reduced_sine(current(), x, math.pi / 2, loc, mask, "cos")
    return _ins.tensor_copy(current(), c, _opt_dtype(dtype, loc) or x.dtype, loc, mask,
                            what="cos")


def tan(x, *, dtype=None, mask=None) -> Tensor:
    """Tangent, the quotient of the range-reduced sine and cosine."""
    loc = caller_location()
    tr = current()
    x = _tile(x, loc, "tan", "x")
    s = _reduced_sine(tr, x, 0.0, loc, mask, "tan")
    c = _reduced_sine(tr, x, math.pi / 2, loc, mask, "tan")
    return _ins.tensor_tensor(tr, s, c, Alu.divide, _opt_dtype(dtype, loc) or x.dtype, loc, mask,
                              what="tan")


def var(x, axis, *, dtype=None, mask=None) -> Tensor:
    """Population variance along free axes: the mean of the squared deviations from the mean
    (computed in fp32)."""
    loc = caller_location()
    tr = current()
    x = _tile(x, loc, "var", "x")
    axes = _ins.normalize_axes(axis, len(x.shape), loc, "nl.var")
    count = math.prod(x.shape[a] for a in axes)
    total = _ins.tensor_reduce(tr, Alu.add, x, axes, True, False, float32, loc, mask, what="var")
    m = _ins.tensor_scalar(tr, total, Alu.mult, 1.0 / count, False, None, None, False, float32,
                           loc, None, what="var")
    d = _binary(x, m, Alu.subtract, float32, mask, loc, what="var") if len(x.shape) == 2 else \
        _ins.tensor_tensor(tr, x, m, Alu.subtract, float32, loc, mask, what="var")
    sq = _ins.tensor_tensor(tr, d, d, Alu.mult, float32, loc, mask, what="var")
    ss = _ins.tensor_reduce(tr, Alu.add, sq, axes, False, False, float32, loc, mask, what="var")
    return _ins.tensor_scalar(tr, ss, Alu.mult, 1.0 / count, False, None, None, False,
                              _opt_dtype(dtype, loc) or x.dtype, loc, None, what="var")


def rms_norm(x, w, axis, n, epsilon=1e-06, *, dtype=None, compute_dtype=None, mask=None):
    """``x / sqrt(sum(x^2 along axis) / n + epsilon) * w``; ``dtype`` / ``compute_dtype`` (which
    NKI treats alike) set the computation's and the result's type (default x's)."""
    loc = caller_location()
    tr = current()
    x = _tile(x, loc, "rms_norm", "x")
    w = _tile(w, loc, "rms_norm", "w")
    cdt = _opt_dtype(compute_dtype or dtype, loc) or x.dtype
    axes = _ins.normalize_axes(axis, len(x.shape), loc, "nl.rms_norm")
    sq = _ins.tensor_tensor(tr, x, x, Alu.mult, float32, loc, mask, what="rms_norm")
    total = _ins.tensor_reduce(tr, Alu.add, sq, axes, True, False, float32, loc, mask,
                               what="rms_norm")
    inv = _ins.tensor_scalar(tr, total, Alu.mult, 1.0 / _ins.number(n, loc, "rms_norm: n"), False,
                             Alu.add,
                             _ins.number(epsilon, loc, "rms_norm: epsilon"), False, float32, loc,
                             None, what="rms_norm")
    inv = _ins.activation(tr, Act.Rsqrt, inv, None, 1.0, float32, loc, None, what="rms_norm")
    normed = _binary(x, inv, Alu.mult, float32, mask, loc, what="rms_norm")
    return _binary(normed, w, Alu.mult, cdt, mask, loc, what="rms_norm")


def expand_dims(data, axis) -> Tensor:
    """A view of the tile ``data`` with size-1 axes inserted after its last (``axis``: an int
    or ints, each at least ``data.ndim``)."""
    loc = caller_location()
    data = _tile(data, loc, "expand_dims", "data")
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    ndim = len(data.shape) + len(axes)
    axes = sorted(int(a) + ndim if int(a) < 0 else int(a) for a in axes)
    if axes != list(range(len(data.shape), ndim)):
        raise NKIError(f"nl.expand_dims: axes {axes} must follow the tile's last dimension (NKI "
                       f"supports only those); the tile has {len(data.shape)}", loc)
    return new_view(data.storage, data.offset, data.shape + (1,) * len(axes),
                    data.strides + (0,) * len(axes), data.checks)


def rand(shape, dtype=float32) -> Tensor:
    """A new tile of uniform random values in [0, 1) from the Vector Engine's generators
    (``gpsimd_instructions.uniform``: a float dtype only; the simulator's generator is not the
    NeuronCore's, so the values differ from the hardware's)."""
    loc = caller_location()
    tr = current()
    d = _dtype(dtype, loc)
    dims, pidx = _parse_shape(shape, loc)
    if pidx or dims[0] > tile_size.pmax:
        raise NKIError(f"nl.rand makes one tile; shape {list(dims)} is not one", loc)
    out = tr.new_result(SBUF, d, dims, "rand", loc)
    _gpsimd.uniform(tr, out, loc, "nl.rand")
    return out


def random_seed(seed, *, mask=None):
    """Seeds the Vector Engine's generators, which the dropouts that follow draw from, with the
    integer ``seed`` taken modulo 2^32 (two instructions: an iota writes it to a [1, 1] int32 tile,
    a SetRandState reads it; the simulator's generator is not the NeuronCore's: the same seed
    gives the same drops in the simulator, not the hardware's drops). A seed in a tile (a
    run-time value) is not modelled."""
    loc = caller_location()
    if not _ins.whole_or_nothing(mask, loc, "nl.random_seed"):
        return
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise NKIError(f"nl.random_seed: a seed held in a tile (a run-time value) is not "
                       f"modelled; the simulator takes an integer, not {type(seed).__name__}",
                       loc)
    word = int(seed) & 0xFFFFFFFF
    tr = current()
    tile = _ins.iota(tr, _IndexExpr((1, 1), word - (word >> 31 << 32), (0, 0)), _dt.int32, loc)
    _gpsimd.set_rand_state(tr, tile, Engine.DVE, loc, what="nl.random_seed")


def dropout(x, rate, *, dtype=None, mask=None) -> Tensor:
    """Each element zeroed with probability ``rate`` (a number), the others kept (Vector
    Engine)."""
    loc = caller_location()
    x = _tile(x, loc, "dropout", "x")
    return _ins.dropout(current(), x, rate, _opt_dtype(dtype, loc), loc, mask, what="nl.dropout")


def atomic_rmw(dst, value, op, *, mask=None):
    """``dst = op(dst, value)`` on HBM. NKI supports it through indirect (run-time) indices
    only, which the simulator does not model: refused."""
    raise NKIError("nl.atomic_rmw: the indirect scatter-accumulate into HBM it needs is not "
                   "modelled by the simulator", caller_location())


def gather_flattened(data, indices, *, mask=None, dtype=None):
    """``result[p, j...] = data[p, indices[p, j...]]``, data's free dimensions flattened, on the
    GpSimd Engine (``gpsimd_instructions.gather``, as NKI 0.6's); a ``dtype`` other than data's
    adds a copy."""
    loc = caller_location()
    tr = current()
    if mask is not None:
        raise NKIError("nl.gather_flattened: a mask is not modelled by the simulator", loc)
    out = _gpsimd.gather(tr, _tile(data, loc, "gather_flattened", "data"),
                         _tile(indices, loc, "gather_flattened", "indices"), loc,
                         what="nl.gather_flattened")
    want = _opt_dtype(dtype, loc)
    if want is not None and want != out.dtype:
        out = _ins.tensor_copy(tr, out, want, loc, what="nl.gather_flattened")
    return out


def all_reduce(x, op, program_axes, *, dtype=None, mask=None, parallel_reduce=True,
               asynchronous=False):
    """A reduction across SPMD programs (collective communication): not modelled (refused)."""
    raise NKIError("nl.all_reduce: collective communication between SPMD programs is not "
                   "modelled by the simulator", caller_location())


# ---- the Tensor Engine ----

def _sbuf_operand(tr, t: Tensor, loc, what: str) -> Tensor:
    """PSUM operands of a matmul are first copied to SBUF (the PE array reads SBUF only)."""
    if t.storage.kind == PSUM:
        return _ins.tensor_copy(tr, t, t.dtype if t.dtype in _ins.MATMUL_DTYPES else float32,
                                loc, what=what)
    return t


def matmul(x, y, *, transpose_x=False, mask=None) -> Tensor:
    """``x @ y`` into PSUM (fp32). With ``transpose_x`` the tile ``x`` holds xᵀ ([K, M], the
    layout the PE array wants); otherwise ``x`` ([M, K]) is first transposed on the PE array."""
    loc = caller_location()
    tr = current()
    if mask is not None and not _ins.whole_or_nothing(mask, loc, "nl.matmul"):
        return _ins.masked_matmul(tr, x, y, loc, transpose_x)
    if x.__class__ is not Tensor or x.storage.kind != SBUF:
        x = _sbuf_operand(tr, _tile(x, loc, "nl.matmul: x"), loc, "nl.matmul")
    if y.__class__ is not Tensor or y.storage.kind != SBUF:
        y = _sbuf_operand(tr, _tile(y, loc, "nl.matmul: y"), loc, "nl.matmul")
    if not transpose_x:
        xt = _ins.transpose_pe(tr, x, x.dtype, loc, what="nl.matmul")
        x = _ins.tensor_copy(tr, xt, x.dtype, loc, what="nl.matmul")
    # (_ins.matmul's steps, its plain case first, without its frame)
    out = _matmul_plain(tr, x, y, loc)
    if out is NotImplemented:
        out = _ins.matmul_general(tr, x, y, loc, "nl.matmul", None, False, None, True, PSUM)
    return out


# matmul(x, y, transpose_x=True) of two SBUF tiles, no mask, is recorded in C
# (cpp/python/trace_matmul.cpp's nl_matmul_fast, through a FastCall: cpp/python/trace_fast_call.cpp)
# when matmul_plain takes it; any other call runs the definition above, the home of every check.
matmul = _core.nki.FastCall(matmul, _core.nki.nl_matmul_fast(SBUF))


def transpose(x, *, dtype=None, mask=None) -> Tensor:
    """Swaps the partition and free dimensions of a 2-D tile (PE transpose, result in SBUF)."""
    loc = caller_location()
    tr = current()
    x = _sbuf_operand(tr, _tile(x, loc, "nl.transpose: x"), loc, "nl.transpose")
    dtype = _opt_dtype(dtype, loc) or x.dtype
    if not _ins.whole_or_nothing(mask, loc, "nl.transpose"):
        return _ins.masked_out(tr.new_result(SBUF, dtype, tuple(reversed(x.shape)),
                                             "transpose", loc))
    ps = _ins.transpose_pe(tr, x, x.dtype, loc, what="nl.transpose")
    return _ins.tensor_copy(tr, ps, dtype, loc, what="nl.transpose")


# ---- debugging ----

def device_print(prefix, x, *, mask=None):
    """Prints ``prefix`` and the values of ``x`` when the kernel is simulated."""
    loc = caller_location()
    if not _ins.whole_or_nothing(mask, loc, "nl.device_print"):
        return
    if not isinstance(x, Tensor):
        raise NKIError("nl.device_print prints tiles and tensors", loc)
    _ins.device_print(current(), prefix, x, loc)


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in (
    "annotations", "builtins", "math", "np", "ml_dtypes", "NKIError", "caller_location", "current",
    "Tensor", "BlockedTensor", "IndirectView", "DirectAllocation", "LoopReduction", "same_view", "new_view", "assign",
    "IT", "Engine", "Alu", "Act", "HBM", "PSUM", "SBUF", "SHARED_HBM", "PSUM_BYTES")]
