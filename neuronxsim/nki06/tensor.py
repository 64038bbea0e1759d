"""``NkiTensor``: NKI 0.6's tensor, a strided view of one storage of the shared trace.

A tensor is ``(storage, offset, shape, strides)``: the element at index ``(i0, ..., in)`` sits
at element ``offset + sum(strides[k] * ik)`` of its storage. On-chip storages (SBUF, PSUM) are
laid out partition by partition (element ``partition * row + column``), so dim 0 of an on-chip
view is its partition dimension, with stride ``row``. Every view method returns a new tensor over
the same storage; nothing is copied. The tensor an instruction finally receives is handed to the
shared tracer as a :class:`neuronxsim.nki.tensor.Tensor` view (``NkiTensor.view_of``).

Indirect views (``vector_select``, ``select`` with a tensor index, ``ap`` with ``vector_offset`` or
``scalar_offset``) carry an :class:`Indirection`; the instruction that uses one decides whether it
can (``nisa.dma_copy`` gathers rows by a vector of indices) or refuses it.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from neuronxsim import bir
from neuronxsim.errors import BIRError
from neuronxsim.nki.errors import NKIError, caller_location
from neuronxsim.nki.indexing import LoopIndex
from neuronxsim.nki.tensor import (HBM, INPUT, PSUM, SBUF, SHARED_HBM, Tensor, new_view,
                                   reinterpret_refusal, same_view)
from neuronxsim.nki.tracer import current
from neuronxsim.starfish.lib import _core

from . import dtypes as dt
from ._api import api


class MemoryRegion(enum.Enum):
    """Memory region constants for NKI tensors (``nl.sbuf``, ``nl.psum``, ``nl.hbm`` =
    ``nl.private_hbm``, ``nl.shared_hbm``)."""
    sbuf = "sbuf"
    psum = "psum"
    private_hbm = "private_hbm"
    shared_hbm = "shared_hbm"

    # Members are singletons compared by identity: hashing by identity, in C, is the same
    # equality, without Enum.__hash__'s Python frame (nl.ndarray hashes its buffer every call).
    __hash__ = object.__hash__


#: The shared tracer's storage kind of each region.
STORAGE_KIND = {MemoryRegion.sbuf: SBUF, MemoryRegion.psum: PSUM, MemoryRegion.private_hbm: HBM,
                MemoryRegion.shared_hbm: SHARED_HBM}
REGION_OF_KIND = {SBUF: MemoryRegion.sbuf, PSUM: MemoryRegion.psum, HBM: MemoryRegion.private_hbm,
                  SHARED_HBM: MemoryRegion.shared_hbm}


class NKIObject:
    """Base class for NKI kernel dataclasses and configuration objects: ``NKIObject(x=1)`` sets
    the attribute ``x``."""

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)


class Indirection:
    """A runtime-resolved index on dimension ``dim`` of a view: ``kind`` "vector" (one index per
    partition of the result, from the [P, 1] tensor ``index``) or "scalar" (one index, from a
    [1, 1] tensor). ``row_step``: elements between consecutive index values in the storage;
    ``rows``: how many values of the index stay inside the storage."""

    __slots__ = ("kind", "index", "dim", "row_step", "rows")

    def __init__(self, kind, index, dim, row_step, rows):
        self.kind = kind
        self.index = index
        self.dim = dim
        self.row_step = row_step
        self.rows = rows


class NkiTensor(NKIObject):
    """NKI tensor with shape-based view operations (see the module docstring)."""

    __slots__ = ("_view", "_buffer", "_indirect")

    def __init__(self, shape, dtype, storage, buffer=MemoryRegion.sbuf, name=""):
        raise NKIError("NkiTensor(shape, dtype, storage, ...) re-binds a backend storage handle, "
                       "which neuronxsim's tensors do not expose; create tensors with nl.ndarray",
                       caller_location())

    # ---- what kernels read ----
    @property
    def shape(self) -> tuple:
        return self._view.shape

    @property
    def strides(self) -> tuple:
        return self._view.strides

    @property
    def offset(self) -> int:
        return self._view.offset

    @property
    def dtype(self):
        return self._view.storage.dtype

    @property
    def buffer(self) -> MemoryRegion:
        return self._buffer

    @property
    def name(self) -> str:
        st = self._view.storage
        return st.name or st.hint

    @property
    def ndim(self) -> int:
        return len(self._view.shape)

    @property
    def size(self) -> int:
        return math.prod(self._view.shape)

    @property
    def _on_chip(self) -> bool:
        return self._view.storage.on_chip

    def __repr__(self):
        return (f"<NkiTensor {self.name} {self._buffer.name} {dt.name(self.dtype)}"
                f"{list(self.shape)}>")

    def __len__(self):
        return self._view.shape[0]

    def __iter__(self):
        raise NKIError("an NkiTensor is not iterable; index it (t[i]) in a loop over range(...)",
                       caller_location())

    def __bool__(self):
        raise NKIError("a tensor's values are not known while the kernel is traced; they cannot "
                       "be a Python condition", caller_location())

    def __index__(self):
        raise NKIError("a tensor's values are not known while the kernel is traced and cannot be "
                       "a Python integer", caller_location())

    # ---- queries ----
    def is_contiguous(self) -> bool:
        """True if the view covers storage contiguously (row-major; on-chip: per partition)."""
        shape, strides = self.shape, self.strides
        first = 1 if self._on_chip else 0
        step = 1
        for n, s in zip(reversed(shape[first:]), reversed(strides[first:])):
            if n != 1 and s != step:
                return False
            step *= n
        return True

    def get_pattern(self) -> list:
        """The view's access pattern as ``[[stride, count], ...]``."""
        return [[s, n] for s, n in zip(self.strides, self.shape)]

    def is_indirect(self) -> bool:
        return self._indirect is not None

    # ---- views ----
    # (__getitem__: _core.nki's subscript, set below)

    def __setitem__(self, key, value):
        _language().assign(self[key], value)

    @api
    def permute(self, dims) -> "NkiTensor":
        """Reorders dimensions (a permutation of ``range(ndim)``; on-chip: ``dims[0] == 0``)."""
        loc = caller_location()
        dims = tuple(_int(d, "permute: dims", loc) for d in dims)
        if sorted(dims) != list(range(self.ndim)):
            raise NKIError(f"permute: {list(dims)} is not a permutation of the {self.ndim} "
                           "dimensions", loc)
        if (self._on_chip or self._indirect is not None) and dims[0] != 0:
            raise NKIError("permute: the partition dimension of an on-chip (or vector-selected) "
                           f"tensor stays first (dims[0] must be 0, not {dims[0]})", loc)
        return self._derive_view(self._ap().permute(list(dims)))

    @api
    def broadcast(self, dim, size) -> "NkiTensor":
        """Repeats a size-1 dimension ``size`` times (stride 0)."""
        loc = caller_location()
        dim = self._dim(dim, "broadcast", loc)
        size = _int(size, "broadcast: size", loc)
        if self.shape[dim] != 1:
            raise NKIError(f"broadcast: dimension {dim} has size {self.shape[dim]}; only a size-1 "
                           "dimension can be broadcast", loc)
        self._not_partition(dim, "broadcast", loc)
        if size < 1:
            raise NKIError(f"broadcast: size {size} must be positive", loc)
        return self._derive_view(self._ap().at(dim, 0).broadcast(dim, size))

    @api
    def expand_dim(self, dim) -> "NkiTensor":
        """Inserts a size-1 dimension at ``dim``."""
        loc = caller_location()
        dim = _int(dim, "expand_dim: dim", loc)
        if dim < 0:
            dim += self.ndim + 1
        if not 0 <= dim <= self.ndim:
            raise NKIError(f"expand_dim: dim {dim} is out of range for {self.ndim} dimensions", loc)
        self._not_partition(dim, "expand_dim", loc)
        return self._derive(self.offset, self.shape[:dim] + (1,) + self.shape[dim:],
                            self.strides[:dim] + (1,) + self.strides[dim:])

    @api
    def squeeze_dim(self, dim) -> "NkiTensor":
        """Removes a size-1 dimension."""
        loc = caller_location()
        dim = self._dim(dim, "squeeze_dim", loc)
        if self.shape[dim] != 1:
            raise NKIError(f"squeeze_dim: dimension {dim} has size {self.shape[dim]}, not 1", loc)
        self._not_partition(dim, "squeeze_dim", loc)
        return self._derive_view(self._ap().at(dim, 0))

    @api
    def reshape_dim(self, dim, shape) -> "NkiTensor":
        """Splits dimension ``dim`` into ``shape`` (one entry may be -1)."""
        loc = caller_location()
        dim = self._dim(dim, "reshape_dim", loc)
        sizes = _sizes(shape, self.shape[dim], "reshape_dim", loc)
        if dim == 0 and (self._on_chip or self._indirect is not None) and len(sizes) != 1:
            raise NKIError("reshape_dim: the partition dimension of an on-chip tensor cannot be "
                           "split", loc)
        v = self._ap()
        for i in range(len(sizes) - 1):  # [n] -> [n / inner, inner], the inner dims split on
            v = v.split(dim + i, math.prod(sizes[i + 1:]))
        return self._derive_view(v)

    @api
    def flatten_dims(self, start_dim, end_dim) -> "NkiTensor":
        """Merges dimensions ``start_dim..end_dim`` (inclusive), which must be contiguous."""
        loc = caller_location()
        a = self._dim(start_dim, "flatten_dims", loc)
        b = self._dim(end_dim, "flatten_dims", loc)
        if b < a:
            raise NKIError(f"flatten_dims: end_dim {b} comes before start_dim {a}", loc)
        if a == 0 and (self._on_chip or self._indirect is not None) and b > 0:
            raise NKIError("flatten_dims: the partition dimension of an on-chip tensor cannot be "
                           "merged (start_dim must be > 0)", loc)
        try:
            v = self._ap().flattenDims(a, b)
        except BIRError:  # (the dims do not nest)
            raise NKIError(f"flatten_dims: dimensions {a}..{b} are not contiguous in memory "
                           f"(strides {list(self.strides[a:b + 1])}, shape "
                           f"{list(self.shape[a:b + 1])})", loc) from None
        return self._derive_view(v)

    @api
    def reshape(self, shape) -> "NkiTensor":
        """The same elements under a new shape, without copying (on-chip: ``shape[0]`` kept)."""
        loc = caller_location()
        shape = _sizes(shape, self.size, "reshape", loc)
        first = 1 if (self._on_chip or self._indirect is not None) else 0
        if first and (not shape or shape[0] != self.shape[0]):
            raise NKIError(f"reshape: an on-chip tensor keeps its partition dimension "
                           f"({self.shape[0]}); {list(shape)} does not start with it", loc)
        strides = reshape_strides(self.shape[first:], self.strides[first:], tuple(shape[first:]))
        if strides is None:
            raise NKIError(f"reshape: this view's layout (shape {list(self.shape)}, strides "
                           f"{list(self.strides)}) cannot be viewed as {list(shape)} without a "
                           "copy", loc)
        return self._derive(self.offset, tuple(shape), self.strides[:first] + strides)

    @api
    def rearrange(self, src_pattern, dst_pattern, fixed_sizes=None) -> "NkiTensor":
        """einops-style: split the grouped dims of ``src_pattern``, reorder, merge the grouped
        dims of ``dst_pattern``."""
        loc = caller_location()
        fixed = dict(fixed_sizes or {})
        if len(src_pattern) != self.ndim:
            raise NKIError(f"rearrange: src_pattern has {len(src_pattern)} entries; the tensor "
                           f"has {self.ndim} dimensions", loc)
        t = self
        names, pos = [], 0
        for entry in src_pattern:
            group = (entry,) if isinstance(entry, str) else tuple(entry)
            if len(group) > 1:
                sizes = [fixed.get(n, -1) for n in group]
                t = t.reshape_dim(pos, tuple(sizes))
                for n, size in zip(group, t.shape[pos:pos + len(group)]):
                    fixed.setdefault(n, size)
            names += group
            pos += len(group)
        if len(set(names)) != len(names):
            raise NKIError(f"rearrange: src_pattern {src_pattern} repeats a name", loc)
        flat_dst, groups = [], []
        for entry in dst_pattern:
            group = (entry,) if isinstance(entry, str) else tuple(entry)
            groups.append(len(group))
            flat_dst += group
        if sorted(flat_dst) != sorted(names):
            raise NKIError(f"rearrange: dst_pattern {dst_pattern} must name the dimensions of "
                           f"src_pattern {src_pattern}, each once", loc)
        t = t.permute(tuple(names.index(n) for n in flat_dst))
        pos = 0
        for size in groups:
            if size > 1:
                t = t.flatten_dims(pos, pos + size - 1)
            pos += 1
        return t

    @api
    def slice(self, dim, start, end, step=1) -> "NkiTensor":
        """Elements ``start:end:step`` of dimension ``dim`` (``0 <= start < end <= size``)."""
        loc = caller_location()
        dim = self._dim(dim, "slice", loc)
        start, end, step = (_int(v, "slice", loc) for v in (start, end, step))
        n = self.shape[dim]
        if not 0 <= start < end <= n or step < 1:
            raise NKIError(f"slice: {start}:{end}:{step} of dimension {dim} (size {n}) needs "
                           "0 <= start < end <= size and step >= 1", loc)
        self._direct_dim(dim, "slice", loc)
        return self._derive_view(self._ap().slice(dim, start, -(-(end - start) // step), step))

    @api
    def select(self, dim, index) -> "NkiTensor":
        """Removes dimension ``dim`` at ``index``: an int, or a [1, 1] tensor read at run time."""
        loc = caller_location()
        dim = self._dim(dim, "select", loc)
        if isinstance(index, NkiTensor) or _is_unknown_register(index):
            if self._indirect is not None:
                raise NKIError("select: this view is already indirect (one dynamic select per "
                               "tensor)", loc)
            if self._on_chip and dim == 0:
                raise NKIError("select: a dynamic select cannot pick a partition of an on-chip "
                               "tensor", loc)
            ind = Indirection("scalar", index, dim, self.strides[dim], self.shape[dim])
            return self._derive(self.offset, self.shape[:dim] + self.shape[dim + 1:],
                                self.strides[:dim] + self.strides[dim + 1:], ind)
        i = _int(index, "select: index", loc)
        n = self.shape[dim]
        if not 0 <= i < n:
            raise NKIError(f"select: index {i} is outside dimension {dim} (size {n})", loc)
        self._direct_dim(dim, "select", loc)
        offset = self.offset + i * self.strides[dim]
        if dim == 0 and self._on_chip:  # the partition dimension stays, at size 1
            return self._derive(offset, (1,) + self.shape[1:], self.strides)
        return self._derive(offset, self.shape[:dim] + self.shape[dim + 1:],
                            self.strides[:dim] + self.strides[dim + 1:])

    @api
    def vector_select(self, dim, vector_offset) -> "NkiTensor":
        """Partition ``p`` of the result reads index ``vector_offset[p]`` of dimension 0 (an HBM
        tensor only): a gather."""
        loc = caller_location()
        if _int(dim, "vector_select: dim", loc) != 0:
            raise NKIError("vector_select: dim must be 0", loc)
        if self._on_chip:
            raise NKIError("vector_select: only HBM tensors can be vector-selected", loc)
        if self._indirect is not None:
            raise NKIError("vector_select: this view is already indirect (one dynamic select per "
                           "tensor)", loc)
        index = _index_tensor(vector_offset, "vector_select: vector_offset", loc)
        ind = Indirection("vector", index, 0, self.strides[0], self.shape[0])
        return self._derive(self.offset, (index.shape[0],) + self.shape[1:], self.strides, ind)

    @api
    def ap(self, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0,
           dtype=None) -> "NkiTensor":
        """An explicit access pattern ``[[stride, count], ...]`` over the storage (partition pair
        first on chip), from this view's offset plus ``offset``."""
        loc = caller_location()
        pairs = []
        for p in pattern:
            if len(p) != 2:
                raise NKIError(f"ap: pattern entries are [stride, count] pairs; got {p!r}", loc)
            pairs.append((_int(p[0], "ap: a stride", loc), _int(p[1], "ap: a count", loc)))
        if not pairs or any(n < 1 for _, n in pairs):
            raise NKIError(f"ap: pattern {pattern} needs at least one pair and positive counts",
                           loc)
        if dtype is not None and dt.resolve(dtype, current().arch, loc, "ap: dtype") != self.dtype:
            raise reinterpret_refusal("ap(dtype=...)", loc)
        base = self.offset + (0 if offset is None else _int(offset, "ap: offset", loc))
        shape = tuple(n for _, n in pairs)
        strides = tuple(s for s, _ in pairs)
        if scalar_offset is not None and vector_offset is not None:
            raise NKIError("ap: scalar_offset and vector_offset are mutually exclusive", loc)
        st = self._view.storage
        ind = None
        if scalar_offset is not None or vector_offset is not None:
            base_shape = st.shape
            indirect_dim = _int(indirect_dim, "ap: indirect_dim", loc)
            if not 0 <= indirect_dim < len(base_shape):
                raise NKIError(f"ap: indirect_dim {indirect_dim} is out of range for the "
                               f"{len(base_shape)}-dimensional base tensor", loc)
            row_step = math.prod(base_shape[indirect_dim + 1:])
            if scalar_offset is not None and not isinstance(scalar_offset, NkiTensor) and \
                    not _is_unknown_register(scalar_offset):
                base += _int(scalar_offset, "ap: scalar_offset", loc) * row_step
            elif scalar_offset is not None:
                ind = Indirection("scalar", scalar_offset, indirect_dim, row_step,
                                  base_shape[indirect_dim])
            else:
                if indirect_dim != 0:
                    raise NKIError("ap: vector_offset supports indirect_dim=0 only", loc)
                if st.on_chip:
                    raise NKIError("ap: vector_offset indexes HBM tensors only", loc)
                index = _index_tensor(vector_offset, "ap: vector_offset", loc)
                if shape[0] != index.shape[0]:
                    raise NKIError(f"ap: the pattern's leading count {shape[0]} must equal the "
                                   f"{index.shape[0]} indices of vector_offset", loc)
                # (the leading stride is the base tensor's row, whatever the pattern says)
                ind = Indirection("vector", index, 0, row_step, base_shape[0])
                strides = (row_step,) + strides[1:]
        view = new_view(st, base, shape, strides, ())
        if ind is None:
            check_inside(view, loc, "ap")
        return _wrap(view, self._buffer, ind)

    @api
    def view(self, dtype) -> "NkiTensor":
        """Reinterprets the data as ``dtype`` (no copy)."""
        loc = caller_location()
        if dt.resolve(dtype, current().arch, loc, "view: dtype") == self.dtype:
            return self
        raise reinterpret_refusal("view(dtype)", loc)

    reinterpret_cast = view

    @api
    def indirect(self, index, num_elem=None) -> "NkiTensor":
        """Tensor indirection (NeuronCore-v4 and later)."""
        loc = caller_location()
        arch = current().arch
        raise NKIError(f"indirect: tensor indirection is available on NeuronCore-v4 (trn3) and "
                       f"later; {arch} ({dt.CORE_NAMES.get(arch, arch)}) does not have it", loc)

    # ---- helpers ----
    def _ap(self) -> bir.View:
        """This tensor's (offset, shape, strides) as a :class:`neuronxsim.bir.View`, whose
        operations are the view methods' arithmetic (see ap_view)."""
        view = self._view
        return ap_view(view.offset, view.shape, view.strides)

    def _derive_view(self, v: bir.View) -> "NkiTensor":
        """The tensor of the same storage (and indirection) that ``v`` (see _ap) addresses."""
        offset, shape, strides = v.strided
        return self._derive(offset, shape, strides)

    def _derive(self, offset, shape, strides, indirect=None) -> "NkiTensor":
        view = new_view(self._view.storage, offset, shape, strides, ())
        return _wrap(view, self._buffer, indirect if indirect is not None else self._indirect)

    def _dim(self, dim, what, loc) -> int:
        d = _int(dim, f"{what}: dim", loc)
        if d < 0:
            d += self.ndim
        if not 0 <= d < self.ndim:
            raise NKIError(f"{what}: dim {dim} is out of range for {self.ndim} dimensions", loc)
        return d

    def _not_partition(self, dim, what, loc):
        if dim == 0 and (self._on_chip or self._indirect is not None):
            raise NKIError(f"{what}: not on the partition dimension (dim 0) of an on-chip or "
                           "vector-selected tensor", loc)

    def _direct_dim(self, dim, what, loc):
        ind = self._indirect
        if ind is not None and ind.kind == "vector" and dim == 0:
            raise NKIError(f"{what}: dimension 0 of this view is indirect (vector-selected) and "
                           "cannot be sliced or selected", loc)

    def _view_of(self, what: str, loc) -> Tensor:
        """The shared tracer's view of this tensor, for an instruction that takes direct views
        only."""
        if self._indirect is not None:
            raise NKIError(f"{what}: takes no indirect (runtime-indexed) view; this one comes from "
                           f"a {self._indirect.kind} offset", loc)
        return self._view


def same_elements(a: NkiTensor, b: NkiTensor) -> bool:
    """Whether ``a`` and ``b`` address the same elements: the same view of the same storage, and
    the same run-time index if any (of one kind, dimension and steps, read from one register or
    from one view of the same index tensor). Two views written alike are two objects; what they
    address is what matters."""
    if not same_view(a._view, b._view):
        return False
    i, j = a._indirect, b._indirect
    if i is j:
        return True
    if i is None or j is None or (i.kind, i.dim, i.row_step, i.rows) != \
            (j.kind, j.dim, j.row_step, j.rows):
        return False
    x, y = i.index, j.index
    return x is y or isinstance(x, NkiTensor) and isinstance(y, NkiTensor) and \
        same_elements(x, y)


def _wrap(view: Tensor, buffer: MemoryRegion, indirect=None) -> NkiTensor:
    t = object.__new__(NkiTensor)
    t._view = view
    t._buffer = buffer
    t._indirect = indirect
    return t


def wrap(view: Tensor, buffer: MemoryRegion | None = None) -> NkiTensor:
    """An NkiTensor over a shared view (its region from its storage kind unless given)."""
    if buffer is None:
        kind = view.storage.kind
        buffer = MemoryRegion.private_hbm if kind == INPUT else REGION_OF_KIND[kind]
    return _wrap(view, buffer)


def _int(v, what: str, loc) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise NKIError(f"{what}: expected an integer, got a bool", loc)
    try:
        return int(v.__index__()) if not isinstance(v, int) else v
    except (AttributeError, TypeError):
        raise NKIError(f"{what}: expected an integer, got {type(v).__name__}", loc) from None


def _sizes(shape, total: int, what: str, loc) -> list:
    """``shape`` as a list of ints whose product is ``total``; one -1 is inferred."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    sizes = [_int(n, f"{what}: shape", loc) for n in shape]
    unknown = [i for i, n in enumerate(sizes) if n == -1]
    if len(unknown) > 1 or any(n < 1 for n in sizes if n != -1):
        raise NKIError(f"{what}: {list(shape)} needs positive sizes with at most one -1", loc)
    known = math.prod(n for n in sizes if n != -1)
    if unknown:
        if total % known:
            raise NKIError(f"{what}: {list(shape)} does not divide {total} elements", loc)
        sizes[unknown[0]] = total // known
    if math.prod(sizes) != total:
        raise NKIError(f"{what}: {list(shape)} holds {math.prod(sizes)} elements, not {total}", loc)
    return sizes


def ap_view(offset: int, shape: tuple, strides: tuple) -> bir.View:
    """A tensor view ``(offset, shape, strides)`` as a :class:`neuronxsim.bir.View` (of no memory
    location, its dims the tensor's, the partition dim of an on-chip tensor included): the
    access-pattern algebra (slice, at, split, flatten, permute, broadcast, reshape) has its one
    home there (``cpp/bir/View.h``)."""
    return bir.View.ofStrides(offset, shape, strides)


def reshape_strides(shape: tuple, strides: tuple, new_shape: tuple) -> tuple | None:
    """The strides that view the elements of (``shape``, ``strides``), in row-major order, as
    ``new_shape`` (same element count); None when that needs a copy (NumPy's no-copy reshape:
    ``bir.View.reshape``)."""
    try:
        v = ap_view(0, shape, strides).reshape(list(new_shape))
    except BIRError:
        return None
    return v.strided[2]


def check_inside(view: Tensor, loc, what: str):
    """Refuses a view that reaches outside its storage (on chip: its partitions and its row)."""
    st = view.storage
    lo = hi = view.offset
    shape, strides = view.shape, view.strides
    first = 1 if st.on_chip else 0
    for n, s in zip(shape[first:], strides[first:]):
        span = s * (n - 1)
        if span < 0:
            lo += span
        else:
            hi += span
    if st.on_chip:
        row = st.row
        p0 = view.offset // row
        parts = shape[0] if shape else 1
        if shape and parts > 1 and strides[0] != row:
            raise NKIError(f"{what}: on an on-chip tensor the first pair walks partitions with "
                           f"step {row} (the storage's elements per partition), not {strides[0]}",
                           loc)
        if p0 + parts > st.partitions or lo < p0 * row or hi >= (p0 + 1) * row:
            raise NKIError(f"{what}: the access reaches outside {st.describe()} ({st.partitions} "
                           f"partitions of {row} elements)", loc)
    elif lo < 0 or hi >= math.prod(st.shape):
        raise NKIError(f"{what}: the access reaches elements {lo}..{hi} of {st.describe()}, which "
                       f"has {math.prod(st.shape)}", loc)


def on_chip_view(x, loc, what: str, name: str | None = None) -> Tensor:
    """The shared view of ``x``, checked to be a direct view of an SBUF or PSUM tensor. Errors
    name it ``what``, or ``"what: name"`` when ``name`` is given (made only for an error: this
    runs for every operand)."""
    # A direct view of an on-chip NkiTensor, the commonest, is answered here (the class tested by
    # identity, _on_chip and _view_of inline); anything else goes through the checks in order.
    if x.__class__ is not NkiTensor:
        return _on_chip_view_slow(x, loc, what, name)
    view = x._view
    if not view.storage.on_chip or x._indirect is not None:
        return _on_chip_view_slow(x, loc, what, name)
    return view


def _on_chip_view_slow(x, loc, what: str, name: str | None) -> Tensor:
    """on_chip_view of anything but a direct on-chip NkiTensor: its checks, in their order."""
    if name is not None:
        what = f"{what}: {name}"
    if not isinstance(x, NkiTensor):
        raise NKIError(f"{what} must be an SBUF or PSUM tensor, not {type(x).__name__}", loc)
    if not x._on_chip:
        raise NKIError(f"{what} is the {x.buffer.name} tensor '{x.name}'; compute engines work on "
                       "SBUF and PSUM (copy it in with nl.load or nisa.dma_copy)", loc)
    return x._view_of(what, loc)


def check_written(v: Tensor, loc, what: str, name: str | None = None) -> Tensor:
    """``v``, an on-chip input, after checking that something wrote all its partitions (the
    engines would read memory nothing wrote). Errors name it ``what``, or ``"what: name"``
    when ``name`` is given (made only for an error: this runs for every operand)."""
    st = v.storage
    s = st.state
    if st.on_chip and s.write_count and s.forward is None and s.pending_zero is None:
        start = v.offset // st.row if v.offset else 0  # (row: a property; most views start at 0)
        if s.written_partitions < start + v.shape[0]:
            defined = current().defined_partitions(v)
            if defined < v.shape[0]:
                if name is not None:
                    what = f"{what}: {name}"
                raise NKIError(f"{what}: reads partitions {start + defined}..{start + v.shape[0] - 1}"
                               f" of {st.describe()}, which nothing wrote", loc)
    return v


def _index_tensor(x, what: str, loc) -> NkiTensor:
    if not isinstance(x, NkiTensor) or x._view.storage.kind != SBUF:
        raise NKIError(f"{what} must be an SBUF tensor of indices", loc)
    if len(x.shape) < 2 or math.prod(x.shape[1:]) != 1:
        raise NKIError(f"{what} must hold one index per partition ([P, 1]); it is "
                       f"{list(x.shape)}", loc)
    if not dt.is_int(x.dtype):
        raise NKIError(f"{what} must hold integers, not {dt.name(x.dtype)}", loc)
    return x


def _language():
    """This package's ``language`` module (which imports this one)."""
    global _language_module
    if _language_module is None:
        from . import language
        _language_module = language
    return _language_module


_language_module = None


def _is_unknown_register(x) -> bool:
    if x.__class__ is int or x.__class__ is LoopIndex:  # (the usual index: no import)
        return False
    from .registers import VirtualRegister
    return isinstance(x, VirtualRegister) and x.value is None


# ---- subscripts ----

def _index(k) -> int:
    """The integer of a subscript's index that is neither an int nor a loop index (a NumPy
    integer, a register of known value); a tensor or an unknown register, a run-time index, is
    refused (NkiTensor's C subscript asks)."""
    if isinstance(k, NkiTensor) or _is_unknown_register(k):
        raise NKIError("a subscript with a runtime index: use t.select(dim, index) or "
                       "t.ap(..., scalar_offset=...)")
    return _int(k, "an index", None)


def _slice_int(v, what: str) -> int:
    """A slice bound or step that is no int, as an integer (NkiTensor's C subscript asks)."""
    return _int(v, what, None)


_core.nki.configure_nki06_subscript(NkiTensor, _index, _slice_int)
#: ``t[key]`` in C (``cpp/python/trace_subscript.cpp``, its arithmetic ``bir::View``'s): ints
#: (negative from the end), slices (``nl.ds``; positive steps, inside the dimension), ``:`` and
#: ``...`` (see the language guide's indexing rules: on chip an int on dim 0 keeps it at size 1
#: and results stay >= 2-D; in HBM an int drops its dim and results stay >= 1-D), and every error.
NkiTensor.__getitem__ = _core.nki.subscript_method(NkiTensor)


__all__ = ["NkiTensor", "NKIObject", "MemoryRegion", "Indirection", "wrap", "reshape_strides",
           "check_inside", "check_written", "on_chip_view", "STORAGE_KIND"]
