"""The vector/scalar ALU ops (``AluOp``) of docs/isa-semantics.md section 3, on fp32 arrays.

:func:`apply` evaluates ``op(a, b)`` elementwise in fp32; :func:`fold` folds an axis with an op
the way TensorReduce, the activation accumulator and the select-reduce outputs do.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from neuronxsim.reference.numbers import int32_of, is_integer, uint32_of
from neuronxsim.reference.refusal import Refusal

F32 = np.float32
BinaryOp = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _flag(predicate: BinaryOp) -> BinaryOp:
    """A comparison or logical op whose result is 1.0 / 0.0."""
    return lambda a, b: predicate(a, b).astype(F32)


def _shift_count(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """b's pattern as int32 and whether it is a shift count the hardware honours (0..31)."""
    count = np.asarray(b, dtype=np.uint32).view(np.int32)
    valid = (count >= 0) & (count <= 31)
    return np.where(valid, count, 0).astype(np.uint32), valid


def _shift_left(a, b):
    count, valid = _shift_count(b)
    return np.where(valid, a << count, 0).astype(np.uint32)  # bits shifted out are lost


def _arith_shift_right(a, b):
    count, valid = _shift_count(b)
    x = a.view(np.int32)
    return np.where(valid, x >> count.astype(np.int32), x >> 31).astype(np.int32).view(np.uint32)


def _logical_shift_right(a, b):
    count, valid = _shift_count(b)
    return np.where(valid, a >> count, 0).astype(np.uint32)


def element_bits(dtype: np.dtype) -> int:
    """The pattern bits an element of ``dtype`` fills: a logical shift right brings zeros in at
    the element's own top bit (docs/isa-semantics.md §3), so an int8 or int16 pattern's sign
    extension is cut off before it shifts."""
    return {1: 0xFF, 2: 0xFFFF}.get(np.dtype(dtype).itemsize, 0xFFFFFFFF)


#: The bit-vector ops on uint32 bit patterns (docs/isa-semantics.md §3: the Vector Engine treats
#: integer elements as bit patterns, NKI's "Supported Math Operators for NKI ISA")
BIT_OPS: dict[str, BinaryOp] = {
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "bitwise_not": lambda a, b: np.invert(a),
    "arith_shift_left": _shift_left,
    "arith_shift_right": _arith_shift_right,
    "logical_shift_left": _shift_left,
    "logical_shift_right": _logical_shift_right,
}


def _on_fp32(name: str) -> BinaryOp:
    """A bit-vector op on fp32 values, where an instruction has them: int32(a) and int32(b) as
    patterns (uint32(a) for the logical shifts, their result unsigned)."""
    logical = name.startswith("logical")
    def op(a, b):
        x = uint32_of(a) if logical else int32_of(a).view(np.uint32)
        r = np.asarray(BIT_OPS[name](x, int32_of(b).view(np.uint32)), dtype=np.uint32)
        return (r if logical else r.view(np.int32)).astype(F32)
    return op


def _pow(a, b):
    # powf, evaluated in double and rounded once. NumPy's float32 power is host-dependent (on
    # AVX-512 hosts a SIMD routine about 1 ulp off powf in a fifth of the cases), and a constant
    # exponent of 0.5 takes a sqrt shortcut (-inf -> NaN, -0 -> -0, where powf gives +inf, +0):
    # both operands are materialised in double at full shape.
    a, b = (np.array(x, dtype=np.float64) for x in np.broadcast_arrays(a, b))
    return np.power(a, b).astype(F32)


ALU_OPS: dict[str, BinaryOp] = {
    "add": np.add,
    "subtract": np.subtract,
    "mult": np.multiply,
    "divide": np.divide,
    "max": np.maximum,  # NaN-propagating
    "min": np.minimum,
    "pow": _pow,
    "mod": np.mod,  # sign of b
    "average": lambda a, b: (a + b) * F32(0.5),
    "abs": lambda a, b: np.abs(a),
    "rsqrt": lambda a, b: F32(1.0) / np.sqrt(a),
    "bypass": lambda a, b: a,
    "is_equal": _flag(np.equal),
    "not_equal": _flag(np.not_equal),
    "is_ge": _flag(np.greater_equal),
    "is_gt": _flag(np.greater),
    "is_le": _flag(np.less_equal),
    "is_lt": _flag(np.less),
    "logical_and": _flag(lambda a, b: (a != 0) & (b != 0)),
    "logical_or": _flag(lambda a, b: (a != 0) | (b != 0)),
    "logical_xor": _flag(lambda a, b: (a != 0) ^ (b != 0)),
    **{name: _on_fp32(name) for name in BIT_OPS},
}


