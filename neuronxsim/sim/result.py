"""What a simulation returns: outputs, time, per-engine statistics, per-instruction records and a
Chrome/Perfetto trace."""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Mapping, Optional, Tuple

import numpy as np

from neuronxsim.sim.config import MachineConfig
from neuronxsim.sim.dtypes import dtype_to_numpy
from neuronxsim.starfish.lib import _core

#: The five engines of a NeuronCore, in track order, then the DMA queues "DMA0".."DMA15".
ENGINES = ("PE", "ACT", "DVE", "Pool", "SP")

_RECORD_FIELDS = ("core", "start_ns", "end_ns", "engine", "queue", "issue_engine", "issue_ns", "opcode",
                  "name", "cycles", "busy_ns", "bytes", "flops", "adjusted_flops", "source", "kernel")
_SLICE_FIELDS = ("core", "track", "lane", "start_ns", "end_ns", "busy_end_ns", "record", "trigger", "descriptors",
                 "whole_core")


@dataclasses.dataclass(frozen=True)
class EngineStats:
    """One engine or DMA queue, summed over the NeuronCores simulated."""

    busy_ns: float
    utilization: float  # busy_ns / (total_ns x cores)
    instructions: int


@dataclasses.dataclass(frozen=True)
class UnwrittenOutput:
    """An Output tensor the run left partly or wholly unwritten. Its elements no instruction wrote
    read as NaN (floats) or 0 (integers); that is not an error, since a kernel may leave part of an
    output alone on purpose, but it is rarely what was meant. Timing mode, which keeps no data,
    finds the same elements from the writes' access patterns."""

    name: str
    dtype: str  # the tensor's NumPy dtype name
    elements: int  # how many elements no instruction wrote
    size: int  # the tensor's elements
    first_index: Tuple[int, ...]  # the first unwritten element (row-major order), in the tensor's shape

    def __str__(self) -> str:
        value = "0" if np.dtype(self.dtype).kind in "biu" else "NaN"
        return (f"output '{self.name}' ({self.dtype}): {self.elements} of {self.size} elements never written "
                f"(the first at {list(self.first_index)}); they read as {value}")

    def to_json(self) -> dict:
        """The fields as a JSON object (``first_index`` a list), as reports carry it."""
        return {"name": self.name, "dtype": self.dtype, "elements": self.elements, "size": self.size,
                "first_index": list(self.first_index)}


