"""SBUF spilling, as the NKI compiler spills: when the tiles live at one moment need more SBUF
than the NeuronCore has, a tile that is not needed for a while goes to a DRAM spill buffer and
comes back just before its next use.

The allocator (:mod:`.allocator`) places tiles in order of their first use; when one fits
nowhere, it asks :class:`Spiller` for a victim: the live tile whose next use is furthest away
(Belady's choice), never one the instruction being served reads or writes and never one the
kernel placed itself (``nki.compiler`` allocations and ``address=`` keep their place; a kernel
that asks for more than fits still gets the capacity error). Evicting a tile

* ends its current stretch with a *spill store*, a DMA of the whole tile to a DRAM tensor
  (``<tile>_spill``), right after its last use before the pressure point; a stretch that only
  reads a tile reloaded from that buffer needs no store (the buffer holds the same bytes);
* starts a new stretch: a new SBUF tile (``<tile>_reload``) that a *reload* DMA fills right
  before the next use, placed like any other tile (it may itself be evicted later); the
  instructions from the next use on read and write the new tile.

Both transfers are ordinary ``DMACopy`` instructions, so the numerics are the tile's exact bytes
and the timing model charges the traffic like any other DMA. PSUM is never spilled: DMA does not
reach PSUM, and the compiler keeps PSUM tiles (matmul accumulation groups) in their banks, so a
PSUM overflow stays an error.
"""

from __future__ import annotations

import bisect

from neuronxsim import bir

from .record import new_access, new_op
from .tensor import HBM, NUM_PARTITIONS, SBUF, new_storage, storage_layout
from .tracer import DMA_QUEUES

# Positions of the inserted transfers between the program's instructions (instruction i is at
# position i): a store right after instruction p, a reload right before instruction n (after the
# stores placed after instruction n - 1, so a reload can take the bytes they free).
STORE_AFTER = 0.3
RELOAD_BEFORE = 0.4


class Stretch:
    """One stretch of a tile's life in one SBUF tile: ``storage`` holds the tile from position
    ``first`` to position ``last``; ``uses``: the instruction positions reading or writing it
    (sorted), ``root``: the tile the kernel made (the storage its instructions name)."""

    __slots__ = ("storage", "root", "first", "last", "uses", "reloaded")

    def __init__(self, storage, root, first, last, uses, reloaded: bool):
        self.storage = storage
        self.root = root
        self.first = first
        self.last = last
        self.uses = uses
        self.reloaded = reloaded  # starts with a reload (its DRAM buffer holds its bytes)


