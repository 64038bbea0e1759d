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

import numpy as np

from neuronxsim.bir import target

from . import dtypes as _dt
from . import instructions as _ins
from .errors import NKIError, caller_location
from .indexing import arange, ds, mgrid  # noqa: F401  (public names of nl)
from .opcodes import Act, Alu, activation as _act_marker, alu as _alu_marker
from .tensor import HBM, PSUM, PSUM_BANK_BYTES, SBUF, SHARED_HBM, Tensor, new_view, same_view
from .tracer import IT, Engine, current

# ---- data types and buffers ----
bfloat16 = _dt.bfloat16
float16 = _dt.float16
float32 = _dt.float32
float8_e4m3 = _dt.float8_e4m3
float8_e5m2 = _dt.float8_e5m2
int8, int16, int32 = _dt.int8, _dt.int16, _dt.int32
uint8, uint16, uint32 = _dt.uint8, _dt.uint16, _dt.uint32
bool_ = _dt.bool_

sbuf = SBUF
psum = PSUM
hbm = HBM
private_hbm = HBM
shared_hbm = SHARED_HBM


class par_dim(int):
    """Marks the partition dimension in an ``nl.ndarray`` shape: ``(4, nl.par_dim(128), 512)``
    is four [128, 512] tiles."""


class tile_size:
    """The hardware's tile limits (from the target description, neuronxsim.bir.target)."""
    pmax = target.uniform("num_partitions")  # partitions
    psum_fmax = target.uniform("psum_bank_bytes")  # NKI's PSUM tile limit: one 2 KiB bank per partition
    psum_partition_size = target.uniform("psum_bytes_per_partition")  # bytes per partition of PSUM
    gemm_stationary_fmax = target.uniform("pe_cols")  # M of nc_matmul
    gemm_moving_fmax = target.uniform("pe_max_moving_free_elements")  # N of nc_matmul
    bn_stats_fmax = target.uniform("bn_stats_max_free_elements")  # elements per partition nisa.bn_stats takes


# ---- loops and SPMD programs ----

def affine_range(start, stop=None, step=1, **_hints):
    """A loop whose iterations are independent; the trace unrolls it."""
    return range(start, stop, step) if stop is not None else range(start)


sequential_range = affine_range
static_range = affine_range


def program_id(axis: int) -> int:
    """Index of this SPMD instance along launch-grid ``axis`` (the NeuronCore index for an
    ``nl.nc(n)`` axis)."""
    tr = current()
    if not 0 <= axis < len(tr.program_ids):
        raise NKIError(f"program_id({axis}): the launch grid has {len(tr.program_ids)} "
                       "dimension(s)", caller_location())
    return tr.program_ids[axis]


def num_programs(axes=None):
    tr = current()
    if axes is None:
        return math.prod(tr.grid)
    if isinstance(axes, int):
        return tr.grid[axes]
    return tuple(tr.grid[a] for a in axes)


def program_ndim() -> int:
    return len(current().grid)


class nc:
    """A launch-grid dimension spread over NeuronCores: ``kernel[nl.nc(2)]`` traces one BIR
    function per core, with ``nl.program_id`` of that axis the core index."""

    def __init__(self, n: int):
        if int(n) < 1:
            raise NKIError(f"nl.nc({n}) needs at least one core", caller_location())
        self.n = int(n)

    def __repr__(self):
        return f"nl.nc({self.n})"


# ---- creating tensors ----

def _parse_shape(shape, loc) -> tuple[tuple, int]:
    if type(shape) is tuple and shape:  # the common case: plain positive ints, no nl.par_dim
        for n in shape:
            if type(n) is not int or n <= 0:
                break
        else:
            return shape, 0
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


def _new_tensor(shape, dtype, buffer, name, loc, what: str) -> Tensor:
    tr = current()
    dims, pidx = _parse_shape(shape, loc)
    # Kernels create tensors of a few shapes over and over in their loops: a shape of plain
    # ints (_parse_shape hands it back as it is) has its dtype and buffer checked once.
    spec = None
    if dims is shape:
        try:
            spec = _CHECKED_SPECS.get((shape, dtype, buffer))
        except TypeError:  # an unhashable dtype or buffer: _tensor_spec refuses it
            pass
    if spec is None:
        spec = _tensor_spec(dims, pidx, dtype, buffer, loc, what)
        if dims is shape:
            _CHECKED_SPECS[(shape, dtype, buffer)] = spec
    dtype, buffer = spec
    if pidx == 0 and not name and (buffer == SBUF or buffer == PSUM):
        # an unnamed tile, named and placed as an instruction's result is (what tr.new_storage
        # and full_view do for it)
        return tr.new_result(buffer, dtype, dims, what, loc)
    st = tr.new_storage(buffer, dtype, dims, name or what, loc, pidx, explicit_name=bool(name))
    return st.full_view()


