"""Symbolic tensors: what an NKI kernel holds while it is traced.

A :class:`Storage` is one memory object: a kernel input or output in HBM, an internal HBM tensor,
or an on-chip buffer (SBUF or PSUM) whose address the allocator chooses after tracing. A
:class:`Tensor` is a strided view of a storage (``offset`` plus one ``stride`` per dimension, in
elements): the object kernels index, pass to ``nl``/``nisa`` functions and combine with operators.

On-chip layout. An on-chip storage has a partition axis (``nl.par_dim``, else axis 0); each
partition holds the other axes row-major, the axes before the partition axis ("block" axes, as in
``nl.ndarray((4, nl.par_dim(128), 512))``) outermost. In PSUM each block is padded to a 2 KiB
bank, so every block is a tile a matmul can accumulate into.
"""

from __future__ import annotations

import math

import numpy as np

from neuronxsim.bir import target

from . import dtypes as dt
from .errors import NKIError, SourceLocation, caller_location
from .indexing import (BoundCheck, IndexExpr, basic_subscript, partition_free_subscript,
                       resolve_subscript)

#: Buffer names as NKI spells them (``nl.sbuf`` is the string "sbuf", and so on).
SBUF, PSUM, HBM, SHARED_HBM = "sbuf", "psum", "hbm", "shared_hbm"
INPUT = "input"  # a kernel argument (read only)

NUM_PARTITIONS = target.uniform("num_partitions")
PSUM_BANK_BYTES = target.uniform("psum_bank_bytes")


