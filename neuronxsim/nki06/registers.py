"""Virtual registers and the loops that run on them (``nisa.register_*``, ``nl.fori_loop``,
``nl.while_loop``, ``nl.dynamic_range``).

The trace unrolls every loop while the kernel's Python runs, so a register is useful exactly
when its value is known at that time: set from an integer (``register_alloc(5)``,
``register_move``) or a loop's iteration value. Such registers index tensors, offset access
patterns (``.ap(scalar_offset=i)``) and bound loops like the integers they hold; the loops are
unrolled (their time is that of the unrolled body, without the engines' branch overhead).

A register loaded from memory (``register_load``) holds a value only the device knows; using
it as a loop bound, condition or offset is refused, naming the line that loaded it.
"""

from __future__ import annotations

import warnings

from neuronxsim.nki import instructions as _ins
from neuronxsim.nki.errors import NKIError, caller_location
from neuronxsim.nki.tracer import current

from ._api import api
from .tensor import NKIObject, NkiTensor

#: How many iterations nl.while_loop / `while reg:` may unroll before the trace gives up.
MAX_WHILE_ITERATIONS = 1 << 20


class VirtualRegister(NKIObject):
    """A register of an engine sequencer. ``value``: the integer it holds when that is known
    while tracing, else None (loaded from memory at ``loaded_at``)."""

    __slots__ = ("value", "frozen", "loaded_at")

    def __init__(self, state=None, frozen=False):
        if state is not None and not isinstance(state, int):
            raise NKIError(f"VirtualRegister: the initial value must be an int, not "
                           f"{type(state).__name__}", caller_location())
        self.value = state
        self.frozen = bool(frozen)
        self.loaded_at = None

    def known(self, what: str) -> int:
        """The value, or the error that says why it is not known."""
        if self.value is None:
            where = f" at {self.loaded_at.short}" if self.loaded_at is not None else ""
            raise NKIError(f"{what}: this register's value is loaded from memory at run time "
                           f"(nisa.register_load{where}); neuronxsim unrolls loops while tracing "
                           "and needs register values known then (set them with "
                           "nisa.register_alloc(n) or nisa.register_move)", caller_location())
        return self.value

    def __index__(self):
        return self.known("a register used as an integer")

    def __int__(self):
        return self.known("int(register)")

    def __bool__(self):
        return self.known("a register used as a condition") != 0

    def __repr__(self):
        return f"VirtualRegister({'?' if self.value is None else self.value})"


def _value(x, what: str) -> int:
    if isinstance(x, VirtualRegister):
        return x.known(what)
    if isinstance(x, bool) or not isinstance(x, int):
        try:
            return int(x.__index__())
        except (AttributeError, TypeError):
            raise NKIError(f"{what}: expected an int or a VirtualRegister, got "
                           f"{type(x).__name__}", caller_location()) from None
    return x


def _writable(dst, what: str) -> VirtualRegister:
    if not isinstance(dst, VirtualRegister):
        raise NKIError(f"{what}: dst must be a VirtualRegister (nisa.register_alloc), not "
                       f"{type(dst).__name__}", caller_location())
    if dst.frozen:
        raise NKIError(f"{what}: a loop's iteration register is read-only", caller_location())
    return dst


@api
def register_alloc(x=None) -> VirtualRegister:
    """A new register, holding ``x`` (an int) or nothing yet."""
    return VirtualRegister(None if x is None else _value(x, "nisa.register_alloc"))


@api
def register_move(dst, src):
    """``dst = src`` (an int or a register)."""
    _writable(dst, "nisa.register_move")
    if isinstance(src, VirtualRegister):
        dst.value, dst.loaded_at = src.value, src.loaded_at
    else:
        dst.value, dst.loaded_at = _value(src, "nisa.register_move: src"), None


@api
def register_load(dst, src):
    """Loads the one element of ``src`` into ``dst`` (its value is then known only at run
    time)."""
    loc = caller_location()
    _writable(dst, "nisa.register_load")
    _scalar_tensor(src, "nisa.register_load: src", loc)
    dst.value, dst.loaded_at = None, loc


@api
def register_store(dst, src):
    """Writes the value of register ``src`` into the one element of ``dst``."""
    loc = caller_location()
    view = _scalar_tensor(dst, "nisa.register_store: dst", loc)
    if not isinstance(src, VirtualRegister):
        raise NKIError("nisa.register_store: src must be a VirtualRegister", loc)
    value = src.known("nisa.register_store")
    if not view.storage.on_chip:
        raise NKIError("nisa.register_store: storing a register into HBM is not modelled; store "
                       "it into an SBUF tensor", loc)
    _ins.memset(current(), view, value, loc)


def _scalar_tensor(t, what: str, loc):
    if not isinstance(t, NkiTensor):
        raise NKIError(f"{what} must be a tensor with one element, not {type(t).__name__}", loc)
    if t.size != 1:
        raise NKIError(f"{what} must have exactly one element; it has shape {list(t.shape)}", loc)
    return t._view_of(what, loc)


def _step(step, what: str) -> int:
    if isinstance(step, VirtualRegister):
        raise NKIError(f"{what}: step must be a compile-time positive integer, not a register",
                       caller_location())
    step = _value(step, what)
    if step < 1:
        raise NKIError(f"{what}: step must be a positive integer, not {step}", caller_location())
    return step


def unrolled_for(lower, upper, body_fun, step=1):
    """``nl.fori_loop``: ``for i in range(lower, upper, step): body_fun(i)`` with ``i`` a
    read-only register."""
    lo = _value(lower, "nl.fori_loop: lower")
    hi = _value(upper, "nl.fori_loop: upper")
    step = _step(step, "nl.fori_loop")
    for i in range(lo, hi, step):
        if body_fun(VirtualRegister(i, frozen=True)) is not None:
            raise NKIError("nl.fori_loop: the body function cannot return a value (carry loop "
                           "state in SBUF or HBM)", caller_location())


def unrolled_while(init, body_fun):
    """``nl.while_loop``: ``r = init; while r != 0: r = body_fun(r)``."""
    if not isinstance(init, VirtualRegister):
        raise NKIError("nl.while_loop: init must be a VirtualRegister", caller_location())
    r = init
    for _ in range(MAX_WHILE_ITERATIONS):
        if r.known("nl.while_loop: the condition") == 0:
            return
        r = body_fun(VirtualRegister(r.value))
        if not isinstance(r, VirtualRegister):
            raise NKIError("nl.while_loop: the body function must return the next condition "
                           f"register, not {type(r).__name__}", caller_location())
    raise NKIError(f"nl.while_loop: still looping after {MAX_WHILE_ITERATIONS} iterations",
                   caller_location())


@api(alias="nl")
def dynamic_range(start, stop=None, step=1):
    """A loop the device would run with register bounds; here unrolled over read-only registers
    (deprecated in NKI 0.6: use nl.fori_loop)."""
    warnings.warn("nl.dynamic_range is deprecated in NKI 0.6; use nl.fori_loop",
                  DeprecationWarning, stacklevel=3)
    if stop is None:
        start, stop = 0, start
    lo = _value(start, "nl.dynamic_range: start")
    hi = _value(stop, "nl.dynamic_range: stop")
    step = _step(step, "nl.dynamic_range")
    return (VirtualRegister(i, frozen=True) for i in range(lo, hi, step))


__all__ = ["VirtualRegister", "register_alloc", "register_move", "register_load",
           "register_store", "unrolled_for", "unrolled_while", "dynamic_range"]