_CHECKED_SPECS: dict = {}  # (shape, dtype, buffer) -> (NumPy dtype, buffer), see _new_tensor


def _tensor_spec(dims: tuple, pidx: int, dtype, buffer, loc, what: str) -> tuple:
    """(NumPy dtype, buffer) of a new tensor of shape ``dims`` (partition axis ``pidx``),
    checked."""
    dtype = _dtype(dtype, loc)
    buffer = SBUF if buffer is None else buffer
    if buffer not in (SBUF, PSUM, HBM, SHARED_HBM):
        raise NKIError(f"unknown buffer {buffer!r}: use nl.sbuf, nl.psum, nl.hbm or nl.shared_hbm",
                       loc)
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
    elif pidx:
        raise NKIError("nl.par_dim applies to SBUF and PSUM tiles only", loc)
    return dtype, buffer


def ndarray(shape, dtype, buffer=None, name: str = "", **_kwargs) -> Tensor:
    """A new tensor (contents undefined until written)."""
    return _new_tensor(shape, dtype, buffer, name, caller_location(), "ndarray")


def _filled(shape, value, dtype, buffer, name, loc, what):
    t = _new_tensor(shape, dtype, buffer, name, loc, what)
    st = t.storage
    if st.kind not in (SBUF, PSUM):
        raise NKIError(f"nl.{what} creates on-chip tiles; HBM tensors are written by DMA", loc)
    return t, (t if st.partition_axis == 0 else st.lanes_view())


def zeros(shape, dtype, buffer=None, name: str = "", **_kwargs) -> Tensor:
    """A tile of zeros. The memset is emitted only if something reads the zeros: a matmul
    accumulating into a zeroed PSUM tile starts its accumulation group instead."""
    loc = caller_location()
    t, lanes = _filled(shape, 0.0, dtype, buffer, name, loc, "zeros")
    st = t.storage
    st.pending_zero = _ins.pending_zeros(current(), lanes, loc)
    st.write_count += 1
    st.written_partitions = st.partitions
    st.zero_init = True
    return t


def full(shape, fill_value, dtype, buffer=None, name: str = "", **_kwargs) -> Tensor:
    loc = caller_location()
    t, lanes = _filled(shape, fill_value, dtype, buffer, name, loc, "full")
    _ins.memset(current(), lanes, fill_value, loc)
    return t


def ones(shape, dtype, buffer=None, name: str = "", **_kwargs) -> Tensor:
    loc = caller_location()
    t, lanes = _filled(shape, 1.0, dtype, buffer, name, loc, "ones")
    _ins.memset(current(), lanes, 1.0, loc)
    return t


def zeros_like(a: Tensor, dtype=None, buffer=None, name: str = "", **_kwargs) -> Tensor:
    return zeros(a.shape, dtype or a.dtype, buffer or a.buffer, name)


def ones_like(a: Tensor, dtype=None, buffer=None, name: str = "", **_kwargs) -> Tensor:
    return ones(a.shape, dtype or a.dtype, buffer or a.buffer, name)


def full_like(a: Tensor, fill_value, dtype=None, buffer=None, name: str = "", **_kwargs):
    return full(a.shape, fill_value, dtype or a.dtype, buffer or a.buffer, name)


def empty_like(a: Tensor, dtype=None, buffer=None, name: str = "", **_kwargs) -> Tensor:
    return ndarray(a.shape, dtype or a.dtype, buffer or a.buffer, name)


# ---- memory movement ----

def _tile(x, loc, what: str, arg: str = "") -> Tensor:
    """``x``, checked to be an SBUF or PSUM tile. The errors call it ``what``, or
    ``nl.<what>: <arg>`` when ``arg`` is given (formatted only for an error)."""
    if x.__class__ is Tensor and x.storage.on_chip:
        return x
    if arg:
        what = f"nl.{what}: {arg}"
    if not isinstance(x, Tensor):
        raise NKIError(f"{what} must be a tile, not {type(x).__name__}", loc)
    if not x.storage.on_chip:
        raise NKIError(f"{what} is the HBM tensor {x.storage.describe()}; compute engines work on "
                       "SBUF/PSUM tiles (nl.load it first)", loc)
    return x


