"""Element types and the conversions of docs/isa-semantics.md section 2.

Engines compute in fp32: every element read is converted to fp32 (:func:`to_fp32`) and every
element written is converted from fp32 to the destination's storage type (:func:`from_fp32`).
Index-producing instructions compute exact integers and store them with :func:`from_int64`.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from neuronxsim.reference.refusal import Refusal

#: tfloat32 (BIR float32r): an fp32 container whose stores keep 10 mantissa bits. Its NumPy dtype
#: is float32 tagged in its metadata (NumPy's == ignores metadata: compare with same_format).
TFLOAT32 = np.dtype(np.float32, metadata={"bir": "float32r"})

#: BIR dtype name -> the NumPy dtype whose bytes have the same layout.
NUMPY_DTYPES: dict[str, np.dtype] = {
    "float32": np.dtype(np.float32),
    "float32r": TFLOAT32,
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float16": np.dtype(np.float16),
    "float8e4": np.dtype(ml_dtypes.float8_e4m3),  # IEEE-style e4m3: inf and NaN, max 240
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

# fp8 stores saturate to the largest finite value instead of overflowing to inf.
_FP8_MAX = {
    np.dtype(t): np.float32(ml_dtypes.finfo(t).max)
    for t in (ml_dtypes.float8_e4m3, ml_dtypes.float8_e5m2, ml_dtypes.float8_e3m4)
}

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def numpy_dtype(bir_dtype) -> np.dtype:
    """The NumPy dtype of a ``bir.DType`` member."""
    try:
        return NUMPY_DTYPES[bir_dtype.name]
    except KeyError:
        raise Refusal(f"dtype {bir_dtype.name} has no storage format") from None


def is_integer(dtype: np.dtype) -> bool:
    return dtype.kind in "iu"


def is_tfloat32(dtype: np.dtype) -> bool:
    return (dtype.metadata or {}).get("bir") == "float32r"


def same_format(a: np.dtype, b: np.dtype) -> bool:
    """The same storage format (tfloat32 is not float32)."""
    return a == b and is_tfloat32(a) == is_tfloat32(b)


def round_to_tfloat32(values: np.ndarray) -> np.ndarray:
    """fp32 -> the nearest tfloat32 (ties to even at 10 mantissa bits), overflowing to inf; NaN
    stays NaN."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000
    out = np.where(nan, (bits & 0xFFFFE000) | 0x00400000, rounded) & 0xFFFFFFFF
    return out.astype(np.uint32).view(np.float32)


def to_fp32(raw: np.ndarray) -> np.ndarray:
    """Stored elements -> fp32 values (integers by value, rounded to nearest-even above 2^24)."""
    return raw.astype(np.float32)


def from_fp32(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """fp32 engine results -> stored elements of ``dtype``.

    bf16/fp16 and tfloat32 round to nearest-even and overflow to inf; fp8 round to nearest-even
    and saturate
    to the largest finite value (inf too); integers round to nearest-even, saturate, NaN -> 0.
    NaN stays NaN in every float type.
    """
    values = np.asarray(values, dtype=np.float32)
    if is_integer(dtype):
        return _round_to_integer(values.astype(np.float64), dtype)
    if is_tfloat32(dtype):
        return round_to_tfloat32(values)
    if dtype in _FP8_MAX:
        # Clipping first is the same as rounding then saturating: max is representable, and any
        # value beyond it rounds to max or to inf, both of which saturate to max.
        limit = _FP8_MAX[dtype]
        values = np.clip(values, -limit, limit)
    return values.astype(dtype)


def from_int64(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Exact integer results (Iota, indices) -> stored elements: integer types saturate exactly;
    float types go through fp32 like every engine result."""
    values = np.asarray(values, dtype=np.int64)
    if not is_integer(dtype):
        return from_fp32(values.astype(np.float32), dtype)
    info = np.iinfo(dtype)
    lo = max(int(info.min), int(np.iinfo(np.int64).min))
    hi = min(int(info.max), int(np.iinfo(np.int64).max))
    return np.clip(values, lo, hi).astype(dtype)


def _round_to_integer(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    rounded = _nan_to_zero(np.rint(values))  # round half to even
    info = np.iinfo(dtype)
    # float(info.max) of a 64-bit type rounds up to 2^63 / 2^64, so compare before converting.
    too_big = rounded >= float(info.max)
    too_small = rounded <= float(info.min)
    out = np.where(too_big | too_small, 0.0, rounded).astype(dtype)
    out[too_big] = info.max
    out[too_small] = info.min
    return out


def int32_of(values: np.ndarray) -> np.ndarray:
    """The ALU's int32(x): truncate toward zero, saturate to the int32 range, NaN -> 0."""
    t = _nan_to_zero(np.trunc(np.asarray(values, dtype=np.float64)))
    return np.clip(t, _INT32_MIN, _INT32_MAX).astype(np.int32)


def uint32_of(values: np.ndarray) -> np.ndarray:
    """The ALU's uint32(x): truncate toward zero, saturate to [0, 2^32 - 1], NaN -> 0."""
    t = _nan_to_zero(np.trunc(np.asarray(values, dtype=np.float64)))
    return np.clip(t, 0, 2**32 - 1).astype(np.uint32)


def bits_of(raw: np.ndarray) -> np.ndarray:
    """The bit-vector operators' operand (docs/isa-semantics.md section 3): stored integers as
    their 32-bit two's-complement patterns (uint32; signed types sign-extended, 64-bit ones cut
    to the low word), with no conversion through fp32; floats (a [P,1] operand) as int32(x)."""
    raw = np.asarray(raw)
    if is_integer(raw.dtype):
        return raw.astype(np.int64).astype(np.uint32)  # (modulo 2^32)
    return int32_of(to_fp32(raw)).view(np.uint32)


def bits_of_number(value: float) -> np.uint32:
    """A number (immediate, TensorScalar constant) as a bit-vector operand: truncated toward zero,
    its low 32 bits."""
    if np.isnan(value):
        return np.uint32(0)
    return np.uint32(int(np.trunc(np.clip(value, -9.2e18, 9.2e18))) % 2**32)


def from_bits(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Bit-vector results (uint32 patterns) -> stored elements: an integer type keeps the
    pattern's low bytes (a 64-bit one the pattern extended by its signedness); a float type the
    int32 value through fp32."""
    signed = np.asarray(bits, dtype=np.uint32).view(np.int32)
    if not is_integer(dtype):
        return from_fp32(signed.astype(np.float32), dtype)
    wide = signed.astype(np.int64) if dtype.kind == "i" else signed.view(np.uint32).astype(np.uint64)
    return wide.astype(dtype)  # (integer casts keep the low bytes)


def _nan_to_zero(values: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(values), 0.0, values)


def convert(raw: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A copy's element conversion: bit-exact when the types are the same, else through fp32."""
    if same_format(raw.dtype, dtype):
        return raw
    return from_fp32(to_fp32(raw), dtype)
