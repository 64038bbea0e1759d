"""``nki.typing``: tensor types, for annotations and for tracing without data.

``nt.tensor[[4096, 1024], nl.bfloat16]`` describes a kernel argument by shape and dtype; passed
to ``nki.trace`` in place of an array it becomes an input of that shape (no values needed).
``nt.tensor[128, 512]`` (no dtype) serves as an annotation only.
"""

from __future__ import annotations

from . import dtypes as dt
from .errors import NKIError


class TensorType:
    """Shape and (optionally) dtype of a tensor."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype):
        self.shape = shape
        self.dtype = dtype

    def __repr__(self):
        d = f", {dt.name(self.dtype)}" if self.dtype is not None else ""
        return f"tensor[{list(self.shape)}{d}]"


class _TensorTypes:
    def __getitem__(self, key) -> TensorType:
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], (list, tuple)):
            shape, dtype = key
            d = dt.as_dtype(dtype)
            if d is None:
                raise NKIError(f"tensor type: {dtype!r} is not an NKI data type")
            return TensorType(tuple(int(n) for n in shape), d)
        shape = key if isinstance(key, tuple) else (key,)
        return TensorType(tuple(int(n) for n in shape), None)


tensor = _TensorTypes()

__all__ = ["tensor", "TensorType"]