def _hbm(x, loc, what: str) -> Tensor:
    if not isinstance(x, Tensor) or x.storage.on_chip:
        raise NKIError(f"{what} must be an HBM tensor", loc)
    return x


def load(src, mask=None, dtype=None, **_kwargs) -> Tensor:
    """Copies ``src`` (HBM) into a new SBUF tile of the same shape; ``src``'s first dimension
    lands on partitions."""
    loc = caller_location()
    tr = current()
    if src.__class__ is not Tensor or src.storage.on_chip:
        _hbm(src, loc, "nl.load: src")  # (raises)
    shape = src.shape if len(src.shape) else (1,)
    if shape[0] > tile_size.pmax:
        raise NKIError(f"nl.load: the source's first dimension ({shape[0]}) becomes the tile's "
                       f"partition dimension, which has at most {tile_size.pmax} partitions", loc)
    dtype = _dtype(dtype, loc) if dtype is not None else src.dtype
    tile = tr.new_result(SBUF, dtype, shape, "load", loc)
    _ins.dma(tr, IT.Load, tile, src, loc, mask, what="nl.load", fresh=True)
    return tile


def store(dst, value, mask=None, **_kwargs):
    """Copies the tile ``value`` into ``dst`` (HBM)."""
    loc = caller_location()
    tr = current()
    if dst.__class__ is not Tensor or dst.storage.on_chip:
        _hbm(dst, loc, "nl.store: dst")  # (raises)
    if value.__class__ is not Tensor or not value.storage.on_chip:
        _tile(value, loc, "nl.store: value")  # (raises)
    if value.storage.kind == PSUM:
        value = _ins.tensor_copy(tr, value, value.dtype, loc, mask=mask, what="nl.store")
    _ins.dma(tr, IT.Save, dst, value, loc, mask, what="nl.store")


def copy(x, dtype=None, mask=None, **_kwargs) -> Tensor:
    """A copy of a tile (cast to ``dtype``) in SBUF."""
    loc = caller_location()
    x = _tile(x, loc, "nl.copy: x")
    return _ins.tensor_copy(current(), x, _opt_dtype(dtype, loc), loc, mask=mask, what="copy")


copy.act_func = Act.Copy


def _opt_dtype(dtype, loc):
    return None if dtype is None else _dtype(dtype, loc)


def broadcast_to(x, shape) -> Tensor:
    """``x`` repeated to ``shape``. Free dimensions repeat by a copy; a single partition is
    copied to all partitions through the PE array (a matmul against a row of ones)."""
    return _broadcast_tile(x, shape, caller_location())


def _broadcast_tile(x, shape, loc) -> Tensor:
    """:func:`broadcast_to` for the kernel line ``loc`` (``Tensor.broadcast_to`` finds it)."""
    tr = current()
    x = _tile(x, loc, "broadcast_to")
    shape = tuple([int(n) for n in shape])
    if x.shape == shape:
        return x
    if len(shape) != len(x.shape):
        raise NKIError(f"cannot broadcast {list(x.shape)} to {list(shape)}", loc)
    if x.shape[0] == shape[0]:
        out = tr.new_result(SBUF, x.dtype, shape, "broadcast", loc)
        return _ins.tensor_copy(tr, x, x.dtype, loc, out=out, what="broadcast_to")
    if x.shape[0] != 1 or shape[0] > tile_size.pmax or len(shape) > 2 or \
            x.shape[1:] != shape[1:]:
        raise NKIError(f"broadcast_to reaches all partitions from a [1, N] tile only; cannot "
                       f"broadcast {list(x.shape)} to {list(shape)}", loc)
    parts, width = shape[0], (shape[1] if len(shape) > 1 else 1)
    src = x if x.dtype in _ins.MATMUL_DTYPE_SET else _ins.tensor_copy(tr, x, float32, loc)
    ones_row = _ins.constant_tile(tr, (1, parts), 1.0, src.dtype, loc)
    out = tr.new_result(SBUF, x.dtype, shape, "broadcast", loc)
    flat = out if len(shape) > 1 else new_view(out.storage, 0, (parts, 1), (out.storage.row, 1), ())
    srcf = src if len(src.shape) > 1 else new_view(src.storage, src.offset, (1, 1), (0, 1), ())
    step = _ins.MATMUL_MAX_MOVING
    for lo in range(0, width, step):
        hi = builtins.min(width, lo + step)
        ps = _ins.matmul(tr, ones_row, srcf[:, lo:hi], loc, what="broadcast_to")
        _ins.tensor_copy(tr, ps, x.dtype, loc, out=flat[:, lo:hi], what="broadcast_to")
    return out


