"""BIR element types <-> NumPy dtypes (bfloat16 and the fp8 types through ``ml_dtypes``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from neuronxsim import bir

_TO_NUMPY = {
    "float32": np.dtype(np.float32),
    "float32r": np.dtype(np.float32),  # fp32 "round" storage is fp32 bytes
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float16": np.dtype(np.float16),
    "float8e4": np.dtype(ml_dtypes.float8_e4m3),
    "float8e5": np.dtype(ml_dtypes.float8_e5m2),
    "float8e3": np.dtype(ml_dtypes.float8_e3m4),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
}
assert set(_TO_NUMPY) == set(bir.DType.__members__), "every bir.DType needs a NumPy dtype"

# float32r shares float32's NumPy dtype; the inverse picks float32.
_FROM_NUMPY = {dt: getattr(bir.DType, name) for name, dt in reversed(list(_TO_NUMPY.items()))}


def dtype_to_numpy(dtype: bir.DType) -> np.dtype:
    """The NumPy dtype holding elements of ``dtype`` (``bir.DType.bfloat16`` -> ``ml_dtypes.bfloat16``)."""
    return _TO_NUMPY[dtype.name]


def numpy_to_dtype(dtype) -> bir.DType:
    """The ``bir.DType`` of a NumPy dtype (``ml_dtypes.float8_e4m3`` -> ``bir.DType.float8e4``)."""
    dt = np.dtype(dtype)
    try:
        return _FROM_NUMPY[dt]
    except KeyError:
        raise TypeError(f"NumPy dtype {dt} has no BIR element type") from None
