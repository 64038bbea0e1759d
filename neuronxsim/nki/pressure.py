"""Reordering to fit on-chip memory: the freedom the NKI compiler has when a kernel's tiles do not
fit in program order.

The compiler "allocates physical address to each tiles" by dependency analysis, with a
"space-time tradeoff at liberty" (the 2.2x migration guide on block-dimension tensors): program
order does not bind it. A kernel such as the attention tutorial's v3 writes every block of a
block-dimension PSUM tensor in one loop nest and reads them in later nests; in program order all
blocks are live at once, while running the nests per block together needs a few. When the
allocation refuses, :class:`PressureSchedule` orders the instructions again within their
dependencies, in program order but for an instruction whose new tiles do not fit beside those
live then, which waits until a tile of that memory ends (memory-pressure-aware list
scheduling), and allocates again. Kernels that fit in program order keep it.

Dependencies: an instruction follows every earlier one whose accesses it conflicts with (RAW,
WAR, WAW on any storage, DRAM tensors included, by the bounding box of the access: partitions
and columns on chip, elements off chip, the whole storage for an indirect DMA; so the answer can
only be more ordered than exact), and
the engine state memory does not show stays in program order (ScalarE accumulators, DevicePrint
order, VectorE registers, random generators: ``sim/ListSchedule.h`` ``engineOrders``, which the
instruction scheduler reads too). Matmuls of one accumulation group write the same PSUM tile, so
they keep their order and nothing else writes the tile between them. Nothing is reordered in a
kernel that places tiles itself (it chose their lifetimes), that asks ``no_reorder()`` of a
loop, or whose results depend on positions (a random memset).
"""

from __future__ import annotations

import heapq

from neuronxsim import bir
from neuronxsim.starfish.lib import _core

from .allocator import ALIGN, aligned_bytes
from .record import Access
from .tensor import PSUM, SBUF
from .tracer import PSUM_BYTES


class PressureSchedule:
    """The pass after :class:`~neuronxsim.nki.allocator.Allocation`: if it refused
    (``program.refusal``), reorders ``program.ops`` (see the module docstring) and runs the
    liveness and the same allocation again; if no order is found or it still does not fit, raises
    the first refusal, as it was."""

    name = "pressure-schedule"

    def run(self, program) -> None:
        if program.refusal is None:
            return
        order = pressure_order(program)
        if order is not None:
            first = program.refusal
            program.ops = [program.ops[k] for k in order]
            program.refusal = None
            from .passes import Liveness  # (passes imports this module)
            Liveness().run(program)
            first[0].run(program)  # the allocation that refused
            if program.refusal is None:
                program.reordered = sum(k != i for i, k in enumerate(order))
                return
            program.refusal = first
            del first
        _raise_refusal(program)


def _raise_refusal(program):
    """Raises the allocation's refusal, held by neither the program nor a frame of its traceback
    (a reference cycle that only the cyclic collector frees, with the whole record)."""
    refusal = program.refusal[1]
    program.refusal = None
    try:
        raise refusal
    finally:
        del refusal


def pressure_order(program) -> list[int] | None:
    """A topological order of ``program.ops`` (see the module docstring), as indices; None where
    nothing may be reordered."""
    ops, storages = program.ops, program.storages
    if any(st.placement is not None for st in storages if st.on_chip) or \
            any(_no_reorder(op.loop) for op in ops):
        return None
    users: list[list[int]] = [[] for _ in storages]
    preds: list[set] = [set() for _ in ops]
    seen: dict = {}  # sid -> _Seen
    last_in_order: dict = {}  # engine order bit -> the last op in it
    for k, op in enumerate(ops):
        orders = _engine_orders(op)
        if orders & _ORDER_WHOLE_BLOCK:
            return None
        bit = 1
        while bit <= orders:
            if orders & bit:
                if bit in last_in_order:
                    preds[k].add(last_in_order[bit])
                last_in_order[bit] = k
            bit <<= 1
        indirect = op.fields is not None and "indirect_dim" in op.fields
        for acc, write in _accesses(op):
            sid = acc[0]
            if not users[sid] or users[sid][-1] != k:
                users[sid].append(k)
            box = _WHOLE if indirect else _box(acc)
            on = seen.get(sid)
            if on is None:
                on = seen[sid] = _Seen(acc[3])
            on.meet(box, k, write, preds[k])
    return _list_schedule(program, ops, users, preds)


