"""``neuronxsim.nki.compiler`` (``ncc``): allocation control and compiler directives of the 2.2x
SDKs.

**Direct allocation.** ``buffer=ncc.sbuf.alloc(func)`` / ``ncc.sbuf.mod_alloc(...)`` (and the PSUM
forms) place each logical block of an on-chip tensor where the kernel says instead of where the
allocator would: ``func(idx=..., pdim_size=..., fdim_size=...)`` (called by keyword, as the
compiler calls it) returns ``(start_partition, byte_addr)``
(SBUF) or ``(bank, start_partition, byte_addr)`` (PSUM) for block index ``idx``;
``mod_alloc`` is the documented modulo scheme (logical block ``i`` on physical tile
``i % n``). Logical blocks that share a physical tile are one memory: the allocation pass refuses
a kernel whose blocks sharing bytes are live at the same time (the compiler's lifetime
conflict). ``ncc.sbuf`` / ``ncc.psum`` (and ``auto_alloc()``) are automatic allocation, the same
as ``nl.sbuf`` / ``nl.psum``.

**Directives.** ``skip_middle_end_transformations`` and ``enable_stack_allocator`` choose compiler
passes (the simulator runs the instructions as traced: there are no middle-end
transformations, and the allocation is the tracer's); ``force_auto_alloc`` makes every direct
allocation of the kernel automatic; ``no_reorder()`` and ``multi_buffer(n)`` are loop
``directives=`` (the trace keeps program order; multi-buffering is the allocator's by live
range).
"""

from __future__ import annotations

import math

from .errors import NKIError, caller_location
from .tensor import NUM_PARTITIONS, PSUM, PSUM_BANK_BYTES, SBUF
from .tracer import PSUM_BYTES

PSUM_BANKS = PSUM_BYTES // PSUM_BANK_BYTES


class _Space(str):
    """An on-chip buffer (``"sbuf"`` or ``"psum"``) as ``ncc.sbuf`` / ``ncc.psum``: the buffer
    marker of automatic allocation (equal to ``nl.sbuf`` / ``nl.psum``) that also makes the
    direct allocations of its space."""

    def auto_alloc(self) -> "_Space":
        """Automatic allocation (what ``buffer=nl.sbuf`` means)."""
        return self

    def alloc(self, func) -> "DirectAllocation":
        """Each logical block where ``func(idx, pdim_size, fdim_size)`` says (see the module
        docstring)."""
        if not callable(func):
            raise NKIError(f"ncc.{self}.alloc takes a function (idx, pdim_size, fdim_size) -> "
                           f"placement, not {type(func).__name__}", caller_location())
        return DirectAllocation(str(self), func, f"ncc.{self}.alloc")

    def mod_alloc(self, *, base_addr=None, base_bank=None, base_partition=0, num_par_tiles=(),
                  num_free_tiles=(), num_bank_tiles=()) -> "DirectAllocation":
        """The modulo allocation: logical block ``idx`` on physical tile ``idx % num_*_tiles``
        along partitions, the free dimension (and, in PSUM, banks) from the bases given."""
        loc = caller_location()
        if self == SBUF:
            if base_addr is None:
                raise NKIError("ncc.sbuf.mod_alloc needs base_addr", loc)
            if base_bank is not None or num_bank_tiles:
                raise NKIError("ncc.sbuf.mod_alloc: base_bank and num_bank_tiles are PSUM's", loc)
        else:
            if base_bank is None:
                raise NKIError("ncc.psum.mod_alloc needs base_bank", loc)
            base_addr = 0 if base_addr is None else base_addr
        for name, value in (("base_addr", base_addr), ("base_bank", base_bank),
                            ("base_partition", base_partition)):
            if value is not None and (type(value) is not int or value < 0):
                raise NKIError(f"ncc.{self}.mod_alloc: {name} must be a non-negative integer, "
                               f"not {value!r}", loc)
        shapes = {}
        for name, value in (("num_par_tiles", num_par_tiles), ("num_free_tiles", num_free_tiles),
                            ("num_bank_tiles", num_bank_tiles)):
            value = tuple(value)
            if any(type(n) is not int or n < 1 for n in value):
                raise NKIError(f"ncc.{self}.mod_alloc: {name} must be a tuple of positive "
                               f"integers, not {value!r}", loc)
            shapes[name] = value
        par, free, bank = (_modulo(base_partition, shapes["num_par_tiles"]),
                           _modulo(base_addr, shapes["num_free_tiles"]),
                           _modulo(base_bank or 0, shapes["num_bank_tiles"]))
        if self == SBUF:
            def func(*, idx, pdim_size, fdim_size):
                return par(idx, pdim_size), free(idx, fdim_size)
        else:
            def func(*, idx, pdim_size, fdim_size):
                return bank(idx, 1), par(idx, pdim_size), free(idx, fdim_size)
        return DirectAllocation(str(self), func, f"ncc.{self}.mod_alloc")


def _modulo(base: int, tiles: tuple):
    """The documented modulo scheme along one axis: ``base + scale * linear(idx % tiles)``,
    ``tiles`` default (1, 1, ...), extra block dimensions not taking part."""
    def place(idx: tuple, scale: int) -> int:
        shape = tiles or (1,) * len(idx)
        mod = [i % s for i, s in zip(idx, shape)]
        linear = 0
        for dim, i in enumerate(mod):
            linear += i * math.prod(shape[dim + 1:])
        return base + linear * scale
    return place


