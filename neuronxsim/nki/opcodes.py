"""Which ALU operation or activation function a kernel names.

Kernels name operations by function: ``op=nl.add``, ``op0=np.multiply``, ``op=nl.exp``,
``np.exp``. ``nl`` functions carry their BIR operation as attributes (set in ``language.py`` with
:func:`alu` / :func:`activation`); NumPy functions are looked up here.
"""

from __future__ import annotations

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import legality

from .errors import NKIError

Alu = bir.AluOp
Act = bir.ActivationFunc

_NUMPY_ALU = {
    np.add: Alu.add, np.subtract: Alu.subtract, np.multiply: Alu.mult, np.divide: Alu.divide,
    np.maximum: Alu.max, np.minimum: Alu.min, np.max: Alu.max, np.min: Alu.min,
    np.amax: Alu.max, np.amin: Alu.min, np.sum: Alu.add, np.prod: Alu.mult,
    np.power: Alu.pow, np.mod: Alu.mod, np.equal: Alu.is_equal, np.not_equal: Alu.not_equal,
    np.greater: Alu.is_gt, np.greater_equal: Alu.is_ge, np.less: Alu.is_lt,
    np.less_equal: Alu.is_le, np.logical_and: Alu.logical_and, np.logical_or: Alu.logical_or,
    np.logical_xor: Alu.logical_xor, np.bitwise_and: Alu.bitwise_and,
    np.bitwise_or: Alu.bitwise_or, np.bitwise_xor: Alu.bitwise_xor,
    np.invert: Alu.bitwise_not, np.left_shift: Alu.logical_shift_left,
    # (NumPy's function names NKI's operator, nl.right_shift, the Logical Shift Right: NKI's
    # operator table has no arithmetic shift right, "Not supported")
    np.right_shift: Alu.logical_shift_right, np.abs: Alu.abs,
}

#: Why no ALU operation computes fmod, the message an instruction's op naming it is refused
#: with: the ALU's mod is numpy.mod (the divisor's sign; docs/isa-semantics.md), NKI's operator
#: table lists no fmod, and taking it as mod gave a different answer silently.
FMOD_NOT_ALU = ("fmod is not an ALU operation: no instruction computes it (the remainder with "
                "the dividend's sign; the ALU's mod, op=nl.mod, takes the divisor's); call "
                "nl.fmod(x, y), which composes it")

#: Functions a kernel may name as an op that no ALU operation computes: {function: why}.
_NUMPY_NOT_ALU = {np.fmod: FMOD_NOT_ALU}

_NUMPY_ACT = {
    np.exp: Act.Exp, np.log: Act.Ln, np.tanh: Act.Tanh, np.sqrt: Act.Sqrt, np.square: Act.Square,
    np.reciprocal: Act.Reciprocal, np.abs: Act.Abs, np.sign: Act.Sign, np.sin: Act.Sin,
    np.arctan: Act.Arctan,
}

#: ALU operations whose operands can be swapped (scans and reversals need this).
COMMUTATIVE = {Alu.add, Alu.mult, Alu.max, Alu.min, Alu.is_equal, Alu.not_equal,
               Alu.logical_and, Alu.logical_or, Alu.logical_xor, Alu.bitwise_and,
               Alu.bitwise_or, Alu.bitwise_xor}

#: The bit-vector operators (:func:`neuronxsim.bir.legality.is_bitvec_op`, the list's one home).
BITVEC = frozenset(op for op in Alu.__members__.values() if legality.is_bitvec_op(op))


def alu(op):
    """Decorator argument: marks an ``nl`` function with the ALU operation it performs."""
    def mark(fn):
        fn.alu_op = op
        return fn
    return mark


def not_alu(why: str):
    """Decorator argument: marks an ``nl`` function that no ALU operation computes, with why:
    an instruction's ``op`` naming it is refused with that, not taken as some other operation."""
    def mark(fn):
        fn.not_alu_op = why
        return fn
    return mark


def activation(func):
    """Decorator argument: marks an ``nl`` function with its activation function."""
    def mark(fn):
        fn.act_func = func
        return fn
    return mark


def _label(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


# The operations and functions the tracer hands on are always the members ``Alu.<name>`` and
# ``Act.<name>`` themselves, so that it can compare them by identity: a pybind enum's ``==`` and
# hash each cost a call into the binding. (A member built some other way, e.g. from its value,
# is swapped for the attribute.)
_ALU_MEMBERS = {id(m): m for m in Alu.__members__.values()}
_ACT_MEMBERS = {id(m): m for m in Act.__members__.values()}
_ALU_BY_FUNCTION: dict = {}  # functions seen -> their operation (functions hash by identity)
_ACT_BY_FUNCTION: dict = {}

#: ids of the BITVEC members, to test ``id(op) in BITVEC_IDS`` without hashing the enum
BITVEC_IDS = frozenset(id(op) for op in BITVEC)
#: ids of the operators a reduction along the free axes folds with
#: (:func:`neuronxsim.bir.legality.is_reduce_op`, the list's one home)
REDUCE_IDS = frozenset(id(op) for op in Alu.__members__.values() if legality.is_reduce_op(op))


def alu_op(fn, what: str, loc):
    if fn.__class__ is Alu:
        op = _ALU_MEMBERS.get(id(fn))
        return op if op is not None else getattr(Alu, fn.name)
    try:
        return _ALU_BY_FUNCTION[fn]
    except (KeyError, TypeError):
        pass
    op = getattr(fn, "alu_op", None)
    if op is None:
        try:
            op = _NUMPY_ALU.get(fn)
        except TypeError:
            op = None
    if op is None:
        why = getattr(fn, "not_alu_op", None)
        if why is None:
            try:
                why = _NUMPY_NOT_ALU.get(fn)
            except TypeError:
                pass
        if why is not None:
            raise NKIError(f"{what}: {why}", loc)
        raise NKIError(f"{what}: {_label(fn)} is not an ALU operation (use nl.add, "
                       "nl.multiply, np.maximum, ...)", loc)
    _ALU_BY_FUNCTION[fn] = op
    return op


def act_func(fn, loc):
    if fn.__class__ is Act:
        func = _ACT_MEMBERS.get(id(fn))
        return func if func is not None else getattr(Act, fn.name)
    try:
        return _ACT_BY_FUNCTION[fn]
    except (KeyError, TypeError):
        pass
    func = getattr(fn, "act_func", None)
    if func is None:
        try:
            func = _NUMPY_ACT.get(fn)
        except TypeError:
            func = None
    if func is None:
        raise NKIError(f"{_label(fn)} is not an activation function of the Scalar Engine "
                       "(use nl.exp, nl.tanh, nl.gelu, nl.copy, np.exp, ...)", loc)
    _ACT_BY_FUNCTION[fn] = func
    return func
