"""How busy each NeuronCore's engines and DMA queues were: the figures the text reports and the
timeline picture both print, computed here once.

A track's busy share is the time its instructions kept it busy over the module's total time (the
slowest core's end, the same denominator for every core):

* a compute engine: each instruction's cost (its initiation interval), not the wait after it
  for its results to become visible (a pipelined engine starts the next instruction meanwhile);
  an engine that triggers a DMA, the trigger;
* a DMA queue: each transfer from its start to its end;
* "DMA (any queue)": the time at least one of the core's queues is busy;
* a kernel node timed as one step (``simulate --analytic``: the cached time of its expansion)
  keeps every track busy.

A core's PE MFU is its matmul flops, weighted by input dtype as the profiler's ``adjusted_flops``
(``SimResult.pe_adjusted_flops``), over the bf16 PE peak for the total time. (The module's
``SimResult.pe_mfu`` is the mean over its cores; ``pe_mfu_text`` says so.)

These are the simulator's own sums (``SimResult.cores``) and the trace's slices
(``SimResult.slices``); nothing is averaged over cores.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List

import numpy as np

from neuronxsim.sim.result import ENGINES

#: What "DMA (any queue)" is called in the figures.
ANY_QUEUE = "DMA (any queue)"


@dataclasses.dataclass(frozen=True)
class CoreBusy:
    """One NeuronCore's busy shares of the total time."""

    core: int
    tracks: Dict[str, float]  # every engine, then each DMA queue with transfers, by track name
    any_queue: float          # at least one DMA queue busy
    pe_mfu: float


def union_ns(start: np.ndarray, end: np.ndarray) -> float:
    """Total length of the union of the intervals [start, end)."""
    if len(start) == 0:
        return 0.0
    order = np.argsort(start, kind="stable")
    s, e = np.asarray(start, float)[order], np.asarray(end, float)[order]
    reach = np.maximum.accumulate(e)
    new = np.empty(len(s), bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    firsts = np.flatnonzero(new)
    return float(np.sum(np.maximum.reduceat(e, firsts) - s[firsts]))


def core_busy(result) -> List[CoreBusy]:
    """Per NeuronCore, in core order: each track's busy share and the any-queue share."""
    total = result.total_ns
    share = (lambda ns: ns / total) if total > 0 else (lambda ns: 0.0)
    peak = result.config.pe_bf16_peak_flops_per_ns
    slices = result.slices
    queues = slices[((slices["track"] >= len(ENGINES)) & ~slices["trigger"]) | slices["whole_core"]]
    out = []
    for c in result.cores:
        tracks = {name: share(busy) for name, (busy, count) in c["tracks"].items()
                  if name in ENGINES or count > 0}
        mine = queues[queues["core"] == c["core"]]
        out.append(CoreBusy(c["core"], tracks, share(union_ns(mine["start_ns"], mine["end_ns"])),
                            share(c["pe_adjusted_flops"] / peak)))
    return out


def percent(x: float) -> str:
    """A busy share as both the text and the picture print it: "66.6%"."""
    return f"{100 * x:.1f}%"


def busy_lines(result) -> List[str]:
    """What the text report and the picture print: a heading, then one line per NeuronCore,
    "  nc0: PE 66.6%, ACT 12.4%, DVE 24.5%, Pool 2.3%, SP 1.0%, DMA (any queue) 84.0%, PE MFU 63.0%"."""
    lines = [f"engines busy, share of the {result.total_ns / 1e3:.1f} us total, per NeuronCore:"]
    for b in core_busy(result):
        lines.append(f"  nc{b.core}: " + ", ".join([f"{e} {percent(b.tracks[e])}" for e in ENGINES] +
                                                   [f"{ANY_QUEUE} {percent(b.any_queue)}",
                                                    f"PE MFU {percent(b.pe_mfu)}"]))
    return lines


def pe_mfu_text(result) -> str:
    """"PE MFU 31.5%", saying when it is the mean over several NeuronCores."""
    n = len(result.cores)
    return f"PE MFU {percent(result.pe_mfu)}" + (f" (mean over {n} NeuronCores)" if n > 1 else "")
