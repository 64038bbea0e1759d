"""NKI 0.6 data types: the 2.2x dialect's table (``neuronxsim.nki.dtypes``, NumPy dtypes with
their BIR spellings) plus the types NKI 0.4-0.6 added.

The added types exist as ``nl`` names so that kernels import and name them, but no trn1 or trn2
tensor can hold one:

* ``float8_e4m3fn`` (OCP FP8), ``float8_e8m0fnu`` (MX scales) and the packed ``*_x4`` types are
  NeuronCore-v4 (trn3) types; the generations neuronxsim models (trn1 = NeuronCore-v2, trn2 =
  NeuronCore-v3) do not have them, so a tensor of one is refused, naming the generation.
* ``tfloat32`` exists on every generation, but storing into it rounds an fp32 mantissa to 10
  bits, which the simulator's BIR ``float32r`` does not do: it is refused as not modelled rather
  than carried with wrong bits.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from neuronxsim.bir import target
from neuronxsim.nki import dtypes as _dt
from neuronxsim.nki.errors import NKIError

bool_ = _dt.bool_
int8, int16, int32 = _dt.int8, _dt.int16, _dt.int32
uint8, uint16, uint32 = _dt.uint8, _dt.uint16, _dt.uint32
float16, float32, bfloat16 = _dt.float16, _dt.float32, _dt.bfloat16
float8_e4m3, float8_e5m2 = _dt.float8_e4m3, _dt.float8_e5m2
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
is_number = _dt.is_number


class UnmodelledDType:
    """An NKI data type the simulator cannot hold (see the module docstring): it has a name and
    an element size, and every tensor of it is refused with ``why``."""

    __slots__ = ("name", "itemsize", "why")

    def __init__(self, name: str, itemsize: int, why: str):
        self.name = name
        self.itemsize = itemsize
        self.why = why

    def __repr__(self):
        return f"nl.{self.name}"

    __str__ = __repr__


# (ml_dtypes has these since 0.5; with an older one they stay NKI names without a NumPy twin)
float8_e8m0fnu = (np.dtype(ml_dtypes.float8_e8m0fnu) if hasattr(ml_dtypes, "float8_e8m0fnu")
                  else None)
_float4_e2m1fn = (np.dtype(ml_dtypes.float4_e2m1fn) if hasattr(ml_dtypes, "float4_e2m1fn")
                  else None)
_V4 = ("a NeuronCore-v4 (trn3) data type; {arch} ({core}) does not have it, and neuronxsim "
       "models trn1 and trn2 only")
tfloat32 = UnmodelledDType(
    "tfloat32", 4, "not modelled: the simulator carries BIR float32r as float32 and does not round "
    "to tfloat32's 10 mantissa bits (use nl.float32)")
float8_e5m2_x4 = UnmodelledDType("float8_e5m2_x4", 4, _V4)
float8_e4m3fn_x4 = UnmodelledDType("float8_e4m3fn_x4", 4, _V4)
float4_e2m1fn_x4 = UnmodelledDType("float4_e2m1fn_x4", 4, _V4)

if float8_e8m0fnu is None:
    float8_e8m0fnu = UnmodelledDType("float8_e8m0fnu", 1, _V4)

#: NumPy dtypes of NeuronCore-v4 types (kernel arguments may arrive in them)
_V4_NUMPY = {d: n for d, n in ((float8_e4m3fn, "float8_e4m3fn"),
                               (float8_e8m0fnu, "float8_e8m0fnu"),
                               (_float4_e2m1fn, "float4_e2m1fn")) if isinstance(d, np.dtype)}

#: The NeuronCore of each target (for messages), from the target description.
CORE_NAMES = {arch: target.config(arch).neuron_core for arch in target.ARCHS}

#: Every data type ``nki.language`` names, by name.
NAMES = {
    "bool_": bool_, "int8": int8, "int16": int16, "int32": int32, "uint8": uint8,
    "uint16": uint16, "uint32": uint32, "float16": float16, "float32": float32,
    "bfloat16": bfloat16, "tfloat32": tfloat32, "float8_e4m3": float8_e4m3,
    "float8_e5m2": float8_e5m2, "float8_e4m3fn": float8_e4m3fn,
    "float8_e8m0fnu": float8_e8m0fnu, "float8_e5m2_x4": float8_e5m2_x4,
    "float8_e4m3fn_x4": float8_e4m3fn_x4, "float4_e2m1fn_x4": float4_e2m1fn_x4,
}


def resolve(value, arch: str, loc, what: str = "dtype") -> np.dtype:
    """The NumPy dtype of a tensor of NKI type ``value`` on ``arch``; refuses types ``arch``
    lacks and names that are no NKI type."""
    if isinstance(value, UnmodelledDType):
        raise NKIError(f"{what}: nl.{value.name} is " +
                       value.why.format(arch=arch, core=CORE_NAMES.get(arch, arch)), loc)
    d = _dt.as_dtype(value)
    if d is not None:
        return d
    npd = _dt.numpy_dtype(value)
    if npd is not None and npd in _V4_NUMPY:
        raise NKIError(f"{what}: {_V4_NUMPY[npd]} is " +
                       _V4.format(arch=arch, core=CORE_NAMES.get(arch, arch)), loc)
    names = ", ".join(f"nl.{n}" for n in NAMES)
    raise NKIError(f"{what}: {value!r} is not an NKI data type ({names})", loc)


def name(d) -> str:
    return d.name if isinstance(d, UnmodelledDType) else _dt.name(d)


def is_float(d) -> bool:
    return _dt.is_float(d)


def is_int(d: np.dtype) -> bool:
    return d.kind in "iu"


__all__ = list(NAMES) + ["UnmodelledDType", "NAMES", "resolve", "name"]
