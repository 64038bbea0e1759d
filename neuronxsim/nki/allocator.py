"""SBUF and PSUM allocation by live range, as the NKI compiler allocates.

A storage lives from the first to the last instruction that touches it (the live ranges of
the liveness pass), so unrolled loop iterations reuse space: only what is live at one moment
must fit. Storages are placed in order of their first use, each into a free range of the
per-partition address space; the search starts where the previous placement ended and wraps
around ("next fit"), so consecutive loop iterations get different buffers while space allows,
and the engines can overlap one iteration's loads with the previous one's compute. When a
storage fits nowhere, placing everything again, packed (largest and longest-lived first, each at
the lowest address free over its live range), is tried first: next fit can scatter long-lived
tiles among short-lived ones until no free range is large enough although the live tiles would
fit. If that does not fit either, SBUF tiles are spilled (:mod:`.spill`) until the storage fits;
what no spill can fit (PSUM, a tile larger than SBUF, tiles the kernel placed itself) is refused
with the list of what is live at that moment. A pending reload is placed (prefetched) before the
next tile as soon as both fit and it leaves room for every tile placed before its use.

PSUM is handed out in whole 2 KiB banks: every PSUM tile sits in its own bank(s), so a matmul
accumulation group never shares a bank with another live tile.

A storage a direct allocation placed (``Storage.placement``: start partition and byte address)
stays where the kernel put it; two such storages whose partitions and bytes overlap must not be
live at the same time (the compiler's lifetime conflict: one would overwrite the other), and the
other storages are placed around those live at the same time.
"""

from __future__ import annotations

import bisect
import heapq

from neuronxsim.starfish.lib import _core

from .errors import NKIAllocationError
from .spill import Spiller
from .tensor import PSUM, PSUM_BANK_BYTES, SBUF, Storage
from .tracer import PSUM_BYTES

SBUF_ALIGN = 64  # bytes; keeps tiles on DMA-friendly boundaries
#: per on-chip memory, what a tile's bytes per partition are rounded up to (PSUM: whole banks)
ALIGN = {SBUF: SBUF_ALIGN, PSUM: PSUM_BANK_BYTES}


