"""Symbolic tensors: what an NKI kernel holds while it is traced.

A :class:`Storage` is one memory object: a kernel input or output in HBM, an internal HBM tensor,
or an on-chip tile (SBUF or PSUM) whose address the allocation pass chooses after tracing
(unless a direct allocation fixed it). A :class:`Tensor` is a strided view of a storage
(``offset`` plus one ``stride`` per dimension, in elements): the object kernels index, pass to
``nl``/``nisa`` functions and combine with operators.

On-chip layout. An on-chip storage is a tile: its first dimension is the partition dimension and
each partition holds the other dimensions row-major. An on-chip tensor with block dimensions
(``nl.ndarray((4, nl.par_dim(128), 512))``: the dimensions before ``nl.par_dim``) is a
:class:`BlockedTensor`, one tile per logical block, each its own storage: blocks are allocated
by their own live ranges (or placed one by one by a direct allocation), and instructions work on
one block at a time.
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

from neuronxsim.bir import target
from neuronxsim.starfish.lib import _core

from . import dtypes as dt
from .errors import NKIError, SourceLocation, caller_location
from .indexing import (BoundCheck, IndexExpr, LoopIndex, _as_int, basic_subscript,
                       partition_free_subscript, plain_subscript, resolve_subscript)

#: Buffer names as NKI spells them (``nl.sbuf`` is the string "sbuf", and so on).
SBUF, PSUM, HBM, SHARED_HBM = "sbuf", "psum", "hbm", "shared_hbm"
INPUT = "input"  # a kernel argument (read only)

NUM_PARTITIONS = target.uniform("num_partitions")
PSUM_BANK_BYTES = target.uniform("psum_bank_bytes")


class Layout:
    """Where the elements of a storage lie (see the module docstring); made by
    :func:`storage_layout`. Storages alike share one: nothing changes a layout.

    ``partitions``: the partition count of an on-chip tile (1 off chip); ``row``: elements per
    partition (0 off chip); ``strides``: in elements, one per dimension (the partition
    dimension's is ``row``); ``full_pairs``: the access pairs of a whole [P, F] or [P] tile,
    [(F, P), (1, F)] ((1, 1) for F = 1), None for other storages."""

    __slots__ = ("on_chip", "partitions", "row", "strides", "full_pairs")

    def __init__(self, on_chip: bool, partitions: int, row: int, strides: tuple,
                 full_pairs: list | None):
        self.on_chip = on_chip
        self.partitions = partitions
        self.row = row
        self.strides = strides
        self.full_pairs = full_pairs


def storage_layout(kind: str, shape: tuple) -> Layout:
    """The layout of a storage of this kind and shape."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    strides = tuple(reversed(strides))
    if kind != SBUF and kind != PSUM:  # HBM: row-major, no partitions
        return Layout(False, 1, 0, strides, None)
    p = shape[0]
    full_pairs = None
    if len(shape) <= 2 and p <= NUM_PARTITIONS:
        f = shape[1] if len(shape) == 2 else 1
        full_pairs = [(f, p), (1, f) if f > 1 else (1, 1)]
    return Layout(True, p, strides[0] if len(shape) > 1 else 1, strides, full_pairs)


class Storage:
    """One memory object of the trace (see the module docstring): what it is and how its
    elements lie. Made by :func:`new_storage`; what the trace learns about its contents while
    recording is its ``state`` (:class:`~neuronxsim.nki.tracer.StorageState`), and where it is
    placed is the allocation pass's answer, not the storage's.

    ``sid``: its position in its core's list of storages (passes keep per-storage results in
    lists indexed by it). Slotted and without ``__init__``: a trace creates (and frees) one
    storage per instruction result, and a bare slotted object is the cheapest to create."""

    __slots__ = ("sid", "kind", "dtype", "shape", "layout", "on_chip", "strides", "name", "hint",
                 "created_at", "explicit_name", "placement", "state")
    # (on_chip and strides are the layout's, repeated here: nearly every use of a storage asks
    # for them first). placement: None, or the (start partition, byte address) a direct
    # allocation fixed.

    @property
    def partitions(self) -> int:
        return self.layout.partitions

    @property
    def row(self) -> int:
        """Elements per partition of an on-chip storage."""
        return self.layout.row

    @property
    def elements(self) -> int:
        """Elements of the storage, over all its partitions (the product of its shape: what
        cpp/python/trace_assign.cpp's dropCoveredZeros computes the same way)."""
        return math.prod(self.shape)

    @property
    def bytes_per_partition(self) -> int:
        return self.layout.row * self.dtype.itemsize

    def describe(self) -> str:
        where = f" (created at {self.created_at.short})" if self.created_at else ""
        return f"'{self.name or self.hint}'{where}"

    def full_view(self) -> "Tensor":
        return new_view(self, 0, self.shape, self.strides, ())


# Storages are freed in one pass in C (cpp/python/trace_slotted.cpp, use_slots_dealloc): a trace
# frees one per instruction or so, and the generic deallocation walks the class's slots and bases.
_core.nki.use_slots_dealloc(Storage)


def new_storage(sid: int, kind: str, dtype: np.dtype, shape: tuple, layout: Layout, hint: str,
                created_at: SourceLocation | None, state, name: str | None = None,
                explicit_name: bool = False, placement: tuple | None = None) -> Storage:
    """A storage of ``layout`` (``storage_layout(kind, shape)``). Temporaries get
    their unique ``name`` only when they are emitted (most tiles an instruction first writes
    are redirected and never emitted); until then they go by ``hint``."""
    st = Storage()
    st.sid = sid
    st.kind = kind
    st.dtype = dtype
    st.shape = shape
    st.layout = layout
    st.on_chip = layout.on_chip
    st.strides = layout.strides
    st.name = name
    st.hint = hint
    st.created_at = created_at
    st.explicit_name = explicit_name
    st.placement = placement
    st.state = state
    return st


def _operator(name: str, reverse: bool = False):
    """The method for a Python operator on tiles: ``nl.<name>(self, other)`` (reversed:
    ``(other, self)``). It finds the kernel's line itself, one frame up (the cheap case of
    caller_location)."""
    if reverse:
        def method(self, other):
            return _nl._apply_operator(other, self, name, caller_location())
    else:
        def method(self, other):
            return _nl._apply_operator(self, other, name, caller_location())
    method.__name__ = name
    return method


class Tensor:
    """A strided view of a :class:`Storage`: an NKI tensor or tile while the kernel is traced;
    made by :func:`new_view` (no ``__init__``, as Storage)."""

    # last_subscript: (key, view) of the last general subscript, for `t[key] op= x`, which
    # subscripts t twice with one key object (see __setitem__). blocks: integer key -> view, of
    # an on-chip tensor whose blocks are subscripted (kernels index a multi-tile buffer with the
    # same integers over and over; views are immutable, so one object serves them all).
    # access: the view's Access as an operand an engine takes as it is, once made (see
    # tracer.plain_tile_access; None until then).
    __slots__ = ("storage", "offset", "shape", "strides", "checks", "last_subscript", "blocks",
                 "access")
    __array_priority__ = 1000  # numpy scalars on the left defer to our operators

    # ---- what kernels read ----
    # (a getter in C: kernels and the nl functions read it often)
    dtype = property(operator.attrgetter("storage.dtype"), doc="The tensor's element type.")

    @property
    def buffer(self) -> str:
        kind = self.storage.kind
        return SHARED_HBM if kind in (INPUT, SHARED_HBM) else kind

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def name(self) -> str:
        return self.storage.name or self.storage.hint

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return (f"<nki tensor {self.name} {self.buffer} {dt.name(self.dtype)}"
                f"{list(self.shape)}>")

    def __iter__(self):
        raise NKIError("tensors are not iterable; index them with nl.affine_range loops",
                       caller_location())

    def __bool__(self):
        raise NKIError("a tensor's values are not known while the kernel is traced; use "
                       "nl.where or masks instead of Python conditions (and `is not None` to "
                       "test whether an optional tensor was given)", caller_location())

    def __index__(self):
        raise NKIError("a tensor's values are not known while the kernel is traced and cannot be "
                       "used as a Python integer", caller_location())

    # ---- views ----
    # (__getitem__: _core.nki's subscript, set below, which hands the keys it does not take to
    # _getitem; __setitem__: _core.nki's store, set below: `t[...]` is t, a key object that was
    # the last subscript's resolves to its view (views are immutable: `t[key] op= x` subscripts
    # t twice with one key), anything else to t[key]; the value, unless it is that view, is
    # assigned as nl.assign does)


    def restrict(self, axis: int, lo: int, hi: int) -> "Tensor":
        """The view with dimension ``axis`` limited to ``[lo, hi)`` (how masks apply)."""
        if lo == 0 and hi == self.shape[axis]:
            return self
        shape = self.shape[:axis] + (hi - lo,) + self.shape[axis + 1:]
        checks = tuple(BoundCheck(c.const + c.coefs[axis] * lo, c.coefs, c.size, c.axis)
                       for c in self.checks)
        return new_view(self.storage, self.offset + self.strides[axis] * lo, shape, self.strides,
                      checks)

    def is_full_view(self) -> bool:
        s = self.storage
        return self.offset == 0 and self.shape == s.shape and self.strides == s.strides

    def check_bounds(self, loc) -> None:
        """Refuses this view (an NKIError at the kernel line ``loc``) when its deferred range
        checks fail over the whole view: what makes a view without them (a reshape, a flat
        view) of one with them asks first, so that an index out of range is never read from
        the tensor's other elements."""
        why = self.bound_violation()
        if why:
            raise NKIError(f"out-of-range access to {self.storage.describe()}: {why}", loc)

    def bound_violation(self) -> str | None:
        for chk in self.checks:
            why = chk.violation(self.shape)
            if why:
                return why
        return None

    def reshape(self, shape) -> "Tensor":
        """The same elements under a new shape (a whole, contiguous HBM tensor only)."""
        shape = tuple(int(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        loc = caller_location()
        if self.storage.on_chip:
            raise NKIError("reshape of an SBUF/PSUM tile is not supported; index it instead", loc)
        if not self.is_full_view() and not _is_contiguous(self):
            raise NKIError("only whole, contiguous HBM tensors can be reshaped", loc)
        if math.prod(shape) != math.prod(self.shape):
            raise NKIError(f"cannot reshape {list(self.shape)} ({math.prod(self.shape)} elements) "
                           f"to {list(shape)}", loc)
        self.check_bounds(loc)  # (the reshaped view carries no checks)
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        return new_view(self.storage, self.offset, shape, tuple(reversed(strides)), ())

    def broadcast_to(self, shape) -> "Tensor":
        return _nl._broadcast_tile(self, shape, caller_location())

    def view(self, dtype) -> "Tensor":
        """The data reinterpreted as ``dtype`` (no copy): of this tensor's own dtype only (see
        :func:`reinterpret_refusal`)."""
        loc = caller_location()
        d = dt.as_dtype(dtype)
        if d is None:
            raise NKIError(f"view: dtype {dtype!r} is not an NKI data type "
                           f"({dt.supported_names()})", loc)
        if d == self.dtype:
            return self
        raise reinterpret_refusal("view(dtype)", loc)

    # ---- operators: nl functions ----
    __add__, __radd__ = _operator("add"), _operator("add", True)
    __sub__, __rsub__ = _operator("subtract"), _operator("subtract", True)
    __mul__, __rmul__ = _operator("multiply"), _operator("multiply", True)
    __truediv__, __rtruediv__ = _operator("divide"), _operator("divide", True)
    __pow__, __rpow__ = _operator("power"), _operator("power", True)
    __mod__ = _operator("mod")
    __lt__, __le__ = _operator("less"), _operator("less_equal")
    __gt__, __ge__ = _operator("greater"), _operator("greater_equal")
    __eq__, __ne__ = _operator("equal"), _operator("not_equal")

    def __and__(self, o):
        name = "logical_and" if dt.is_float(self.dtype) else "bitwise_and"
        return _nl._apply_operator(self, o, name, caller_location())

    def __or__(self, o):
        name = "logical_or" if dt.is_float(self.dtype) else "bitwise_or"
        return _nl._apply_operator(self, o, name, caller_location())

    def __xor__(self, o):
        name = "logical_xor" if dt.is_float(self.dtype) else "bitwise_xor"
        return _nl._apply_operator(self, o, name, caller_location())

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    __hash__ = object.__hash__

    def __neg__(self):
        return _nl.negative(self)

    def __abs__(self):
        return _nl.abs(self)

    def __invert__(self):
        return _nl.invert(self)

    # (__iadd__, __isub__, __imul__, __itruediv__: _core.nki's, set below)


def _getitem(self: Tensor, key) -> Tensor:
    """``self[key]`` for the keys the C subscript (``Tensor.__getitem__``) hands on: index
    expressions, blocks of multi-tile tensors, slices reaching outside their dimension (bound
    checks deferred to the instruction), run-time (indirect) rows, and every error."""
    view = None
    if key.__class__ is tuple and not self.checks:
        n = len(key)
        shape = self.shape
        if n == 2 and len(shape) == 2:
            r, c = key
            if r.__class__ is IndexExpr:  # t[t * 128 + ip, ic]
                view = partition_free_subscript(r, c, shape, self.strides, self.offset)
                if view is not None:
                    return new_view(self.storage, view[0], view[1], view[2], ())
        if n and key[0].__class__ is int and n <= len(shape):
            # t[i, ...]: a block of a multi-tile ndarray (an on-chip one may have been
            # subscripted so before: it has `blocks`)
            blocks = self.blocks
            memo = _block_key(key) if blocks is not None or self.storage.on_chip else None
            if memo is not None:
                if blocks is None:
                    blocks = self.blocks = {}
                else:
                    view = blocks.get(memo)
                    if view is not None:
                        self.last_subscript = (key, view)
                        return view
                view = basic_subscript(key, shape, self.strides, self.offset)
                if view is not None:  # (None: a slice reaches outside; resolve_subscript's)
                    view = blocks[memo] = new_view(self.storage, view[0], view[1], view[2], ())
                    self.last_subscript = (key, view)
                    return view
            else:
                view = basic_subscript(key, shape, self.strides, self.offset)
    if view is None:
        plain = plain_subscript(key if key.__class__ is tuple else (key,),
                                self.storage.on_chip and key.__class__ is tuple)
        if plain is not None:  # (loop indices: see plain_subscript)
            return self[plain if key.__class__ is tuple else plain[0]]
        if key.__class__ is Tensor or key.__class__ is tuple and any(
                k.__class__ is Tensor for k in key):  # t[.., idx_tile, ...]: rows picked
            return _indirect(self, key)               # at run time
        view = resolve_subscript(key, self.shape, self.strides, self.offset, self.checks)
    view = new_view(self.storage, view[0], view[1], view[2], view[3])
    self.last_subscript = (key, view)
    return view


_current = _core.nki.current  # (neuronxsim.nki.tracer.current: tracer imports this module)


#: ``new_view(storage, offset, shape, strides, checks)``: a :class:`Tensor` (the rest of its
#: slots None). In C (``cpp/python/trace_slotted.cpp``): a trace makes a few per instruction.
new_view = functools.partial(_core.nki.new_slotted, Tensor)

_core.nki.configure_subscripts(Tensor, LoopIndex, _getitem, NKIError, _as_int, np.integer)
#: ``t[key]`` in C (``cpp/python/trace_subscript.cpp``, its arithmetic ``bir::View``'s): ``...``
#: (the tensor itself) and, on a tensor without bound checks, keys of ints, loop indices, NumPy
#: integers, slices (any step, negative bounds) and one ``...``, every index and slice inside its
#: dimension, except a tuple key starting with an integer on an on-chip tensor (a block, whose
#: views ``_getitem`` keeps); every other key is ``_getitem``'s.
Tensor.__getitem__ = _core.nki.subscript_method(Tensor)
# (its first case below, `t[t * 128 + ip, ic]` by partition_free_subscript, is the C subscript's too)
_core.nki.configure_index_expr(IndexExpr)


class IndirectView:
    """An HBM tensor's rows picked at run time, ``t[idx, ...]``: ``rows`` is the view of every
    row (the rest of the subscript applied), ``index`` the SBUF tile of row numbers (one per
    partition, an integer dtype). ``nl.load`` / ``nisa.dma_copy`` read it with one indirect
    DMA (destination row ``r`` gets row ``index[r]``); nothing else takes it."""

    __slots__ = ("rows", "index")

    def __init__(self, rows: "Tensor", index: "Tensor"):
        self.rows = rows
        self.index = index

    @property
    def shape(self) -> tuple:
        return (self.index.shape[0],) + self.rows.shape[1:]

    @property
    def dtype(self):
        return self.rows.storage.dtype

    def __repr__(self):
        return f"<rows of {self.rows.storage.describe()} picked by {self.index.storage.describe()}>"


def _on_one_row(k, rows: int):
    """A free index of ``t[idx, k]`` that spans the index tile's rows on its first grid axis
    without depending on them (``nl.mgrid[0:P, 0:F]``'s second component, a dense grid) is the
    same index on every row: the view of every row takes it on a grid of one row, as it takes
    ``nl.arange(F)[None, :]``."""
    if (k.__class__ is IndexExpr and len(k.shape) >= 2 and k.shape[0] == rows
            and k.coefs[0] == 0):
        return IndexExpr((1,) + k.shape[1:], k.const, k.coefs)
    return k


def _indirect(t: "Tensor", key) -> IndirectView:
    """``t[i, ..., idx, ...]``: integers, then a tile of row numbers, then static subscripts
    (see IndirectView)."""
    loc = caller_location()
    key = key if key.__class__ is tuple else (key,)
    at = next(i for i, k in enumerate(key) if k.__class__ is Tensor)
    if t.storage.on_chip:
        raise NKIError("indexing a tile by a tile is not supported; the rows of an HBM tensor "
                       "can be picked by a tile of row numbers (t[idx, ...])", loc)
    if any(k.__class__ is not int and not isinstance(k, np.integer) for k in key[:at]):
        raise NKIError("the dimensions before the one picked by a tile of row numbers must be "
                       "fixed by integers (t[b, idx, ...])", loc)
    index, rest = key[at], key[at + 1:]
    ishape = index.shape
    if not index.storage.on_chip or not (len(ishape) == 1 or
                                         len(ishape) == 2 and ishape[1] == 1):
        raise NKIError(f"the row numbers of t[idx, ...] are an SBUF tile of one column, [P, 1] "
                       f"or [P]; this one is {list(ishape)} in {index.storage.kind}", loc)
    if dt.is_float(index.dtype) or index.dtype.itemsize < 2:
        raise NKIError(f"row numbers must be integers of 16 or 32 bits, not "
                       f"{dt.name(index.dtype)}", loc)
    for k in rest:
        if k.__class__ is Tensor:
            raise NKIError("only one dimension of t[..., idx, ...] can be picked at run time",
                           loc)
    rest = tuple(_on_one_row(k, ishape[0]) for k in rest)
    base = t[key[:at]] if at else t
    if len(rest) + 1 > len(base.shape):
        raise NKIError(f"{len(key)} indices for a tensor of {len(t.shape)} dimension(s)", loc)
    rows = base[(slice(None),) + tuple(rest)]
    return IndirectView(rows, index)


class BlockedTensor:
    """An on-chip tensor with block dimensions: one tile per logical block (see the module
    docstring), made on first use by ``make_block(index)`` (a tuple of block indices) and kept.
    Subscripts that fix every block dimension give that block's :class:`Tensor` view (the rest
    of the subscript applied to it); instructions take one block at a time."""

    __slots__ = ("block_shape", "tile_shape", "dtype", "kind", "hint", "created_at", "blocks",
                 "make_block", "last_subscript")
    __array_priority__ = 1000

    def __init__(self, block_shape: tuple, tile_shape: tuple, dtype, kind: str, hint: str,
                 created_at, make_block):
        self.block_shape = block_shape
        self.tile_shape = tile_shape
        self.dtype = dtype
        self.kind = kind
        self.hint = hint
        self.created_at = created_at
        self.blocks: dict = {}
        self.make_block = make_block
        self.last_subscript = None

    @property
    def shape(self) -> tuple:
        return self.block_shape + self.tile_shape

    @property
    def ndim(self) -> int:
        return len(self.block_shape) + len(self.tile_shape)

    @property
    def buffer(self) -> str:
        return self.kind

    @property
    def name(self) -> str:
        return self.hint

    def __len__(self):
        return self.block_shape[0]

    def __repr__(self):
        return (f"<nki tensor {self.hint} {self.kind} {dt.name(self.dtype)}{list(self.shape)}, "
                f"{math.prod(self.block_shape)} blocks>")

    def block(self, index: tuple) -> "Tensor":
        """The full view of the tile of block ``index`` (made on first use)."""
        view = self.blocks.get(index)
        if view is None:
            view = self.blocks[index] = self.make_block(index)
        return view

    def all_blocks(self) -> list:
        """Every block's full view, in row-major block order."""
        import itertools
        return [self.block(index) for index in itertools.product(*map(range, self.block_shape))]

    # (__getitem__ and __setitem__: _core.nki's, set below; the subscripts the C one does not
    # take, and every error, are _blocked_getitem's)

    def __iter__(self):
        raise NKIError("tensors are not iterable; index them with nl.affine_range loops",
                       caller_location())


def _block_key(key: tuple) -> tuple | None:
    """A hashable stand-in for a subscript of integers and step-less slices with integer (or
    no) bounds, for Tensor.blocks (a slice is no dict key before Python 3.12); None for any
    other subscript."""
    if len(key) == 3:  # t[i, :, a:b] and t[i, j, k], the commonest, without the loop's work
        i, a, b = key  # (the caller has checked i)
        ca, cb = a.__class__, b.__class__
        if ca is slice and cb is slice:
            a0, a1, b0, b1 = a.start, a.stop, b.start, b.stop
            if a.step is None and b.step is None and \
                    (a0 is None or a0.__class__ is int) and (a1 is None or a1.__class__ is int) \
                    and (b0 is None or b0.__class__ is int) and \
                    (b1 is None or b1.__class__ is int):
                return (i, (a0, a1), (b0, b1))  # (what the loop makes of it)
        elif ca is int and cb is int:
            return key
    parts = []
    for k in key:
        cls = k.__class__
        if cls is int:
            parts.append(k)
        elif cls is slice:
            start, stop = k.start, k.stop
            if k.step is not None or (start is not None and start.__class__ is not int) or \
                    (stop is not None and stop.__class__ is not int):
                return None
            parts.append((start, stop))
        else:
            return None
    return tuple(parts)


def reinterpret_refusal(what: str, loc) -> NKIError:
    """The error for reading a tensor's bytes as another dtype (both dialects refuse it)."""
    return NKIError(f"{what} to a different data type is not supported yet: the emitted BIR "
                    "gives every operand its tensor's dtype", loc)


def _is_contiguous(t: Tensor) -> bool:
    step = 1
    for n, s in zip(reversed(t.shape), reversed(t.strides)):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def same_view(a: Tensor, b: Tensor) -> bool:
    return (a.storage is b.storage and a.offset == b.offset and a.shape == b.shape
            and a.strides == b.strides)


def _blocked_getitem(self: BlockedTensor, key) -> "Tensor":
    """``self[key]`` of a BlockedTensor for the keys its C subscript (``cpp/python/
    trace_blocked.cpp``) hands on: fewer entries than block dimensions (the blocks they leave, a
    BlockedTensor), block indices that are neither ints nor loop indices, and every error."""
    if key.__class__ is not tuple:
        key = (key,)
    nb = len(self.block_shape)
    index = []
    for axis, k in enumerate(key[:nb]):
        size = self.block_shape[axis]
        if k.__class__ is not int:
            try:
                k = operator.index(k)
            except TypeError:
                raise NKIError(f"{self.hint} has block dimensions {list(self.block_shape)}: "
                               f"index each one with an integer (t[i, ...]) to get a tile; "
                               f"instructions work on one block at a time, not on "
                               f"{type(k).__name__} over blocks", caller_location()) from None
        if not -size <= k < size:
            raise NKIError(f"block index {k} is out of range for block dimension {axis} of "
                           f"size {size} of {self.hint}", caller_location())
        index.append(k + size if k < 0 else k)
    if len(index) < nb:  # t[i] of blocks [I, J]: the J blocks of row i
        prefix, whole = tuple(index), self.block
        return BlockedTensor(self.block_shape[len(index):], self.tile_shape, self.dtype,
                             self.kind, self.hint, self.created_at,
                             lambda rest: whole(prefix + rest))
    view = self.block(tuple(index))
    rest = key[nb:]
    if rest and not (len(rest) == 1 and rest[0] is Ellipsis):
        view = view[rest]
    self.last_subscript = (key, view)
    return view


# Operators and assignment are nl functions; language imports this module, so it is bound last.
from . import language as _nl  # noqa: E402

_core.nki.configure_blocked(BlockedTensor, Tensor, LoopIndex, _blocked_getitem, _current, _nl)
#: ``t[key]`` and ``t[key] = value`` of a BlockedTensor, ``t[key] = value`` of a Tensor, in C
#: (``cpp/python/trace_blocked.cpp``): a key whose block indices are ints or loop indices inside
#: their dimensions names a block, whose view (kept in ``blocks``) takes the rest of the key;
#: every other key is ``_blocked_getitem``'s. A store assigns the value as nl.assign does.
BlockedTensor.__getitem__, BlockedTensor.__setitem__ = _core.nki.blocked_methods()
Tensor.__setitem__ = _core.nki.tensor_store_method()

_core.nki.configure_accumulate(Tensor, _current, _nl, PSUM)
#: ``t += x`` (``-=``, ``*=``, ``/=``) of a Tensor, in C (``cpp/python/trace_accumulate.cpp``):
#: returns t, having recorded nothing for a masked-out value, a matmul result added to PSUM
#: joining its accumulation group (``Tracer.place_matmul``), two on-chip tiles of one shape by
#: ``lanewise_plain`` when it takes them (see ``language._IN_PLACE_ALU``), anything else by
#: ``language._accumulate_general``.
for _name, _method in _core.nki.accumulate_methods().items():
    setattr(Tensor, _name, _method)
#: ``t + x`` (``-``, ``*``, ``/`` and their reversed forms) of a Tensor, in C (same file): two
#: on-chip tiles of one shape by the ``lanewise_plain`` call ``language._binary`` makes for them
#: when it takes them, a float tile with an int or a float by _binary's ``tensor_scalar`` call,
#: anything else by ``language._apply_operator`` (which the Python definitions above,
#: ``_operator``, call).
for _name, _method in _core.nki.operator_methods().items():
    setattr(Tensor, _name, _method)
del _name, _method
