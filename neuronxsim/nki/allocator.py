"""SBUF and PSUM allocation by live range, as the NKI compiler allocates.

A storage lives from the first to the last enabled instruction that touches it (the tracer
keeps these ranges as it records), so unrolled loop iterations reuse space: only what is live at
one moment must fit. Storages are placed in order of their first use, each into a free range of
the per-partition address space; the search starts where the previous placement ended and wraps
around ("next fit"), so consecutive loop iterations get different buffers while space allows,
and the engines can overlap one iteration's loads with the previous one's compute. A storage that fits nowhere is refused with the list of
what is live at that moment.

PSUM is handed out in whole 2 KiB banks: every PSUM tile sits in its own bank(s), so a matmul
accumulation group never shares a bank with another live tile.
"""

from __future__ import annotations

import bisect
import heapq
import operator

from .errors import NKIAllocationError
from .tensor import PSUM, PSUM_BANK_BYTES, SBUF, Storage
from .tracer import PSUM_BYTES, CoreTrace

SBUF_ALIGN = 64  # bytes; keeps tiles on DMA-friendly boundaries


def compute_live_ranges(core: CoreTrace):
    """Sets ``first_use`` / ``last_use`` of every storage from the enabled instructions."""
    for st in core.storages:
        st.first_use = st.last_use = -1
    index = 0
    for op in core.ops:
        if not op.enabled:
            continue
        for operands in (op.ins, op.outs):
            for acc in operands:
                st = acc.storage
                if st.first_use < 0:
                    st.first_use = index
                st.last_use = index
        index += 1


def allocate(core: CoreTrace, sbuf_bytes: int) -> dict:
    """Places every used on-chip storage of ``core``; returns peak bytes per partition by space.
    Storages in ``core.pinned_addresses`` (``{storage: byte address}``, a kernel's manual
    allocation, NKI 0.6's ``nl.ndarray(address=...)``) sit at their address; the others are
    placed around the pinned ones live at the same time."""
    if core.ranges_stale:
        compute_live_ranges(core)
    used = {SBUF: [], PSUM: []}
    for st in core.storages:
        if st.first_use >= 0 and st.on_chip:
            used[st.kind].append(st)
    pinned = getattr(core, "pinned_addresses", None) or {}
    return {SBUF: _place(used[SBUF], SBUF, sbuf_bytes, SBUF_ALIGN, pinned),
            PSUM: _place(used[PSUM], PSUM, PSUM_BYTES, PSUM_BANK_BYTES, pinned)}


def _pin(storages: list[Storage], kind: str, capacity: int, pinned: dict) -> list:
    """Places the pinned storages; returns their (addr, end, storage), by first use."""
    entries = []
    for st in storages:
        addr = pinned.get(st)
        if addr is None:
            continue
        end = addr + st.bytes_per_partition
        if end > capacity:
            raise NKIAllocationError(
                f"tile {st.describe()} at address {addr} needs bytes [{addr}, {end}) of each "
                f"partition; {'SBUF' if kind == SBUF else 'PSUM'} has {capacity}", st.created_at)
        st.addr = addr
        entries.append((addr, end, st))
    return entries


def _place(storages: list[Storage], kind: str, capacity: int, align: int,
           pinned: dict = None) -> int:
    storages.sort(key=_first_use)
    fixed = _pin(storages, kind, capacity, pinned) if pinned else []
    live: list[tuple[int, int, Storage]] = []  # (addr, end, storage), sorted by addr
    expiry: list[tuple[int, int, tuple]] = []  # heap of (last_use, placement number, live entry)
    rover = 0
    held = peak = 0
    for number, st in enumerate(storages):
        first_use = st.first_use
        while expiry and expiry[0][0] < first_use:
            gone = heapq.heappop(expiry)[2]
            live.remove(gone)
            held -= gone[1] - gone[0]
        if fixed and st in pinned:
            continue
        size = -(-st.bytes_per_partition // align) * align
        blockers = [e for e in fixed if e[2].first_use <= st.last_use and
                    st.first_use <= e[2].last_use] if fixed else None
        addr = _next_fit(sorted(live + blockers, key=_start) if blockers else live, size,
                         capacity, rover)
        if addr is None:
            raise _refusal(st, kind, size, capacity, live + (blockers or []))
        st.addr = addr
        rover = addr + size
        entry = (addr, rover, st)
        # Live ranges are disjoint: no entry starts at addr, so (addr,) sorts by start alone.
        live.insert(bisect.bisect(live, (addr,)), entry)
        heapq.heappush(expiry, (st.last_use, number, entry))
        held += size
        if held > peak:
            peak = held
    return peak


_first_use = operator.attrgetter("first_use")
_start = operator.itemgetter(0)


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
        prev = end if end > prev else prev  # sorted by start (pinned ranges may overlap)
    if capacity - prev >= size:
        start = prev if prev >= rover else rover
        if capacity - start >= size:
            return start
        if wrapped is None:
            wrapped = prev
    return wrapped


def _refusal(st: Storage, kind: str, size: int, capacity: int, live: list) -> NKIAllocationError:
    held = sum(end - addr for addr, end, _ in live)
    top = sorted(live, key=lambda e: e[0] - e[1])[:6]
    listing = "; ".join(f"{s.describe()} {end - addr} B" for addr, end, s in top)
    more = f" and {len(live) - len(top)} more" if len(live) > len(top) else ""
    name = "SBUF" if kind == SBUF else "PSUM"
    return NKIAllocationError(
        f"{name} overflow: tile {st.describe()} needs {size} bytes per partition, but {held} of "
        f"the {capacity} bytes per partition are held by {len(live)} tiles live at that moment "
        f"({listing}{more}); a tile lives from its first write to its last read",
        st.created_at)
