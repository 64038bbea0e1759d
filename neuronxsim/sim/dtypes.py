"""BIR element types <-> NumPy dtypes (bfloat16 and the fp8 types through ``ml_dtypes``)."""

from __future__ import annotations

import numpy as np

from neuronxsim import bir
from neuronxsim.reference.numbers import NUMPY_DTYPES

# One table of BIR dtype name -> NumPy dtype serves both executors (the reference's numbers).
_TO_NUMPY = NUMPY_DTYPES
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
