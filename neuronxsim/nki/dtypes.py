"""NKI data types: NumPy dtypes (``ml_dtypes`` for bf16 and fp8), their BIR spellings and the
NKI type-promotion rule.

NKI's ``nl.float32`` and NumPy's ``np.float32`` are interchangeable in kernels, so the NKI dtypes
here *are* NumPy dtypes; :func:`as_dtype` accepts either spelling (and strings).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from neuronxsim import bir

bfloat16 = np.dtype(ml_dtypes.bfloat16)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
# BIR float8e4 is the IEEE-style e4m3 (inf and NaN encodings, max 240) of the NeuronCore.
float8_e4m3 = np.dtype(ml_dtypes.float8_e4m3)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
# Booleans are stored one byte each, 0 or 1 (BIR has no bool type).
bool_ = np.dtype(np.bool_)

_TO_BIR = {
    float32: bir.DType.float32,
    bfloat16: bir.DType.bfloat16,
    float16: bir.DType.float16,
    float8_e4m3: bir.DType.float8e4,
    float8_e5m2: bir.DType.float8e5,
    int8: bir.DType.int8,
    int16: bir.DType.int16,
    int32: bir.DType.int32,
    uint8: bir.DType.uint8,
    uint16: bir.DType.uint16,
    uint32: bir.DType.uint32,
    bool_: bir.DType.uint8,
}

SUPPORTED = tuple(_TO_BIR)
#: NumPy dtype -> bir.DType
BIR_DTYPES = dict(_TO_BIR)
_NAMES = {dt: dt.name for dt in SUPPORTED}
_NAMES[float8_e4m3] = "float8_e4m3"
_NAMES[float8_e5m2] = "float8_e5m2"


_LOOKUPS: dict = {}


def numpy_dtype(value) -> np.dtype | None:
    """The NumPy dtype ``value`` spells (a dtype, a scalar type or a string), or None. Nothing
    else names a data type: ``np.dtype`` would also take any object with a ``dtype`` attribute (a
    tensor, an array), so a tensor passed where a dtype belongs would pass as its own dtype."""
    if not isinstance(value, (np.dtype, type, str)):
        return None
    try:
        return np.dtype(value)
    except TypeError:
        return None


def as_dtype(value) -> np.dtype | None:
    """The supported NumPy dtype ``value`` names (:func:`numpy_dtype`), or None."""
    try:
        return _LOOKUPS[value]
    except (KeyError, TypeError):
        pass
    dt = numpy_dtype(value)
    if dt is None:  # (no spelling of a data type: nothing worth remembering)
        return None
    dt = dt if dt in _TO_BIR else None
    _LOOKUPS[value] = dt  # (dtypes, types and strings are hashable)
    return dt


def to_bir(dt: np.dtype) -> "bir.DType":
    return _TO_BIR[dt]


def name(dt: np.dtype) -> str:
    return _NAMES.get(dt, str(dt))


_ML_FLOATS = (bfloat16, float8_e4m3, float8_e5m2)


def is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt in _ML_FLOATS


#: The types of float scalars: Python's, NumPy's, and those ``ml_dtypes`` types of the dtypes
#: either dialect names, which NumPy does not count as ``np.floating`` (each converts to float).
FLOAT_SCALARS = (float, np.floating, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3, ml_dtypes.float8_e5m2,
                 ml_dtypes.float8_e4m3fn)
_NUMBERS = (int, np.integer) + FLOAT_SCALARS


def is_number(x) -> bool:
    """Whether ``x`` is a number a kernel may pass as an immediate: an int or float of Python
    (a bool too: callers that refuse bools say so) or of NumPy, or a :data:`FLOAT_SCALARS` one
    (``nl.finfo(nl.bfloat16).min`` is a bfloat16 scalar). Not complex numbers: no engine computes
    with them."""
    return isinstance(x, _NUMBERS)


def supported_names() -> str:
    return ", ".join(_NAMES[dt] for dt in SUPPORTED)


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """NKI's promotion of two operand dtypes for an arithmetic result ("NKI Type Promotion",
    Neuron 2.26: nki.api.shared).

    Equal types stay. "(float, integer): Pick the float type" ("(np.int32, np.float16) ->
    np.float16"). Two floats give the wider one; two different 16-bit floats (bf16, fp16) or
    two different fp8 types give fp32 and bf16 ("a new widened type"). Two integers promote as
    in NumPy, but where that needs int64 (int32 with uint32) the result is fp32: "(np.int32,
    np.uint32) -> np.float32 (new widened type is float32, since int64 isn't supported on the
    hardware)".
    """
    if a is b or a == b:
        return a
    fa, fb = is_float(a), is_float(b)
    if fa and fb:
        if a.itemsize != b.itemsize:
            return a if a.itemsize > b.itemsize else b
        return float32 if a.itemsize == 2 else bfloat16
    if fa or fb:
        return a if fa else b
    if a == bool_:
        return b
    if b == bool_:
        return a
    result = np.promote_types(a, b)
    return result if result in _TO_BIR else float32


#: The dtype NKI infers for a weakly typed scalar (a Python number: "Weakly Typed Scalar Type
#: Inference", Neuron 2.26: "the widest dtype supported by hardware": bool --> uint8, integer -->
#: int32, floating --> float32), by the number's exact type. (The C operators' shortcut,
#: cpp/python/trace_accumulate.cpp, reads this table: the one home of the rule.)
WEAK_SCALARS = {bool: uint8, int: int32, float: float32}


def scalar_dtype(value) -> np.dtype:
    """The dtype of a scalar operand of an arithmetic operation: a NumPy scalar of an NKI dtype
    keeps its own ("Explicitly set the datatype of the scalar, like np.int8(2)"); any other
    number is weakly typed (:data:`WEAK_SCALARS`, by kind: NumPy's float64 and int64 scalars,
    which no NKI dtype holds, are taken as Python's float and int are)."""
    weak = WEAK_SCALARS.get(value.__class__)
    if weak is not None:
        return weak
    if isinstance(value, np.generic):
        own = as_dtype(value.dtype)
        if own is not None:
            return own
    if isinstance(value, (bool, np.bool_)):
        return uint8
    return float32 if isinstance(value, FLOAT_SCALARS) else int32


def promote_scalar(dtype: np.dtype, value) -> np.dtype:
    """:func:`promote` of a tile's dtype with a scalar operand's (:func:`scalar_dtype`): "(np.int8,
    2) -> np.int32", "(np.float16, 1.2) -> np.float32"."""
    return promote(dtype, scalar_dtype(value))