# ---- assignment: dst[...] = value, dst[...] op= value ----

def assign(dst: Tensor, value):
    """``dst[...] = value``. The instruction that just computed ``value`` is made to write
    ``dst`` when it can; otherwise a copy (or, for a number, a memset) writes ``dst``. Errors
    locate the kernel line themselves; only recorded instructions need ``caller_location``."""
    tr = current()
    if isinstance(value, Tensor):
        d_st = dst.storage
        if value.storage is d_st and same_view(dst, value):
            return  # `t[...] += x` stores back the view the += already updated
        if not d_st.on_chip:
            raise NKIError(f"assignment to HBM tensor {d_st.describe()}; write HBM with "
                           "nl.store")
        if not value.storage.on_chip:
            _tile(value, None, "the assigned value")  # (the error for an HBM tensor)
        if d_st.kind == PSUM and tr.place_matmul(value, dst, accumulate=False):
            return
        op = tr.fresh_result(value)
        if op is not None and _can_write(op, dst):
            if op.out_box is not None or dst.shape != value.shape:  # the shapes must agree
                _ins.out_view(dst, value.shape, op.out_box or _ins.full_box(value.shape), None)
            tr.redirect(op, value, dst, None,
                        checked_as=None if op.engine is _DMA else _ASSIGNED)
            return
        _ins.tensor_copy(tr, value, dst.dtype, caller_location(), out=dst, what="assignment")
    elif isinstance(value, (int, float, np.number)):
        if not dst.storage.on_chip:
            raise NKIError("HBM tensors cannot be filled with a constant; store a tile")
        _ins.memset(tr, dst, value, caller_location())
    else:
        raise NKIError(f"cannot assign {type(value).__name__} to a tile")


_ASSIGNED = ("assignment", "the destination")  # how errors name an assignment's target
_DMA, _POOL = Engine.DMA, Engine.Pool  # (module globals: see instructions._PE)


def _can_write(op, dst: Tensor) -> bool:
    """Whether ``op``'s engine can write ``dst``'s memory."""
    kind = dst.storage.kind
    if op.opcode is IT.Matmult:
        return kind == PSUM
    if op.engine is _DMA or op.engine is _POOL:
        return kind == SBUF
    return True


def accumulate(dst: Tensor, value, name: str) -> Tensor:
    """``dst op= value`` (returns ``dst``): a matmul result added to PSUM joins its accumulation
    group; anything else is one lane-wise instruction reading and writing ``dst``."""
    tr = current()
    if name == "add" and value.__class__ is Tensor and dst.storage.kind == PSUM and \
            tr.place_matmul(value, dst, accumulate=True):
        return dst
    loc = caller_location(1)  # (called from Tensor's in-place operator)
    if dst.__class__ is not Tensor or not dst.storage.on_chip:
        _tile(dst, loc, f"the target of '{name}='")
    _binary(dst, value, _BINARY_ALU[name], dst.dtype, None, loc, out=dst, what=name)
    return dst


def _apply_operator(x, y, name: str, loc):
    """``x <op> y`` written with Python's operators on tiles: ``nl.<name>(x, y)``."""
    return _binary(x, y, _BINARY_ALU[name], None, None, loc, what=name)


# ---- arithmetic ----

def _is_lane_constant(t: Tensor) -> bool:
    shape = t.shape
    return shape[1] == 1 if len(shape) == 2 else math.prod(shape[1:]) == 1


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
    if xt and yt:
        if x.shape != y.shape:  # (of equal shapes, both are lane constants or neither is)
            x_column, y_column = _is_lane_constant(x), _is_lane_constant(y)
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
    if isinstance(scalar, bool) or not isinstance(scalar, (int, float, np.number)):
        raise NKIError(f"nl.{what}: cannot combine a tile with {type(scalar).__name__}", loc)
    if dtype is None:
        dtype = tile.dtype
        if isinstance(scalar, (float, np.floating)) and not _dt.is_float(tile.dtype):
            dtype = float32
    return _ins.tensor_scalar(tr, tile, op, scalar, reverse, None, None, False, dtype, loc,
                              mask, out, what=what)


