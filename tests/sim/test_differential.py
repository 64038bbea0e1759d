"""Differential test of the two executors of ISA-level BIR: seeded random programs run on the C++
simulator (``neuronxsim.sim``) and on the NumPy reference executor (``neuronxsim.reference``) must
produce the same outputs.

What it proves: over random shapes, access patterns, dtypes, ALU ops, activation functions,
accumulator commands, matmul accumulation groups, operands that share elements (in-place indirect
DMAs and dynamic copies, the two outputs of one instruction) and immediates of every dtype, the two
independent readings of docs/isa-semantics.md compute the same numbers for every instruction class
both executors run — bit for bit (sign of zero included) wherever the contract fixes the result,
and within a bound derived from the instructions involved wherever it leaves rounding free
(functions the contract defines only mathematically, summation order, powf).

How: the generator never computes values. For every element of every tensor it keeps what it can
know statically (:class:`Bounds`): whether it was written (both executors refuse or poison reads of
unwritten memory), a bound on its magnitude, a power of two it is a multiple of (so that it knows
when a sum is exact in fp32, whatever the order), how far the two executors' values may
legitimately differ (``rel * |value| + abs``; zero means bit-identical), and whether its zero may
carry a different sign in the two executors. Each instruction family is one small method that
picks valid operands from that state, emits the instruction and updates the state with the
instruction's abstract semantics. Instructions whose result is discontinuous in their inputs
(comparisons, integer stores, division, searches, predicates) only take bit-identical inputs, so a
legitimate last-bit difference can never be amplified into a false alarm; continuous ones carry the
bound forward.

Left out: a PE output starting inside a 4-byte PSUM word, which the contract refuses (both executors
do: nothing to compare), and DMA to or from PSUM, which the simulator refuses (rule dma.psum; the
programs move PSUM results to SBUF with the Vector Engine's TensorCopy before storing them). Memset Random and Dropout with a probability above 0 are left out by
design: the contract lets the executors draw different random numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable, Optional, Sequence

import ml_dtypes
import numpy as np
import pytest

from neuronxsim import SimulationError, bir, reference, sim
from neuronxsim.bir import (AccumCmd, ActivationFunc, AluOp, DgeType, DmaMode, DType, Engine, InstructionType, PerfMode,
                            ReduceAxis, legality)
from neuronxsim.bir.printer import format_module
from neuronxsim.sim.build import ModuleBuilder

from simkit import to_dtype

SEEDS = range(160)
MAX_OUTPUTS = 16
ARCHES = ("trn1", "trn2")

# ---------------------------------------------------------------------------------------------
# Numbers

FP32_ULP = 2.0**-23     # relative spacing of fp32: one more rounding moves two close values apart by this
NO_GRID = -149.0        # every fp32 value is a multiple of 2^-149
ZERO_GRID = 512.0       # zero is a multiple of every power of two (kept finite for arithmetic)
FP32_SIGNIFICAND = 24
TAINTED_MAG_LIMIT = 1e30  # values that may differ are kept far from overflow (inf vs max would be a false alarm)


@dataclasses.dataclass(frozen=True)
class Storage:
    """How a dtype stores an fp32 engine result (docs/isa-semantics.md §2)."""

    name: str
    is_int: bool
    fraction_bits: int  # floats: stored significand bits after the point (fp32 23 ... e5m2 2)
    tiny: float         # floats: the smallest subnormal (every value is a multiple of it)
    max: float          # the largest finite value
    min: float
    saturates: bool     # fp8 and integers saturate; fp32/bf16/fp16 overflow to inf


def _storage(dtype: DType) -> Storage:
    if dtype == DType.float32r:  # tfloat32: fp32's exponent range, 10 mantissa bits
        top = (2 - 2.0**-10) * 2.0**127
        return Storage(dtype.name, False, 10, 2.0**-136, top, -top, False)
    nd = sim.dtype_to_numpy(dtype)
    if nd.kind in "iu":
        info = np.iinfo(nd)
        return Storage(dtype.name, True, 0, 1.0, float(info.max), float(info.min), True)
    info = ml_dtypes.finfo(nd)
    return Storage(dtype.name, False, int(info.nmant), float(info.smallest_subnormal), float(info.max),
                   -float(info.max), dtype.name.startswith("float8"))


STORAGE = {dt: _storage(dt) for dt in DType.__members__.values()}
STORAGE_BYTES = {dt: bir.dtype_size(dt) for dt in DType.__members__.values()}
INTEGER_DTYPES = [dt for dt, s in STORAGE.items() if s.is_int]


def quantum_log2(values: np.ndarray) -> np.ndarray:
    """For each fp32 value, the largest k with value a multiple of 2^k (ZERO_GRID for zeros)."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.int64)
    exponent, fraction = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    significand = np.where(exponent == 0, fraction, fraction | 0x800000)
    lowest = significand & -significand  # lowest set bit
    trailing = np.log2(np.where(lowest == 0, 1, lowest)).astype(np.int64)
    q = np.where(exponent == 0, -149, exponent - 150) + trailing
    return np.where((significand == 0) | ~np.isfinite(values), ZERO_GRID, q).astype(np.float64)