#: The bit-vector ops
BITWISE_OPS = frozenset(BIT_OPS)


def apply(op, a, b, reverse: bool = False) -> np.ndarray:
    """``op(a, b)`` (``op(b, a)`` when ``reverse``) in fp32; ``op`` is a ``bir.AluOp`` member."""
    try:
        fn = ALU_OPS[op.name]
    except KeyError:
        raise Refusal(f"ALU op {op.name} is not modelled") from None
    a = np.asarray(a, dtype=F32)
    b = np.asarray(b, dtype=F32)
    if reverse:
        a, b = b, a
    return np.asarray(fn(a, b), dtype=F32)


def on_bit_patterns(op, *operands) -> bool:
    """Whether the ALU op ``op`` runs on bit patterns: a bit-vector op whose data operands are
    all integer tiles (the simulator's rule alu.bitvec-dtype; the reference computes float tiles
    on their fp32 values as before)."""
    return op.name in BITWISE_OPS and all(o.is_immediate or is_integer(o.dtype) for o in operands)


def _divide_toward_zero(a, b):
    """Integer division rounded toward zero (nki.isa.scalar_alu's integer nl.divide); b != 0."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


#: GpSimd's native integer arithmetic on int32 / uint32 tiles (docs/isa-semantics.md §5,
#: TensorTensor): the ops with an exact integer form, on int64 values, giving 32-bit patterns
#: (add, subtract, mult and divide wrap modulo 2^32). divide rounds toward zero; mod is the
#: remainder with the divisor's sign (nki.language.mod: "the Python modulus x % y"); a zero
#: divisor is refused by the caller.
INT_OPS: dict[str, BinaryOp] = {
    "add": np.add, "subtract": np.subtract, "mult": np.multiply, "max": np.maximum,
    "divide": _divide_toward_zero, "mod": np.mod,
    "min": np.minimum, "is_equal": np.equal, "not_equal": np.not_equal, "is_ge": np.greater_equal,
    "is_gt": np.greater, "is_le": np.less_equal, "is_lt": np.less, "bypass": lambda a, b: a,
}


def apply_int(op, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """An INT_OPS op on exact integer values: the result's uint32 pattern."""
    with np.errstate(over="ignore"):
        r = INT_OPS[op.name](np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    return np.asarray(r).astype(np.int64).astype(np.uint32)  # (modulo 2^32)


def apply_bits(op, a, b, reverse: bool = False, width: int = 0xFFFFFFFF) -> np.ndarray:
    """The bit-vector ``op(a, b)`` (``op(b, a)`` when ``reverse``) on uint32 bit patterns;
    ``width`` (element_bits) is the bits of ``a``'s element, which a logical shift right of ``a``
    shifts (not of ``b``, a number, when reversed)."""
    a = np.asarray(a, dtype=np.uint32)
    b = np.asarray(b, dtype=np.uint32)
    if reverse:
        a, b = b, a
    elif op.name == "logical_shift_right":
        a = a & np.uint32(width)
    a, b = np.broadcast_arrays(a, b)
    return np.asarray(BIT_OPS[op.name](a, b), dtype=np.uint32)


# Folds whose NumPy reduction gives the sequential result (max, min: exactly) or one the contract
# accepts in its place (add: NumPy's pairwise sum, within fp32 rounding).
_REDUCTIONS = {"add": np.add, "max": np.maximum, "min": np.minimum}


def fold(op, values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Folds ``axis`` of ``values`` with ``op`` from its first element: ``op(op(x0, x1), x2)...``."""
    values = np.asarray(values, dtype=F32)
    reduction = _REDUCTIONS.get(op.name)
    if reduction is not None:
        result = reduction.reduce(values, axis=axis).astype(F32)
        if op.name == "add":
            # NumPy's sum starts from +0; a fold from the first element is -0 where every term is
            # (a one-element fold is that element, unchanged)
            every_term_negative_zero = np.all((values == 0) & np.signbit(values), axis=axis)
            result = np.where(every_term_negative_zero, F32(-0.0), result)
        return result
    # Every other op rounds to fp32 (or truncates to int32) between steps, so the fold is
    # inherently sequential: loop along the axis, vectorised over everything else.
    values = np.moveaxis(values, axis, 0)
    result = values[0]
    for k in range(1, values.shape[0]):
        result = apply(op, result, values[k])
    return result
