"""The scheduling pass: traced kernels issue their instructions the way the NKI compiler
schedules them, not in source order.

In source order every engine runs its instructions one after another as the kernel's lines
wrote them, so an engine whose next instruction waits (for another engine's result, for a DMA,
or for its own previous result to land) idles although a later instruction, say of the next
``affine_range`` iteration, could run. The compiler's scheduler interleaves the independent
iterations in each engine's in-order queue; this pass does the same on each traced NeuronCore's
BIR: list scheduling over the instructions' dependency graph, by the start time the cost model
estimates (``cpp/sim/ListSchedule.h``). The graph has an edge for every conflicting access
(exact byte ranges, at the addresses the allocator gave: its next-fit placement already
rotates consecutive iterations' tiles through different buffers while SBUF allows) and for the
engine state memory does not show (ScalarE accumulators, DevicePrint order), so the result is
the same, bit for bit. A block holding a random memset (seeded by its position) keeps its order.

``schedule="compiler"`` (the default of every trace) runs it; ``schedule="source"`` keeps the
source order.
"""

from __future__ import annotations

from .errors import NKIError

SCHEDULES = ("compiler", "source")


def check_schedule(schedule: str) -> str:
    if schedule not in SCHEDULES:
        raise NKIError(f"schedule {schedule!r}: 'compiler' (reorder as the NKI compiler's scheduler "
                       "does, the default) or 'source' (source order)")
    return schedule


class Schedule:
    """The pass: reorders every function of ``module`` (its BIR, after allocation and emission)
    and returns, per function, the blocks reordered, the blocks kept and the instructions moved."""

    name = "schedule"

    def run(self, module, arch: str) -> list[dict]:
        """A function the simulator refuses (its checks include the verifier's) keeps its order
        and has ``refused`` set."""
        from neuronxsim.starfish.lib import _core
        return _core.sim.schedule_module(module, arch)

    def run_prepared(self, module, arch: str) -> tuple[list[dict], object]:
        """:meth:`run`, and the pass's decoding of the module reordered in step
        (``_core.sim.PreparedProgram``: what ``sim.simulate`` in timing mode prepares, for every
        function on ``arch``), or None where a function was refused. It points into the module,
        so it is only valid until something changes the module."""
        from neuronxsim.starfish.lib import _core
        return _core.sim.schedule_module_prepared(module, arch)

__all__ = ["SCHEDULES", "Schedule", "check_schedule"]