def _list_schedule(program, ops, users, preds) -> list[int]:
    """Program order where it fits: each step places the first ready instruction (in program
    order) whose new tiles fit beside the tiles live then, by the allocator's bytes (PSUM in
    whole banks); one whose tiles do not fit waits until a tile of that memory ends. If none
    fits, the first ready one (the allocation then spills, or refuses)."""
    space = [None] * len(users)  # per sid: (memory, bytes it holds), None off chip
    capacity = {SBUF: program.sbuf_bytes, PSUM: PSUM_BYTES}
    for st in program.storages:
        if st.on_chip and users[st.sid] and st.kind in capacity:
            space[st.sid] = (st.kind, aligned_bytes(st, ALIGN[st.kind]))
    sids = [sorted({acc[0] for acc, _ in _accesses(op) if space[acc[0]]}) for op in ops]
    remaining = [len(u) for u in users]
    started = [False] * len(users)
    held = dict.fromkeys(capacity, 0)
    waiting = [len(p) for p in preds]
    succs: list[list[int]] = [[] for _ in ops]
    for k, p in enumerate(preds):
        for j in p:
            succs[j].append(k)
    ready = [k for k in range(len(ops)) if waiting[k] == 0]  # a heap of program positions
    deferred = {kind: [] for kind in capacity}  # ready, but their tiles do not fit now

    def misfit(k):  # the memory ``k``'s new tiles do not fit in now, or None
        new = dict.fromkeys(capacity, 0)
        for sid in sids[k]:
            if not started[sid]:
                new[space[sid][0]] += space[sid][1]
        for kind, size in new.items():
            if size and held[kind] + size > capacity[kind]:
                return kind
        return None

    order = []
    while len(order) < len(ops):
        k = None
        while ready:
            j = heapq.heappop(ready)
            kind = misfit(j)
            if kind is None:
                k = j
                break
            deferred[kind].append(j)
        if k is None:  # nothing fits: the first waiting one
            kind = min((kind for kind in deferred if deferred[kind]),
                       key=lambda kind: min(deferred[kind]))
            k = min(deferred[kind])
            deferred[kind].remove(k)
        order.append(k)
        for sid in sids[k]:
            kind, size = space[sid]
            if not started[sid]:
                started[sid] = True
                held[kind] += size
            remaining[sid] -= 1
            if remaining[sid] == 0:
                held[kind] -= size
                for j in deferred[kind]:  # (room now, perhaps)
                    heapq.heappush(ready, j)
                deferred[kind].clear()
        for j in succs[k]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    return order


_ORDER_WHOLE_BLOCK = _core.sim.ORDER_WHOLE_BLOCK
_engine_orders_of = _core.sim.engine_orders


def _engine_orders(op) -> int:
    fields = op.fields or {}
    acc = fields.get("acc", bir.AccumCmd.Idle)
    return _engine_orders_of(op.opcode_number, acc != bir.AccumCmd.Idle,
                             fields.get("mode") == bir.MemsetMode.Random)


def _no_reorder(it) -> bool:
    while it is not None:
        if any(d.kind == "no_reorder" for d in it.loop.directives):
            return True
        it = it.loop.outer
    return False


