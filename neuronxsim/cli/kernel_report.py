"""Where a simulated module's time went, kernel by kernel.

After InlineBIRKernel and lowerKernelInst every instruction carries the name of the kernel node
it was expanded from (``kernel``); this module groups the simulator's per-instruction records by
it. For each kernel node (in program order):

* ``time_ns``: its slowest NeuronCore's span, from its first instruction's issue (for a DMA,
  when its engine triggers it, before the transfer's latency) to its last end on that core
  (cores of a multi-core kernel run side by side);
* ``busy``: per engine (PE, ACT, DVE, Pool, and DMA: any queue moving data), the fraction of that
  span the engine was busy for this kernel (as neuronxsim/report/busy.py counts busy time),
  averaged over the cores the kernel used (the table says so);
* ``pe_mfu``: its matmul flops, weighted by input dtype as MFU counts them (the records'
  ``adjusted_flops``), over the bf16 PE peak for that time;
* ``added_ns``: how far it moved the module's finish line, i.e. its last end past the latest end
  of the kernels before it. Kernels overlap (the next one's loads start while this one computes),
  so spans add up to more than the total; these add up to it.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional

import numpy as np

from neuronxsim import bir
# busy_lines and pe_mfu_text are also what `run` and `simulate` print.
from neuronxsim.report.busy import busy_lines, core_busy, pe_mfu_text, percent, union_ns
from neuronxsim.sim import TRACKS
from neuronxsim.sim.result import ENGINES as SIM_ENGINES, track_label
from neuronxsim.starfish.penguin.ir.nki_compile import kernel_name_of

#: The engines the table shows, in order; "DMA" stands for all 16 queues.
ENGINES = ("PE", "ACT", "DVE", "Pool", "DMA")

#: Each kernel node's sink, by opcode.
SINKS = {bir.InstructionType.BIRKernel: "IT54", bir.InstructionType.NKIKernel: "IT55",
         bir.InstructionType.NKIKLIRKernel: "IT56"}


@dataclasses.dataclass
class KernelNode:
    """One kernel node of a lowered module: its name, sink and the kernel it names."""
    name: str
    sink: str
    kernel: str


def kernel_nodes(module: bir.Module) -> List[KernelNode]:
    """The kernel nodes of ``module`` in program order (function 0 first), each name once."""
    nodes, seen = [], set()
    for fn in module.functions:
        for block in fn.blocks:
            for inst in block.instructions:
                sink = SINKS.get(inst.opcode)
                if sink is None or inst.name in seen:
                    continue
                seen.add(inst.name)
                kernel = inst.kernel_name if sink == "IT54" else inst.func_name if sink == "IT56" else \
                    kernel_name_of(inst.func)
                nodes.append(KernelNode(inst.name, sink, kernel))
    return nodes


@dataclasses.dataclass
class KernelRow:
    name: str
    sink: str
    kernel: str
    instructions: int
    cores: int
    start_ns: float
    end_ns: float
    time_ns: float
    busy: Dict[str, float]
    pe_mfu: float
    added_ns: float = 0.0
    max_error: Optional[float] = None   # filled in by a numerics check
    tolerance: Optional[float] = None
    ok: Optional[bool] = None

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def _busy_intervals(result):
    """Each slice's busy part [start, busy_end) with its engine column (ENGINES index; DMA
    queues: "DMA"; anything else: len(ENGINES); a whole-core kernel node: -1, every column),
    core, kernel and instruction name."""
    sl = result.slices
    rec = result.instructions
    tracks = np.asarray(TRACKS)
    engine = _codes(np.where(sl["track"] >= len(SIM_ENGINES), "DMA", tracks[sl["track"]]), ENGINES)
    engine[sl["whole_core"]] = -1
    return engine, sl["core"], rec["kernel"][sl["record"]], rec["name"][sl["record"]], sl["start_ns"], sl["busy_end_ns"]


def kernel_rows(result, nodes: List[KernelNode]) -> List[KernelRow]:
    """One row per kernel node that executed instructions (see the module docstring)."""
    rec = result.instructions
    peak = result.config.pe_bf16_peak_flops_per_ns
    kernel_of = rec["kernel"]
    unexpanded = kernel_of == ""  # a kernel node timed as one step (--analytic) is its own record
    s_engine, s_core, s_kernel, s_name, s_start, s_end = _busy_intervals(result)
    s_unexpanded = s_kernel == ""
    rows = []
    for node in nodes:
        mine = rec[(kernel_of == node.name) | (unexpanded & (rec["name"] == node.name))]
        if len(mine) == 0:
            continue
        busy_sel = (s_kernel == node.name) | (s_unexpanded & (s_name == node.name))
        cores = np.unique(mine["core"])
        spans, busy = [], dict.fromkeys(ENGINES, 0.0)
        for core in cores:
            r = mine[mine["core"] == core]
            spans.append((float(r["issue_ns"].min()), float(r["end_ns"].max())))
            for k, engine in enumerate(ENGINES):
                sel = busy_sel & (s_core == core) & ((s_engine == k) | (s_engine == -1))
                busy[engine] += union_ns(s_start[sel], s_end[sel])
        time_ns = max(b - a for a, b in spans)
        denom = max(time_ns, 1e-9) * len(cores)
        rows.append(KernelRow(
            node.name, node.sink, node.kernel, len(mine), len(cores), min(a for a, _ in spans),
            max(b for _, b in spans), time_ns, {e: busy[e] / denom for e in ENGINES},
            float(mine["adjusted_flops"].sum()) / (peak * denom)))
    finish = 0.0
    for row in rows:
        row.added_ns = max(0.0, row.end_ns - finish)
        finish = max(finish, row.end_ns)
    return rows


def engine_busy(result) -> Dict[str, float]:
    """The whole module's busy share per engine (DMA: any queue busy), the MEAN over its cores of
    neuronxsim.report.busy.core_busy (which the printed text and the picture show per core)."""
    per_core = core_busy(result)
    if not per_core:
        return dict.fromkeys(ENGINES, 0.0)
    return {e: float(np.mean([b.any_queue if e == "DMA" else b.tracks[e] for b in per_core])) for e in ENGINES}


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def format_table(rows: List[KernelRow], total_ns: float, with_errors: bool) -> str:
    """The per-kernel table: sink, kernel name, instructions, time, share of the total (added
    time), engine busy shares, MFU (and max error against the reference, with its tolerance)."""
    head = ["kernel", "sink", "kernel name", "instrs", "time us", "share"] + list(ENGINES) + ["MFU"]
    if with_errors:
        head += ["max err", "tol", "check"]
    table = [head]
    for r in rows:
        line = [r.name, r.sink, r.kernel, str(r.instructions), f"{r.time_ns / 1e3:.1f}",
                _pct(r.added_ns / total_ns if total_ns else 0)]
        line += [_pct(r.busy[e]) for e in ENGINES] + [_pct(r.pe_mfu)]
        if with_errors:
            if r.max_error is None:
                line += ["-", "-", ""]
            else:
                line += [f"{r.max_error:.3g}", f"{r.tolerance:.3g}", "ok" if r.ok else "FAIL"]
        table.append(line)
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    left = {0, 1, 2, len(head) - 1} if with_errors else {0, 1, 2}
    out = []
    for k, row in enumerate(table):
        cells = [c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.append("  ".join(cells).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    several = [f"{r.name}: mean over its {r.cores} NeuronCores" for r in rows if r.cores > 1]
    out.append("; ".join(["engine columns: busy share of the kernel's time (DMA: any queue)"] + several))
    return "\n".join(out)


def _codes(values: np.ndarray, order) -> np.ndarray:
    """The index in ``order`` of each value (len(order) for values not in it), vectorised."""
    uniq, inverse = np.unique(values, return_inverse=True)
    index = {v: i for i, v in enumerate(order)}
    return np.array([index.get(u, len(order)) for u in uniq.tolist()], np.int64)[inverse.ravel()]


#: A NeuronCore whose every track is busy less than this share of the total time is drawn as one
#: row (its figures stay in the busy lines under the picture).
COMPACT_BELOW = 0.02


def timeline_data(result, rows: List[KernelRow]):
    """The timeline picture of ``result.slices``: per core one row per track and sub-track of the
    trace (engines, then DMA queues), or one row for a near-idle core (COMPACT_BELOW), each main
    row with its busy share; coloured by kernel node; the busy lines under it."""
    from neuronxsim.report.timeline import TimelineData

    sl = result.slices
    busy = {b.core: b for b in core_busy(result)}
    compact = {c for c, b in busy.items() if max(b.tracks.values(), default=0.0) < COMPACT_BELOW}
    core = sl["core"].astype(np.int64)
    # Rows by (core, track + 1, lane); a compact core's slices all go to its (core, 0, 0).
    in_compact = np.isin(core, sorted(compact))
    key = (core * 256 + np.where(in_compact, 0, sl["track"].astype(np.int64) + 1)) * 256 \
        + np.where(in_compact, 0, sl["lane"])
    uniq, track_of = np.unique(key, return_inverse=True)
    labels, figures = [], []
    for k in uniq.tolist():
        c, track, lane = k // 65536, (k // 256) % 256 - 1, k % 256
        if track < 0:
            labels.append(f"nc{c} (all {len(np.unique(sl['track'][core == c]))} tracks)")
            figures.append("")
        else:
            labels.append(f"nc{c} {track_label(track, lane)}")
            figures.append(percent(busy[c].tracks[TRACKS[track]]) if lane == 0 else "")
    names = [r.name for r in rows]
    group_of = _codes(result.instructions["kernel"][sl["record"]], names)
    extra = ["(other)"] if np.any(group_of == len(names)) else []
    return TimelineData(labels, track_of.ravel(), sl["start_ns"], sl["end_ns"], group_of, names + extra,
                        figures=figures, notes=busy_lines(result))