class Spiller:
    """Chooses victims and records the transfers for one core's SBUF (see the module docstring).
    ``storages``: the program's storage list (new tiles and DRAM buffers are appended, their
    ``sid`` their position); ``addr``: the per-``sid`` addresses (extended with them)."""

    def __init__(self, ops: list, storages: list, addr: list):
        self.ops = ops
        self.storages = storages
        self.addr = addr
        self._uses = None  # sid -> sorted positions of the instructions using it
        self._writes = None  # sid -> sorted positions of the instructions writing it
        self.stretches: dict[int, Stretch] = {}  # sid of a stretch's tile -> the stretch
        self.buffers: dict[int, object] = {}  # root sid -> its DRAM spill buffer
        self.takeovers: dict[int, list] = {}  # root sid -> [(from position, tile)], sorted
        self.transfers: list = []  # (position, op)
        self.stores = self.reloads = self.bytes = 0

    def _scan(self):
        uses: dict[int, list] = {}
        writes: dict[int, list] = {}
        for index, op in enumerate(self.ops):
            for acc in op[4]:
                lst = uses.setdefault(acc[0], [])
                if not lst or lst[-1] != index:
                    lst.append(index)
            for acc in op[5]:
                lst = uses.setdefault(acc[0], [])
                if not lst or lst[-1] != index:
                    lst.append(index)
                writes.setdefault(acc[0], []).append(index)
        self._uses, self._writes = uses, writes

    def stretch(self, st, first, last) -> Stretch:
        """The stretch of tile ``st`` (a kernel tile on first call, or a reload tile)."""
        found = self.stretches.get(st.sid)
        if found is None:
            if self._uses is None:
                self._scan()
            found = self.stretches[st.sid] = Stretch(st, st, first, last, self._uses[st.sid],
                                                     False)
        return found

    def victim(self, live: list, needed: int, first_use: list, last_use: list):
        """Of the live entries ``(addr, end, storage)``, the one to evict for instruction
        ``needed``: not placed by the kernel, not used by that instruction, next used the
        furthest away (the largest on a tie); None if there is none."""
        best = best_key = None
        for entry in live:
            st = entry[2]
            if st.placement is not None or st.layout.partitions > NUM_PARTITIONS:
                continue
            s = self.stretches.get(st.sid) or self.stretch(st, first_use[st.sid],
                                                           last_use[st.sid])
            at = bisect.bisect_left(s.uses, needed)
            if at == 0 or at == len(s.uses) or s.uses[at] == needed:
                continue  # (no use before: the tile is being placed; or used right now)
            key = (s.uses[at], entry[1] - entry[0])
            if best_key is None or key > best_key:
                best, best_key = entry, key
        return best

    def evict(self, st, needed: int) -> Stretch:
        """Ends ``st``'s stretch before instruction ``needed`` and returns the stretch of the
        tile that reloads it (to be placed)."""
        s = self.stretches[st.sid]
        at = bisect.bisect_left(s.uses, needed)
        before, after = s.uses[at - 1], s.uses[at]
        root = s.root
        size = root.bytes_per_partition * root.layout.partitions
        buffer = self.buffers.get(root.sid)
        if buffer is None:
            buffer = self.buffers[root.sid] = self._new(
                HBM, (root.layout.partitions, root.layout.row), root, "_spill")
        last = s.last
        writes = self._writes.get(root.sid, ())
        w = bisect.bisect_left(writes, s.uses[0])
        dirty = not s.reloaded or (w < len(writes) and writes[w] <= before)
        if dirty:  # (a stretch that only read its reloaded bytes leaves the buffer as it is)
            self._transfer(before + STORE_AFTER, st, buffer, self.ops[needed])
            self.stores += 1
            self.bytes += size
            s.last = before + STORE_AFTER
        else:
            s.last = before
        tile = self._new(SBUF, root.shape, root, "_reload")
        self._transfer(after - RELOAD_BEFORE, buffer, tile, self.ops[after])
        self.reloads += 1
        self.bytes += size
        self.takeovers.setdefault(root.sid, []).append((after, tile))
        new = self.stretches[tile.sid] = Stretch(tile, root, after - RELOAD_BEFORE, last,
                                                 s.uses[at:], True)
        return new

    def _new(self, kind: str, shape: tuple, root, suffix: str):
        st = new_storage(len(self.storages), kind, root.dtype, shape, storage_layout(kind, shape),
                         (root.name or root.hint) + suffix, root.created_at, None)
        self.storages.append(st)
        self.addr.append(None)
        return st

    def _transfer(self, position: float, src, dst, near):
        layout = (src if src.on_chip else dst).layout
        pairs = [(layout.row, layout.partitions), (1, layout.row)]
        queue = len(self.transfers) % DMA_QUEUES
        op = new_op(bir.InstructionType.DMACopy, bir.Engine.DMA, [new_access(src, 0, pairs)],
                    [new_access(dst, 0, pairs)], {"queue": queue}, near.loc, near.loop, -1)
        self.transfers.append((position, op))

    def apply(self, ops: list) -> list:
        """``ops`` with the transfers in place and every instruction from a reload on naming the
        reloaded tile."""
        if not self.transfers:
            return ops
        takeovers = {sid: ([p for p, _ in moves], [t for _, t in moves])
                     for sid, moves in self.takeovers.items()}
        transfers = sorted(self.transfers, key=lambda t: t[0])
        out, t = [], 0
        for index, op in enumerate(ops):
            while t < len(transfers) and transfers[t][0] < index:
                out.append(transfers[t][1])
                t += 1
            if any(acc[0] in takeovers for acc in op[4]) or \
                    any(acc[0] in takeovers for acc in op[5]):
                op = op.replaced(ins=[_moved(acc, index, takeovers) for acc in op[4]],
                                 outs=[_moved(acc, index, takeovers) for acc in op[5]])
            out.append(op)
        out += [op for _, op in transfers[t:]]
        return out

    def summary(self) -> dict:
        """What the spills cost: transfers by direction and bytes moved (both ways)."""
        return {"stores": self.stores, "reloads": self.reloads, "bytes": self.bytes}


def _moved(acc, index: int, takeovers: dict):
    moves = takeovers.get(acc[0])
    if moves is None:
        return acc
    at = bisect.bisect_right(moves[0], index)
    return acc if at == 0 else new_access(moves[1][at - 1], acc[1], acc[2])


__all__ = ["Spiller"]
