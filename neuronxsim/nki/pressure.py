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
loop (or holds an NKI 0.6 ``nl.no_reorder()`` block), or whose results depend on positions (a
random memset).
"""

from __future__ import annotations

from neuronxsim import bir
from neuronxsim.starfish.lib import _core

from .allocator import ALIGN, aligned_bytes
from .record import ACCESS_AT, OP_AT, Access
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
    nothing may be reordered. The dependencies and the list scheduling run in C
    (``cpp/python/trace_pressure.cpp``), from each storage's facts read here."""
    ops, storages = program.ops, program.storages
    if program.record.keep_order or \
            any(st.placement is not None for st in storages if st.on_chip) or \
            _no_reorder({op[_LOOP] for op in ops}):
        return None
    capacity = {SBUF: program.sbuf_bytes, PSUM: PSUM_BYTES}  # in the order a misfit is named
    memory = {kind: m for m, kind in enumerate(capacity)}
    facts = []
    for st in storages:
        layout = st.layout
        counted = st.on_chip and st.kind in memory
        facts.append((layout.on_chip, layout.row if layout.on_chip else 0,
                      layout.partitions if layout.on_chip else 0,
                      0 if layout.on_chip else st.elements, memory[st.kind] if counted else -1,
                      aligned_bytes(st, ALIGN[st.kind]) if counted else 0))
    return _core.nki.pressure_order(ops, facts, list(capacity.values()), _AT, Access,
                                    bir.AccumCmd.Idle, bir.MemsetMode.Random)


_LOOP = OP_AT["loop"]
_AT = tuple(OP_AT[k] for k in ("opcode_number", "fields", "ins", "outs")) + \
    tuple(ACCESS_AT[k] for k in ("sid", "offset", "pairs"))


def _no_reorder(iterations) -> bool:
    """Whether a loop of these iterations, or one around it, asks ``no_reorder()``."""
    seen = set()  # loops whose own and outer loops' directives are read
    for it in iterations:
        while it is not None and it.loop not in seen:
            seen.add(it.loop)
            if any(d.kind == "no_reorder" for d in it.loop.directives):
                return True
            it = it.loop.outer
    return False


__all__ = ["PressureSchedule", "pressure_order"]
