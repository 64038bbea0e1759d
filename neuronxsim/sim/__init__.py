"""The NeuronCore tile-engine simulator: real numerics and a per-engine cycle model for ISA-level
BIR, in C++ (cpp/sim) behind this thin facade.

>>> from neuronxsim import sim
>>> result = sim.simulate(module, {"x": x}, arch="trn1", mode="full")   # doctest: +SKIP
>>> result.outputs["y"], result.total_ns, result.engines["PE"].utilization   # doctest: +SKIP
>>> result.write_trace("trace.json")                                        # doctest: +SKIP

``mode="full"`` computes the outputs and the time; ``mode="timing"`` only the time (inputs may
then be omitted). Everything the machine cannot do is refused with a
:class:`neuronxsim.SimulationError` naming the instruction.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional

import numpy as np

from neuronxsim import bir
from neuronxsim.errors import SimulationError
from neuronxsim.sim.config import MachineConfig, config
from neuronxsim.sim.dtypes import dtype_to_numpy, numpy_to_dtype
from neuronxsim.sim.reporting import run_reporting
from neuronxsim.sim.result import ENGINES, EngineStats, SimResult, UnwrittenOutput
from neuronxsim.starfish.lib import _core

#: The tracks of one NeuronCore: the five engines, then DMA queues "DMA0".."DMA15".
TRACKS = tuple(_core.sim.TRACK_NAMES)


def _fmt(shape, dtype) -> str:
    return f"{list(shape)} {np.dtype(dtype).name}"


def _bind_inputs(native, specs, inputs: Mapping[str, np.ndarray], bind: bool) -> list:
    """Checks every input against its tensor and binds it; returns the bound arrays (which must
    stay alive until the run ends: a non-contiguous input is bound as a contiguous copy)."""
    expected = {s["name"]: s for s in specs if s["type"] == bir.MemoryType.Input}
    bound = []
    missing = [n for n in expected if n not in inputs]
    if missing:
        want = ", ".join(f"'{n}' ({_fmt(expected[n]['shape'], dtype_to_numpy(expected[n]['dtype']))})" for n in missing)
        raise SimulationError(f"missing input tensor(s): {want}")
    extra = [n for n in inputs if n not in expected]
    if extra:
        raise SimulationError(f"unknown input tensor(s) {extra}; the module's inputs are {sorted(expected)}")
    for name, spec in expected.items():
        arr = inputs[name]
        if not isinstance(arr, np.ndarray):
            raise SimulationError(f"input '{name}': expected a NumPy array, got {type(arr).__name__}")
        want_dtype = dtype_to_numpy(spec["dtype"])
        want_shape = tuple(spec["shape"])
        if arr.dtype != want_dtype or tuple(arr.shape) != want_shape:
            raise SimulationError(f"input '{name}': expected {_fmt(want_shape, want_dtype)}, "
                                  f"got {_fmt(arr.shape, arr.dtype)}")
        if bind:
            arr = np.ascontiguousarray(arr)  # no copy when already C-contiguous
            native.bind(name, arr)
            bound.append(arr)
    return bound


def _new_output(spec) -> np.ndarray:
    # Uninitialised: the run fills the elements no instruction wrote with NaN (floats) or 0
    # (integers) after it, so they never read as stale memory (Simulator::run, fillUnwritten), and
    # names them in the result's unwritten_outputs.
    return np.empty(tuple(spec["shape"]), dtype=dtype_to_numpy(spec["dtype"]))


def simulate(module: bir.Module, inputs: Optional[Mapping[str, np.ndarray]] = None, arch: Optional[str] = None,
             mode: str = "full", neuron_core_id: Optional[int] = None, *, threads: int = 0,
             records: bool = True, on_progress: Optional[Callable[[int, int], None]] = None) -> SimResult:
    """Simulates ``module`` on NeuronCore(s) of its generation (``module.arch``).

    Args:
        module: an ISA-level BIR module (kernel nodes only in timing mode).
        inputs: one array per Input tensor, by name, with exactly its shape and dtype (bfloat16 and
            fp8 as ``ml_dtypes`` arrays). C-contiguous arrays are used in place, never modified.
        arch: None (the module's own), or a name of the module's generation ("trn1", "trn2", ...);
            a name of another generation is refused (SimulationError).
        mode: "full" (numerics and time) or "timing" (time only; inputs may be omitted).
        neuron_core_id: None runs every function as its own NeuronCore (sharing DRAM tensors by
            name; total time = the slowest core); an int runs only ``functions[i]``.
        threads: host threads for the matmul kernel (0: up to 2).
        records: keep per-instruction records (``result.instructions``, the trace).
        on_progress: called as ``on_progress(done, total)`` (instructions) about ten times a second
            while the run goes on, from another thread, and once at the end.
    """
    return _simulate(module, inputs, arch, mode, neuron_core_id, threads=threads, records=records,
                     on_progress=on_progress)


def _simulate(module: bir.Module, inputs: Optional[Mapping[str, np.ndarray]], arch: Optional[str], mode: str,
              neuron_core_id: Optional[int], *, threads: int, records: bool,
              on_progress: Optional[Callable[[int, int], None]], prepared=None) -> SimResult:
    """:func:`simulate`, started from ``prepared`` (a ``_core.sim.PreparedProgram`` of ``module``:
    timing mode, ``arch``, every function; the simulator refuses any other) when it is not None:
    for the library's own trace-then-simulate paths, which guarantee nothing changed the module
    since the scheduling pass made it."""
    native = _core.sim.Simulator(module, arch, mode, neuron_core_id, threads, records, prepared)
    specs = native.tensors()
    full = mode == "full"
    inputs = {} if inputs is None else inputs
    bound = _bind_inputs(native, specs, inputs, bind=full) if (full or inputs) else []
    outputs = {}
    if full:
        for spec in specs:
            if spec["type"] == bir.MemoryType.Output:
                outputs[spec["name"]] = _new_output(spec)
                native.bind(spec["name"], outputs[spec["name"]])
    if on_progress is None:
        result = native.run()
    else:
        total = native.instruction_count
        result = run_reporting(native.run, lambda: (native.instructions_done(), total), on_progress)
    del bound  # referenced until the run is over
    return SimResult(result, outputs, config(result.arch), module)


def input_tensors(module: bir.Module, arch: Optional[str] = None) -> dict:
    """The module's Input tensors: name -> (shape, NumPy dtype), the arrays ``simulate`` takes."""
    native = _core.sim.Simulator(module, arch, "timing", None, 0, False)
    return {s["name"]: (tuple(s["shape"]), dtype_to_numpy(s["dtype"]))
            for s in native.tensors() if s["type"] == bir.MemoryType.Input}


def latency(instruction: bir.Instruction, arch: str = "trn1") -> dict:
    """``bir::Hwm::getLatency`` of one instruction: engine, cycles (the cost formula), busy_ns,
    access_ns, DMA fixed/transfer ns, bytes and flops."""
    return _core.sim.latency(instruction, arch)


__all__ = ["simulate", "input_tensors", "SimResult", "EngineStats", "UnwrittenOutput", "MachineConfig", "config",
           "dtype_to_numpy", "numpy_to_dtype", "latency", "ENGINES", "TRACKS", "SimulationError"]