def _binary_fn(name: str, op):
    @_alu_marker(op)
    def fn(x, y, dtype=None, mask=None, **_kwargs):
        return _binary(x, y, op, dtype, mask, caller_location(), what=name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{op.name}`` of two tiles, or a tile and a number (Vector Engine)."
    return fn


_BINARY_ALU = {
    "add": Alu.add, "subtract": Alu.subtract, "multiply": Alu.mult, "divide": Alu.divide,
    "power": Alu.pow, "maximum": Alu.max, "minimum": Alu.min, "mod": Alu.mod, "fmod": Alu.mod,
    "equal": Alu.is_equal, "not_equal": Alu.not_equal, "greater": Alu.is_gt,
    "greater_equal": Alu.is_ge, "less": Alu.is_lt, "less_equal": Alu.is_le,
    "logical_and": Alu.logical_and, "logical_or": Alu.logical_or, "logical_xor": Alu.logical_xor,
    "bitwise_and": Alu.bitwise_and, "bitwise_or": Alu.bitwise_or, "bitwise_xor": Alu.bitwise_xor,
    "left_shift": Alu.logical_shift_left, "right_shift": Alu.arith_shift_right,
}
for _name, _op in _BINARY_ALU.items():
    globals()[_name] = _binary_fn(_name, _op)


def _activation_fn(name: str, func):
    @_act_marker(func)
    def fn(x, dtype=None, mask=None, **_kwargs):
        loc = caller_location()
        x = _tile(x, loc, name, "x")
        return _ins.activation(current(), func, x, None, 1.0, _opt_dtype(dtype, loc), loc, mask,
                               what=name)
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
for _name, _func in _ACTIVATIONS.items():
    globals()[_name] = _activation_fn(_name, _func)


def negative(x, dtype=None, mask=None, **_kwargs) -> Tensor:
    loc = caller_location()
    x = _tile(x, loc, "nl.negative: x")
    return _ins.tensor_scalar(current(), x, Alu.mult, -1.0, False, None, None, False,
                              _opt_dtype(dtype, loc), loc, mask, what="negative")


def invert(x, dtype=None, mask=None, **_kwargs) -> Tensor:
    loc = caller_location()
    x = _tile(x, loc, "nl.invert: x")
    return _ins.tensor_scalar(current(), x, Alu.bitwise_not, 0.0, False, None, None, False,
                              _opt_dtype(dtype, loc), loc, mask, what="invert")


bitwise_not = invert


def logical_not(x, dtype=None, mask=None, **_kwargs) -> Tensor:
    loc = caller_location()
    x = _tile(x, loc, "nl.logical_not: x")
    return _ins.tensor_scalar(current(), x, Alu.is_equal, 0.0, False, None, None, False,
                              _opt_dtype(dtype, loc), loc, mask, what="logical_not")


def where(condition, x, y, dtype=None, mask=None, **_kwargs) -> Tensor:
    """``x`` where ``condition`` is non-zero, else ``y`` (a tile or a number)."""
    loc = caller_location()
    condition = _tile(condition, loc, "nl.where: condition")
    return _ins.select(current(), condition, x, y, _opt_dtype(dtype, loc), loc, mask)


# ---- reductions ----

def _reduce_fn(name: str, op):
    @_alu_marker(op)
    def fn(x, axis, dtype=None, mask=None, keepdims=False, **_kwargs):
        loc = caller_location()
        x = _tile(x, loc, name, "x")
        return _ins.tensor_reduce(current(), op, x, axis, keepdims, False, _opt_dtype(dtype, loc),
                                  loc, mask, what=name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{op.name}``-reduction along free axes ``axis`` (Vector Engine)."
    return fn


sum = _reduce_fn("sum", Alu.add)  # noqa: A001  (NKI's name)
max = _reduce_fn("max", Alu.max)  # noqa: A001
min = _reduce_fn("min", Alu.min)  # noqa: A001
prod = _reduce_fn("prod", Alu.mult)
all = _reduce_fn("all", Alu.logical_and)  # noqa: A001


def mean(x, axis, dtype=None, mask=None, keepdims=False, **_kwargs) -> Tensor:
    """Arithmetic mean along free axes (a sum in fp32, then a scale)."""
    loc = caller_location()
    tr = current()
    x = _tile(x, loc, "nl.mean: x")
    axes = _ins.normalize_axes(axis, len(x.shape), loc, "nl.mean")
    count = math.prod(x.shape[a] for a in axes)
    total = _ins.tensor_reduce(tr, Alu.add, x, axes, keepdims, False, float32, loc, mask,
                               what="mean")
    return _ins.tensor_scalar(tr, total, Alu.mult, 1.0 / count, False, None, None, False,
                              _opt_dtype(dtype, loc) or x.dtype, loc, None, what="mean")


def softmax(x, axis=-1, dtype=None, mask=None, **_kwargs) -> Tensor:
    """``exp(x - max) / sum(exp(x - max))`` along the last free axis."""
    loc = caller_location()
    tr = current()
    x = _tile(x, loc, "nl.softmax: x")
    axes = _ins.normalize_axes(axis, len(x.shape), loc, "nl.softmax")
    if axes != [len(x.shape) - 1] or len(x.shape) != 2:
        raise NKIError("nl.softmax works along the free axis of a 2-D tile", loc)
    peak = _ins.tensor_reduce(tr, Alu.max, x, axes, True, True, float32, loc, mask, what="softmax")
    e = _ins.activation(tr, Act.Exp, x, peak, 1.0, float32, loc, mask, what="softmax")
    total = _ins.tensor_reduce(tr, Alu.add, e, axes, True, False, float32, loc, mask,
                               what="softmax")
    return _ins.tensor_scalar(tr, e, Alu.divide, total, False, None, None, False,
                              _opt_dtype(dtype, loc) or x.dtype, loc, mask, what="softmax")


# ---- the Tensor Engine ----

def _sbuf_operand(tr, t: Tensor, loc, what: str) -> Tensor:
    """PSUM operands of a matmul are first copied to SBUF (the PE array reads SBUF only)."""
    if t.storage.kind == PSUM:
        return _ins.tensor_copy(tr, t, t.dtype if t.dtype in _ins.MATMUL_DTYPES else float32,
                                loc, what=what)
    return t


def matmul(x, y, transpose_x=False, mask=None, **_kwargs) -> Tensor:
    """``x @ y`` into PSUM (fp32). With ``transpose_x`` the tile ``x`` holds xᵀ ([K, M], the
    layout the PE array wants); otherwise ``x`` ([M, K]) is first transposed on the PE array."""
    loc = caller_location()
    tr = current()
    if mask is not None:
        raise NKIError("nl.matmul: masks are not supported; index the operand tiles instead", loc)
    if x.__class__ is not Tensor or x.storage.kind != SBUF:
        x = _sbuf_operand(tr, _tile(x, loc, "nl.matmul: x"), loc, "nl.matmul")
    if y.__class__ is not Tensor or y.storage.kind != SBUF:
        y = _sbuf_operand(tr, _tile(y, loc, "nl.matmul: y"), loc, "nl.matmul")
    if not transpose_x:
        xt = _ins.transpose_pe(tr, x, x.dtype, loc, what="nl.matmul")
        x = _ins.tensor_copy(tr, xt, x.dtype, loc, what="nl.matmul")
    return _ins.matmul(tr, x, y, loc, what="nl.matmul")


def transpose(x, dtype=None, mask=None, **_kwargs) -> Tensor:
    """Swaps the partition and free dimensions of a 2-D tile (PE transpose, result in SBUF)."""
    loc = caller_location()
    tr = current()
    x = _sbuf_operand(tr, _tile(x, loc, "nl.transpose: x"), loc, "nl.transpose")
    dtype = _opt_dtype(dtype, loc) or x.dtype
    if mask is not None:
        raise NKIError("nl.transpose: masks are not supported; index the tile instead", loc)
    ps = _ins.transpose_pe(tr, x, x.dtype, loc, what="nl.transpose")
    return _ins.tensor_copy(tr, ps, dtype, loc, what="nl.transpose")


# ---- debugging ----

def device_print(prefix, x, **_kwargs):
    """Prints ``prefix`` and the values of ``x`` when the kernel is simulated."""
    loc = caller_location()
    if not isinstance(x, Tensor):
        raise NKIError("nl.device_print prints tiles and tensors", loc)
    _ins.device_print(current(), prefix, x, loc)


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in (
    "annotations", "builtins", "math", "np", "NKIError", "caller_location", "current",
    "Tensor", "same_view", "IT", "Engine", "Alu", "Act", "HBM", "PSUM", "SBUF", "SHARED_HBM")]