def _times(x, y):
    """x * y for bounds, with 0 * inf = 0 (a zero bound stays zero)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where((np.asarray(x) == 0) | (np.asarray(y) == 0), 0.0, np.multiply(x, y))


class Retry(Exception):
    """The family cannot build a valid instruction from the current state (nothing was emitted)."""


# ---------------------------------------------------------------------------------------------
# What the generator knows about values


@dataclasses.dataclass
class Bounds:
    """Static knowledge of a block of values (arrays of one shape, usually ``[P, F]``).

    ``q``: every value is a multiple of ``2**q``; ``mag``: ``|value| <= mag`` (may be inf);
    ``rel``, ``abs``: the executors' values may differ by ``rel * |value| + abs`` (both 0:
    bit-identical); ``zsign``: a zero here may have different signs in the two executors (the
    contract leaves open the sign of a zero from inexact sums, max/min folds, matmul and some
    activation functions).
    """

    q: np.ndarray
    mag: np.ndarray
    rel: np.ndarray
    abs: np.ndarray
    zsign: np.ndarray

    def __post_init__(self):
        # 0 * inf in a bound is NaN, which compares false and would drop the bound: unknown is inf
        for name in ("mag", "rel", "abs"):
            value = np.asarray(getattr(self, name), float)
            if np.isnan(value).any():
                value = np.where(np.isnan(value), np.inf, value)
            setattr(self, name, value)

    @classmethod
    def exact(cls, q, mag, zsign=False, shape=None) -> "Bounds":
        q, mag, zsign = np.broadcast_arrays(np.asarray(q, float), np.asarray(mag, float), np.asarray(zsign, bool))
        if shape is not None:
            q, mag, zsign = (np.broadcast_to(a, shape) for a in (q, mag, zsign))
        zero = np.zeros(q.shape)
        return cls(q.copy(), mag.copy(), zero, zero.copy(), zsign.copy())

    @classmethod
    def of_values(cls, values, shape=None) -> "Bounds":
        v = np.asarray(values, np.float32)
        return cls.exact(quantum_log2(v), np.nan_to_num(np.abs(v.astype(np.float64)), nan=np.inf), shape=shape)

    @property
    def shape(self):
        return self.q.shape

    def tainted(self) -> np.ndarray:
        return (self.rel > 0) | (self.abs > 0)

    def error(self) -> np.ndarray:
        """An absolute bound on the difference between the executors."""
        return _times(self.rel, self.mag) + self.abs

    def satisfies(self, need: str) -> bool:
        if need == "exact":
            return not self.tainted().any()
        if need == "divisor":  # exact, and no zero whose sign may differ (1/±0 = ±inf)
            return not (self.tainted().any() or self.zsign.any())
        if need == "bounded":
            tainted = self.tainted()
            return bool(np.all(np.isfinite(self.error()[tainted])) and np.all(self.mag[tainted] < TAINTED_MAG_LIMIT))
        return True

    def map(self, fn: Callable[[np.ndarray], np.ndarray]) -> "Bounds":
        return Bounds(*(fn(getattr(self, f.name)) for f in dataclasses.fields(self)))

    def where(self, mask, other: "Bounds") -> "Bounds":
        return Bounds(*(np.where(mask, getattr(self, f.name), getattr(other, f.name))
                        for f in dataclasses.fields(self)))

    def either(self, other: "Bounds") -> "Bounds":
        """Each element is one of the two (a predicate both executors agree on picks it)."""
        return Bounds(np.minimum(self.q, other.q), np.maximum(self.mag, other.mag), np.maximum(self.rel, other.rel),
                      np.maximum(self.abs, other.abs), self.zsign | other.zsign)

    def with_error(self, tainted, rel, abs_) -> "Bounds":
        return Bounds(self.q, self.mag, np.where(tainted, rel, 0.0), np.where(tainted, abs_, 0.0), self.zsign)


def stack_bounds(parts: Sequence[Bounds], axis: int) -> Bounds:
    return Bounds(*(np.stack([getattr(p, f.name) for p in parts], axis=axis) for f in dataclasses.fields(Bounds)))


def broadcast(*bounds: Bounds) -> list[Bounds]:
    shape = np.broadcast_shapes(*(b.shape for b in bounds))
    return [b.map(lambda a: np.broadcast_to(a, shape)) for b in bounds]


# ---- ALU ops (docs/isa-semantics.md §3) ----

COMPARISONS = {AluOp.is_equal, AluOp.not_equal, AluOp.is_ge, AluOp.is_gt, AluOp.is_le, AluOp.is_lt}
LOGICAL = {AluOp.logical_and, AluOp.logical_or, AluOp.logical_xor}
BITWISE = {AluOp.bitwise_and, AluOp.bitwise_or, AluOp.bitwise_xor, AluOp.bitwise_not, AluOp.arith_shift_left,
           AluOp.arith_shift_right, AluOp.logical_shift_left, AluOp.logical_shift_right}
#: Continuous in their inputs: may take values the executors round differently.
CONTINUOUS = {AluOp.add, AluOp.subtract, AluOp.mult, AluOp.max, AluOp.min, AluOp.average, AluOp.abs, AluOp.bypass}
UNARY = {AluOp.abs, AluOp.bypass, AluOp.rsqrt, AluOp.bitwise_not}
FOLD_OPS = [AluOp.add, AluOp.subtract, AluOp.mult, AluOp.max, AluOp.min]


def alu_need(op: AluOp) -> str:
    return "bounded" if op in CONTINUOUS else "exact"


#: The operand whose zero sign decides the sign of an infinite result: x/±0, pow(±0, -1), 1/sqrt(±0).
POLE_OPERAND = {AluOp.divide: 1, AluOp.pow: 0, AluOp.rsqrt: 0}
NEEDS = ["any", "bounded", "exact", "divisor"]  # weakest first


def operand_need(op: AluOp, position: int) -> str:
    """How operand ``position`` (0: a, 1: b) of ``op(a, b)`` must be known."""
    return "divisor" if POLE_OPERAND.get(op) == position else alu_need(op)


def stricter(*needs: str) -> str:
    return max(needs, key=NEEDS.index)


def apply_alu(op: AluOp, a: Bounds, b: Bounds) -> Bounds:
    """alu_bounds, refusing (Retry) a zero whose sign may differ at a pole."""
    pole = POLE_OPERAND.get(op)
    if pole is not None and not (a, b)[pole].satisfies("divisor"):
        raise Retry(f"a zero whose sign may differ at the pole of {op.name}")
    return alu_bounds(op, a, b)


def alu_bounds(op: AluOp, a: Bounds, b: Bounds) -> Bounds:
    """The bounds of ``op(a, b)`` computed in fp32. Raises Retry where the op may not take ``a``,
    ``b`` (values that may differ into a discontinuous op)."""
    a, b = broadcast(a, b)
    tainted = a.tainted() | (np.zeros(a.shape, bool) if op in UNARY else b.tainted())
    if op not in CONTINUOUS and tainted.any():
        raise Retry(f"{op.name} takes only bit-identical inputs")
    err_a, err_b = a.error(), (np.zeros(a.shape) if op in UNARY else b.error())
    zs = a.zsign | (False if op in UNARY else b.zsign)
    rel = np.full(a.shape, FP32_ULP)
    if op in (AluOp.add, AluOp.subtract, AluOp.average):
        half = 0.5 if op == AluOp.average else 1.0
        q = np.minimum(a.q, b.q) - (op == AluOp.average)
        r = Bounds(q, (a.mag + b.mag) * half, rel, (err_a + err_b) * half, zs)
    elif op == AluOp.mult:
        # |ab - a'b'| <= |a| |b - b'| + |b'| |a - a'|, split into relative and absolute parts
        abs_ = _times(a.abs, _times(b.mag, 1 + b.rel)) + _times(b.abs, _times(a.mag, 1 + a.rel)) + a.abs * b.abs
        r = Bounds(np.maximum(a.q + b.q, NO_GRID), _times(a.mag, b.mag), a.rel + b.rel + a.rel * b.rel + FP32_ULP,
                   abs_, zs)
    elif op in (AluOp.max, AluOp.min):  # 1-Lipschitz
        r = Bounds(np.minimum(a.q, b.q), np.maximum(a.mag, b.mag), 0 * rel, np.maximum(err_a, err_b), zs)
    elif op == AluOp.abs:
        r = Bounds(a.q, a.mag, a.rel, a.abs, np.zeros(a.shape, bool))
    elif op == AluOp.bypass:
        r = a
    elif op in (AluOp.divide, AluOp.rsqrt):
        r = Bounds.exact(NO_GRID, np.inf, zs, shape=a.shape)
    elif op == AluOp.pow:
        # Contract: powf. The reference rounds the double-precision value once; the simulator's C
        # library powf is not correctly rounded everywhere (about 1 result in 1500 is 1 ulp off).
        return Bounds(np.full(a.shape, NO_GRID), np.full(a.shape, np.inf), rel * 2, np.full(a.shape, 2.0**-148), zs)
    elif op == AluOp.mod:
        # Contract: numpy.mod exactly. fmod(a, b) = a - n b is exact (a multiple of both grids) and
        # |fmod| < |b|; adding b where the signs differ rounds once, to at most |b|; a zero takes
        # b's sign, so the result's zero sign does not depend on a's (b = ±0 gives NaN either way).
        r = Bounds.exact(np.minimum(a.q, b.q), b.mag, False)
    elif op in COMPARISONS or op in LOGICAL:
        r = Bounds.exact(0.0, 1.0, shape=a.shape)
    elif op in BITWISE:
        r = Bounds.exact(0.0, 2.0**32, shape=a.shape)
    else:
        raise AssertionError(op)
    return r.with_error(tainted, r.rel, r.abs)


def sets_vector_registers(opcode: str, outs: int) -> bool:
    """Whether the instruction sets the Vector Engine's accumulation registers of its partitions
    (an accumulation instruction that does not may change them: docs/isa-semantics.md §5)."""
    return opcode == "TensorScalarReduce" or (opcode in ("SelectReduce", "RangeSelect") and outs == 2)


def fold_bounds(op: AluOp, terms: Bounds, axis: int = -1) -> Bounds:
    """The bounds of folding ``axis`` with ``op`` (TensorReduce, accumulators, select-reduce)."""
    n = terms.shape[axis]
    if n == 1:  # a fold of one element is that element, whatever the op
        return terms.map(lambda a: np.take(a, 0, axis=axis))
    tainted = terms.tainted().any(axis=axis)
    err = terms.error()
    q = terms.q.min(axis=axis)
    if op in (AluOp.max, AluOp.min):  # NumPy's reductions may meet ±0 in another order
        return Bounds(q, terms.mag.max(axis=axis), np.zeros(q.shape), np.where(tainted, err.max(axis=axis), 0.0),
                      np.ones(q.shape, bool))
    if op in (AluOp.add, AluOp.subtract):
        mag = terms.mag.sum(axis=axis)
        # Exact in any order when every partial sum fits the significand; otherwise two orders
        # differ by at most 2 (n-1) 2^-24 sum|x| (add: the reference sums pairwise, the simulator
        # sequentially; subtract: both sequential, but the terms may differ).
        exact = ~tainted & np.isfinite(mag) & (mag <= 2.0 ** (q + FP32_SIGNIFICAND - 1))
        abs_ = err.sum(axis=axis) + (n - 1) * FP32_ULP * mag
        return Bounds(q, mag, np.zeros(q.shape), np.where(exact, 0.0, abs_), ~exact | terms.zsign.any(axis=axis))
    if tainted.any():
        raise Retry(f"{op.name} folds only bit-identical values")
    if op == AluOp.mult:  # sequential in both executors
        return Bounds.exact(np.maximum(terms.q.sum(axis=axis), NO_GRID), terms.mag.prod(axis=axis), True)
    return Bounds.exact(0.0, 2.0**32 if op in BITWISE else 1.0, True, shape=q.shape)


def stored(v: Bounds, dtype: DType) -> Bounds:
    """The bounds after the store conversion of fp32 results to ``dtype``. Raises Retry for values
    the executors may round differently into an integer (a discontinuity) or near an overflow."""
    s = STORAGE[dtype]
    tainted = v.tainted()
    if s.is_int:
        if tainted.any():
            raise Retry("values that may differ cannot be stored as integers")
        saturates = v.mag >= min(s.max, -s.min)
        return Bounds.exact(np.where(saturates, 0.0, np.maximum(v.q, 0.0)),
                            np.minimum(v.mag + 0.5, max(s.max, -s.min)), np.zeros(v.shape, bool))
    if s.fraction_bits >= 23:
        return v
    grow = 2.0**-s.fraction_bits
    if not s.saturates and np.any(tainted & (v.mag * (1 + v.rel) + v.abs >= s.max / 2)):
        raise Retry(f"values that may differ too close to the {s.name} overflow")
    mag = v.mag * (1 + grow)
    q = np.maximum(v.q, math.log2(s.tiny))
    if s.saturates:  # fp8: saturated values are multiples of the spacing at max only
        beyond = mag > s.max
        q = np.where(beyond, np.minimum(q, math.floor(math.log2(s.max)) - s.fraction_bits), q)
        mag = np.minimum(mag, s.max)
    else:
        mag = np.where(mag > s.max, np.inf, mag)
    return Bounds(q, mag, np.where(tainted, v.rel * (1 + grow) + grow, 0.0), np.where(tainted, v.abs + s.tiny, 0.0),
                  v.zsign)


# ---- activation functions (docs/isa-semantics.md §4) ----

#: Arguments of the functions the contract defines only mathematically stay within this bound, where
#: the accuracies below were measured.
ACT_ARG_LIMIT = 16.0


@dataclasses.dataclass(frozen=True)
class ActivationModel:
    """What the generator knows of one activation function.

    exact: both executors give the correctly rounded fp32 result, so results are bit-identical;
    otherwise they may differ by ``rel_ulps(arg) * ulp + abs_ulps(arg) * 2^-23``.
    grid(q, mag) -> (q, mag) for exact functions; magnitude(arg_mag) for the others.
    zero_sign: f(±0) = ±0, where an implementation may drop the sign.
    pole: f(±0) = ±inf, so a zero whose sign may differ must not reach it.
    """

    exact: bool = False
    grid: Optional[Callable] = None
    magnitude: Callable[[float], float] = lambda m: np.inf
    rel_ulps: Callable[[float], float] = lambda m: 2.0
    abs_ulps: Callable[[float], float] = lambda m: 0.0
    zero_sign: bool = True
    pole: bool = False


def _exact(grid, zero_sign=True, pole=False):
    return ActivationModel(exact=True, grid=grid, zero_sign=zero_sign, pole=pole)


def _approx(magnitude, rel=2.0, abs_=0.0, zero_sign=True, pole=False):
    rel_fn = rel if callable(rel) else (lambda m, r=rel: r)
    abs_fn = abs_ if callable(abs_) else (lambda m, a=abs_: a)
    return ActivationModel(magnitude=magnitude, rel_ulps=rel_fn, abs_ulps=abs_fn, zero_sign=zero_sign, pole=pole)


ACTIVATIONS: dict[ActivationFunc, ActivationModel] = {
    ActivationFunc.Identity: _exact(lambda q, m: (q, m)),
    ActivationFunc.Copy: _exact(lambda q, m: (q, m)),
    ActivationFunc.Relu: _exact(lambda q, m: (q, m)),
    ActivationFunc.Abs: _exact(lambda q, m: (q, m), zero_sign=False),
    ActivationFunc.Square: _exact(lambda q, m: (np.maximum(2 * q, NO_GRID), m * m), zero_sign=False),
    ActivationFunc.Sign: _exact(lambda q, m: (np.zeros_like(q), np.ones_like(m))),
    ActivationFunc.Is_finite: _exact(lambda q, m: (np.zeros_like(q), np.ones_like(m)), zero_sign=False),
    ActivationFunc.MemsetZero: _exact(lambda q, m: (np.full_like(q, ZERO_GRID), np.zeros_like(m)), zero_sign=False),
    ActivationFunc.Lrelu: _exact(None),  # alpha * x: its grid depends on alpha (activation_bounds)
    ActivationFunc.Prelu: _exact(None),
    ActivationFunc.Reciprocal: _exact(lambda q, m: (np.full_like(q, NO_GRID), np.full_like(m, np.inf)), pole=True),
    ActivationFunc.Ln_prime: _exact(lambda q, m: (np.full_like(q, NO_GRID), np.full_like(m, np.inf)), pole=True),
    ActivationFunc.Sqrt: _exact(lambda q, m: (np.full_like(q, NO_GRID), np.sqrt(m))),
    ActivationFunc.Exp: _approx(lambda m: math.exp(m), zero_sign=False),
    ActivationFunc.Sigmoid: _approx(lambda m: 1.0, rel=4.0, zero_sign=False),
    ActivationFunc.Tanh: _approx(lambda m: 1.0, rel=4.0),
    ActivationFunc.Arctan: _approx(lambda m: math.pi / 2),
    ActivationFunc.Sin: _approx(lambda m: 1.0),
    ActivationFunc.Erf: _approx(lambda m: 1.0),  # the contract: <= 1 ulp
    ActivationFunc.Gelu: _approx(lambda m: m),
    ActivationFunc.Silu: _approx(lambda m: m, rel=4.0),
    ActivationFunc.Softplus: _approx(lambda m: m + 0.7, zero_sign=False),
    ActivationFunc.Mish: _approx(lambda m: m, rel=6.0),
    # Both executors round the double-precision value of these once (in forms without cancellation).
    ActivationFunc.Gelu_apprx_sigmoid: _approx(lambda m: m),
    ActivationFunc.Derivative_Erf: _approx(lambda m: 1.13, zero_sign=False),
    ActivationFunc.Derivative_Gelu: _approx(lambda m: 1.13),
    ActivationFunc.Derivative_silu: _approx(lambda m: 1.1),
    ActivationFunc.Gelu_apprx_tanh: _approx(lambda m: m),
    ActivationFunc.Ln: _approx(lambda m: np.inf, zero_sign=False),
    ActivationFunc.Rsqrt: _approx(lambda m: np.inf, pole=True),
    ActivationFunc.Dsqrt: _approx(lambda m: np.inf, pole=True),
    ActivationFunc.Abs_reciprocal_sqrt: _approx(lambda m: np.inf, zero_sign=False),
}


# ---------------------------------------------------------------------------------------------
# Tensors, access patterns and the generator's state


def allowed_starts(lanes: int) -> tuple[int, ...]:
    """The start-partition rule [ref §2]."""
    return (0,) if lanes > 64 else (0, 64) if lanes > 32 else (0, 32, 64, 96)


class Tensor:
    """One memory location and the generator's knowledge of each of its elements (flat element
    index = access-pattern element index: ``partition * row + column`` on chip)."""

    def __init__(self, loc, dtype: DType, space: str, partitions: int, row: int, base_partition: int = 0):
        self.loc, self.dtype, self.space = loc, dtype, space
        self.partitions, self.row, self.base_partition = partitions, row, base_partition
        n = partitions * row
        self.written = np.zeros(n, bool)
        self.values = Bounds.exact(np.zeros(n), np.zeros(n))
        self.group = np.zeros(n, bool)      # PSUM: a matmul accumulation group is open here
        self.writer = np.full(n, -1)        # the instruction whose result this element holds

    @property
    def on_chip(self) -> bool:
        return self.space in ("SB", "PSUM")

    @property
    def is_float(self) -> bool:
        return not STORAGE[self.dtype].is_int

    def fits(self, spaces, dtypes, floats_only: bool) -> bool:
        return self.space in spaces and (dtypes is None or self.dtype in dtypes) and (self.is_float or not floats_only)

    def whole(self) -> "View":
        """A DRAM tensor as a view, its first dim as the outer pair."""
        shape = list(self.loc.shape)
        rows, cols = (1, shape[0]) if len(shape) == 1 else shape
        return View(self, 0, [[cols, rows], [1, cols]])

    def read(self, view: "View") -> Bounds:
        index = view.index()
        assert self.written[index].all(), "reading unwritten elements"
        return self.values.map(lambda a: a[index])

    def write(self, view: "View", v: Bounds, writer, where=None, matmul: bool = False) -> None:
        index = view.index()
        if where is not None:
            index = index[np.broadcast_to(where, index.shape)]
            v = v.map(lambda a: np.broadcast_to(a, view.shape)[np.broadcast_to(where, view.shape)])
        for f in dataclasses.fields(Bounds):
            getattr(self.values, f.name)[index] = np.broadcast_to(getattr(v, f.name), index.shape)
        self.written[index] = True
        self.group[index] = matmul  # any other write ends an accumulation group
        self.writer[index] = writer


@dataclasses.dataclass
class View:
    """An access pattern over a tensor in the tensor's own dtype: ``pattern`` is ``[step, num]``
    pairs, the partition pair (on chip) or the outermost dim (DRAM) first."""

    tensor: Tensor
    offset: int
    pattern: list

    @property
    def lanes(self) -> int:
        return self.pattern[0][1]

    @property
    def free_shape(self) -> list[int]:
        return [num for _, num in self.pattern[1:]]

    @property
    def elems(self) -> int:
        return math.prod(self.free_shape)

    @property
    def shape(self) -> tuple[int, int]:
        return self.lanes, self.elems

    @property
    def first_partition(self) -> int:
        """Absolute partition of lane 0 (on chip)."""
        return self.tensor.base_partition + self.offset // self.tensor.row

    def index(self) -> np.ndarray:
        e = np.full([1] * len(self.pattern), self.offset, dtype=np.int64)
        for axis, (step, num) in enumerate(self.pattern):
            shape = [1] * len(self.pattern)
            shape[axis] = num
            e = e + (np.arange(num) * step).reshape(shape)
        return e.reshape(self.lanes, -1)

    def moved(self, shift: int) -> "View":
        return View(self.tensor, self.offset + shift, self.pattern)

    def ap(self) -> bir.AccessPattern:
        return ModuleBuilder.ap(self.tensor.loc, self.offset, [tuple(p) for p in self.pattern], self.tensor.dtype)


def overlaps(a: View, b: View) -> bool:
    return a.tensor is b.tensor and bool(np.intersect1d(a.index(), b.index()).size)


def along_row(view: View, shift: int) -> Optional[View]:
    """``view`` moved by ``shift`` elements within its rows, or None if that leaves a row."""
    cols = view.index() % view.tensor.row + shift
    if cols.min() < 0 or cols.max() >= view.tensor.row:
        return None
    return view.moved(shift)


def stored_value(value: float, dtype: DType) -> float:
    """``value`` in fp32, stored as ``dtype`` and read back as fp32 (the store conversion of
    docs/isa-semantics.md §2): what an immediate of that dtype stands for (§1)."""
    return float(np.float32(to_dtype(np.array([value], np.float32), dtype)[0]))


@dataclasses.dataclass
class Program:
    seed: int
    arch: str
    module: bir.Module
    inputs: dict[str, np.ndarray]
    outputs: dict[str, Bounds]        # per output: what the comparison may accept
    writers: dict[str, np.ndarray]    # per output element: the instruction its value comes from
    opcodes: set[str]
    cases: set[str]                   # the CASES the program holds

    def listing(self) -> str:
        return format_module(self.module)


# Which engines may run what (tests/sim/test_refusals.py; cpp/sim/Program.cpp engineAllowed).
COPY_ENGINES = (Engine.DVE, Engine.Activation, Engine.Pool)
DMA_ENGINES = (Engine.SP, Engine.Activation, Engine.Pool)
#: What a DMA reaches on chip: SBUF, not PSUM (rule dma.psum; PSUM <-> SBUF is an engine's copy).
DMA_SPACES = ("SB",)

SBUF_DTYPES = [  # (dtype, weight): mostly floats, every storage format present
    (DType.float32, 0.26), (DType.bfloat16, 0.15), (DType.float16, 0.09), (DType.float8e4, 0.06),
    (DType.float8e5, 0.05), (DType.float8e3, 0.04), (DType.float32r, 0.03), (DType.int32, 0.1),
    (DType.int16, 0.04), (DType.int8, 0.04), (DType.uint8, 0.05), (DType.uint16, 0.03), (DType.uint32, 0.03),
    (DType.int64, 0.015), (DType.uint64, 0.015),
]
#: (dtype, weight) of immediates: fp32 mostly, every storage format present (the value an engine
#: reads is the value stored as that dtype: rounded, saturated, or inf)
IMMEDIATE_DTYPES = [
    (DType.float32, 0.5), (DType.bfloat16, 0.1), (DType.float16, 0.08), (DType.float8e4, 0.05),
    (DType.float8e5, 0.04), (DType.float8e3, 0.05), (DType.float32r, 0.02), (DType.int32, 0.05), (DType.int16, 0.02),
    (DType.int8, 0.02), (DType.uint8, 0.03), (DType.uint16, 0.01), (DType.uint32, 0.01), (DType.int64, 0.01),
    (DType.uint64, 0.01),
]
PE_DTYPES = {DType.float32, DType.float32r, DType.bfloat16, DType.float16, DType.float8e4, DType.float8e5}
FP32_CLASS = {DType.float32, DType.float32r}

CONSTANTS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -2.5, 0.125, 7.0, -0.75, 100.0, 1e-3, 0.1, 65504.0, 3e5, -4096.0]


class ProgramGenerator:
    """Builds one random valid program; see the module docstring."""

    def __init__(self, seed: int, arch: str):
        self.seed, self.arch = seed, arch
        self.rng = np.random.default_rng([seed, ARCHES.index(arch)])
        self.b = ModuleBuilder(arch)
        self.count = 0
        self.inputs: dict[str, np.ndarray] = {}
        self.pool: list[Tensor] = []       # SBUF and PSUM tensors the stream computes on
        self.scratch: list[Tensor] = []    # internal DRAM tensors for DMAs
        self.boxes: list[tuple] = []       # (tensor, first partition, partitions, first col, cols) fully written
        self.all_boxes: list[tuple] = []   # every such box, for choosing the outputs
        self.accumulators = Bounds.exact(np.zeros(128), np.zeros(128))
        self.vector_registers = Bounds.exact(np.zeros(128), np.zeros(128))  # DVE accumulation registers
        self.vector_registers_set = np.zeros(128, bool)
        self.vector_registers_selected = np.zeros(128, bool)  # set by a SelectReduce or RangeSelect
        self.activation_registers_set = np.zeros(128, bool)  # (reading an unset one is refused)
        self.offsets: Optional[tuple[Tensor, list[int]]] = None  # dynamic-copy offsets and their values
        self.opcodes: set[str] = set()
        self.cases: set[str] = set()

    # ---- small helpers ----

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def name(self, base: str) -> str:
        self.count += 1
        return f"{base}{self.count}"

    def emit(self, opcode: str, ins: Sequence, outs: Sequence, engine: Optional[Engine] = None, **fields) -> int:
        """Appends the instruction; returns its index (the writer recorded for its results)."""
        index = len(self.b.block.instructions)
        if len(outs) == 2 and overlaps(*outs):
            self.cases.add("overlapping outputs")
        ins = [x.ap() if isinstance(x, View) else x for x in ins]
        outs = [x.ap() if isinstance(x, View) else x for x in outs]
        self.b.add(opcode, ins, outs, engine=engine, name=f"i{index}", **fields)
        self.opcodes.add(opcode)
        if opcode in ("SelectReduce", "RangeSelect") and not sets_vector_registers(opcode, len(outs)):
            self.vector_registers_set[:] = False  # an idle accumulation instruction may change them
        if any(x.is_immediate and x.dtype != DType.float32 for x in ins):
            self.cases.add("immediate of another dtype")
        if AluOp.mod in (fields.get("op"), fields.get("op0"), fields.get("op1")):
            self.cases.add("mod")
        return index

    def write(self, view: View, v: Bounds, writer: int, where=None, matmul=False) -> None:
        view.tensor.write(view, v, writer, where, matmul)
        if view.tensor.on_chip and where is None:
            self._remember_box(view)

    def _remember_box(self, view: View) -> None:
        t, index = view.tensor, view.index()
        p0, p1 = index.min() // t.row, index.max() // t.row + 1
        c0, c1 = (index % t.row).min(), (index % t.row).max() + 1
        if t.written.reshape(t.partitions, t.row)[p0:p1, c0:c1].all():
            box = (t, int(p0), int(p1 - p0), int(c0), int(c1 - c0))
            self.boxes = self.boxes[-40:] + [box]
            self.all_boxes.append(box)

    # ---- tensors ----

    def declare_tensors(self) -> None:
        dtypes, weights = zip(*SBUF_DTYPES)
        weights = np.array(weights) / sum(weights)
        kinds = [DType.float32, DType.float32, DType.bfloat16, DType.int32]  # always some of each
        kinds += [dtypes[i] for i in self.rng.choice(len(dtypes), size=int(self.rng.integers(3, 6)), p=weights)]
        for dtype in kinds:
            partitions, base = 128, 0
            if self.chance(0.2):
                partitions, base = self.choice([(64, 0), (64, 64), (32, 32), (32, 96), (96, 0)])
            row = int(self.choice([16, 24, 32, 48, 64, 96, 128, 160]))
            loc = self.b.sbuf(self.name("sb"), partitions, row, dtype, base_partition=base)
            self.pool.append(Tensor(loc, dtype, "SB", partitions, row, base))
        for dtype in [DType.float32, DType.float32, DType.float32, self.choice([DType.bfloat16, DType.float16])]:
            row = 512 if dtype == DType.float32 else 128  # one 2 KiB bank per partition at most
            row = int(self.choice([64, 128, 256, row]))
            loc = self.b.psum(self.name("ps"), 128, row, dtype)
            self.pool.append(Tensor(loc, dtype, "PSUM", 128, row))
        for _ in range(2):
            dtype = self.choice([DType.float32, DType.bfloat16, DType.int32])
            n = int(self.choice([256, 1024, 4096]))
            loc = self.b.dram(self.name("dram"), [n], dtype)
            self.scratch.append(Tensor(loc, dtype, "DRAM", 1, n))

    def new_input(self, shape: Sequence[int], dtype: DType, values=None) -> tuple[Tensor, np.ndarray]:
        """A DRAM input tensor of ``values`` (indices, offsets) or of data the generator chose:
        small multiples of a power of two (so that sums and products of them stay exact), or small
        integers."""
        s = STORAGE[dtype]
        if values is None:
            if s.is_int:
                top = min(s.max, self.choice([8, 100, 1000, 40000, 2**31 - 1]))  # beyond 2^24: fp32 rounds on read
                values = self.rng.integers(max(s.min, -top), top, size=shape, endpoint=True).astype(np.float64)
            else:
                k = self.rng.integers(-32, 33, size=shape)
                values = k * 2.0 ** int(self.choice([-5, -3, -1, 0, 2]))
                values = np.clip(values, -s.max, s.max)
                if self.chance(0.1):  # a few NaN and infinities: their positions must match too
                    special = self.rng.random(shape) < 0.03
                    values = np.where(special, self.rng.choice([np.nan, np.inf, -np.inf], size=shape), values)
        else:
            values = np.asarray(values, dtype=np.float64).reshape(shape)
        array = values.astype(sim.dtype_to_numpy(dtype))
        name = self.name("in")
        loc = self.b.input(name, list(shape), dtype)
        self.inputs[name] = array
        t = Tensor(loc, dtype, "DRAM", 1, int(np.prod(shape)))
        t.written[:] = True
        t.values = Bounds.of_values(array.astype(np.float32).reshape(-1))
        return t, array

    # ---- picking operands ----

    def fits_start(self, t: Tensor, start: int, lanes: int, compute: bool) -> bool:
        if start < 0 or start + lanes > t.partitions:
            return False
        return not compute or (t.base_partition + start) in allowed_starts(lanes)

    def free_pattern(self, elems: int, width: int, shape: Optional[Sequence[int]] = None, broadcast: bool = False):
        """(first column, free pairs) of ``elems`` elements inside ``width`` columns, or None.
        ``shape`` asks for those free dims (outermost first)."""
        rng = self.rng
        if shape is None:
            kind = self.choice(["dense"] * 6 + ["rows", "rows", "stride2", "reversed", "3d"]
                               + (["broadcast"] if broadcast else []))
            divisors = [d for d in range(2, elems) if elems % d == 0]
            if kind in ("rows", "broadcast", "3d") and not divisors:
                kind = "dense"
            if kind == "rows" or kind == "broadcast":
                a = int(self.choice(divisors))
                shape = [a, elems // a]
            elif kind == "3d":
                a = int(self.choice(divisors))
                rest = [d for d in range(1, elems // a + 1) if (elems // a) % d == 0]
                b = int(self.choice(rest))
                shape = [a, b, elems // a // b]
            elif kind == "stride2":
                if 2 * elems - 1 > width:
                    return None
                return int(rng.integers(0, width - 2 * elems + 2)), [[2, elems]]
            elif kind == "reversed":
                if elems > width:
                    return None
                first = int(rng.integers(elems - 1, width))
                return first, [[-1, elems]]
            else:
                shape = [elems]
            if kind == "broadcast":
                if shape[1] > width:
                    return None
                return int(rng.integers(0, width - shape[1] + 1)), [[0, shape[0]], [1, shape[1]]]
        # dense dims, innermost step 1, each outer step at least the span inside it (gaps allowed)
        steps, span = [1], shape[-1]
        for num in reversed(shape[:-1]):
            step = span + int(rng.integers(0, 3)) if self.chance(0.3) else span
            steps.insert(0, step)
            span = step * (num - 1) + span
        if span > width:
            steps, span = [], 1  # retry without gaps
            for num in reversed(shape):
                steps.insert(0, span)
                span *= num
            if span > width:
                return None
        return int(rng.integers(0, width - span + 1)), [[s, n] for s, n in zip(steps, shape)]

    def view_in(self, lanes: Optional[int], elems: Optional[int], need: str = "bounded", spaces=("SB", "PSUM"),
                dtypes=None, compute: bool = True, shape=None, broadcast: bool = True, floats_only=False,
                tries: int = 40) -> Optional[View]:
        """A written on-chip view whose values satisfy ``need``, or None. Chosen inside a recently
        written box most of the time, so that it is likely written."""
        for _ in range(tries):
            if self.boxes and self.chance(0.85):
                t, p0, np_, c0, nc = self.boxes[-1 - int(self.rng.integers(min(len(self.boxes), 16)))]
            else:
                t = self.choice(self.pool)
                p0, np_, c0, nc = 0, t.partitions, 0, t.row
            if not t.fits(spaces, dtypes, floats_only):
                continue
            n_lanes = lanes or self.pick_lanes(np_)
            starts = [s for s in range(p0, p0 + np_ - n_lanes + 1) if self.fits_start(t, s, n_lanes, compute)]
            if not starts:
                continue
            n_elems = elems or int(self.rng.integers(1, min(nc, 48) + 1))
            free = self.free_pattern(n_elems, nc, shape, broadcast)
            if free is None:
                continue
            col, pairs = free
            view = View(t, int(self.choice(starts)) * t.row + c0 + col, [[t.row, n_lanes]] + pairs)
            if t.written[view.index()].all() and t.read(view).satisfies(need):
                return view
        return None

    def view_out(self, lanes: int, elems: int, spaces=("SB", "PSUM"), dtypes=None, compute: bool = True,
                 shape=None, floats_only=False, tries: int = 30) -> Optional[View]:
        for _ in range(tries):
            t = self.choice(self.pool)
            if not t.fits(spaces, dtypes, floats_only):
                continue
            starts = [s for s in range(t.partitions - lanes + 1) if self.fits_start(t, s, lanes, compute)]
            if not starts:
                continue
            free = self.free_pattern(elems, t.row, shape)
            if free is None:
                continue
            col, pairs = free
            return View(t, int(self.choice(starts)) * t.row + col, [[t.row, lanes]] + pairs)
        return None

    def pick_lanes(self, available: int) -> int:
        lanes = int(self.choice([128, 128, 64, 32, 96, 16, 8, 1, int(self.rng.integers(1, 33))]))
        return min(lanes, available)

    def pointer(self, lanes: int, need: str, allow_immediate: bool = True):
        """A [P,1] per-partition scalar operand (view) or an immediate, with its bounds."""
        if allow_immediate and self.chance(0.2):
            ap, value = self.immediate(self.choice(CONSTANTS))
            return ap, Bounds.of_values(np.full((lanes, 1), value))
        view = self.view_in(lanes, 1, need)
        if view is None:
            raise Retry("no per-partition scalar")
        return view, view.tensor.read(view)

    def immediate(self, value: float, dtype: Optional[DType] = None) -> tuple[bir.AccessPattern, float]:
        """An immediate of ``value`` in ``dtype`` (default: a random one), and the value the engines
        read from it."""
        if dtype is None:
            dtypes, weights = zip(*IMMEDIATE_DTYPES)
            dtype = dtypes[int(self.rng.choice(len(dtypes), p=np.array(weights) / sum(weights)))]
        return bir.AccessPattern.immediate(float(value), dtype), stored_value(value, dtype)

    def require(self, view: Optional[View], what: str) -> View:
        if view is None:
            raise Retry(f"no {what}")
        return view

    def engine_for(self, candidates: Sequence[Engine], views: Sequence) -> Engine:
        """One of ``candidates`` that may touch every view (GpSimd cannot access PSUM)."""
        psum = any(isinstance(v, View) and v.tensor.space == "PSUM" for v in views)
        allowed = [e for e in candidates if not (e == Engine.Pool and psum)]
        if not allowed:
            raise Retry("no engine reaches these operands")
        return self.choice(allowed)

    def out_for(self, lanes: int, elems: int, v: Bounds, spaces=("SB", "PSUM"), compute=True, shape=None,
                dtypes=None) -> tuple[View, Bounds]:
        """An output view and the bounds of ``v`` stored into it (integer outputs only for values
        that cannot differ)."""
        out = self.view_out(lanes, elems, spaces, dtypes, compute, shape, floats_only=bool(v.tainted().any()))
        out = self.require(out, "output")
        return out, stored(v, out.tensor.dtype)

    # ---- the program ----

    def generate(self) -> Program:
        self.declare_tensors()
        sbuf = [t for t in self.pool if t.space == "SB"]
        for t in self.rng.permutation(len(sbuf))[: int(self.rng.integers(3, 6))]:
            self.load(sbuf[t], whole=True)
        families = self.families()
        names, weights = zip(*[(f, w) for f, w in families.items()])
        weights = np.array(weights, float) / sum(weights)
        target = int(self.rng.integers(20, 61))
        emitted, attempts = 0, 0
        while emitted < target and attempts < 20 * target:
            attempts += 1
            before = len(self.b.block.instructions)
            try:
                getattr(self, names[int(self.rng.choice(len(names), p=weights))])()
            except Retry:
                pass
            emitted += len(self.b.block.instructions) - before
        outputs, writers = self.store_outputs()
        return Program(self.seed, self.arch, self.b.module, self.inputs, outputs, writers, self.opcodes, self.cases)

    def families(self) -> dict[str, float]:
        f = {
            "load": 1.0, "dma_move": 2.0, "tensor_copy": 2.0, "tensor_copy_dynamic": 0.7, "memset": 1.0, "iota": 0.8,
            "tensor_scalar": 3.0, "tensor_scalar_ptr": 1.5, "tensor_tensor": 3.0, "tensor_tensor_scan": 1.0,
            "activation": 4.0, "read_accumulator": 0.7, "reciprocal": 0.6, "tensor_reduce": 1.5, "bn_stats": 0.8,
            "max8_family": 1.2, "select": 1.0, "select_reduce": 0.8, "copy_predicated": 0.8, "affine_select": 0.8,
            "stream_shuffle": 0.7, "stream_transpose": 0.7, "matmul": 3.0, "pe_transpose": 0.8, "dropout": 0.3,
            "no_effect": 0.3, "scalar_tensor_tensor": 1.5, "tensor_scalar_reduce": 1.5, "partition_reduce": 0.7,
            "local_gather": 0.6, "gather": 0.6, "sequence_bounds": 0.4, "random_bits": 0.8,
            "vector_register_chain": 1.0,
        }
        if self.arch == "trn2":
            f["range_select"] = 1.0
            f["nonzero_with_count"] = 0.5
        return f

    def load(self, t: Optional[Tensor] = None, whole: bool = False) -> None:
        """DMA a new DRAM input (cast on the way if its dtype differs) into an SBUF view (DMA
        does not reach PSUM: rule dma.psum)."""
        if t is None:
            t = self.choice([t for t in self.pool if t.space == "SB"])
        if whole:
            view = View(t, 0, [[t.row, t.partitions], [1, t.row]])
        else:
            lanes = int(self.rng.integers(1, t.partitions + 1))
            start = int(self.rng.integers(0, t.partitions - lanes + 1))
            free = self.free_pattern(int(self.rng.integers(1, t.row + 1)), t.row, None)
            if free is None:
                raise Retry("no room")
            view = View(t, start * t.row + free[0], [[t.row, lanes]] + free[1])
        src_dtype = t.dtype if self.chance(0.7) else self.choice([DType.float32, DType.bfloat16, DType.int32,
                                                                  DType.float16])
        src, _ = self.new_input([view.lanes, view.elems], src_dtype)
        v = src.values.map(lambda a: a.reshape(view.shape))
        if src_dtype != t.dtype:
            v = stored(v, t.dtype)
        i = self.emit(self.choice(["DMA", "Load", "DMACopy"]), [src.whole()], [view],
                      engine=(engine := self.engine_for(DMA_ENGINES, [view])), queue=int(self.rng.integers(16)),
                      dge_type=self.dge_type(engine, src_dtype != t.dtype))
        self.write(view, v, i)

    def dge_type(self, engine, cast: bool) -> DgeType:
        hardware = [DgeType.HWDGE] if self.arch == "trn2" else []  # v3 and later
        dge = self.choice([DgeType.__members__["None"], DgeType.SWDGE] + hardware)
        # only the ScalarE and Sync sequencers command a hardware DGE, which moves raw bytes (rule
        # dma.hwdge: no cast)
        return DgeType.SWDGE if dge == DgeType.HWDGE and (engine == Engine.Pool or cast) else dge

    # ---- data movement ----

    def dma_move(self) -> None:
        """On-chip or DRAM-scratch DMA: reshaping copy with cast, add read-modify-write, 2-D
        transpose, or an indirect row gather."""
        kind = self.choice(["copy", "copy", "copy", "add", "transpose", "gather", "gather", "scatter", "scatter",
                            "scratch"])
        if kind == "gather":
            return self.dma_gather()
        if kind == "scatter":
            return self.dma_scatter()
        if kind == "scratch":
            return self.dma_scratch_roundtrip()
        transpose = kind == "transpose"
        src = self.require(self.view_in(None, None, "bounded" if kind == "add" else "any", compute=False, spaces=DMA_SPACES,
                                        shape=None if not transpose else [int(self.rng.integers(1, 33))]), "source")
        v = src.tensor.read(src)
        origin = src.tensor.writer[src.index()]
        total = src.lanes * src.elems
        if transpose:  # [a, b] lands as [b, a]
            v, origin = v.map(lambda x: x.T), origin.T
        lanes = int(self.choice([d for d in range(1, min(total, 128) + 1) if total % d == 0]))
        if transpose and self.chance(0.7):
            lanes = v.shape[0]
        flat = v.map(lambda x: x.reshape(lanes, total // lanes))
        dst = None
        for _ in range(10):
            dst = self.view_out(lanes, total // lanes, spaces=DMA_SPACES, compute=False,
                                floats_only=bool(flat.tainted().any()))
            if dst is not None and (kind != "add" or (dst.tensor.written[dst.index()].all()
                                                      and dst.tensor.read(dst).satisfies("bounded"))):
                break
            dst = None
        dst = self.require(dst, "destination")
        if kind == "add":
            result = stored(alu_bounds(AluOp.add, dst.tensor.read(dst), flat), dst.tensor.dtype)
        else:
            result = flat if src.tensor.dtype == dst.tensor.dtype else stored(flat, dst.tensor.dtype)
        fields = dict(mode=DmaMode.Transpose if transpose else DmaMode.Copy,
                      dst_rmw_op=AluOp.add if kind == "add" else AluOp.bypass)
        i = self.emit(self.choice(["DMA", "DMACopy", "Save", "Load"]), [src], [dst],
                      engine=(engine := self.engine_for(DMA_ENGINES, [src, dst])),
                      queue=int(self.rng.integers(16)), dge_type=self.dge_type(engine, src.tensor.dtype != dst.tensor.dtype),
                      **fields)
        self.write(dst, result, i)
        if kind != "add":  # a copy: its elements still come from the instruction that computed them
            dst.tensor.writer[dst.index()] = origin.reshape(dst.shape)

    def dma_scratch_roundtrip(self) -> None:
        """On-chip -> internal DRAM tensor -> on-chip (DRAM is element-addressed, no partitions)."""
        src = self.require(self.view_in(None, None, "any", compute=False, spaces=DMA_SPACES), "source")
        scratch = self.choice(self.scratch)
        total = src.lanes * src.elems
        if total > scratch.row:
            raise Retry("scratch too small")
        v = src.tensor.read(src).map(lambda x: x.reshape(1, total))
        if src.tensor.dtype != scratch.dtype:
            v = stored(v, scratch.dtype)
        offset = int(self.rng.integers(0, scratch.row - total + 1))
        there = View(scratch, offset, [[total, 1], [1, total]])
        i = self.emit("DMA", [src], [there], queue=int(self.rng.integers(16)))
        self.write(there, v, i)
        back = self.require(self.view_out(src.lanes, src.elems, spaces=DMA_SPACES, compute=False,
                                          floats_only=bool(v.tainted().any())), "destination")
        w = v.map(lambda x: x.reshape(back.shape))
        if scratch.dtype != back.tensor.dtype:
            w = stored(w, back.tensor.dtype)
        there_rows = View(scratch, offset, [[src.elems, src.lanes], [1, src.elems]])
        i = self.emit("DMA", [there_rows], [back], queue=int(self.rng.integers(16)))
        self.write(back, w, i)

    def dma_gather(self) -> None:
        """Indirect DMA: destination row r <- source row index[r]; out-of-range rows are skipped
        (oob_is_err false) or there are none (oob_is_err true). The source and the index may share
        elements with the destination: every index and source row is read before a row is written."""
        per_row = int(self.rng.integers(1, 33))
        if self.chance(0.5):  # an embedding table in DRAM
            rows_in = int(self.rng.integers(2, 40))
            table, _ = self.new_input([rows_in, per_row], self.choice([DType.float32, DType.bfloat16, DType.int32]))
            src = table.whole()
        else:
            src = self.require(self.view_in(None, per_row, "any", compute=False, spaces=DMA_SPACES), "source")
            rows_in = src.lanes
        rows = int(self.rng.integers(1, 65))
        strict = self.chance(0.4)
        index = self.rng.integers(0, rows_in, size=rows)
        if not strict:
            index = np.where(self.rng.random(rows) < 0.2, self.choice([-1, rows_in, rows_in + 5]), index)
        tainted = bool(src.tensor.read(src).map(lambda a: a[np.clip(index, 0, rows_in - 1)]).tainted().any())
        dst = None
        if isinstance(src, View) and self.chance(0.5):  # in place: rows of the source's own tensor
            dst = self.rows_over(src, rows)
        # an integer destination now and then, which may hold the indices too (gather_index)
        dtypes = INTEGER_DTYPES if not tainted and self.chance(0.3) else None
        for _ in range(10):
            if dst is not None:
                break
            dst = self.view_out(rows, per_row, spaces=DMA_SPACES, compute=False, dtypes=dtypes, floats_only=tainted)
        dst = self.require(dst, "destination")
        index_ap, index, mode = self.row_index(index, dst, rows_in, strict)
        src_values = src.tensor.read(src)  # after the index, which may have landed in the source
        inside = (index >= 0) & (index < rows_in)
        gathered = src_values.map(lambda a: a[np.where(inside, index, 0)])
        src_dtype = src.tensor.dtype
        result = gathered if src_dtype == dst.tensor.dtype else stored(gathered, dst.tensor.dtype)
        i = self.emit("DMA", [src, index_ap], [dst], queue=int(self.rng.integers(16)), oob_is_err=strict,
                      indirect_dim=int(self.choice([-1, 0])), mode=mode)
        if overlaps(src, dst):
            self.cases.add("indirect DMA, source in place")
        if overlaps(index_ap, dst):
            self.cases.add("indirect DMA, index in place")
        self.write(dst, result, i, where=inside[:, None])

    def dma_scatter(self) -> None:
        """IndirectSave: source row r lands in destination row index[r], in row order (a repeated
        index: the last row stays, or with add they all add); out-of-range rows are skipped
        (oob_is_err false) or there are none."""
        add = self.chance(0.4)
        src = self.require(self.view_in(None, int(self.rng.integers(1, 33)), "bounded" if add else "any",
                                        compute=False, spaces=DMA_SPACES), "source rows")
        rows, per_row = src.shape
        table_rows = int(self.rng.integers(1, 97))
        strict = self.chance(0.4)
        index = self.rng.integers(0, table_rows, size=rows)
        if not strict:
            index = np.where(self.rng.random(rows) < 0.2, self.choice([-1, table_rows, table_rows + 3]), index)
        v = src.tensor.read(src)
        dst = None
        for _ in range(10):
            dst = self.view_out(table_rows, per_row, spaces=DMA_SPACES, compute=False,
                                floats_only=bool(v.tainted().any()) or add)
            if dst is not None and (not add or dst.tensor.written[dst.index()].all()):
                break
            dst = None
        dst = self.require(dst, "destination table")
        index_ap, index, mode = self.row_index(index, src, table_rows, strict)
        inside = (index >= 0) & (index < table_rows)
        values = dst.tensor.read(dst) if add else None
        if add and not values.satisfies("bounded"):
            raise Retry("a table whose values may differ without bound")
        written = np.zeros(table_rows, bool)
        rows_now = [None] * table_rows
        source = src.tensor.read(src)  # after the index, which may have landed in the source
        for r in np.flatnonzero(inside):
            t = int(index[r])
            row = source.map(lambda a: a[r:r + 1])
            if add:
                before = rows_now[t] if rows_now[t] is not None else values.map(lambda a: a[t:t + 1])
                row = stored(alu_bounds(AluOp.add, before, row), dst.tensor.dtype)
            elif src.tensor.dtype != dst.tensor.dtype:
                row = stored(row, dst.tensor.dtype)
            rows_now[t] = row
            written[t] = True
        if not written.any():
            raise Retry("no row lands")
        i = self.emit("IndirectSave", [src, index_ap], [dst], queue=int(self.rng.integers(16)), oob_is_err=strict,
                      indirect_dim=int(self.choice([-1, 0])), dst_rmw_op=AluOp.add if add else AluOp.bypass, mode=mode)
        filler = Bounds.exact(np.zeros((1, per_row)), np.zeros((1, per_row)))
        result = stack_bounds([rows_now[t] if written[t] else filler for t in range(table_rows)], axis=0)
        self.write(dst, result.map(lambda a: a.reshape(table_rows, per_row)), i, where=written[:, None])

    def row_index(self, index: np.ndarray, direct: View, table_rows: int, strict: bool):
        """(index operand, the indices it stands for, DMA mode): ``gather_index``'s, or now and
        then (mode Dynamic) one run-time row offset v standing for v + r (all inside the table
        when ``strict``)."""
        rows = len(index)
        if (strict and rows > table_rows) or not self.chance(0.25):
            return (*self.gather_index(index, direct), DmaMode.Copy)
        v = int(self.rng.integers(0, table_rows - rows + 1) if strict else
                self.rng.integers(-2, max(1, table_rows - rows + 3)))
        offset, _ = self.new_input([1, 1], self.choice([DType.int32, DType.int16]), values=[v])
        self.cases.add("DMA at a run-time offset")
        return offset.whole(), v + np.arange(rows), DmaMode.Dynamic

    def rows_over(self, src: View, rows: int) -> Optional[View]:
        """``rows`` rows of ``src``'s tensor sharing partitions with ``src``, in its columns moved by
        at most 2 (an in-place destination: the two share elements), or None."""
        t = src.tensor
        first = src.offset // t.row
        lo, hi = max(0, first - rows + 1), min(t.partitions - rows, first + src.lanes - 1)
        if lo > hi:
            return None
        p = int(self.rng.integers(lo, hi + 1))
        view = View(t, p * t.row + src.offset % t.row, [[t.row, rows]] + src.pattern[1:])
        return along_row(view, int(self.rng.integers(-2, 3)))

    def gather_index(self, index: np.ndarray, dst: View) -> tuple[View, np.ndarray]:
        """The index operand of a gather into ``dst`` and the indices it holds: a DRAM input, or
        (into an integer destination) that input DMAed first into ``dst`` itself, as ``[a, b]``
        from its first row (index r in row r // b): with b > 1 the gather overwrites indices it
        has still to read if it reads them late."""
        rows = len(index)
        t = dst.tensor
        shapes = [(a, rows // a) for a in range(1, dst.lanes + 1) if rows % a == 0 and rows // a <= t.row]
        in_place = not t.is_float and bool(shapes) and self.chance(0.7)
        dtype = t.dtype if in_place else self.choice([DType.int32, DType.int32, DType.int16, DType.uint16])
        if STORAGE[dtype].min == 0:
            index = np.maximum(index, 0)
        idx, stored_index = self.new_input([rows, 1], dtype, values=index)
        index = stored_index.reshape(-1).astype(np.int64)  # as stored: an int8 wraps indices beyond 127
        if not in_place:
            return idx.whole(), index
        a, b = self.choice(shapes)
        column = int(self.choice(dst.index()[0])) % t.row  # a column of dst's, inside the block
        first = min(max(column - int(self.rng.integers(b)), 0), t.row - b)
        block = View(t, dst.offset // t.row * t.row + first, [[t.row, a], [1, b]])
        i = self.emit("DMA", [idx.whole()], [block], queue=int(self.rng.integers(16)))
        self.write(block, idx.values.map(lambda v: v.reshape(a, b)), i)
        return block, index

    def tensor_copy(self) -> None:
        src = self.require(self.view_in(None, None, "any"), "source")
        v = src.tensor.read(src)
        if self.chance(0.1):
            src_ap, value = self.immediate(self.choice(CONSTANTS))
            v = Bounds.of_values(np.full(src.shape, value))
        else:
            src_ap = src
        out = self.require(self.view_out(src.lanes, src.elems, floats_only=bool(v.tainted().any())), "destination")
        same = isinstance(src_ap, View) and src.tensor.dtype == out.tensor.dtype
        result = v if same else stored(v, out.tensor.dtype)  # same dtype: a byte copy
        i = self.emit("TensorCopy", [src_ap], [out], engine=self.engine_for(COPY_ENGINES, [src_ap, out]))
        self.write(out, result, i)

    def tensor_copy_dynamic(self) -> None:
        """TensorCopyDynamicSrc/Dst: the source (destination) pattern moves by int32(offset) *
        dynamic_step elements at run time; here along the row, so the verifier's rules still hold.
        Often in place: where the moved pattern lands on the fixed one, the source is read first."""
        moves_source = self.chance(0.5)
        step = int(self.choice([1, 2, 3, 8]))
        if self.chance(0.4):  # int32(x) truncates: a fraction does not move the pattern further
            value = int(self.rng.integers(0, 6)) + float(self.choice([0.0, 0.0, 0.5, 0.875]))
            offset_ap, read = self.immediate(value)  # stored as its dtype first (§1): may round up
            d = int(np.trunc(read))
        else:
            offset_ap, d = self.offset_operand()
        for _ in range(20):
            src = self.view_in(None, None, "any")
            if src is None:
                continue
            v = src.tensor.read(src)
            if self.chance(0.5):
                dst = self.near(src)
            else:
                dst = self.view_out(src.lanes, src.elems, floats_only=bool(v.tainted().any()))
            if dst is None:
                continue
            moved = src if moves_source else dst
            static = along_row(moved, -d * step)  # the pattern the instruction names
            if static is None:
                continue
            result = v if src.tensor.dtype == dst.tensor.dtype else stored(v, dst.tensor.dtype)
            ins, outs = ([static, offset_ap], [dst]) if moves_source else ([src, offset_ap], [static])
            i = self.emit("TensorCopyDynamicSrc" if moves_source else "TensorCopyDynamicDst", ins, outs,
                          engine=self.engine_for(COPY_ENGINES, [src, dst]), dynamic_step=step)
            if overlaps(src, dst):
                self.cases.add("dynamic copy in place")
            self.write(dst, result, i)
            return
        raise Retry("no room to move the pattern")

    def near(self, view: View) -> Optional[View]:
        """Another pattern of ``view``'s size in ``view``'s partitions of its tensor, likely sharing
        elements with it: ``view`` moved along its rows by at most 3, or any pattern in those rows."""
        if self.chance(0.5):
            return along_row(view, int(self.rng.integers(-3, 4)))
        t = view.tensor
        free = self.free_pattern(view.elems, t.row, None)
        if free is None:
            return None
        col, pairs = free
        return View(t, view.offset // t.row * t.row + col, [view.pattern[0]] + pairs)

    def offset_operand(self) -> tuple[View, int]:
        """A one-element SBUF operand holding a known offset (loaded once from an input)."""
        if self.offsets is None:
            dtype = self.choice([DType.int32, DType.float32, DType.uint16])
            values = [int(v) for v in self.rng.integers(0, 6, size=8)]
            src, _ = self.new_input([1, 8], dtype, values=values)
            loc = self.b.sbuf(self.name("offsets"), 1, 8, dtype)
            t = Tensor(loc, dtype, "SB", 1, 8)
            view = View(t, 0, [[8, 1], [1, 8]])
            i = self.emit("DMA", [src.whole()], [view])
            t.write(view, src.values.map(lambda a: a.reshape(1, 8)), i)
            self.offsets = (t, values)
        t, values = self.offsets
        col = int(self.rng.integers(8))
        return View(t, col, [[8, 1], [1, 1]]), values[col]

    def memset(self) -> None:
        lanes = self.pick_lanes(128)
        elems = int(self.rng.integers(1, 49))
        value = self.choice(CONSTANTS + [float(self.rng.integers(-300, 300)) / 8])
        out, v = self.out_for(lanes, elems, Bounds.of_values(np.full((lanes, elems), value)))
        i = self.emit("Memset", [], [out], engine=self.engine_for([Engine.DVE, Engine.Pool], [out]), constant=value)
        self.write(out, v, i)

    def iota(self) -> None:
        """out[p, idx] = base + channel_multiplier * p + sum_k idx_k * step_k, exact integers."""
        lanes = self.pick_lanes(128)
        elems = int(self.rng.integers(1, 49))
        nums = [elems]
        if elems > 3 and self.chance(0.5):
            d = int(self.choice([d for d in range(1, elems + 1) if elems % d == 0]))
            nums = [d, elems // d]
        steps = [int(self.rng.integers(-4, 9)) for _ in nums]
        base, cm = int(self.rng.integers(-60, 61)), int(self.rng.integers(-4, 5))
        pattern = [bir.APPair(s, n) for s, n in zip(steps, nums)]
        value = np.full([lanes] + nums, base, np.int64) + cm * np.arange(lanes).reshape([lanes] + [1] * len(nums))
        for axis, (s, n) in enumerate(zip(steps, nums)):
            shape = [1] * (len(nums) + 1)
            shape[axis + 1] = n
            value = value + s * np.arange(n).reshape(shape)
        out, v = self.out_for(lanes, elems, Bounds.of_values(value.reshape(lanes, elems)), spaces=("SB",))
        i = self.emit("Iota", [], [out], engine=Engine.Pool, base=base, channel_multiplier=cm, pattern=pattern)
        self.write(out, v, i)

    # ---- elementwise arithmetic ----

    def alu_op(self, allow_bitwise: bool = True) -> AluOp:
        ops = ([AluOp.add, AluOp.subtract, AluOp.mult, AluOp.max, AluOp.min] * 3
               + [AluOp.divide, AluOp.pow, AluOp.mod, AluOp.average, AluOp.abs, AluOp.rsqrt, AluOp.bypass]
               + sorted(COMPARISONS | LOGICAL, key=lambda o: o.name)
               + (sorted(BITWISE, key=lambda o: o.name) if allow_bitwise else []))
        return self.choice(ops)

    def scalar_for(self, op: AluOp) -> float:
        if op in BITWISE:
            return float(self.choice([0, 1, 2, 3, 5, 7, 12, 31, 255, -1, 33, -2]))
        if op == AluOp.pow:
            return float(self.choice([2.0, 3.0, 0.5, -0.5, -1.0, 1.5, 0.0]))
        if op == AluOp.divide:
            return float(self.choice([1.0, 2.0, 0.5, 3.0, -2.0, 0.75, 4.0, -0.25, 0.0]))
        if op == AluOp.mod:  # the contract fixes every case: inexact quotients, ±0 (NaN) and ±inf too
            return float(self.choice([1.0, 2.0, 0.5, 3.0, -2.0, 0.75, 4.0, -0.25, 0.1, -0.1, 7.0, 1e-3, 100.0, 0.0,
                                      -0.0, math.inf, -math.inf]))
        return float(self.choice(CONSTANTS + [float(self.rng.integers(-64, 65)) / 8]))

    def scalar_ops(self):
        """op0 and op1 of a tensor_scalar: both bit-vector or both arithmetic (the rule
        alu.tensor-scalar-op-kinds; op1 bypass: none)."""
        op0 = self.alu_op()
        if self.chance(0.4):
            op1 = AluOp.bypass
        elif op0 in BITWISE:
            op1 = self.choice(sorted(BITWISE - UNARY, key=lambda o: o.name))
        else:
            op1 = self.alu_op(allow_bitwise=False)
        return op0, self.chance(0.25), op1, self.chance(0.25)

    @staticmethod
    def tile_dtypes(*ops: AluOp):
        """The dtypes an instruction applying ``ops`` may read and write: integers for a
        bit-vector operator (the rule alu.bitvec-dtype), any otherwise."""
        return INTEGER_DTYPES if BITWISE.intersection(ops) else None

    @staticmethod
    def scalar_needs(op0: AluOp, rev0: bool, op1: AluOp, rev1: bool) -> tuple[str, str, str]:
        """How the data, scalar0 and scalar1 of ``op1(op0(data, s0), s1)`` (operands swapped by
        reverseN) must be known; op1's data is op0's result, which ``apply_scalar`` checks."""
        data = operand_need(op0, int(rev0))
        if op1 != AluOp.bypass:
            data = stricter(data, "exact" if alu_need(op1) == "exact" else "bounded")
        return data, operand_need(op0, 1 - int(rev0)), operand_need(op1, 1 - int(rev1))

    def scalar_engines(self, op0: AluOp, op1: AluOp) -> list[Engine]:
        """The engines whose tensor_scalar takes op0 and op1 (the alu.* rules), the DVE twice."""
        return [e for e in (Engine.DVE, Engine.DVE, Engine.Pool, Engine.Activation)
                if legality.alu_ops(InstructionType.TensorScalar, e, op0, op1) is None]

    def tensor_scalar(self) -> None:
        op0, rev0, op1, rev1 = self.scalar_ops()
        c0, c1 = self.scalar_for(op0), self.scalar_for(op1)
        need, _, _ = self.scalar_needs(op0, rev0, op1, rev1)
        tiles = self.tile_dtypes(op0, op1)
        src = self.require(self.view_in(None, None, need, dtypes=tiles), "source")
        x = src.tensor.read(src)
        v = self.apply_scalar(op0, rev0, x, Bounds.of_values(np.full(x.shape, c0)))
        if op1 != AluOp.bypass:
            v = self.apply_scalar(op1, rev1, v, Bounds.of_values(np.full(x.shape, c1)))
        out, result = self.out_for(src.lanes, src.elems, v, dtypes=tiles)
        engine = self.engine_for(self.scalar_engines(op0, op1), [src, out])
        i = self.emit("TensorScalar", [src], [out], engine=engine, op0=op0, const0=c0, reverse0=rev0, op1=op1,
                      const1=c1, reverse1=rev1)
        self.write(out, result, i)

    @staticmethod
    def apply_scalar(op: AluOp, reverse: bool, x: Bounds, s: Bounds) -> Bounds:
        return apply_alu(op, s, x) if reverse else apply_alu(op, x, s)

    def tensor_scalar_ptr(self) -> None:
        op0, rev0, op1, rev1 = self.scalar_ops()
        need, need0, need1 = self.scalar_needs(op0, rev0, op1, rev1)
        tiles = self.tile_dtypes(op0, op1)
        src = self.require(self.view_in(None, None, need, dtypes=tiles), "source")
        lanes = src.lanes
        s0, b0 = self.pointer(lanes, need0)
        ins = [src, s0]
        c1 = self.scalar_for(op1)
        if op1 != AluOp.bypass and self.chance(0.6):
            s1, b1 = self.pointer(lanes, need1)
            ins.append(s1)
        else:
            b1 = Bounds.of_values(np.full((lanes, 1), c1))
        x = src.tensor.read(src)
        v = self.apply_scalar(op0, rev0, x, broadcast(b0, x)[0])
        if op1 != AluOp.bypass:
            v = self.apply_scalar(op1, rev1, v, broadcast(b1, x)[0])
        out, result = self.out_for(lanes, src.elems, v, dtypes=tiles)
        engine = self.engine_for(self.scalar_engines(op0, op1), ins + [out])
        i = self.emit("TensorScalarPtr", ins, [out], engine=engine, op0=op0, reverse0=rev0, op1=op1, reverse1=rev1,
                      const1=c1)
        self.write(out, result, i)

    def tensor_tensor(self) -> None:
        op = self.alu_op()
        tiles = self.tile_dtypes(op)
        a = self.require(self.view_in(None, None, operand_need(op, 0), dtypes=tiles), "input")
        if self.chance(0.12):
            b_ap, value = self.immediate(self.scalar_for(op))
            bb = Bounds.of_values(np.full(a.shape, value))
        else:
            b_ap = self.require(self.view_in(a.lanes, a.elems, operand_need(op, 1), dtypes=tiles,
                                             spaces=("SB",) if a.tensor.space == "PSUM" else ("SB", "PSUM")), "input")
            bb = b_ap.tensor.read(b_ap)
        v = apply_alu(op, a.tensor.read(a), bb)
        out, result = self.out_for(a.lanes, a.elems, v, dtypes=tiles)
        engines = [Engine.DVE] if op in BITWISE else [Engine.DVE, Engine.DVE, Engine.Pool]
        i = self.emit("TensorTensor", [a, b_ap], [out], engine=self.engine_for(engines, [a, b_ap, out]), op=op)
        self.write(out, result, i)

    def tensor_tensor_scan(self) -> None:
        """r = op1(op0(data0[i], r), data1[i]) along each lane, from ``initial`` or a [P,1] input."""
        ops = [AluOp.add, AluOp.subtract, AluOp.mult, AluOp.max, AluOp.min, AluOp.average, AluOp.is_ge, AluOp.bypass]
        op0, op1 = self.choice(ops), self.choice(ops)
        need = max(alu_need(op0), alu_need(op1), key=["bounded", "exact"].index)
        if AluOp.mult in (op0, op1):
            need = "exact"  # a product of terms that may differ has no useful bound along a long lane
        d0 = self.require(self.view_in(None, int(self.rng.integers(1, 33)), need), "data0")
        d1 = self.require(self.view_in(d0.lanes, d0.elems, need,
                                       spaces=("SB",) if d0.tensor.space == "PSUM" else ("SB", "PSUM")), "data1")
        ins = [d0, d1]
        initial = self.scalar_for(AluOp.add)
        if self.chance(0.4):
            ptr, r = self.pointer(d0.lanes, need, allow_immediate=False)
            ins.append(ptr)
            r = r.map(lambda a: a[:, 0])
        else:
            r = Bounds.of_values(np.full(d0.lanes, initial))
        x0, x1 = d0.tensor.read(d0), d1.tensor.read(d1)
        columns = []
        for k in range(d0.elems):
            r = alu_bounds(op1, alu_bounds(op0, x0.map(lambda a: a[:, k]), r), x1.map(lambda a: a[:, k]))
            columns.append(r)
        v = stack_bounds(columns, axis=1)
        out, result = self.out_for(d0.lanes, d0.elems, v)
        i = self.emit("TensorTensorScan", ins, [out], engine=Engine.DVE, op0=op0, op1=op1, initial=initial)
        self.write(out, result, i)

    def scalar_tensor_tensor(self) -> None:
        """out = op1(op0(data, scalar0), data1): a [P,1] scalar (or immediate) and two tiles."""
        op0, rev0 = self.alu_op(allow_bitwise=False), self.chance(0.25)
        op1, rev1 = self.alu_op(allow_bitwise=False), self.chance(0.25)
        t_position = int(rev1)  # op0's result is op1's lhs unless reversed
        need = stricter(operand_need(op0, int(rev0)), "exact" if alu_need(op1) == "exact" else "bounded")
        if POLE_OPERAND.get(op1) == t_position:
            need = "exact"
        src = self.require(self.view_in(None, None, need), "data")
        lanes = src.lanes
        ins = [src]
        data1 = self.require(self.view_in(lanes, src.elems, operand_need(op1, 1 - t_position),
                                          spaces=("SB",) if src.tensor.space == "PSUM" else ("SB", "PSUM")), "data1")
        ins.append(data1)
        c0 = self.scalar_for(op0)
        if self.chance(0.6):  # the scalar from a [P,1] input (or an immediate), else const0
            s0, b0 = self.pointer(lanes, operand_need(op0, 1 - int(rev0)))
            ins.append(s0)
        else:
            b0 = Bounds.of_values(np.full((lanes, 1), c0))
        x = src.tensor.read(src)
        t = self.apply_scalar(op0, rev0, x, broadcast(b0, x)[0])
        d1 = data1.tensor.read(data1)
        v = apply_alu(op1, d1, t) if rev1 else apply_alu(op1, t, d1)
        out, result = self.out_for(lanes, src.elems, v)
        i = self.emit("ScalarTensorTensor", ins, [out], engine=Engine.DVE, op0=op0, const0=c0, reverse0=rev0, op1=op1,
                      reverse1=rev1)
        self.write(out, result, i)

    def tensor_scalar_reduce(self) -> None:
        """y = op0(data, scalar0); reg = reduce_op(y[i], reg) along each lane from the identity, the
        Vector Engine's register or a [P,1] input; out = y or the running reg (cumulative); the
        register keeps reg and the optional second output gets it (negated or not)."""
        cumulative = self.chance(0.4)
        reduce_op = self.choice([AluOp.add, AluOp.mult, AluOp.max, AluOp.min] + ([AluOp.subtract] if cumulative else []))
        op0, rev0 = self.alu_op(allow_bitwise=False), self.chance(0.25)
        need = stricter(operand_need(op0, int(rev0)), "bounded")
        if reduce_op == AluOp.mult:
            need = "exact"  # a product of terms that may differ has no useful bound along a long lane
        wide_ints = {DType.int32, DType.uint32, DType.int64, DType.uint64}
        src = self.require(self.view_in(None, int(self.rng.integers(1, 33)), need,
                                        dtypes=None if not cumulative else set(STORAGE) - wide_ints), "data")
        lanes = src.lanes
        ins = [src]
        c0 = self.scalar_for(op0)
        has_scalar = self.chance(0.6)
        if has_scalar:
            s0, b0 = self.pointer(lanes, operand_need(op0, 1 - int(rev0)))
            ins.append(s0)
        else:
            b0 = Bounds.of_values(np.full((lanes, 1), c0))
        x = src.tensor.read(src)
        y = self.apply_scalar(op0, rev0, x, broadcast(b0, x)[0])
        out = self.require(self.view_out(lanes, src.elems, floats_only=bool(y.tainted().any()) or cumulative,
                                         dtypes=None if not cumulative else set(STORAGE) - wide_ints), "output")
        registers = np.arange(lanes) + out.first_partition
        acc = self.choice([AccumCmd.ZeroAccumulate, AccumCmd.ZeroAccumulate, AccumCmd.LoadAccumulate]
                          + ([AccumCmd.Accumulate] * 2 if self.vector_registers_set[registers].all() else []))
        first, initial, has_initial = 0, 0.0, False
        if acc == AccumCmd.ZeroAccumulate and reduce_op in (AluOp.max, AluOp.min):
            reg, first = y.map(lambda a: a[:, 0]), 1  # max(-inf, y0) is y0 (NaN too)
        elif acc == AccumCmd.ZeroAccumulate:
            reg = Bounds.of_values(np.full(lanes, 0.0 if reduce_op != AluOp.mult else 1.0))
        elif acc == AccumCmd.LoadAccumulate and self.chance(0.3):
            initial = self.scalar_for(AluOp.add)
            reg = Bounds.of_values(np.full(lanes, initial))
        elif acc == AccumCmd.LoadAccumulate:
            init, reg = self.pointer(lanes, "bounded" if reduce_op != AluOp.mult else "exact")
            ins.append(init)
            has_initial = True
            reg = reg.map(lambda a: a[:, 0])
        else:
            reg = self.vector_registers.map(lambda a: a[registers])
            if reduce_op == AluOp.mult and not reg.satisfies("exact"):
                raise Retry("a product from a register that may differ")
        columns = [reg] if first else []
        for k in range(first, src.elems):
            reg = alu_bounds(reduce_op, y.map(lambda a: a[:, k]), reg)
            columns.append(reg)
        if not reg.satisfies("bounded"):
            raise Retry("a reduction without a useful bound")
        values = stack_bounds(columns, axis=1) if cumulative else y
        result = stored(values, out.tensor.dtype)
        outs = [out]
        negate = self.chance(0.3)
        if not cumulative and self.chance(0.6):
            final = reg.map(lambda a: a[:, None])
            if negate:
                final = alu_bounds(AluOp.mult, final, Bounds.of_values(np.full(final.shape, -1.0)))
            second, r2 = self.second_output(out, final)
            outs.append(second)
        i = self.emit("TensorScalarReduce", ins, outs, engine=Engine.DVE, op0=op0, const0=c0, reverse0=rev0,
                      reduce_op=reduce_op, acc=acc, initial=initial, negate=negate, cumulative=cumulative,
                      has_scalar_tensor=has_scalar, has_initial_tensor=has_initial)
        self.write(out, result, i)
        if len(outs) == 2:  # after outs[0]: where they share elements, outs[1]'s values remain
            self.write(second, r2, i)
        if acc == AccumCmd.Accumulate and self.vector_registers_selected[registers].any():
            self.cases.add("a reduce continuing a select's maximum")
        self.set_vector_registers(registers, reg)

    def vector_register_chain(self) -> None:
        """A select's reduction, then a TensorScalarReduce that may continue from the registers it
        set (they are shared: docs/isa-semantics.md §5), with no Vector Engine instruction between."""
        (self.range_select if self.arch == "trn2" and self.chance(0.5) else self.select_reduce)()
        self.tensor_scalar_reduce()

    def set_vector_registers(self, registers: np.ndarray, reg: Bounds, selected: bool = False) -> None:
        for f in dataclasses.fields(Bounds):
            getattr(self.vector_registers, f.name)[registers] = getattr(reg, f.name)
        self.vector_registers_set[registers] = True
        self.vector_registers_selected[registers] = selected

    def reciprocal(self) -> None:
        src = self.require(self.view_in(None, None, "divisor"), "source")
        v = apply_alu(AluOp.divide, Bounds.of_values(np.ones(src.shape)), src.tensor.read(src))
        out, result = self.out_for(src.lanes, src.elems, v)
        i = self.emit("Reciprocal", [src], [out], engine=Engine.DVE)
        self.write(out, result, i)

    # ---- the activation engine ----

    def activation(self) -> None:
        """y = func(in * scale + bias), with the accumulator registers."""
        func = self.choice(sorted(ACTIVATIONS, key=lambda f: f.name))
        model = ACTIVATIONS[func]
        src = self.require(self.view_in(None, None, "divisor" if model.pole else "exact"), "source")
        lanes = src.lanes
        x = src.tensor.read(src)
        ins = [src]
        has_bias = self.chance(0.4)
        has_scale = self.chance(0.25)
        bias = Bounds.exact(ZERO_GRID, 0.0, shape=x.shape)
        if has_bias:
            ptr, b = self.pointer(lanes, "exact")
            ins.append(ptr)
            bias = broadcast(b, x)[0]
        scale_value = 1.0
        if has_scale:
            ptr, s = self.pointer(lanes, "exact")
            ins.append(ptr)
            scale = broadcast(s, x)[0]
        else:
            # keep the argument of the approximated functions where their accuracy was measured
            room = ACT_ARG_LIMIT - float(bias.mag.max(initial=0.0))
            top = float(x.mag.max(initial=0.0))
            scale_value = float(self.choice([1.0, 0.5, 2.0, -1.0, 0.25, 1.5]))
            if not model.exact and top * abs(scale_value) > room:
                if room <= 0 or not math.isfinite(top):
                    raise Retry("the bias alone leaves the measured range")
                scale_value = 2.0 ** math.floor(math.log2(room / top))
            scale = Bounds.of_values(np.full(x.shape, scale_value))
        arg = alu_bounds(AluOp.add, alu_bounds(AluOp.mult, x, scale), bias)
        if model.pole and arg.zsign.any():
            raise Retry("a zero whose sign may differ at a pole")
        arg_mag = float(arg.mag.max(initial=0.0))
        if not model.exact and not arg_mag <= ACT_ARG_LIMIT:
            raise Retry("argument beyond the measured range")
        alpha = float(self.choice([0.0, 0.01, 0.2, -0.5, 1.5]))
        y = self.activation_bounds(func, model, arg, alpha)
        out, result = self.out_for(lanes, src.elems, y, dtypes=FP32_CLASS if self.chance(0.6) else None)
        registers = np.arange(lanes) + out.first_partition
        accumulate = [AccumCmd.Accumulate] if self.activation_registers_set[registers].all() else []
        acc = self.choice([AccumCmd.Idle] * 4 + ([AccumCmd.Zero, AccumCmd.ZeroAccumulate] + accumulate) * 2)
        acc_op = AluOp.add if self.arch == "trn1" else self.choice(FOLD_OPS)
        if acc in (AccumCmd.Accumulate, AccumCmd.ZeroAccumulate):
            folded = fold_bounds(acc_op, y)
            if acc == AccumCmd.Accumulate:
                folded = alu_bounds(acc_op, self.accumulators.map(lambda a: a[registers]), folded)
            new_registers = folded
        elif acc == AccumCmd.Zero:
            new_registers = Bounds.exact(np.full(lanes, ZERO_GRID), np.zeros(lanes))
        i = self.emit("Activation", ins, [out], engine=Engine.Activation, func=func, scale=scale_value, alpha=alpha,
                      acc=acc, acc_op=acc_op, has_bias=has_bias, has_scale_tensor=has_scale)
        self.write(out, result, i)
        if acc != AccumCmd.Idle:
            for f in dataclasses.fields(Bounds):
                getattr(self.accumulators, f.name)[registers] = getattr(new_registers, f.name)
            self.activation_registers_set[registers] = True

    @staticmethod
    def activation_bounds(func: ActivationFunc, model: ActivationModel, arg: Bounds, alpha: float) -> Bounds:
        if func in (ActivationFunc.Lrelu, ActivationFunc.Prelu):
            a = Bounds.of_values(np.full(arg.shape, alpha))
            q = np.minimum(arg.q, np.maximum(arg.q + a.q, NO_GRID))
            return Bounds.exact(q, arg.mag * max(1.0, abs(alpha)), True)
        zsign = np.full(arg.shape, model.zero_sign)
        if model.exact:
            q, mag = model.grid(arg.q, arg.mag)
            return Bounds.exact(np.broadcast_to(q, arg.shape), np.broadcast_to(mag, arg.shape), zsign)
        m = float(arg.mag.max(initial=0.0))
        return Bounds(np.full(arg.shape, NO_GRID), np.full(arg.shape, model.magnitude(m)),
                      np.full(arg.shape, model.rel_ulps(m) * FP32_ULP),
                      np.full(arg.shape, model.abs_ulps(m) * FP32_ULP + 2.0**-148), zsign)

    def read_accumulator(self) -> None:
        lanes = self.pick_lanes(128)
        probe = self.require(self.view_out(lanes, 1), "output")
        registers = np.arange(lanes) + probe.first_partition
        if not self.activation_registers_set[registers].all():
            raise Retry("an accumulation register no instruction has set")
        v = self.accumulators.map(lambda a: a[registers][:, None])
        if v.tainted().any() and not probe.tensor.is_float:
            raise Retry("integer output")
        result = stored(v, probe.tensor.dtype)
        i = self.emit("ReadActivationAccumulator", [], [probe], engine=Engine.Activation)
        self.write(probe, result, i)

    # ---- per-lane reductions and searches ----

    def tensor_reduce(self) -> None:
        axis = self.choice([ReduceAxis.X, ReduceAxis.X, ReduceAxis.XY, ReduceAxis.XYZ])
        folded = {ReduceAxis.X: 1, ReduceAxis.XY: 2, ReduceAxis.XYZ: 3}[axis]
        dims = int(self.rng.integers(folded, 4))
        shape = [int(self.rng.integers(1, 7)) for _ in range(dims)]
        op = self.choice(FOLD_OPS + [AluOp.bitwise_or, AluOp.bitwise_xor, AluOp.logical_or, AluOp.logical_and])
        need = "bounded" if op in (AluOp.add, AluOp.subtract, AluOp.max, AluOp.min) else "exact"
        tiles = self.tile_dtypes(op)
        src = self.require(self.view_in(None, math.prod(shape), need, shape=shape, dtypes=tiles), "source")
        kept = math.prod(shape[: dims - folded])
        x = src.tensor.read(src).map(lambda a: a.reshape(src.lanes, kept, -1))
        r = fold_bounds(op, x)
        negate = self.chance(0.3)
        out, result = self.out_for(src.lanes, kept, r, dtypes=tiles)
        i = self.emit("TensorReduce", [src], [out], engine=Engine.DVE, op=op, axis=axis, negate=negate)
        self.write(out, result, i)

    def bn_stats(self) -> None:
        """BNStats over up to 512 elements, then (usually) BNStatsAggregate of one or two records."""
        n = int(self.choice([1, 2, 4, 8, 16, 32, 64, 5, 7, 12, 48, 100]))
        src = self.require(self.view_in(None, n, "exact"), "source")
        lanes = src.lanes
        out = self.require(self.view_out(lanes, 6, floats_only=True, shape=[6]), "statistics")
        record = stored(self.stats_bounds(src.tensor.read(src)), out.tensor.dtype)
        i = self.emit("BNStats", [src], [out], engine=Engine.DVE)
        self.write(out, record, i)
        records = 1
        second = along_row(out, 6)  # a second record beside the first: aggregate two
        if second is not None and self.chance(0.4):
            src2 = self.view_in(lanes, n, "exact")
            if src2 is not None:
                record = stored(self.stats_bounds(src2.tensor.read(src2)), out.tensor.dtype)
                i = self.emit("BNStats", [src2], [second], engine=Engine.DVE)
                self.write(second, record, i)
                records = 2
        if not self.chance(0.7):
            return
        stats = View(out.tensor, out.offset, [out.pattern[0], [1, 6 * records]])
        triples = stats.tensor.read(stats)
        mean, var = self.aggregate_bounds(triples.map(lambda a: a.reshape(lanes, -1, 3)), n)
        agg = self.require(self.view_out(lanes, 2, floats_only=True, shape=[2]), "mean and variance")
        v = stack_bounds([mean, var], axis=1)
        result = stored(v, agg.tensor.dtype)
        i = self.emit("BNStatsAggregate", [stats], [agg], engine=Engine.DVE)
        self.write(agg, result, i)

    @staticmethod
    def stats_bounds(x: Bounds) -> Bounds:
        """[count, mean, M2] of the even and of the odd elements of each lane."""
        parts = []
        for group in (x.map(lambda a: a[:, 0::2]), x.map(lambda a: a[:, 1::2])):
            count = group.shape[1]
            lanes = group.shape[0]
            if count == 0:
                parts += [Bounds.exact(np.full(lanes, ZERO_GRID), np.zeros(lanes))] * 3
                continue
            total = fold_bounds(AluOp.add, group)
            if total.tainted().any():
                raise Retry("a mean is compared only from an exact sum")
            if count & (count - 1) == 0:  # a power of two: the mean stays on the grid
                mean = Bounds.exact(total.q - math.log2(count), total.mag / count, True)
            else:
                mean = Bounds.exact(np.full(lanes, NO_GRID), total.mag / count, True)
            deviation = alu_bounds(AluOp.subtract, group, broadcast(mean.map(lambda a: a[:, None]), group)[0])
            m2 = fold_bounds(AluOp.add, alu_bounds(AluOp.mult, deviation, deviation))
            # M2 sums non-negative terms: any order is within (count-1) ulps relative
            m2 = Bounds(m2.q, m2.mag, np.where(m2.abs > 0, (count + 1) * FP32_ULP, 0.0), 0.0 * m2.abs, m2.zsign)
            parts += [Bounds.of_values(np.full(lanes, count)), mean, m2]
        return stack_bounds(parts, axis=1)

    @staticmethod
    def aggregate_bounds(triples: Bounds, n: int) -> tuple[Bounds, Bounds]:
        """Mean and variance of the union of k (count, mean, M2) records: the two executors
        associate the sums differently, so both are bounded, not exact."""
        k = triples.shape[1]
        mean_mag = triples.mag[:, :, 1].max(axis=1)
        mean_err = triples.error()[:, :, 1].max(axis=1)
        m2_mag = triples.mag[:, :, 2].sum(axis=1)
        m2_err = triples.error()[:, :, 2].sum(axis=1)
        total = max(1.0, float(n // 2))  # the smallest union count of these records
        mean_abs = 4 * (k + 1) * FP32_ULP * mean_mag + mean_err
        var_mag = m2_mag / total + 4 * mean_mag**2
        var_abs = 8 * (k + 2) * FP32_ULP * var_mag + m2_err / total + 4 * mean_mag * mean_abs
        lanes = triples.shape[0]
        ones = np.ones(lanes, bool)
        return (Bounds(np.full(lanes, NO_GRID), mean_mag, np.zeros(lanes), mean_abs, ones),
                Bounds(np.full(lanes, NO_GRID), var_mag, np.zeros(lanes), var_abs, ones))

    def max8_family(self) -> None:
        """Max (the top 8 of each lane), then MaxIndex of those values and/or MatchReplace."""
        n = int(self.rng.integers(8, 65))
        need = "exact" if self.chance(0.7) else "bounded"
        src = self.require(self.view_in(None, n, need), "source")
        lanes = src.lanes
        x = src.tensor.read(src)
        err = np.where(x.tainted().any(axis=1), x.error().max(axis=1), 0.0)
        top = Bounds(np.repeat(x.q.min(axis=1, keepdims=True), 8, 1), np.repeat(x.mag.max(axis=1, keepdims=True), 8, 1),
                     np.zeros((lanes, 8)), np.repeat(err[:, None], 8, 1), np.ones((lanes, 8), bool))
        out, result = self.out_for(lanes, 8, top, shape=[8])
        i = self.emit("Max", [src], [out], engine=Engine.DVE)
        self.write(out, result, i)
        for _ in range(2):  # MaxIndex, MatchReplace of the values just found (or of another [P,8] tile)
            values = out if self.chance(0.7) else self.view_in(lanes, 8, "exact")
            # an earlier output may have overwritten the data or the values: read them again
            if values is None or not (src.tensor.read(src).satisfies("exact")
                                      and values.tensor.read(values).satisfies("exact")):
                return
            if self.chance(0.5):
                indices = Bounds.exact(0.0, 2.0**32, shape=(lanes, 8))
                idx, r = self.out_for(lanes, 8, indices, shape=[8],
                                      dtypes=[DType.uint32, DType.int32, DType.float32, DType.uint16, DType.int16])
                i = self.emit("MaxIndex", [src, values], [idx], engine=Engine.DVE)
                self.write(idx, r, i)
                continue
            x = src.tensor.read(src)
            imm = self.choice([0.0, -1e9, -3.0, 7.5])
            replaced = x.either(Bounds.of_values(np.full(x.shape, imm)))
            dst, r = self.out_for(lanes, n, replaced)
            outs = [dst]
            second = None
            if self.chance(0.5):
                second, r2 = self.second_output(dst, Bounds.exact(0.0, 2.0**32, shape=(lanes, 8)), 8,
                                                dtypes=[DType.uint32, DType.int32, DType.float32])
                outs.append(second)
            i = self.emit("MatchReplace", [src, values], outs, engine=Engine.DVE, imm_value=imm)
            self.write(dst, r, i)
            if second is not None:
                self.write(second, r2, i)
            return

    # ---- selection ----

    def select(self) -> None:
        pred = self.require(self.view_in(None, None, "exact"), "predicate")
        lanes, elems = pred.shape
        operands, values = [pred], []
        for _ in range(2):
            if self.chance(0.2):
                ap, value = self.immediate(self.choice(CONSTANTS))
                operands.append(ap)
                values.append(Bounds.of_values(np.full((lanes, elems), value)))
            else:
                v = self.require(self.view_in(lanes, elems, "any"), "data")
                operands.append(v)
                values.append(v.tensor.read(v))
        out, result = self.out_for(lanes, elems, values[0].either(values[1]))
        i = self.emit("Select", operands, [out], engine=Engine.DVE)
        self.write(out, result, i)

    def select_reduce(self) -> None:
        pred = self.require(self.view_in(None, None, "exact"), "predicate")
        lanes, elems = pred.shape
        on_true = self.require(self.view_in(lanes, elems, "bounded",
                                            spaces=("SB",) if pred.tensor.space == "PSUM" else ("SB", "PSUM")), "data")
        ins = [pred, on_true]
        v = on_true.tensor.read(on_true)
        on_false_value = self.choice(CONSTANTS)
        if self.chance(0.5):
            on_false = self.require(self.view_in(lanes, elems, "bounded"), "data")
            ins.append(on_false)
            v = v.either(on_false.tensor.read(on_false))
        else:
            v = v.either(Bounds.of_values(np.full(v.shape, on_false_value)))
        reduce_op = self.choice(FOLD_OPS)
        out, result = self.out_for(lanes, elems, v)
        outs = [out]
        if self.chance(0.6):
            second, r2 = self.second_output(out, fold_bounds(reduce_op, v).map(lambda a: a[:, None]))
            outs.append(second)
        i = self.emit("SelectReduce", ins, outs, engine=Engine.DVE, on_false_value=on_false_value, reduce_op=reduce_op)
        self.write(out, result, i)
        if len(outs) == 2:  # after outs[0]: where they share elements, outs[1]'s values remain
            self.write(second, r2, i)
            self.set_vector_registers(np.arange(lanes) + out.first_partition, fold_bounds(reduce_op, v), True)

    def second_output(self, out: View, v: Bounds, elems: int = 1, dtypes=None) -> tuple[View, Bounds]:
        """A ``[P, elems]`` second output for ``v`` and its stored bounds: often in columns of
        ``out`` (the contract writes outs[0], then outs[1]), else anywhere."""
        t = out.tensor
        if self.chance(0.4) and elems <= t.row and (dtypes is None or t.dtype in dtypes) \
                and (t.is_float or not v.tainted().any()):
            column = int(self.choice(out.index()[0])) % t.row  # a column of out, inside the new one
            first = min(max(column - int(self.rng.integers(elems)), 0), t.row - elems)
            view = View(t, out.offset // t.row * t.row + first, [out.pattern[0], [1, elems]])
            return view, stored(v, t.dtype)
        return self.out_for(out.lanes, elems, v, shape=[elems] if elems > 1 else None, dtypes=dtypes)

    def copy_predicated(self) -> None:
        """dst = src where predicate != 0; dst keeps its (written) values elsewhere."""
        dst = self.require(self.view_in(None, None, "any"), "destination")
        lanes, elems = dst.shape
        src = self.require(self.view_in(lanes, elems, "any"), "source")
        pred = self.require(self.view_in(lanes, elems, "exact",
                                         spaces=("SB",) if src.tensor.space == "PSUM" else ("SB", "PSUM")), "predicate")
        v = src.tensor.read(src)
        if v.tainted().any() and not dst.tensor.is_float:
            raise Retry("integer destination")
        new = v if src.tensor.dtype == dst.tensor.dtype else stored(v, dst.tensor.dtype)
        result = new.either(dst.tensor.read(dst))
        i = self.emit("CopyPredicated", [src, pred], [dst], engine=Engine.DVE)
        self.write(dst, result, i)

    def affine_select(self) -> None:
        """out = in where compare_op(base + cm * p + sum idx_k step_k, 0) else fill (causal masks)."""
        src = self.require(self.view_in(None, None, "any", spaces=("SB",)), "source")
        lanes, elems = src.shape
        nums = [elems]
        if elems > 3 and self.chance(0.5):
            d = int(self.choice([d for d in range(1, elems + 1) if elems % d == 0]))
            nums = [d, elems // d]
        steps = [int(self.rng.integers(-3, 4)) for _ in nums]
        base, cm = int(self.rng.integers(-20, 21)), int(self.choice([-1, 0, 1, 2]))
        e = np.full([lanes] + nums, base, np.int64) + cm * np.arange(lanes).reshape([lanes] + [1] * len(nums))
        for axis, (s, n) in enumerate(zip(steps, nums)):
            shape = [1] * (len(nums) + 1)
            shape[axis + 1] = n
            e = e + s * np.arange(n).reshape(shape)
        e = e.reshape(lanes, elems)
        compare = self.choice(sorted(COMPARISONS, key=lambda o: o.name))
        keep = {AluOp.is_equal: e == 0, AluOp.not_equal: e != 0, AluOp.is_ge: e >= 0, AluOp.is_gt: e > 0,
                AluOp.is_le: e <= 0, AluOp.is_lt: e < 0}[compare]
        fill = self.choice([0.0, -1e4, -3.0e38, 1.5])
        v = src.tensor.read(src).where(keep, Bounds.of_values(np.full(src.shape, fill)))
        out, result = self.out_for(lanes, elems, v, spaces=("SB",))
        i = self.emit("TensorScalarAffineSelect", [src], [out], engine=Engine.Pool, base=base, channel_multiplier=cm,
                      pattern=[bir.APPair(s, n) for s, n in zip(steps, nums)], compare_op=compare, fill_value=fill)
        self.write(out, result, i)

    def range_select(self) -> None:
        """(trn2) keep in[j] where comp0(j + start, bound0) and comp1(j + start, bound1)."""
        src = self.require(self.view_in(None, None, "bounded"), "source")
        lanes, elems = src.shape
        b0, _ = self.pointer(lanes, "exact")
        b1, _ = self.pointer(lanes, "exact")
        fill = self.choice([-3.4028234663852886e38, 0.0, -5.0])
        v = src.tensor.read(src).either(Bounds.of_values(np.full(src.shape, fill)))
        out, result = self.out_for(lanes, elems, v)
        outs = [out]
        if self.chance(0.5):
            second, r2 = self.second_output(out, fold_bounds(AluOp.max, v).map(lambda a: a[:, None]))
            outs.append(second)
        i = self.emit("RangeSelect", [src, b0, b1], outs, engine=Engine.DVE,
                      comp_op0=self.choice([AluOp.is_ge, AluOp.is_gt, AluOp.not_equal]),
                      comp_op1=self.choice([AluOp.is_lt, AluOp.is_le, AluOp.is_equal]),
                      range_start=int(self.rng.integers(-4, 20)), fill_value=fill)
        self.write(out, result, i)
        if len(outs) == 2:
            self.write(second, r2, i)
            self.set_vector_registers(np.arange(lanes) + out.first_partition, fold_bounds(AluOp.max, v), True)

    # ---- cross-partition movement ----

    def stream_shuffle(self) -> None:
        src = self.require(self.view_in(None, None, "any"), "source")
        lanes, elems = src.shape
        out = self.require(self.view_out(lanes, elems, dtypes=[src.tensor.dtype]), "output")  # one dtype
        quadrant = min(lanes, 32)
        mask = [int(self.rng.integers(quadrant)) if self.chance(0.85) else 255 for _ in range(32)]
        lane = np.arange(lanes)
        entry = np.array(mask)[lane % 32]
        written = entry != 255
        for i_lane in lane[written]:  # every named source lane must exist in the operand
            if 32 * (i_lane // 32) + entry[i_lane] >= lanes:
                mask[i_lane % 32] = 255
        entry = np.array(mask)[lane % 32]
        written = entry != 255
        source = 32 * (lane // 32) + np.where(written, entry, 0)
        v = src.tensor.read(src).map(lambda a: a[source])
        i = self.emit("StreamShuffle", [src], [out], engine=Engine.DVE, shuffle_mask=mask)
        self.write(out, v, i, where=written[:, None])

    def stream_transpose(self) -> None:
        lanes, elems = int(self.rng.integers(1, 33)), int(self.rng.integers(1, 33))
        src = self.require(self.view_in(lanes, elems, "any"), "source")
        v = src.tensor.read(src).map(lambda a: a.T)
        out, result = self.out_for(elems, lanes, v)
        i = self.emit("StreamTranspose", [src], [out], engine=Engine.DVE)
        self.write(out, result, i)

    # ---- GpSimd ----

    def index_tile(self, partitions: int, per_partition: int, values: np.ndarray, dtype: DType) -> View:
        """A new SBUF tile of integer ``values`` ([partitions, per_partition], loaded by DMA)."""
        src, _ = self.new_input([partitions, per_partition], dtype, values=values)
        t = Tensor(self.b.sbuf(self.name("idx"), partitions, per_partition, dtype), dtype, "SB", partitions,
                   per_partition)
        view = View(t, 0, [[per_partition, partitions], [1, per_partition]])
        i = self.emit("DMA", [src.whole()], [view], queue=int(self.rng.integers(16)))
        self.write(view, src.values.map(lambda a: a.reshape(view.shape)), i)
        return view

    def partition_reduce(self) -> None:
        """out[0, i] = op over the partitions of in[:, i] (GpSimd)."""
        op = self.choice([AluOp.add, AluOp.add, AluOp.max, AluOp.bitwise_or, AluOp.bitwise_and])
        tiles = self.tile_dtypes(op)
        src = self.require(self.view_in(None, None, "bounded" if op in (AluOp.add, AluOp.max) else "exact",
                                        spaces=("SB",), dtypes=tiles), "data")
        v = fold_bounds(op, src.tensor.read(src), axis=0).map(lambda a: a[None, :])
        out, result = self.out_for(1, src.elems, v, spaces=("SB",), dtypes=tiles)
        i = self.emit("TensorPartitionReduce", [src], [out], engine=Engine.Pool, op=op)
        self.write(out, result, i)

    def local_gather(self) -> None:
        """Per group of 16 partitions, element offsets read partition first; each partition gathers
        num_elem_per_idx elements at each from its own lane (bytes copied)."""
        lanes = int(self.choice([16, 32, 48, 64, 96, 128]))
        e = int(self.choice([1, 1, 2, 4, 8, 16, 32]))
        src = self.require(self.view_in(lanes, int(self.rng.integers(e, max(e, 48) + 1)), "any", spaces=("SB",),
                                        broadcast=False), "source")
        if (src.first_partition) % 16:
            raise Retry("not on a GpSimd core")
        cols = int(self.rng.integers(1, 4))
        valid = int(self.rng.integers(1, 16 * cols + 1))
        if valid * e > 160:
            raise Retry("too many gathered elements")
        cores = lanes // 16
        index = self.rng.integers(0, src.elems - e + 1, size=(lanes, cols))
        idx = self.index_tile(lanes, cols, index, DType.uint16)
        out = self.require(self.view_out(lanes, valid * e, spaces=("SB",), dtypes=[src.tensor.dtype]), "output")
        if out.first_partition % 16:
            raise Retry("not on a GpSimd core")
        flat = index.reshape(cores, 16, cols).transpose(0, 2, 1).reshape(cores, -1)[:, :valid]
        columns = np.repeat((flat[:, :, None] + np.arange(e)).reshape(cores, -1), 16, axis=0)
        v = src.tensor.read(src).map(lambda a: np.take_along_axis(a, columns, axis=1))
        i = self.emit("LocalGather", [src, idx], [out], engine=Engine.Pool, num_elem_per_idx=e, num_valid_indices=valid)
        self.write(out, v, i)

    def gather(self) -> None:
        """nc_n_gather: out[p, j] = data[p, indices[p, j]] (bytes copied)."""
        src = self.require(self.view_in(None, None, "any", spaces=("SB",), broadcast=False), "data")
        n = int(self.rng.integers(1, 33))
        index = self.rng.integers(0, src.elems, size=(src.lanes, n))
        idx = self.index_tile(src.lanes, n, index, self.choice([DType.uint32, DType.int32]))
        out = self.require(self.view_out(src.lanes, n, spaces=("SB",), dtypes=[src.tensor.dtype]), "output")
        v = src.tensor.read(src).map(lambda a: np.take_along_axis(a, index, axis=1))
        i = self.emit("Gather", [src, idx], [out], engine=Engine.Pool)
        self.write(out, v, i)

    def sequence_bounds(self) -> None:
        """Segment [start, end) of every element of one partition of ids (0: padding)."""
        n = int(self.rng.integers(1, 40))
        ids = np.sort(self.rng.integers(0, 6, size=n)) if self.chance(0.5) else self.rng.integers(0, 4, size=n)
        dtype = self.choice([DType.int32, DType.float32])
        src, _ = self.new_input([1, n], dtype, values=ids)
        t = Tensor(self.b.sbuf(self.name("seg"), 1, n, dtype), dtype, "SB", 1, n)
        view = View(t, 0, [[n, 1], [1, n]])
        i = self.emit("DMA", [src.whole()], [view])
        self.write(view, src.values.map(lambda a: a.reshape(1, n)), i)
        start, end = np.zeros(n), np.zeros(n)
        for k in range(n):
            start[k] = n if ids[k] == 0 else (start[k - 1] if k and ids[k] == ids[k - 1] else k)
        for k in reversed(range(n)):
            end[k] = -1 if ids[k] == 0 else (end[k + 1] if k + 1 < n and ids[k] == ids[k + 1] else k + 1)
        out = self.require(self.view_out(1, 2 * n, spaces=("SB",), dtypes=[DType.int32, DType.float32]), "output")
        i = self.emit("SequenceBounds", [view], [out], engine=Engine.Pool)
        self.write(out, Bounds.of_values(np.concatenate([start, end])[None, :]), i)

    def nonzero_with_count(self) -> None:
        """(trn2) on each GpSimd core's first partition: the non-zero indices + offset, padding, count."""
        lanes = int(self.choice([16, 32, 64, 128, 1]))
        src = self.require(self.view_in(lanes, None, "exact", spaces=("SB",), dtypes=[DType.float32, DType.int32]),
                           "source")
        if src.first_partition % 16:
            raise Retry("not on a GpSimd core")
        n = src.elems
        out = self.require(self.view_out(lanes, n + 1, spaces=("SB",), dtypes=[DType.int32]), "output")
        if out.first_partition % 16:
            raise Retry("not on a GpSimd core")
        offset, padding = int(self.rng.integers(-5, 100)), int(self.choice([-1, 0, 7]))
        # indices, padding and counts: exact integers (which elements are non-zero, the executors
        # decide from bit-identical inputs)
        written = np.zeros((lanes, n + 1), bool)
        written[::16] = True
        top = max(abs(offset) + n, abs(padding), n)
        i = self.emit("NonzeroWithCount", [src], [out], engine=Engine.Pool, index_offset=offset, padding_val=padding)
        self.write(out, Bounds.exact(0.0, float(top), shape=(lanes, n + 1)), i, where=written)

    def random_bits(self) -> None:
        """The engines' generators: seed the Vector Engine's, set (trn2: GpSimd) states, draw bits
        into integer tiles, read (GpSimd) states back; both executors step the same xorwow."""
        pool = self.arch == "trn2" and self.chance(0.5)
        engine = Engine.Pool if pool else Engine.DVE
        kind = self.choice(["rand", "rand", "rand", "set", "get" if pool else "rand"])
        if kind == "set" and not pool:  # set_rng_seed: one 32-bit seed
            value = int(self.rng.integers(0, 2**32))
            seed = self.index_tile(1, 1, np.array([[value]]), DType.uint32)
            self.emit("SetRandState", [seed], [], engine=engine)
            return
        lanes = self.pick_lanes(128)
        if kind == "set":
            values = self.rng.integers(0, 2**32, size=(128, 6))
            states = self.index_tile(128, 6, values, self.choice([DType.uint32, DType.int32]))
            start = int(self.choice([s for s in allowed_starts(lanes) if s + lanes <= 128]))
            self.emit("SetRandState", [View(states.tensor, start * 6, [[6, lanes], [1, 6]])], [], engine=engine)
            return
        if kind == "get":
            out = self.require(self.view_out(lanes, 6, spaces=("SB",), dtypes=[DType.uint32, DType.int32],
                                             shape=[6]), "states")
            i = self.emit("GetRandState", [], [out], engine=engine)
            self.write(out, Bounds.exact(0.0, 2.0**32, shape=out.shape), i)
            return
        dtypes = [DType.int8, DType.int16, DType.int32, DType.uint8, DType.uint16, DType.uint32]
        out = self.require(self.view_out(lanes, int(self.rng.integers(1, 49)), spaces=("SB",) if pool else ("SB", "PSUM"),
                                         dtypes=dtypes), "bits")
        i = self.emit("Rand", [], [out], engine=engine)
        self.write(out, Bounds.exact(0.0, 2.0**32, shape=out.shape), i)

    # ---- the PE array ----

    def pe_dtypes(self) -> set[DType]:
        return PE_DTYPES | ({DType.float8e3} if self.arch == "trn2" else set())

    def matmul(self) -> None:
        """A matmul into PSUM: a new accumulation group, or the next matmul of an open one."""
        psum = [t for t in self.pool if t.space == "PSUM" and t.dtype == DType.float32]
        open_groups = [box for box in self.boxes if box[0] in psum]
        out = None
        if open_groups and self.chance(0.5):  # continue a group where every word is still open
            t, p0, np_, c0, nc = self.choice(open_groups)
            if np_ <= 128 and nc <= 512 and t.group.reshape(t.partitions, t.row)[p0:p0 + np_, c0:c0 + nc].all() \
                    and (t.base_partition + p0) in allowed_starts(np_):
                out = View(t, p0 * t.row + c0, [[t.row, np_], [1, nc]])
        start = out is None
        if start:
            m = self.pick_lanes(128)
            n = int(self.choice([1, 8, 16, 32, 64, 100, 128, 256, 512]))
            out = self.require(self.view_out(m, n, spaces=("PSUM",), dtypes=[DType.float32],
                                             shape=[n] if self.chance(0.8) else None), "PSUM tile")
        m, n = out.shape
        k = self.pick_lanes(128)
        fp32 = self.chance(0.25)
        dtypes = (FP32_CLASS if fp32 else self.pe_dtypes() - FP32_CLASS)
        stationary = self.require(self.view_in(k, m, "bounded", ("SB",), dtypes, broadcast=False), "stationary")
        moving = self.require(self.view_in(k, n, "bounded", ("SB",), dtypes, broadcast=False), "moving")
        s, mv = stationary.tensor.read(stationary), moving.tensor.read(moving)
        product = self.product_bounds(s, mv)
        if not start:
            old = out.tensor.read(out)
            product = fold_bounds(AluOp.add, stack_bounds([old, product], axis=-1))
            product = product.with_error(product.abs > 0, 0.0, product.abs + k * FP32_ULP * product.mag)
        if not product.satisfies("bounded"):
            raise Retry("an accumulation without a useful bound")
        fields = {}
        if self.chance(0.15):
            g = 32 if self.arch == "trn2" else 64
            # the smallest tile (128 halved or quartered, down to g) holding K rows and M columns
            rows, cols = (next(t for t in (g, 64, 128) if t >= max(size, g)) for size in (k, m))
            fields = dict(tile_size=[rows, cols], tile_position=[int(self.rng.integers(0, 128 // rows)) * rows,
                                                                 int(self.rng.integers(0, 128 // cols)) * cols])
        if self.arch == "trn2" and stationary.tensor.dtype.name.startswith("float8") and \
                moving.tensor.dtype.name.startswith("float8") and not fields and self.chance(0.5):
            fields["perf_mode"] = PerfMode.DoubleRow
        i = self.emit("Matmult", [stationary, moving], [out], engine=Engine.PE, start_tensor_calc=start,
                      stop_tensor_calc=self.chance(0.5), **fields)
        self.write(out, product, i, matmul=True)
        if self.chance(0.5):  # evacuate the group now (ACT or DVE), as kernels do
            self.evacuate(out)

    @staticmethod
    def product_bounds(s: Bounds, mv: Bounds) -> Bounds:
        """stationary^T @ moving: exact when every partial sum fits the fp32 significand (then any
        summation order gives the same bits), else within the order bound."""
        k = s.shape[0]
        with np.errstate(invalid="ignore", over="ignore"):
            mag = np.nan_to_num(s.mag.T @ mv.mag, nan=np.inf)
            err_s, err_m = s.error(), mv.error()
            err = np.nan_to_num(err_s.T @ mv.mag + s.mag.T @ err_m + err_s.T @ err_m, nan=np.inf)
        q = s.q.min(axis=0)[:, None] + mv.q.min(axis=0)[None, :]
        fits = np.isfinite(mag) & (mag <= 2.0 ** (q + FP32_SIGNIFICAND - 1))
        exact = fits & ~(s.tainted().any() or mv.tainted().any())
        abs_ = err + (k + 1) * FP32_ULP * mag
        return Bounds(np.maximum(q, NO_GRID), mag, np.zeros(mag.shape), np.where(exact, 0.0, abs_),
                      np.ones(mag.shape, bool))

    def evacuate(self, tile: View) -> None:
        v = tile.tensor.read(tile)
        out = self.view_out(tile.lanes, tile.elems, spaces=("SB",), floats_only=bool(v.tainted().any()))
        if out is None:
            return
        try:
            result = stored(v, out.tensor.dtype)
        except Retry:
            return
        if self.chance(0.5):
            i = self.emit("TensorCopy", [tile], [out], engine=self.choice([Engine.DVE, Engine.Activation]))
        else:
            i = self.emit("Activation", [tile], [out], engine=Engine.Activation, func=ActivationFunc.Copy)
        self.write(out, result, i)

    def pe_transpose(self) -> None:
        """PE transpose mode: out[m, k] = stationary[k, m] bit-exactly (moving, the identity, is not
        read); out in PSUM in the stationary's dtype or fp32."""
        k, m = self.pick_lanes(128), self.pick_lanes(128)
        dtypes = self.pe_dtypes()
        stationary = self.require(self.view_in(k, m, "any", ("SB",), dtypes, broadcast=False), "stationary")
        fp32 = stationary.tensor.dtype in FP32_CLASS
        moving = self.require(self.view_out(k, k, spaces=("SB",), dtypes=FP32_CLASS if fp32 else dtypes - FP32_CLASS),
                              "identity tile")
        out = self.require(self.view_out(m, k, spaces=("PSUM",), dtypes=[DType.float32, stationary.tensor.dtype],
                                         shape=[k]), "PSUM tile")
        if out.offset * STORAGE_BYTES[out.tensor.dtype] % 4:
            # The PE writes PSUM in 4-byte words: an output starting inside one is refused (the
            # contract, §5 Matmult; both executors do), which leaves nothing to compare. PSUM rows
            # are even, so the column before an odd one starts a word and leaves room.
            out = out.moved(-1)
        v = stationary.tensor.read(stationary).map(lambda a: a.T)
        result = v if out.tensor.dtype == stationary.tensor.dtype else stored(v, out.tensor.dtype)
        i = self.emit("Matmult", [stationary, moving], [out], engine=Engine.PE, is_transpose=True,
                      start_tensor_calc=True, stop_tensor_calc=True)
        self.write(out, result, i, matmul=True)

    # ---- instructions without arithmetic ----

    def dropout(self) -> None:
        """Dropout with prob 0 keeps every element (x * 1): the only deterministic probability."""
        src = self.require(self.view_in(None, None, "any"), "source")
        v = src.tensor.read(src)
        out, result = self.out_for(src.lanes, src.elems, v)
        i = self.emit("Dropout", [src], [out], engine=Engine.DVE, prob=0.0)
        self.write(out, result, i)

    def no_effect(self) -> None:
        if self.chance(0.5):
            self.emit("NoOp", [], [], engine=self.choice([Engine.DVE, Engine.Pool, Engine.Activation, Engine.PE]))
        else:
            src = self.require(self.view_in(None, int(self.rng.integers(1, 5)), "any"), "printed tile")
            self.emit("DevicePrint", [src], [], engine=Engine.DVE, prefix=f"p{self.count}:")

    # ---- outputs ----

    def store_outputs(self) -> tuple[dict[str, Bounds], dict[str, np.ndarray]]:
        """DMA written tiles to DRAM outputs, chosen greedily so that each adds results of
        instructions no earlier output holds (most of the stream's surviving results get compared)."""
        outputs, writers, covered = {}, {}, set()
        candidates = {(t.loc.name, p0, np_, c0, nc): View(t, p0 * t.row + c0, [[t.row, np_], [1, nc]])
                      for t, p0, np_, c0, nc in self.all_boxes}
        while candidates and len(outputs) < MAX_OUTPUTS:
            def gain(view):
                return len(set(np.unique(view.tensor.writer[view.index()]).tolist()) - covered)
            key = max(candidates, key=lambda k: (gain(candidates[k]), candidates[k].lanes * candidates[k].elems))
            view = candidates.pop(key)
            if gain(view) == 0:
                break
            t = view.tensor
            covered |= set(np.unique(t.writer[view.index()]).tolist())
            v, dtype = t.read(view), t.dtype
            if t.is_float and self.chance(0.1):  # an output cast on the way out
                dtype = self.choice([DType.float32, DType.bfloat16, DType.float16])
                try:
                    v = stored(v, dtype)
                except Retry:
                    dtype, v = t.dtype, t.read(view)
            name = self.name("out")
            writers[name] = t.writer[view.index()]
            if t.space == "PSUM":  # DMA does not reach PSUM: the Vector Engine copies the bytes to SBUF first
                staging = Tensor(self.b.sbuf(self.name("stage"), t.partitions, view.elems, t.dtype), t.dtype, "SB",
                                 t.partitions, view.elems)
                staged = View(staging, view.offset // t.row * view.elems, [[view.elems, view.lanes], [1, view.elems]])
                self.emit("TensorCopy", [view], [staged], engine=Engine.DVE)
                view = staged
            dst = Tensor(self.b.output(name, list(view.shape), dtype), dtype, "DRAM", 1, view.lanes * view.elems)
            self.emit("DMA", [view], [View(dst, 0, [[view.elems, view.lanes], [1, view.elems]])],
                      queue=int(self.rng.integers(16)))
            outputs[name] = v
        return outputs, writers


@functools.lru_cache(maxsize=None)
def generate(seed: int, arch: str) -> Program:
    with np.errstate(all="ignore"):  # bounds reach inf and 0 * inf on purpose (see Bounds)
        return ProgramGenerator(seed, arch).generate()


def arch_of(seed: int) -> str:
    return ARCHES[seed % 3 == 2]  # every third program on trn2 (RangeSelect, v3 reduce ops, fp8e3 PE)


# ---------------------------------------------------------------------------------------------
# Comparison


def mismatches(sim_out: np.ndarray, ref_out: np.ndarray, expected: Bounds) -> np.ndarray:
    """Elements outside the allowed difference: NaN only with NaN; bit-identical values (sign of
    zero included) where no difference is allowed; else |s - r| <= rel * max(|s|, |r|) + abs."""
    s = sim_out.astype(np.float64).reshape(expected.shape)
    r = ref_out.astype(np.float64).reshape(expected.shape)
    nan_s, nan_r = np.isnan(s), np.isnan(r)
    with np.errstate(invalid="ignore", over="ignore"):
        tolerance = expected.rel * np.maximum(np.abs(s), np.abs(r)) + expected.abs
        close = (s == r) | (np.abs(s - r) <= tolerance)
    sign_matters = ~expected.tainted() & ~expected.zsign & (s == 0)
    close &= ~(sign_matters & (np.signbit(s) != np.signbit(r)))
    return np.where(nan_s | nan_r, nan_s != nan_r, ~close)


def describe_mismatch(program: Program, name: str, bad: np.ndarray, s, r) -> str:
    expected = program.outputs[name]
    s2, r2 = s.reshape(expected.shape), r.reshape(expected.shape)
    with np.errstate(invalid="ignore"):
        gap = np.abs(s2.astype(np.float64) - r2.astype(np.float64))
    gap = np.where(bad, np.nan_to_num(gap, nan=np.inf), -1)
    worst = np.unravel_index(int(np.argmax(gap)), gap.shape)
    writer = int(program.writers[name][worst])
    return (f"seed {program.seed} ({program.arch}): output '{name}' ({s.dtype}) differs at {int(bad.sum())} of "
            f"{bad.size} elements; worst at index {tuple(int(i) for i in worst)}: simulator {s2[worst]!r}, reference "
            f"{r2[worst]!r}, allowed rel {expected.rel[worst]:.3g} + abs {expected.abs[worst]:.3g}"
            f"{' (zero sign free)' if expected.zsign[worst] else ''}; the value comes from instruction i{writer}.\n"
            f"Reproduce: pytest 'tests/sim/test_differential.py::"
            f"test_random_program_runs_the_same_on_both_executors[seed{program.seed}]'\n"
            f"{program.listing()}")


# ---------------------------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed{s}")
def test_random_program_runs_the_same_on_both_executors(seed):
    arch = arch_of(seed)
    program = generate(seed, arch)
    try:
        sim_outputs = sim.simulate(program.module, program.inputs, arch=arch).outputs
    except SimulationError as e:
        try:
            reference.execute(program.module, program.inputs)
            verdict = "the reference executor accepts it: a disagreement"
        except SimulationError as r:
            verdict = f"the reference refuses it too ({r}): a generator bug"
        pytest.fail(f"seed {seed} ({arch}): the simulator refuses the program: {e}\n{verdict}\n{program.listing()}")
    try:
        ref_outputs = reference.execute(program.module, program.inputs)
    except SimulationError as e:
        pytest.fail(f"seed {seed} ({arch}): the reference refuses a program the simulator runs: {e}\n"
                    f"{program.listing()}")
    assert program.outputs, "the program stores no output"
    for name in program.outputs:
        bad = mismatches(sim_outputs[name], ref_outputs[name], program.outputs[name])
        if bad.any():
            pytest.fail(describe_mismatch(program, name, bad, sim_outputs[name], ref_outputs[name]), pytrace=False)


#: Every instruction class both executors implement, and which the generator must therefore emit.
COVERED = {
    "Activation", "ReadActivationAccumulator", "Memset", "NoOp", "DevicePrint", "Reciprocal", "TensorCopy",
    "TensorCopyDynamicSrc", "TensorCopyDynamicDst", "TensorReduce", "TensorScalar", "TensorScalarPtr", "TensorTensor",
    "TensorTensorScan", "BNStats", "BNStatsAggregate", "StreamShuffle", "StreamTranspose", "Iota",
    "TensorScalarAffineSelect", "RangeSelect", "Select", "SelectReduce", "CopyPredicated", "Dropout", "Max",
    "MaxIndex", "MatchReplace", "Matmult", "DMA", "Load", "Save", "DMACopy", "ScalarTensorTensor",
    "TensorScalarReduce", "TensorPartitionReduce", "LocalGather", "Gather", "SequenceBounds", "NonzeroWithCount",
    "Rand", "SetRandState", "GetRandState", "IndirectSave",
}


#: Cases the executors once disagreed on, which the contract now fixes: the programs must hold each.
CASES = {
    "indirect DMA, source in place", "indirect DMA, index in place", "dynamic copy in place", "overlapping outputs",
    "mod", "immediate of another dtype", "DMA at a run-time offset", "a reduce continuing a select's maximum",
}


def test_the_programs_cover_every_instruction_class_and_arch():
    seen = {arch: set() for arch in ARCHES}
    cases = set()
    for seed in SEEDS:
        program = generate(seed, arch_of(seed))
        seen[program.arch] |= program.opcodes
        cases |= program.cases
    assert COVERED - (seen["trn1"] | seen["trn2"]) == set()
    assert "RangeSelect" in seen["trn2"] and "NonzeroWithCount" in seen["trn2"]
    assert CASES - cases == set()