def storage_layout(kind: str, dtype: np.dtype, shape: tuple, partition_axis: int = 0) -> tuple:
    """What a storage's kind, dtype, shape and partition axis decide (see the module docstring):
    ``(on_chip, partition_axis, partitions, row, strides, full_pairs)``, the first slots of
    :class:`Storage`. ``row``: elements per partition (PSUM blocks padded to banks);
    ``full_pairs``: the access pairs of a whole [P, F] tile, [(F, P), (1, F)] ((1, 1) for
    F = 1; a [P] tile is a [P, 1] one), None for other storages. Storages alike may share one
    layout: nothing changes it."""
    if kind != SBUF and kind != PSUM:  # HBM: row-major, no partitions
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        return False, 0, 1, 0, tuple(reversed(strides)), None
    free = shape[partition_axis + 1:]
    blocks = shape[:partition_axis]
    block = math.prod(free)
    if kind == PSUM and blocks:
        bank = PSUM_BANK_BYTES // dtype.itemsize
        block = -(-block // bank) * bank
    row = block * math.prod(blocks)
    strides = [0] * len(shape)
    step = 1
    for axis in range(len(shape) - 1, partition_axis, -1):
        strides[axis] = step
        step *= shape[axis]
    step = block
    for axis in range(partition_axis - 1, -1, -1):
        strides[axis] = step
        step *= shape[axis]
    strides[partition_axis] = row
    full_pairs = None
    p = shape[partition_axis]
    if partition_axis == 0 and len(shape) <= 2 and p <= NUM_PARTITIONS:
        f = shape[1] if len(shape) == 2 else 1
        full_pairs = [(f, p), (1, f) if f > 1 else (1, 1)]
    return True, partition_axis, p, row, tuple(strides), full_pairs


class Storage:
    """One memory object of the trace (see the module docstring); made by :func:`new_storage`.

    Slotted, every attribute set at creation, and without ``__init__``: a trace creates (and
    frees) one storage per instruction result, and a bare slotted object is the cheapest to
    create and to free."""

    __slots__ = (
        # The layout (see storage_layout), then who the storage is.
        "on_chip", "partition_axis", "partitions", "row", "strides", "full_pairs",
        "name", "hint", "kind", "dtype", "shape", "created_at", "explicit_name",
        # The Access of the full view of a [P, F] or [P] tile (full_pairs), made on first use
        # and shared by the instructions using it (accesses are not changed once recorded).
        "full_access",
        # Trace state: writes seen; partitions written from 0 (and written ranges beyond them,
        # see tracer._note_written_partitions); the disabled Memset of nl.zeros until something
        # needs it; "nl.zeros made it and no non-matmul instruction wrote it since"; the (dst
        # view, its write count, producer) of a redirected temporary (see Tracer.redirect).
        "write_count", "written_partitions", "later_partitions", "pending_zero", "zero_init",
        "forward",
        # PSUM only, made by the first matmul placed there (else None / 0): regions whose first
        # matmul replaced the pending zeros (and their element count), and region -> the last
        # matmul of its open accumulation group.
        "zero_started", "zero_covered", "psum_groups",
        # Set after the trace: live range (instruction indices), address, position in the list
        # of tensors the emitter passes to emit_traced.
        "first_use", "last_use", "addr", "location_index",
    )

    @property
    def free_elements(self) -> int:
        """Elements per partition, without PSUM bank padding."""
        return math.prod(self.shape) // self.partitions

    @property
    def bytes_per_partition(self) -> int:
        return self.row * self.dtype.itemsize

    def describe(self) -> str:
        where = f" (created at {self.created_at.short})" if self.created_at else ""
        return f"'{self.name or self.hint}'{where}"

    def full_view(self) -> "Tensor":
        return new_view(self, 0, self.shape, self.strides, ())

    def lanes_view(self) -> "Tensor":
        """Every element of an on-chip storage as one tile: the partition axis first, then the
        block and free axes (for instructions that fill a whole multi-tile ndarray)."""
        if self.partition_axis == 0:
            return self.full_view()
        axes = [self.partition_axis] + [a for a in range(len(self.shape))
                                        if a != self.partition_axis]
        return new_view(self, 0, tuple(self.shape[a] for a in axes),
                      tuple(self.strides[a] for a in axes), ())


def new_storage(kind: str, dtype: np.dtype, shape: tuple, layout: tuple, hint: str,
                created_at: SourceLocation | None, name: str | None = None,
                explicit_name: bool = False) -> Storage:
    """A storage of ``layout`` (``storage_layout(kind, dtype, shape, ...)``). Temporaries get
    their unique ``name`` only when they are emitted (most tiles an instruction first writes
    are redirected and never emitted); until then they go by ``hint``."""
    st = Storage()
    st.on_chip, st.partition_axis, st.partitions, st.row, st.strides, st.full_pairs = layout
    st.name = name
    st.hint = hint
    st.kind = kind
    st.dtype = dtype
    st.shape = shape
    st.created_at = created_at
    st.explicit_name = explicit_name
    st.full_access = None
    st.write_count = 0
    st.written_partitions = 0
    st.later_partitions = None
    st.pending_zero = None
    st.zero_init = False
    st.forward = None
    st.zero_started = st.psum_groups = None
    st.zero_covered = 0
    st.first_use = st.last_use = -1
    st.addr = None
    st.location_index = -1
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
    @property
    def dtype(self) -> np.dtype:
        return self.storage.dtype

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
                       "nl.where or masks instead of Python conditions", caller_location())

    def __index__(self):
        raise NKIError("a tensor's values are not known while the kernel is traced and cannot be "
                       "used as a Python integer", caller_location())

    # ---- views ----
    def __getitem__(self, key) -> "Tensor":
        if key is Ellipsis:
            return self
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
                # t[a:b, c:d] (or `:`) inside a 2-D tensor, the commonest subscript of all
                elif r.__class__ is slice and c.__class__ is slice and r.step is None and \
                        c.step is None:
                    r0, r1, c0, c1 = r.start, r.stop, c.start, c.stop
                    n0, n1 = shape
                    if r0 is None and r1 is None:
                        r0, r1 = 0, n0
                    if c0 is None and c1 is None:
                        c0, c1 = 0, n1
                    if r0.__class__ is int and r1.__class__ is int and c0.__class__ is int and \
                            c1.__class__ is int and 0 <= r0 < r1 <= n0 and 0 <= c0 < c1 <= n1:
                        strides = self.strides
                        return new_view(self.storage,
                                      self.offset + r0 * strides[0] + c0 * strides[1],
                                      (r1 - r0, c1 - c0), strides, ())
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
                    view = blocks[memo] = new_view(self.storage, view[0], view[1], view[2],
                                                 view[3])
                    self.last_subscript = (key, view)
                    return view
                view = basic_subscript(key, shape, self.strides, self.offset)
        if view is None:
            view = resolve_subscript(key, self.shape, self.strides, self.offset, self.checks)
        view = new_view(self.storage, view[0], view[1], view[2], view[3])
        self.last_subscript = (key, view)
        return view

    def __setitem__(self, key, value):
        last = self.last_subscript
        if key is Ellipsis:  # `t[...] = x`, `t[...] op= x`: the whole view (as __getitem__ has it)
            view = self
        elif last is not None and last[0] is key:
            view = last[1]  # the same key object resolves to the same view (views are immutable)
        else:
            view = self[key]
        if value is not view:  # (`t[key] op= x` stores back the view the operation updated)
            _nl.assign(view, value)

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
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        return new_view(self.storage, self.offset, shape, tuple(reversed(strides)), ())

    def broadcast_to(self, shape) -> "Tensor":
        return _nl._broadcast_tile(self, shape, caller_location())

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

    def __iadd__(self, o): return _nl.accumulate(self, o, "add")
    def __isub__(self, o): return _nl.accumulate(self, o, "subtract")
    def __imul__(self, o): return _nl.accumulate(self, o, "multiply")
    def __itruediv__(self, o): return _nl.accumulate(self, o, "divide")


def new_view(storage: Storage, offset: int, shape: tuple, strides: tuple,
             checks: tuple) -> Tensor:
    t = Tensor()
    t.storage = storage
    t.offset = offset
    t.shape = shape
    t.strides = strides
    t.checks = checks
    t.last_subscript = t.blocks = t.access = None
    return t


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


# Operators and assignment are nl functions; language imports this module, so it is bound last.
from . import language as _nl  # noqa: E402
