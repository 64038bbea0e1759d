"""Program tensors: the DRAM tensors a Penguin macro program reads and writes."""

from __future__ import annotations

import dataclasses
import math
from typing import Tuple

import ml_dtypes
import numpy as np

from neuronxsim.bir import DType
from neuronxsim.errors import CodegenError

#: What a program tensor is to the program: an input it is given, an output it returns, or a
#: DRAM intermediate between two macros. The codegen makes each a DRAM tensor of the matching
#: BIR memory type (Input, Output, DRAM).
TENSOR_KINDS = ("input", "output", "internal")

# numpy element types of the BIR dtypes (ml_dtypes for the narrow floats; float8e4 is the
# IEEE-style e4m3 with max 240, float8e3 is e3m4). float32r is fp32 data read in the PE's
# round-to-fp32r mode, stored as fp32.
_NUMPY_DTYPES = {
    "float32": np.float32, "float32r": np.float32, "bfloat16": ml_dtypes.bfloat16,
    "float16": np.float16, "float8e4": ml_dtypes.float8_e4m3, "float8e5": ml_dtypes.float8_e5m2,
    "float8e3": ml_dtypes.float8_e3m4, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
    "uint64": np.uint64,
}


def check_shape(shape, what: str) -> Tuple[int, ...]:
    """``shape`` as a tuple of positive ints, or CodegenError naming ``what``."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise CodegenError(f"{what}: expected a list of positive ints, got {shape!r}")
    dims = tuple(shape)
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) and 0 < d < 2**63 for d in dims):
        shown = repr(list(dims[:8]))[:-1] + (", ...]" if len(dims) > 8 else "]")
        raise CodegenError(f"{what}: expected a non-empty list of positive ints (64-bit), got {shown[:200]}")
    if math.prod(dims) >= 2**63:  # (each dim fits 64 bits, their product need not)
        shown = repr(list(dims[:8]))[:-1] + (", ...]" if len(dims) > 8 else "]")
        raise CodegenError(f"{what}: {shown[:200]}: the tensor's size overflows (2^63 elements or more)")
    return dims


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of a BIR dtype name."""
    return np.dtype(_NUMPY_DTYPES[dtype])


@dataclasses.dataclass(frozen=True)
class Tensor:
    """A DRAM tensor of the program: ``name`` (unique in the program), ``shape``, ``dtype`` (a BIR
    dtype name such as ``"bfloat16"``, or a ``bir.DType``) and ``kind`` (see ``TENSOR_KINDS``)."""

    name: str
    shape: Tuple[int, ...]
    dtype: str = "float32"
    kind: str = "input"

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise CodegenError(f"Tensor name: expected a non-empty str, got {self.name!r}")
        object.__setattr__(self, "shape", check_shape(self.shape, f"Tensor '{self.name}' shape"))
        dtype = self.dtype.name if isinstance(self.dtype, DType) else self.dtype
        if not isinstance(dtype, str) or dtype not in DType.__members__ or dtype not in _NUMPY_DTYPES:
            raise CodegenError(
                f"Tensor '{self.name}' dtype: expected a BIR dtype name ({', '.join(_NUMPY_DTYPES)}), "
                f"got {self.dtype!r}")
        object.__setattr__(self, "dtype", dtype)
        if not isinstance(self.kind, str) or self.kind not in TENSOR_KINDS:
            raise CodegenError(
                f"Tensor '{self.name}' kind: expected one of {', '.join(TENSOR_KINDS)}, got {self.kind!r}")

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape))

    def to_json(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype, "kind": self.kind}


__all__ = ["Tensor", "TENSOR_KINDS", "check_shape", "numpy_dtype"]