def _accesses(op):
    """(access, writes) of every operand, fields' accesses (dynamic offsets and the like) read
    and written, as they may be either."""
    for acc in op.ins:
        yield acc, False
    for acc in op.outs:
        yield acc, True
    if op.fields:
        for value in op.fields.values():
            for acc in (value if isinstance(value, (list, tuple)) and
                        not isinstance(value, Access) else (value,)):
                if isinstance(acc, Access):
                    yield acc, True


def _box(acc) -> tuple:
    """(first partition, last partition, first element, last element) the access may touch:
    elements within a partition for an on-chip storage (the whole tile if the pattern leaves
    the partition's row), of the tensor for DRAM (partitions 0, 0)."""
    offset, pairs, storage = acc[1], acc[2], acc[3]
    layout = storage.layout
    if not layout.on_chip:
        return (0, 0) + _span(offset, pairs)
    row = layout.row
    pstep, pnum = pairs[0]
    if row == 0 or pstep % row:
        return (0, layout.partitions - 1, 0, row - 1)
    p0, column = divmod(offset, row)
    lo, hi = _span(column, pairs[1:])
    if lo < 0 or hi >= row:
        return (0, layout.partitions - 1, 0, row - 1)
    return _span(p0, [(pstep // row, pnum)]) + (lo, hi)


def _span(start: int, pairs) -> tuple:
    """The lowest and highest of ``start + sum(i * step)`` over the pairs' ``(step, num)``."""
    lo = hi = start
    for step, num in pairs:
        reach = (num - 1) * step
        if reach < 0:
            lo += reach
        else:
            hi += reach
    return lo, hi


class _Seen:
    """The accesses of the instructions so far on one storage, reads and writes apart (a read
    only meets writes), in buckets of elements (of a partition's row on chip, of the tensor off
    chip), 256 or so per storage, so that an access meets those near it, not every one: the
    attention tutorial's v3 at 8192 has thousands per DRAM tensor. An access over more than a
    few buckets is kept apart, and met by every other; it meets every other itself."""

    __slots__ = ("shift", "reads", "writes", "wide_reads", "wide_writes")

    def __init__(self, storage):
        extent = storage.layout.row if storage.layout.on_chip else storage.elements
        self.shift = max(0, extent.bit_length() - 8)
        self.reads: dict = {}  # bucket -> [(box, op)]
        self.writes: dict = {}
        self.wide_reads: list = []
        self.wide_writes: list = []

    def meet(self, box, k: int, write: bool, preds: set) -> None:
        """Adds op ``k``'s access ``box`` to ``preds``' ops: the earlier accesses it conflicts
        with (RAW, WAR, WAW); then keeps it."""
        first, last = box[2] >> self.shift, box[3] >> self.shift
        wide = last - first >= _WIDE_BUCKETS
        met = [self.writes, self.reads] if write else [self.writes]
        for kept in met:
            near = kept.values() if wide else \
                (kept[b] for b in range(first, last + 1) if b in kept)
            for entries in near:
                _conflicts(entries, box, k, preds)
        for entries in ([self.wide_writes, self.wide_reads] if write else [self.wide_writes]):
            _conflicts(entries, box, k, preds)
        if wide:
            (self.wide_writes if write else self.wide_reads).append((box, k))
            return
        kept = self.writes if write else self.reads
        for b in range(first, last + 1):
            kept.setdefault(b, []).append((box, k))


# An access over more buckets than this is kept apart (see _Seen).
_WIDE_BUCKETS = 8


def _conflicts(entries: list, box, k: int, preds: set) -> None:
    for other, j in entries:
        if j != k and _overlap(other, box):
            preds.add(j)


# Any element of the storage: the box of an indirect DMA's accesses, whose rows are picked when
# the kernel runs.
_WHOLE = (0, 1 << 62, 0, 1 << 62)


def _overlap(a, b) -> bool:
    return a[0] <= b[1] and b[0] <= a[1] and a[2] <= b[3] and b[2] <= a[3]


__all__ = ["PressureSchedule", "pressure_order"]
