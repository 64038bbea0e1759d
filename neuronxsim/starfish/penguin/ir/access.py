"""Operand access kinds: how a macro operand addresses its program tensor.

* ``FullTensorAccess`` -- the whole tensor, contiguous (marshalled with ``addSeqAccess``);
* ``NDimSubTensorAccess`` -- a strided N-d sub-tensor: per-dim start offsets, element counts and
  steps;
* ``TileAccess`` -- one tile of a ``MemrefTile`` view: the tensor cut into tiles of
  ``tile.shape``, the tile at ``tile.index`` (in tiles, per dim);
* ``OpaqueAccess`` -- the whole tensor, handed over with its tiling left to the kernel
  (``addOpaqueAP``).

Each has an ``access_shape`` (the shape the kernel sees) and a ``partition_dim`` (the tensor dim
that becomes the partition pair of the operand's access pattern). A sub-tensor or tile may also
name a ``view_shape``: the shape the kernel views the tensor as (same element count, e.g.
``[B, H, d, S]`` seen as ``[B*H, d, S]``); its offsets, counts and tile are then in view
coordinates; an ``lnc``: how many physical NeuronCores of a logical core share the operand (its
partition dim split between them; the codegen's ``LncSize``); and, for an output, ``reduce``: the
kernel may reduce it along its partition dim (``addArgumentOrOutput``'s flag, seed 000). Accesses
are immutable and check themselves against their tensor when built.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

from neuronxsim.errors import CodegenError

from .tensor import Tensor, check_shape


def _check_tensor(kind: str, tensor) -> None:
    if not isinstance(tensor, Tensor):
        raise CodegenError(f"{kind}: expected a penguin.ir Tensor, got {type(tensor).__name__}")


def _check_ints(values, what: str, rank: int, minimum: int) -> Tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise CodegenError(f"{what}: expected a list of {rank} ints >= {minimum}, got {values!r}")
    out = tuple(values)
    if len(out) != rank or not all(isinstance(v, int) and not isinstance(v, bool) and v >= minimum for v in out):
        raise CodegenError(f"{what}: expected a list of {rank} ints >= {minimum}, got {list(out)!r}")
    return out


def _check_view(kind: str, tensor: Tensor, view_shape) -> Optional[Tuple[int, ...]]:
    if view_shape is None:
        return None
    view = check_shape(view_shape, f"{kind} of '{tensor.name}' view_shape")
    numel = 1
    for d in view:
        numel *= d
    if numel != tensor.numel:
        raise CodegenError(
            f"{kind} of '{tensor.name}' view_shape: {list(view)} has {numel} elements, the tensor "
            f"{list(tensor.shape)} has {tensor.numel}; a view must keep the element count")
    return view


def _check_partition_dim(kind: str, tensor: Tensor, partition_dim, rank: int) -> None:
    if isinstance(partition_dim, bool) or not isinstance(partition_dim, int) or not 0 <= partition_dim < rank:
        raise CodegenError(
            f"{kind} of '{tensor.name}' partition_dim: expected an int in 0..{rank - 1}, got {partition_dim!r}")


#: The logical NeuronCore sizes an operand may be shared by (LNC=1, LNC=2).
LNC_SIZES = (1, 2)


def _check_lnc_and_reduce(kind: str, access) -> None:
    where = f"{kind} of '{access.tensor.name}'"
    if isinstance(access.lnc, bool) or access.lnc not in LNC_SIZES:
        raise CodegenError(f"{where} lnc: expected one of {', '.join(map(str, LNC_SIZES))}, got {access.lnc!r}")
    rows = access.access_shape[access.partition_dim]
    if rows % access.lnc:
        raise CodegenError(f"{where} lnc: {access.lnc} NeuronCores cannot split the partition dim's {rows} elements")
    if not isinstance(access.reduce, bool):
        raise CodegenError(f"{where} reduce: expected a bool, got {access.reduce!r}")


def _lnc_and_reduce_json(access, j: dict) -> dict:
    if access.lnc != 1:
        j["lnc"] = access.lnc
    if access.reduce:
        j["reduce"] = True
    return j


class Access:
    """Base of the four access kinds (see the module docstring)."""

    tensor: Tensor

    @property
    def kind(self) -> str:
        return type(self).__name__

    @property
    def dtype(self) -> str:
        return self.tensor.dtype

    @property
    def ap_shape(self) -> Tuple[int, ...]:
        """The shape the access's coordinates refer to: its view of the tensor, or the tensor's."""
        return getattr(self, "view_shape", None) or self.tensor.shape


@dataclasses.dataclass(frozen=True)
class FullTensorAccess(Access):
    tensor: Tensor

    def __post_init__(self):
        _check_tensor("FullTensorAccess", self.tensor)

    @property
    def access_shape(self) -> Tuple[int, ...]:
        return self.tensor.shape

    @property
    def partition_dim(self) -> int:
        return 0

    def to_json(self) -> dict:
        return {"access": self.kind, "tensor": self.tensor.name}


@dataclasses.dataclass(frozen=True)
class OpaqueAccess(Access):
    tensor: Tensor

    def __post_init__(self):
        _check_tensor("OpaqueAccess", self.tensor)

    @property
    def access_shape(self) -> Tuple[int, ...]:
        return self.tensor.shape

    @property
    def partition_dim(self) -> int:
        return 0

    def to_json(self) -> dict:
        return {"access": self.kind, "tensor": self.tensor.name}


@dataclasses.dataclass(frozen=True)
class NDimSubTensorAccess(Access):
    """Elements ``offsets[d] + i_d * steps[d]`` for ``0 <= i_d < access_shape[d]`` of each dim."""

    tensor: Tensor
    offsets: Tuple[int, ...]
    access_shape: Tuple[int, ...]
    partition_dim: int = 0
    steps: Optional[Tuple[int, ...]] = None
    view_shape: Optional[Tuple[int, ...]] = None
    lnc: int = 1
    reduce: bool = False

    def __post_init__(self):
        kind = "NDimSubTensorAccess"
        _check_tensor(kind, self.tensor)
        # The dataclass is frozen; its fields are normalised here, once.
        object.__setattr__(self, "view_shape", _check_view(kind, self.tensor, self.view_shape))
        shape = self.ap_shape
        rank = len(shape)
        where = f"{kind} of '{self.tensor.name}'"
        steps = (1,) * rank if self.steps is None else self.steps
        for field, value, minimum in (("offsets", self.offsets, 0), ("access_shape", self.access_shape, 1),
                                      ("steps", steps, 1)):
            object.__setattr__(self, field, _check_ints(value, f"{where} {field}", rank, minimum))
        _check_partition_dim(kind, self.tensor, self.partition_dim, rank)
        last = [o + (n - 1) * s for o, n, s in zip(self.offsets, self.access_shape, self.steps)]
        if any(l >= d for l, d in zip(last, shape)):
            raise CodegenError(
                f"{where}: the last element {last} lies outside the shape {list(shape)} "
                f"(offsets {list(self.offsets)}, access_shape {list(self.access_shape)}, steps {list(self.steps)})")
        _check_lnc_and_reduce(kind, self)

    def to_json(self) -> dict:
        j = {"access": self.kind, "tensor": self.tensor.name, "offsets": list(self.offsets),
             "access_shape": list(self.access_shape), "partition_dim": self.partition_dim,
             "steps": list(self.steps)}
        if self.view_shape:
            j["view_shape"] = list(self.view_shape)
        return _lnc_and_reduce_json(self, j)


@dataclasses.dataclass(frozen=True)
class MemrefTile:
    """A tile view: the tensor cut into tiles of ``shape``; this is the tile at ``index``."""

    shape: Tuple[int, ...]
    index: Tuple[int, ...]

    def __post_init__(self):
        object.__setattr__(self, "shape", check_shape(self.shape, "MemrefTile shape"))
        object.__setattr__(self, "index", _check_ints(self.index, "MemrefTile index", len(self.shape), 0))

    def to_json(self) -> dict:
        return {"shape": list(self.shape), "index": list(self.index)}


@dataclasses.dataclass(frozen=True)
class TileAccess(Access):
    """One tile of a ``MemrefTile`` view of the tensor (``access_shape`` is the tile's shape)."""

    tensor: Tensor
    tile: MemrefTile
    partition_dim: int = 0
    view_shape: Optional[Tuple[int, ...]] = None
    lnc: int = 1
    reduce: bool = False

    def __post_init__(self):
        kind = "TileAccess"
        _check_tensor(kind, self.tensor)
        if not isinstance(self.tile, MemrefTile):
            raise CodegenError(f"{kind} of '{self.tensor.name}' tile: expected a MemrefTile, got {self.tile!r}")
        object.__setattr__(self, "view_shape", _check_view(kind, self.tensor, self.view_shape))
        shape = self.ap_shape
        if len(self.tile.shape) != len(shape):
            raise CodegenError(
                f"{kind} of '{self.tensor.name}' tile: shape {list(self.tile.shape)} has rank "
                f"{len(self.tile.shape)}, the tensor (view) {list(shape)} has rank {len(shape)}")
        _check_partition_dim(kind, self.tensor, self.partition_dim, len(shape))
        end = [(i + 1) * t for i, t in zip(self.tile.index, self.tile.shape)]
        if any(e > d for e, d in zip(end, shape)):
            raise CodegenError(
                f"{kind} of '{self.tensor.name}': tile {list(self.tile.shape)} at index {list(self.tile.index)} "
                f"ends at {end}, outside the shape {list(shape)}")
        _check_lnc_and_reduce(kind, self)

    @property
    def access_shape(self) -> Tuple[int, ...]:
        return self.tile.shape

    @property
    def offsets(self) -> Tuple[int, ...]:
        """The tile's first element, per dim."""
        return tuple(i * t for i, t in zip(self.tile.index, self.tile.shape))

    def to_json(self) -> dict:
        j = {"access": self.kind, "tensor": self.tensor.name, "tile": self.tile.to_json(),
             "partition_dim": self.partition_dim}
        if self.view_shape:
            j["view_shape"] = list(self.view_shape)
        return _lnc_and_reduce_json(self, j)


ACCESS_KINDS = {cls.__name__: cls for cls in (FullTensorAccess, NDimSubTensorAccess, TileAccess, OpaqueAccess)}


def access_from_json(j, tensors: dict, where: str) -> Access:
    """Rebuilds an access from its JSON object; ``tensors`` maps names to program tensors."""
    if not isinstance(j, dict):
        raise CodegenError(f"{where}: expected an access object, got {j!r}")
    kind, name = j.get("access"), j.get("tensor")  # strings, or anything JSON holds
    cls = ACCESS_KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise CodegenError(f"{where}.access: expected one of {', '.join(ACCESS_KINDS)}, got {j.get('access')!r}")
    tensor = tensors.get(name) if isinstance(name, str) else None
    if tensor is None:
        raise CodegenError(f"{where}.tensor: {j.get('tensor')!r} is not a tensor of the program")
    fields = {k: v for k, v in j.items() if k not in ("access", "tensor")}
    if cls is TileAccess and isinstance(fields.get("tile"), dict):
        tile = fields["tile"]
        try:
            fields["tile"] = MemrefTile(tile.get("shape"), tile.get("index"))
        except CodegenError as e:
            raise CodegenError(f"{where}.tile: {e}") from None
    try:
        return cls(tensor, **fields)
    except TypeError as e:  # unknown or missing fields
        raise CodegenError(f"{where}: {cls.__name__} fields: {e}") from None
    except CodegenError as e:
        raise CodegenError(f"{where}: {e}") from None


__all__ = ["Access", "FullTensorAccess", "NDimSubTensorAccess", "TileAccess", "MemrefTile", "OpaqueAccess",
           "ACCESS_KINDS", "access_from_json"]