class SimResult:
    """The result of :func:`neuronxsim.sim.simulate`.

    Attributes:
        outputs: every Output tensor by name, shaped by its tensor_shape (empty in timing mode).
        total_ns: simulated time until the last result is visible (the slowest NeuronCore).
        cycles: ``total_ns`` in each engine's own clock.
        engines: per engine ("PE", "ACT", "DVE", "Pool", "SP") and DMA queue ("DMA0".."DMA15").
        pe_flops: the PE's flops (2 per multiply-add), summed over the cores.
        pe_adjusted_flops: the same weighted by each matmul's input dtype as the profiler's
            ``adjusted_flops``: bf16/fp16/tf32 1x, fp32 4x, fp8 1x on trn1 and 0.5x on trn2
            (``config.pe_mfu_*_factor``; docs/timing.md).
        pe_mfu: pe_adjusted_flops / (bf16 PE peak x total time x cores): the mean over the cores;
            never above the PE's busy share.
        cores: per NeuronCore: its end time, PE flops and adjusted flops and per-track
            (busy_ns, instructions).
        prints: ``(instruction, prefix, values)`` of every DevicePrint, in execution order.
        unwritten_outputs: an :class:`UnwrittenOutput` for each Output tensor with elements no
            instruction wrote (in the module's tensor order; empty when every output was written
            whole; timing mode finds them from the writes' access patterns).
    """

    def __init__(self, native, outputs: Mapping[str, np.ndarray], config: MachineConfig, module):
        self._native = native
        self._module = module  # records refer to the module's instructions
        self.config = config
        self.arch = native.arch
        self.mode = native.mode
        self.outputs = dict(outputs)
        self.total_ns = native.total_ns
        self.pe_mfu = native.pe_mfu
        self.pe_flops = native.pe_flops
        self.pe_adjusted_flops = native.pe_adjusted_flops
        self.instruction_count = native.instruction_count
        self.prepare_seconds = native.prepare_seconds
        self.run_seconds = native.run_seconds
        self.run_cpu_seconds = native.run_cpu_seconds
        self.cores = native.cores
        self.unwritten_outputs = tuple(
            UnwrittenOutput(name, np.dtype(dtype_to_numpy(dtype)).name, elements, int(np.prod(shape, dtype=np.int64)),
                            tuple(int(i) for i in np.unravel_index(first, shape)))
            for name, elements, first, shape, dtype in native.unwritten_outputs)
        self.cycles = {e: self.total_ns * config.clock_ghz(e) for e in ENGINES}
        ncores = max(1, len(self.cores))
        self.engines = {}
        for track in self.cores[0]["tracks"] if self.cores else ():
            busy = sum(c["tracks"][track][0] for c in self.cores)
            count = sum(c["tracks"][track][1] for c in self.cores)
            util = busy / (self.total_ns * ncores) if self.total_ns > 0 else 0.0
            self.engines[track] = EngineStats(busy, util, count)
        self._records = None
        self._slices = None

    @property
    def instructions(self) -> np.ndarray:
        """One record per executed instruction (a NumPy structured array, built on first use):
        core, start_ns, end_ns, engine ("PE", "ACT", "DVE", "Pool", "SP" or "DMA"), queue (DMA queue
        or -1), issue_engine / issue_ns (the engine that triggered a DMA, and when), opcode, name,
        cycles (engine cycles of its cost), busy_ns (how long it kept its engine busy: its cost, not
        the wait for its results; a DMA: its transfer on its queue, as the trace's busy_ns), bytes,
        flops, adjusted_flops (a matmul's flops as MFU counts them, ``pe_adjusted_flops``; 0 off
        the PE), source, kernel."""
        if self._records is None:
            cols = self._native.record_columns()
            dtype = np.dtype([(f, cols[f].dtype) for f in _RECORD_FIELDS])
            rec = np.empty(len(cols["start_ns"]), dtype=dtype)
            for f in _RECORD_FIELDS:
                rec[f] = cols[f]
            self._records = rec
        return self._records

    @property
    def slices(self) -> np.ndarray:
        """The slices of the trace (``write_trace``) and of the timeline picture, one per
        instruction, one per DMA trigger and one per software-DGE DMA's descriptors (a NumPy
        structured array, built on first use): core; track (index into ``neuronxsim.sim.TRACKS``:
        where it runs, a DMA on its queue, a trigger on its issuing engine, descriptors on Pool);
        lane (0: the track itself, k: its k-th sub-track, where it overlaps the slice before:
        ``track_label``); start_ns / end_ns (start until its results are visible) and busy_end_ns
        (until then it kept its track busy), integer nanoseconds of simulated time; record (its
        row of ``instructions``); trigger; descriptors (a software-DGE DMA's descriptors, made on
        GpSimd, whose busy time they count); whole_core (a kernel node timed as one step by the
        cached time of its expansion, which occupies every track of its core)."""
        if self._slices is None:
            cols = self._native.slice_columns()
            rec = np.empty(len(cols["start_ns"]), dtype=np.dtype([(f, cols[f].dtype) for f in _SLICE_FIELDS]))
            for f in _SLICE_FIELDS:
                rec[f] = cols[f]
            self._slices = rec
        return self._slices

    @property
    def prints(self):
        """What the program's device-print instructions printed, in order: one (instruction name,
        prefix, float32 array [partitions, elements]) tuple each."""
        return self._native.prints

    def write_trace(self, path, on_progress: Optional[Callable[[int, int], None]] = None) -> None:
        """Writes a Chrome trace-event JSON file (open it in https://ui.perfetto.dev or
        chrome://tracing) of ``slices``: one process per NeuronCore, one track per engine, DMA
        queue and sub-track with slices, one slice per instruction named "<opcode> <kernel>
        <source>" (or "<opcode> <name>" when it has neither; DMA triggers "trigger ..."), with
        instruction name, source, kernel, bytes, flops and busy_ns as args; a flow (RAW, WAR, WAW)
        into each instruction a memory dependency delayed, from the instruction it waited for;
        counters "SBUF in use" and "PSUM in use" (bytes) and "<queue> rate" (GB/s) per core. Times
        are integer nanoseconds (``ts``/``dur`` in microseconds with three decimals). What each
        of these means: docs/trace.md. ``on_progress(done, total)`` (slices written) is called
        about ten times a second from another thread while it writes, and once at the end."""
        if on_progress is None:
            self._native.write_trace(os.fspath(path))
            return
        from neuronxsim.sim.reporting import run_reporting

        progress = _core.sim.TraceProgress()
        run_reporting(lambda: self._native.write_trace(os.fspath(path), progress),
                      lambda: (progress.done, progress.total), on_progress)

    def __repr__(self) -> str:
        busy = ", ".join(f"{e} {self.engines[e].utilization:.0%}" for e in ENGINES if e in self.engines)
        return (f"<SimResult {self.arch} {self.mode}: {self.total_ns:.1f} ns, "
                f"{self.instruction_count} instructions, PE MFU {self.pe_mfu:.1%}; {busy}>")

    def __reduce__(self):
        """Pickles as plain data: the numbers, outputs, records and slices (and the module, as
        BIR JSON); ``write_trace`` needs the simulator's own result and refuses after a round
        trip."""
        native = _Restored.of(self._native)
        return (_restore, (native, self.outputs, self.arch, self._module))


class _Restored:
    """What a SimResult reads from the simulator's result, as plain data (an unpickled result's)."""

    _FIELDS = ("arch", "mode", "total_ns", "pe_flops", "pe_adjusted_flops", "pe_mfu", "instruction_count",
               "prepare_seconds", "run_seconds", "run_cpu_seconds", "cores", "prints", "unwritten_outputs")

    @classmethod
    def of(cls, native) -> "_Restored":
        r = cls.__new__(cls)
        r.__dict__.update({f: getattr(native, f) for f in cls._FIELDS})
        kept = native.record_count > 0  # (records=False keeps neither records nor slices)
        r.records = native.record_columns() if kept else {f: np.empty(0) for f in _RECORD_FIELDS}
        r.slice_data = native.slice_columns() if kept else {f: np.empty(0) for f in _SLICE_FIELDS}
        return r

    def record_columns(self) -> dict:
        return self.records

    def slice_columns(self) -> dict:
        return self.slice_data

    def write_trace(self, path, on_progress: Optional[Callable[[int, int], None]] = None) -> None:
        from neuronxsim.errors import SimulationError
        raise SimulationError("this result was unpickled: its trace can only be written where "
                              "it was simulated (call write_trace there)")


def _restore(native: _Restored, outputs, arch: str, module) -> SimResult:
    from neuronxsim.sim.config import config
    return SimResult(native, outputs, config(arch), module)


def track_label(track: int, lane: int = 0) -> str:
    """The trace's name of a track's lane: "ACT", "ACT (pipelined)", "ACT (pipelined 2)"."""
    return _core.sim.lane_name(track, lane)