class DirectAllocation:
    """A ``buffer=`` of direct allocation: the space and the placement function."""

    __slots__ = ("space", "func", "what")

    def __init__(self, space: str, func, what: str):
        self.space = space
        self.func = func
        self.what = what

    def placement(self, idx: tuple, partitions: int, bytes_per_partition: int, capacity: int,
                  loc) -> tuple:
        """``(start_partition, byte address)`` of logical block ``idx`` (PSUM: the bank's bytes
        included), checked against the documented rules."""
        where = self.func(idx=idx, pdim_size=partitions, fdim_size=bytes_per_partition)
        shape = "(start_partition, byte_addr)" if self.space == SBUF else \
            "(bank, start_partition, byte_addr)"
        if not isinstance(where, (tuple, list)):
            raise NKIError(f"{self.what}: the placement of block {idx} must be {shape}, not "
                           f"{where!r}", loc)
        where = tuple(where)
        if self.space == SBUF:
            if len(where) != 2:
                raise NKIError(f"{self.what}: the placement of block {idx} must be "
                               f"(start_partition, byte_addr), not {where!r}", loc)
            start, addr = where
            bank = None
        else:
            if len(where) != 3:
                raise NKIError(f"{self.what}: the placement of block {idx} must be "
                               f"(bank, start_partition, byte_addr), not {where!r}", loc)
            bank, start, addr = where
            if type(bank) is not int or not 0 <= bank < PSUM_BANKS:
                raise NKIError(f"{self.what}: block {idx} is placed in PSUM bank {bank!r}; there "
                               f"are {PSUM_BANKS}", loc)
            if bytes_per_partition > PSUM_BANK_BYTES or addr + bytes_per_partition > \
                    PSUM_BANK_BYTES:
                raise NKIError(f"{self.what}: block {idx} needs bytes [{addr}, "
                               f"{addr + bytes_per_partition}) of a {PSUM_BANK_BYTES}-byte PSUM "
                               "bank; a physical PSUM tile cannot span banks", loc)
        for name, value in (("start_partition", start), ("byte_addr", addr)):
            if type(value) is not int or value < 0:
                raise NKIError(f"{self.what}: block {idx} has {name} {value!r}; it must be a "
                               "non-negative integer", loc)
        if start + partitions > NUM_PARTITIONS or \
                partitions > 64 and start != 0 or \
                32 < partitions <= 64 and start not in (0, 64) or \
                partitions <= 32 and start % 32:
            raise NKIError(f"{self.what}: block {idx} of {partitions} partitions starts at "
                           f"partition {start}, breaking the start-partition rule (more than 64 "
                           "partitions start at 0; 33-64 at 0 or 64; up to 32 at 0, 32, 64 or "
                           "96)", loc)
        if bank is not None:
            addr += bank * PSUM_BANK_BYTES
        if addr + bytes_per_partition > capacity:
            raise NKIError(f"{self.what}: block {idx} needs bytes [{addr}, "
                           f"{addr + bytes_per_partition}) of each partition; "
                           f"{self.space.upper()} has {capacity}", loc)
        return start, addr

    def __repr__(self):
        return f"<{self.what}>"


sbuf = _Space(SBUF)
psum = _Space(PSUM)


def skip_middle_end_transformations(func=None):
    """Decorator of the compiler's pass selection; the simulator runs the kernel as traced."""
    return _passthrough(func)


def enable_stack_allocator(func=None, log_level=50):
    """Decorator choosing the compiler's stack allocator; the simulator's allocation is the
    tracer's (by live range)."""
    if type(log_level) is not int:
        raise NKIError(f"enable_stack_allocator: log_level is a logging level, not "
                       f"{log_level!r}", caller_location())
    return _passthrough(func)


def force_auto_alloc(func=None):
    """Decorator: every direct allocation in the kernel is allocated automatically instead."""
    from .kernel import Kernel, jit
    def mark(f):
        kernel = f if isinstance(f, Kernel) else jit(f)
        kernel.force_auto_alloc = True
        return kernel
    return mark if func is None else mark(func)


def _passthrough(func):
    return (lambda f: f) if func is None else func


class Directive:
    """A loop directive (``nl.affine_range(..., directives=...)``): ``no_reorder`` keeps the
    loop's instructions in program order (as the trace always does); ``multi_buffer(n)`` asks
    for ``n`` buffers per tile the loop writes (the allocator's live ranges give every iteration
    its own buffer while space allows)."""

    __slots__ = ("kind", "factor")

    def __init__(self, kind: str, factor: int = 1):
        self.kind = kind
        self.factor = factor

    def __repr__(self):
        return f"ncc.{self.kind}({self.factor if self.kind == 'multi_buffer' else ''})"


def no_reorder() -> Directive:
    return Directive("no_reorder")


def multi_buffer(factor=2) -> Directive:
    if type(factor) is not int or factor < 1:
        raise NKIError(f"multi_buffer: factor must be a positive integer, not {factor!r}",
                       caller_location())
    return Directive("multi_buffer", factor)


__all__ = ["sbuf", "psum", "DirectAllocation", "skip_middle_end_transformations",
           "enable_stack_allocator", "force_auto_alloc", "no_reorder", "multi_buffer",
           "Directive"]
