"""What a simulation returns: outputs, time, per-engine statistics, per-instruction records and a
Chrome/Perfetto trace."""

from __future__ import annotations

import dataclasses
import os
from typing import Mapping

import numpy as np

from neuronxsim.sim.config import MachineConfig

#: The five engines of a NeuronCore, in track order, then the DMA queues "DMA0".."DMA15".
ENGINES = ("PE", "ACT", "DVE", "Pool", "SP")

_RECORD_FIELDS = ("core", "start_ns", "end_ns", "engine", "queue", "issue_engine", "issue_ns", "opcode",
                  "name", "cycles", "bytes", "flops", "source", "kernel")


@dataclasses.dataclass(frozen=True)
class EngineStats:
    """One engine or DMA queue, summed over the NeuronCores simulated."""

    busy_ns: float
    utilization: float  # busy_ns / (total_ns x cores)
    instructions: int


class SimResult:
    """The result of :func:`neuronxsim.sim.simulate`.

    Attributes:
        outputs: every Output tensor by name, shaped by its tensor_shape (empty in timing mode).
        total_ns: simulated time until the last result is visible (the slowest NeuronCore).
        cycles: ``total_ns`` in each engine's own clock.
        engines: per engine ("PE", "ACT", "DVE", "Pool", "SP") and DMA queue ("DMA0".."DMA15").
        pe_mfu: PE flops / (bf16 PE peak x total time x cores).
        cores: per NeuronCore: its end time and per-track (busy_ns, instructions).
        prints: ``(instruction, prefix, values)`` of every DevicePrint, in execution order.
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
        self.instruction_count = native.instruction_count
        self.prepare_seconds = native.prepare_seconds
        self.run_seconds = native.run_seconds
        self.run_cpu_seconds = native.run_cpu_seconds
        self.cores = native.cores
        self.cycles = {e: self.total_ns * config.clock_ghz(e) for e in ENGINES}
        ncores = max(1, len(self.cores))
        self.engines = {}
        for track in self.cores[0]["tracks"] if self.cores else ():
            busy = sum(c["tracks"][track][0] for c in self.cores)
            count = sum(c["tracks"][track][1] for c in self.cores)
            util = busy / (self.total_ns * ncores) if self.total_ns > 0 else 0.0
            self.engines[track] = EngineStats(busy, util, count)
        self._records = None

    @property
    def instructions(self) -> np.ndarray:
        """One record per executed instruction (a NumPy structured array, built on first use):
        core, start_ns, end_ns, engine ("PE", "ACT", "DVE", "Pool", "SP" or "DMA"), queue (DMA queue
        or -1), issue_engine / issue_ns (the engine that triggered a DMA, and when), opcode, name,
        cycles (engine cycles of its cost), bytes, flops, source, kernel."""
        if self._records is None:
            cols = self._native.record_columns()
            dtype = np.dtype([(f, cols[f].dtype) for f in _RECORD_FIELDS])
            rec = np.empty(len(cols["start_ns"]), dtype=dtype)
            for f in _RECORD_FIELDS:
                rec[f] = cols[f]
            self._records = rec
        return self._records

    @property
    def prints(self):
        return self._native.prints

    def write_trace(self, path) -> None:
        """Writes a Chrome trace-event JSON file (open it in https://ui.perfetto.dev or
        chrome://tracing): one process per NeuronCore, one track per engine and DMA queue, one slice
        per instruction named "<opcode> <kernel> <source>" (or "<opcode> <name>" when it has
        neither), with instruction name, source, kernel, bytes and flops as args."""
        self._native.write_trace(os.fspath(path))

    def __repr__(self) -> str:
        busy = ", ".join(f"{e} {self.engines[e].utilization:.0%}" for e in ENGINES if e in self.engines)
        return (f"<SimResult {self.arch} {self.mode}: {self.total_ns:.1f} ns, "
                f"{self.instruction_count} instructions, PE MFU {self.pe_mfu:.1%}; {busy}>")

    def __reduce__(self):
        """Pickles as plain data: the numbers, outputs and records (and the module, as BIR
        JSON); ``write_trace`` needs the simulator's own result and refuses after a round trip."""
        native = _Restored.of(self._native)
        return (_restore, (native, self.outputs, self.arch, self._module))


class _Restored:
    """What a SimResult reads from the simulator's result, as plain data (an unpickled result's)."""

    _FIELDS = ("arch", "mode", "total_ns", "pe_flops", "pe_mfu", "instruction_count",
               "prepare_seconds", "run_seconds", "run_cpu_seconds", "cores", "prints")

    @classmethod
    def of(cls, native) -> "_Restored":
        r = cls.__new__(cls)
        r.__dict__.update({f: getattr(native, f) for f in cls._FIELDS})
        r.columns = native.record_columns() if native.record_count else None
        return r

    def record_columns(self) -> dict:
        if self.columns is None:
            return {f: np.empty(0) for f in _RECORD_FIELDS}
        return self.columns

    def write_trace(self, path) -> None:
        from neuronxsim.errors import SimulationError
        raise SimulationError("this result was unpickled: its trace can only be written where "
                              "it was simulated (call write_trace there)")


def _restore(native: _Restored, outputs, arch: str, module) -> SimResult:
    from neuronxsim.sim.config import config
    return SimResult(native, outputs, config(arch), module)