def aligned_bytes(st: Storage, align: int) -> int:
    """The bytes per partition storage ``st`` holds once placed by the allocator (rounded up to
    ``align``)."""
    return -(-st.bytes_per_partition // align) * align

# _place's loop for kernels that place no tile themselves, up to the first tile that fits
# nowhere (cpp/python/trace_alloc_next_fit.cpp; it orders the storages by first use and sizes
# them as below); _place then starts again, with spilling and packing.
_next_fit_storages = _core.nki.next_fit_storages
# _used_on_chip for storages of exactly Storage (trace_alloc_split.cpp): a trace makes about one
# storage per instruction, and the loop was half of the pass
_used_on_chip_in_c = _core.nki.used_on_chip
# next_fit_storages computes the stock Storage.bytes_per_partition (layout.row * dtype.itemsize)
# of plain storages itself, without the property's Python call, while the class has that
# property (_place checks, once per call).
_STOCK_BYTES_PER_PARTITION = Storage.__dict__["bytes_per_partition"]


class Allocation:
    """The allocation pass: ``program.addr[sid]`` of every used on-chip storage (None for the
    others), ``program.peak_bytes`` (bytes per partition held at the busiest moment, by space)
    and ``program.spills`` (the spill transfers it added, see :mod:`.spill`), from the live
    ranges of :class:`~neuronxsim.nki.passes.Liveness`. ``spill=False`` refuses a kernel whose
    SBUF tiles do not fit instead of spilling."""

    name = "allocation"

    def __init__(self, spill: bool = True):
        self.spill = spill

    def run(self, program) -> None:
        """A refusal (what does not fit, and what is live then) is left in ``program.refusal``,
        with this pass, for :class:`~neuronxsim.nki.pressure.PressureSchedule`."""
        kernel_storages = len(program.storages)
        try:
            self._allocate(program)
        except NKIAllocationError as refusal:
            # SBUF spills placed before a PSUM refusal added storages no instruction uses: a
            # refused allocation leaves the storages as it found them, to be allocated again
            del program.storages[kernel_storages:]
            # (without its traceback, whose frames hold the program: a reference cycle)
            program.refusal = (self, refusal.with_traceback(None))

    def _allocate(self, program) -> None:
        first_use, last_use = program.first_use, program.last_use
        addr = [None] * len(program.storages)
        # (in C for plain storages: cpp/python/trace_alloc_split.cpp; None leaves it to Python)
        split = _used_on_chip_in_c(program.storages, first_use, Storage, SBUF, PSUM)
        used = _used_on_chip(program.storages, first_use) if split is None else \
            {SBUF: split[0], PSUM: split[1]}
        program.addr = addr
        spiller = Spiller(program.ops, program.storages, addr)
        program.peak_bytes = {
            SBUF: _place(used[SBUF], SBUF, program.sbuf_bytes, ALIGN[SBUF], first_use, last_use,
                         addr, spiller if self.spill else None),
            PSUM: _place(used[PSUM], PSUM, PSUM_BYTES, ALIGN[PSUM], first_use, last_use,
                         addr)}
        program.spills = spiller.summary()
        if spiller.transfers:
            program.ops = spiller.apply(program.ops)
            from .passes import Liveness  # (passes imports this module)
            Liveness().run(program)  # the transfers and the reloaded tiles' ranges


def _used_on_chip(storages: list, first_use: list) -> dict[str, list]:
    """The on-chip storages an instruction uses, by kind (SBUF, PSUM), in storage order."""
    used = {SBUF: [], PSUM: []}
    for st in storages:
        if st.on_chip and first_use[st.sid] >= 0:
            used[st.kind].append(st)
    return used


def _place(storages: list[Storage], kind: str, capacity: int, align: int, first_use: list,
           last_use: list, addr: list, spiller: Spiller | None = None) -> int:
    """Places ``storages`` (see the module docstring); with a ``spiller``, evicts tiles instead
    of refusing and places the tiles that reload them as they come."""
    # the common case, in C: no tile placed by the kernel, next fit, as below, while every tile
    # fits (None: nothing placed)
    plain = Storage if Storage.__dict__.get("bytes_per_partition") is \
        _STOCK_BYTES_PER_PARTITION else None
    peak = _next_fit_storages(storages, first_use, last_use, capacity, align, addr, plain)
    if peak is not None:
        return peak
    storages.sort(key=lambda st: first_use[st.sid])
    fixed = [st for st in storages if st.placement is not None]
    if fixed:
        _check_bounds(fixed, kind, capacity)
        _check_lifetimes(fixed, kind, first_use, last_use)
        pinned = [(st.placement[1], st.placement[1] + st.bytes_per_partition, st) for st in fixed]
    live: list[tuple[int, int, Storage]] = []  # (addr, end, storage), sorted by addr
    expiry: list[tuple[int, int, tuple]] = []  # heap of (last_use, placement number, live entry)
    evicted: set[int] = set()  # ids of live entries a spill removed (still in expiry)
    reloads: list = []  # heap of (position, number, stretch) of reload tiles to place
    packed_in_vain = False
    rover = 0
    held = peak = 0
    number = 0
    upcoming = 0  # storages[upcoming] is the next kernel tile to place
    st = storages[0] if storages else None

    def expire(position):  # the live entries last used before ``position`` leave
        nonlocal held
        while expiry and expiry[0][0] < position:
            gone = heapq.heappop(expiry)[2]
            if id(gone) in evicted:
                evicted.discard(id(gone))
                continue
            live.remove(gone)
            held -= gone[1] - gone[0]

    while st is not None or reloads:
        number += 1
        if reloads and (st is None or reloads[0][0] < first_use[st.sid]):
            first, _, stretch = heapq.heappop(reloads)
            placing, last, needed = stretch.storage, stretch.last, stretch.uses[0]
        else:
            expire(first_use[st.sid])
            if reloads and not fixed and st.placement is None and \
                    _fits_both(live, reloads[0][2].storage, st, align, capacity, rover) and \
                    _room_until_use(reloads[0][2], expiry, evicted, reloads, storages, upcoming,
                                    first_use, last_use, align, capacity):
                # prefetch: the next reload takes the space free now, before this tile
                stretch = heapq.heappop(reloads)[2]
                spiller.prefetch(stretch, first_use[st.sid])
                placing, first, last = stretch.storage, stretch.first, stretch.last
                needed = stretch.uses[0]
            else:
                placing, first, last = st, first_use[st.sid], last_use[st.sid]
                needed = first
                upcoming += 1
                st = storages[upcoming] if upcoming < len(storages) else None
        expire(first)
        if placing.placement is not None:
            at = placing.placement[1]
            size = placing.bytes_per_partition
        else:
            size = aligned_bytes(placing, align)
            while True:
                taken = live
                if fixed:  # the placed storages live at any moment of this one's range
                    blockers = [e for e in pinned if first_use[e[2].sid] <= last and
                                first <= last_use[e[2].sid]]
                    if blockers:
                        taken = sorted(live + blockers, key=_start)
                at = _next_fit(taken, size, capacity, rover)
                if at is not None:
                    break
                if not packed_in_vain and (spiller is None or not spiller.transfers):
                    # fragmented, perhaps: place everything again, packed
                    if _pack(storages, capacity, align, first_use, last_use, addr):
                        return peak_held(storages, align, first_use, last_use)
                    packed_in_vain = True
                victim = None
                if spiller is not None and size <= capacity:
                    victim = spiller.victim(live, needed, first_use, last_use)
                if victim is None:
                    raise _refusal(placing, kind, size, capacity, taken, spiller is not None)
                live.remove(victim)
                evicted.add(id(victim))
                held -= victim[1] - victim[0]
                reload = spiller.evict(victim[2], needed)
                heapq.heappush(reloads, (reload.first, len(spiller.transfers), reload))
            rover = at + size
        addr[placing.sid] = at
        entry = (at, at + size, placing)
        live.insert(bisect.bisect(live, (at, at + size)), entry)
        heapq.heappush(expiry, (last, number, entry))
        held += size
        if held > peak:
            peak = held
    return peak


def _pack(storages: list, capacity: int, align: int, first_use: list, last_use: list,
          addr: list) -> bool:
    """The fallback when next fit leaves no free range large enough although the tiles live at
    that moment would fit (long-lived tiles scattered among short-lived ones): every storage
    placed again, the kernel's placements first, then the others largest and longest-lived
    first, each at the lowest address free during its whole live range. True if all fit
    (``addr`` then holds the new placement)."""
    placed: list = []  # (first, last, addr, end)
    order = [st for st in storages if st.placement is not None] + sorted(
        (st for st in storages if st.placement is None),
        key=lambda st: (-st.bytes_per_partition,
                        first_use[st.sid] - last_use[st.sid], first_use[st.sid]))
    new = {}
    for st in order:
        first, last = first_use[st.sid], last_use[st.sid]
        if st.placement is not None:
            at, size = st.placement[1], st.bytes_per_partition
        else:
            size = aligned_bytes(st, align)
            taken = sorted((a, e) for f, l, a, e in placed if f <= last and first <= l)
            at = prev = 0
            for a, e in taken:
                if a - prev >= size:
                    break
                prev = max(prev, e)
            at = prev
            if at + size > capacity:
                return False
        new[st.sid] = at
        placed.append((first, last, at, at + size))
    for sid, at in new.items():
        addr[sid] = at
    return True


def peak_held(storages: list, align: int, first_use: list, last_use: list) -> int:
    """Bytes per partition held at the busiest moment."""
    events = []
    for st in storages:
        size = st.bytes_per_partition if st.placement is not None else aligned_bytes(st, align)
        events.append((first_use[st.sid], size))
        events.append((last_use[st.sid] + 1, -size))
    events.sort(key=lambda e: (e[0], e[1]))
    held = peak = 0
    for _, delta in events:
        held += delta
        peak = max(peak, held)
    return peak


def _start(entry: tuple) -> int:
    return entry[0]


def _check_bounds(fixed: list, kind: str, capacity: int):
    """Refuses a directly placed storage that ends past the end of its space."""
    for st in fixed:
        at = st.placement[1]
        end = at + st.bytes_per_partition
        if end > capacity:
            raise NKIAllocationError(
                f"tile {st.describe()} at address {at} needs bytes [{at}, {end}) of each "
                f"partition; {'SBUF' if kind == SBUF else 'PSUM'} has {capacity}", st.created_at)


def _check_lifetimes(fixed: list, kind: str, first_use: list, last_use: list):
    """Refuses two directly placed storages that share partitions and bytes while both live
    (``fixed`` in order of first use)."""
    active: list = []
    for st in fixed:
        first = first_use[st.sid]
        active = [o for o in active if last_use[o.sid] >= first]
        p0, a0 = st.placement
        p1, a1 = p0 + st.layout.partitions, a0 + st.bytes_per_partition
        for other in active:
            q0, b0 = other.placement
            q1, b1 = q0 + other.layout.partitions, b0 + other.bytes_per_partition
            if p0 < q1 and q0 < p1 and a0 < b1 and b0 < a1:
                name = "SBUF" if kind == SBUF else "PSUM"
                raise NKIAllocationError(
                    f"{name} lifetime conflict: tile {st.describe()} is placed at bytes [{a0}, "
                    f"{a1}) of partitions [{p0}, {p1}), which {other.describe()} (bytes [{b0}, "
                    f"{b1}) of partitions [{q0}, {q1})) still holds; two tiles placed on the "
                    "same memory must not be live at the same time (give the tensor more "
                    "physical tiles, or end the other's use first)", st.created_at)
        active.append(st)


def _room_until_use(stretch, expiry: list, evicted: set, reloads: list, storages: list,
                    upcoming: int, first_use: list, last_use: list, align: int,
                    capacity: int) -> bool:
    """Whether reload ``stretch``, placed now, leaves room for every tile placed before its use
    (the bytes live at each of their first uses, pending reloads included), so that loading it
    early evicts nothing it would not."""
    use = stretch.uses[0]
    ends = [(last, e[1] - e[0]) for last, _, e in expiry if id(e) not in evicted]
    ends += [(r.last, aligned_bytes(r.storage, align)) for pos, _, r in reloads
             if r is not stretch and pos < use]
    starts = [pos for pos, _, r in reloads if r is not stretch and pos < use]
    extra = aligned_bytes(stretch.storage, align)
    k = upcoming
    while k < len(storages) and first_use[storages[k].sid] < use:
        st = storages[k]
        ends.append((last_use[st.sid], aligned_bytes(st, align)))
        starts.append(first_use[st.sid])
        k += 1
    for at in starts:
        held = sum(size for last, size in ends if last >= at)  # (an upper bound: some start later)
        if held + extra > capacity:
            return False
    return True


def _fits_both(live: list, early, then, align: int, capacity: int, rover: int) -> bool:
    """Whether storage ``early`` and then storage ``then`` both fit next to ``live`` now (next
    fit from ``rover``, as they would be placed)."""
    size = aligned_bytes(early, align)
    at = _next_fit(live, size, capacity, rover)
    if at is None:
        return False
    with_early = sorted(live + [(at, at + size, early)], key=_start)
    return _next_fit(with_early, aligned_bytes(then, align), capacity,
                     at + size) is not None


def _next_fit(live: list, size: int, capacity: int, rover: int) -> int | None:
    """The first free range of ``size`` bytes at or after ``rover``, wrapping around."""
    if size > capacity:
        return None
    wrapped = None
    prev = 0
    for addr, end, _ in live:
        if addr - prev >= size:
            start = prev if prev >= rover else rover
            if addr - start >= size:
                return start
            if wrapped is None:
                wrapped = prev
        if end > prev:  # (sorted by start; placed storages may overlap others in bytes)
            prev = end
    if capacity - prev >= size:
        start = prev if prev >= rover else rover
        if capacity - start >= size:
            return start
        if wrapped is None:
            wrapped = prev
    return wrapped


def _refusal(st: Storage, kind: str, size: int, capacity: int, live: list,
             spilling: bool) -> NKIAllocationError:
    name = "SBUF" if kind == SBUF else "PSUM"
    if size > capacity:
        return NKIAllocationError(
            f"{name} overflow: tile {st.describe()} needs {size} bytes per partition, more than "
            f"the {capacity} bytes per partition {name} has; no spill can make one tile fit "
            "(split it into smaller tiles)", st.created_at)
    held = sum(end - addr for addr, end, _ in live)
    top = sorted(live, key=lambda e: e[0] - e[1])[:6]
    listing = "; ".join(f"{s.describe()} {end - addr} B" for addr, end, s in top)
    more = f" and {len(live) - len(top)} more" if len(live) > len(top) else ""
    why = ""
    if spilling:
        why = ("; none of them can be spilled: the kernel placed them (nki.compiler "
               "allocations, address=) or this instruction uses them")
    elif kind == PSUM:
        why = "; PSUM tiles are not spilled (DMA does not reach PSUM)"
    return NKIAllocationError(
        f"{name} overflow: tile {st.describe()} needs {size} bytes per partition, but {held} of "
        f"the {capacity} bytes per partition are held by {len(live)} tiles live at that moment "
        f"({listing}{more}); a tile lives from its first write to its last read{why}",
        st.created_at)
