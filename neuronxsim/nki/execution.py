"""Running kernels on the C++ tile-engine simulator (``neuronxsim.sim``): ``simulate_kernel``,
``simulate`` and ``profile``.

A kernel is traced for the call's arguments, its module simulated with the arrays bound to the
Input tensors by parameter name, and the Output tensors returned as NumPy arrays in the order
the kernel returns them (one array, or a tuple). A kernel traced for several NeuronCores
(``kernel[nl.nc(n)]``) runs on that many simulated cores sharing the DRAM tensors.
"""

from __future__ import annotations

import os

import numpy as np

from neuronxsim.errors import SimulationError
from neuronxsim.sim.result import ENGINES

from . import dtypes as dt
from .errors import INSTRUCTION_WHERE, NKIError
from .kernel import Kernel, TracedKernel, _bind, jit, traced_kernel, user_facing


def _simulator():
    try:
        from neuronxsim import sim
    except ImportError:
        raise NKIError("the tile-engine simulator (neuronxsim.sim) is not part of this "
                       "installation") from None
    return sim


def at_kernel_line(e: SimulationError, module) -> SimulationError:
    """The simulator's refusal of an instruction of ``module``, prefixed with the kernel line that
    made it (the instruction's BIR ``source``); ``e`` itself when it names no such instruction."""
    m = INSTRUCTION_WHERE.match(str(e))
    if m is None:
        return e
    core, block, index = (int(g) for g in m.groups())
    try:
        source = module.functions[core].blocks[block].instructions[index].source
    except (IndexError, AttributeError):
        return e
    return SimulationError(f"{source}: {e}") if source else e


def bound_arrays(kernel, args, kwargs) -> dict:
    """The call's array arguments by parameter name, as the simulator takes them."""
    from .kernel import _unwrap
    func, _ = _unwrap(kernel)
    params, specs = _bind(func, args, kwargs)
    arrays = {}
    for name, value, _ in params:
        if specs[name] is None:
            continue
        if not isinstance(value, np.ndarray):
            raise NKIError(f"argument '{name}' is a tensor type without values; simulating needs "
                           "NumPy arrays")
        a = np.ascontiguousarray(value)
        arrays[name] = a.view(np.uint8) if a.dtype == dt.bool_ else a
    return arrays


MODES = ("full", "timing")


def run_traced(traced: TracedKernel, arrays: dict, executor: str = "simulator",
               arch: str = "trn1", mode: str = "full") -> tuple:
    """Runs a traced kernel on ``executor``: ``"simulator"`` (``neuronxsim.sim``, the default of
    every public entry point; all NeuronCores at once, sharing the DRAM tensors) or
    ``"reference"`` (the NumPy reference executor, ``neuronxsim.reference``: numerics only, one
    core at a time). ``mode="timing"`` times the simulator's run without numerics (``arrays``
    unused, no outputs; started from the scheduling pass's decoding when the trace kept it,
    ``traced_kernel(..., prepare=True)``, which this takes). Returns (the simulator's result, or
    None for the reference; the outputs by name)."""
    if mode not in MODES:
        raise NKIError(f"mode {mode!r}: 'full' (numerics and time) or 'timing' (time only)")
    try:
        return _run_traced(traced, arrays, executor, arch, mode)
    except SimulationError as e:
        raise at_kernel_line(e, traced.module) from None


def _run_traced(traced: TracedKernel, arrays: dict, executor: str, arch: str, mode: str) -> tuple:
    if mode == "timing":
        if executor != "simulator":
            raise NKIError(f"mode 'timing' runs on the simulator, not the {executor!r} executor")
        return _simulator()._simulate(traced.module, None, arch, "timing", None, threads=0, records=True,
                                      on_progress=None, prepared=traced.take_prepared()), {}
    if traced.constants:
        arrays = dict(traced.constants, **arrays)
    if executor == "simulator":
        result = _simulator().simulate(traced.module, arrays, arch=arch, neuron_core_id=None)
        for _, prefix, values in result.prints:  # nl.device_print
            print(prefix, np.asarray(values))
        per_core = [result.outputs]
    elif executor == "reference":
        from neuronxsim import reference
        result = None
        per_core = [reference.execute(traced.module, arrays, neuron_core_id=core)
                    for core in range(traced.num_cores)]
    else:
        raise NKIError(f"unknown executor {executor!r}: 'simulator' or 'reference'")
    outputs = {}
    for spec in traced.outputs:
        if len(per_core) == 1:
            value = np.asarray(per_core[0][spec.name])
        else:
            value = _merge_cores(spec, per_core, traced.written_regions)
        outputs[spec.name] = value.view(np.bool_) if spec.dtype == dt.bool_ else value
    return result, outputs


def _merge_cores(spec, per_core: list, regions: list) -> np.ndarray:
    """Each element of an output from the core whose DMAs wrote it (the last such core)."""
    merged = np.asarray(per_core[0][spec.name]).copy().reshape(-1)
    for core, outputs in enumerate(per_core):
        mask = np.zeros(merged.size, dtype=bool)
        for offset, pairs in regions[core].get(spec.name, ()):
            idx = np.asarray(offset)
            for step, num in pairs:
                idx = idx[..., None] + np.arange(num) * step
            mask[idx.reshape(-1)] = True
        merged[mask] = np.asarray(outputs[spec.name]).reshape(-1)[mask]
    return merged.reshape(spec.shape)


def _returned(traced: TracedKernel, outputs: dict):
    values = tuple(outputs[spec.name] for spec in traced.outputs)
    return values[0] if len(values) == 1 else values


@user_facing
def simulate_kernel(kernel, *args, arch: str | None = None,
                    max_instructions: int | None = None, schedule: str = "compiler", **kwargs):
    """Runs ``kernel`` (an ``nki.jit`` kernel, optionally with a launch grid) on the simulator
    and returns its outputs as NumPy arrays (a tuple when it returns several).
    ``max_instructions``, ``schedule``: see :func:`~neuronxsim.nki.kernel.trace_kernel`."""
    traced = traced_kernel(kernel, args, kwargs, arch, max_instructions, schedule=schedule)
    _, outputs = run_traced(traced, bound_arrays(kernel, args, kwargs), arch=traced.arch)
    return _returned(traced, outputs)


def simulate(kernel, arch: str | None = None, max_instructions: int | None = None,
             schedule: str = "compiler"):
    """``nki.simulate(kernel)(*arrays)``: the kernel as a function of NumPy arrays."""
    def run(*args, **kwargs):
        return simulate_kernel(kernel, *args, arch=arch, max_instructions=max_instructions,
                               schedule=schedule, **kwargs)
    run.__name__ = getattr(kernel, "__name__", "kernel")
    return run


class Profile:
    """What ``nki.profile_kernel`` reports: the simulator's result (``result``: time, per-engine
    statistics, per-instruction records with their kernel source lines), the outputs by name
    (none in timing mode), the traced kernel, and the path of the timeline trace if one was
    written. Attributes not
    defined here are the simulator result's (``total_ns``, ``engines``, ``pe_mfu``,
    ``instructions``, ``write_trace``)."""

    def __init__(self, traced: TracedKernel, result, outputs: dict, trace_file):
        self.traced = traced
        self.result = result
        self.outputs = outputs
        self.trace_file = trace_file

    @property
    def pe_utilization(self) -> float:
        """Fraction of the time the Tensor Engine (PE array) is busy."""
        return self.result.engines["PE"].utilization

    def __getattr__(self, name):
        if name.startswith("__") or name == "result":
            raise AttributeError(name)
        return getattr(self.result, name)

    def summary(self) -> str:
        """A few lines: time, instructions, PE utilisation and MFU, busy engines, SBUF spills,
        reordering to fit."""
        r = self.result
        busy = ", ".join(f"{e} {r.engines[e].utilization:.1%}" for e in ENGINES if e in r.engines)
        dma = sum(s.busy_ns for e, s in r.engines.items() if e.startswith("DMA"))
        lines = [f"{self.traced.instruction_count} instructions on {self.traced.num_cores} "
                 f"NeuronCore(s), {r.total_ns / 1e3:.2f} us",
                 f"PE utilisation {self.pe_utilization:.1%}, PE MFU {r.pe_mfu:.1%}",
                 f"engines busy: {busy}; DMA queues busy {dma / 1e3:.2f} us in total"]
        stores = sum(s["stores"] for s in self.traced.spills)
        if stores or any(s["reloads"] for s in self.traced.spills):
            reloads = sum(s["reloads"] for s in self.traced.spills)
            moved = sum(s["bytes"] for s in self.traced.spills)
            lines.append(f"SBUF spills: {stores} stores and {reloads} reloads moving "
                         f"{moved / 2**20:.2f} MiB to and from HBM (the live tiles did not fit)")
        moved = sum(self.traced.reordered)
        if moved:
            lines.append(f"reordered to fit: {moved} instructions moved out of program order (the "
                         "on-chip tiles did not fit in it; docs/nki-tracer.md, Reordering to fit)")
        if self.trace_file is not None:
            lines.append(f"trace: {self.trace_file}")
        return "\n".join(lines)

    def __repr__(self):
        return (f"<nki profile: {self.traced.instruction_count} instructions, "
                f"{self.result.total_ns / 1e3:.2f} us, PE {self.pe_utilization:.1%}>")


@user_facing
def profile_kernel(kernel, *args, arch: str | None = None, trace_file=None, mode: str = "full",
                   schedule: str = "compiler", max_instructions: int | None = None,
                   **kwargs) -> Profile:
    """Simulates ``kernel`` and reports time and per-engine statistics; with ``trace_file``,
    also writes the simulator's timeline trace there (Chrome/Perfetto JSON, one track per
    engine and DMA queue, each instruction with its kernel source line). ``mode="timing"``
    gives the same timeline and statistics without numerics (no outputs): the arguments may
    then be ``nki.typing.tensor`` stand-ins, and large sizes run fast. ``schedule``,
    ``max_instructions``: see :func:`~neuronxsim.nki.kernel.trace_kernel`."""
    traced = traced_kernel(kernel, args, kwargs, arch, max_instructions, schedule=schedule,
                           prepare=mode == "timing")
    arrays = bound_arrays(kernel, args, kwargs) if mode == "full" else {}
    result, outputs = run_traced(traced, arrays, arch=traced.arch, mode=mode)
    if trace_file is not None:
        result.write_trace(trace_file)
    return Profile(traced, result, outputs, trace_file)


# ---- the device decorators of the 2.2x SDKs: baremetal, benchmark, profile ----

class LatencyStatistics:
    """``benchmark_result.nc_latency``: the kernel's latency in microseconds. The simulator is
    deterministic, so every percentile is the one simulated latency (no warm-up effects, no
    run-to-run noise: NeuronDevice measurements spread around it)."""

    PERCENTILES = (0, 1, 10, 25, 50, 90, 99, 100)

    def __init__(self, latency_us: float):
        self.latency_us = latency_us

    def get_latency_percentile(self, percentile: int) -> float:
        if percentile not in self.PERCENTILES:
            raise NKIError(f"get_latency_percentile: percentile {percentile!r} is not one of the "
                           f"available {list(self.PERCENTILES)}")
        return self.latency_us


class BenchmarkResult:
    """``kernel.benchmark_result`` after a call of an ``nki.benchmark`` kernel."""

    def __init__(self, profile: Profile):
        self.profile = profile
        self.nc_latency = LatencyStatistics(profile.total_ns / 1e3)


class DeviceKernel(Kernel):
    """A kernel decorated with ``nki.baremetal``, ``nki.benchmark`` or ``nki.profile``: called
    with NumPy arrays (itself or on a grid, ``kernel[grid]``), it runs on the simulator and
    returns the kernel's outputs (``profile``: None, as NKI's), and ``benchmark_result`` holds
    the simulated latency. What NKI saves as a NEFF and an NTFF, the simulator saves as the
    traced BIR module (``<save_neff_name stem>.bir.json``) and its timeline trace
    (Chrome/Perfetto JSON, ``<save_trace_name stem>.json``)."""

    def __init__(self, kernel, decorator: str, save_neff_name=None, save_trace_name=None,
                 directory=None, returns_outputs: bool = True):
        base = kernel if isinstance(kernel, Kernel) else jit(kernel)
        super().__init__(base.func, base.mode, base.arch, base.compile_options)
        self.force_auto_alloc = base.force_auto_alloc
        self.decorator = decorator
        self.save_neff_name = save_neff_name
        self.save_trace_name = save_trace_name
        self.directory = directory
        self.returns_outputs = returns_outputs
        self.benchmark_result = None

    def launch(self, target, args: tuple, kwargs: dict):
        prof = profile_kernel(target, *args, **kwargs)
        self.benchmark_result = BenchmarkResult(prof)
        self._save(prof)
        if not self.returns_outputs:
            return None
        values = tuple(prof.outputs[spec.name] for spec in prof.traced.outputs)
        return values[0] if len(values) == 1 else values

    def _save(self, prof: Profile):
        folder = self.directory or "."
        if self.save_neff_name is not None or self.save_trace_name is not None:
            # (made at each call, as NKI's: the folder may have been removed since decoration)
            os.makedirs(folder, exist_ok=True)
        if self.save_neff_name is not None:
            path = os.path.join(folder, os.path.splitext(self.save_neff_name)[0] + ".bir.json")
            with open(path, "w") as f:
                f.write(prof.traced.module.to_json())
        if self.save_trace_name is not None:
            prof.write_trace(os.path.join(folder,
                                          os.path.splitext(self.save_trace_name)[0] + ".json"))

    def __repr__(self):
        return f"<nki {self.decorator} kernel {self.func.__qualname__}>"


def _device_decorator(kernel, make):
    return make if kernel is None else make(kernel)


def _check_compile_options(additional_compile_opt, what: str):
    """The compiler flags, checked as nki.jit checks them."""
    if additional_compile_opt is not None:
        jit(additional_compile_opt=additional_compile_opt)  # (refuses unknown flags)


def baremetal(kernel=None, *, save_neff_name=None, save_trace_name=None,
              additional_compile_opt=None, artifacts_dir=None):
    """``@nki.baremetal``: the kernel called with NumPy arrays runs (on the simulator) and
    returns its outputs; ``save_*_name`` / ``artifacts_dir``: see :class:`DeviceKernel`."""
    _check_compile_options(additional_compile_opt, "nki.baremetal")
    if artifacts_dir is not None and os.path.isdir(artifacts_dir) and os.listdir(artifacts_dir):
        raise NKIError(f"nki.baremetal: artifacts_dir {artifacts_dir!r} must be empty")
    return _device_decorator(kernel, lambda k: DeviceKernel(
        k, "baremetal", save_neff_name, save_trace_name, artifacts_dir))


def benchmark(kernel=None, *, warmup=10, iters=100, save_neff_name=None, save_trace_name=None,
              additional_compile_opt=None):
    """``@nki.benchmark``: as ``baremetal``, and ``kernel.benchmark_result.nc_latency`` holds
    the simulated latency (every percentile; ``warmup`` and ``iters`` change nothing in a
    deterministic simulation). Tensor types (``nki.typing.tensor[...]``) may stand in for the
    arrays, as NKI does not use the inputs either: then only the timing is simulated."""
    for name, value in (("warmup", warmup), ("iters", iters)):
        if type(value) is not int or value < 0 or (name == "iters" and value == 0):
            raise NKIError(f"nki.benchmark: {name} must be a {'positive' if name == 'iters' else 'non-negative'} "
                           f"integer, not {value!r}")
    _check_compile_options(additional_compile_opt, "nki.benchmark")
    return _device_decorator(kernel, lambda k: _TimingKernel(
        k, "benchmark", save_neff_name, save_trace_name))


class _TimingKernel(DeviceKernel):
    """A DeviceKernel that also takes tensor types instead of arrays, and then, or when
    ``timing_only`` is set, runs in timing mode (no numerics)."""

    timing_only = False

    def launch(self, target, args: tuple, kwargs: dict):
        from .typing import TensorType
        if self.timing_only or any(isinstance(a, TensorType) for a in list(args) + list(kwargs.values())):
            traced = traced_kernel(target, args, kwargs, None)
            try:
                result = _simulator().simulate(traced.module, {}, arch=traced.arch,
                                               neuron_core_id=None, mode="timing")
            except SimulationError as e:
                raise at_kernel_line(e, traced.module) from None
            prof = Profile(traced, result, {}, None)
            self.benchmark_result = BenchmarkResult(prof)
            self._save(prof)
            return None
        return super().launch(target, args, kwargs)


def profile(func=None, *, working_directory=None, save_neff_name=None, save_trace_name=None,
            additional_compile_opt=None, overwrite=False, profile_nth=1, num_execs=1, mode="full"):
    """``@nki.profile(working_directory=...)``: the kernel called with NumPy arrays runs on the
    simulator and its profile is written into ``working_directory`` (an absolute path, as NKI
    requires): the timeline trace (``<save_trace_name stem>.json``, default ``profile.json``) and
    the traced module (``<save_neff_name stem>.bir.json``, default ``file.bir.json``); returns
    None, as NKI's. (``num_execs`` runs and the ``profile_nth`` of them profiled are all alike in
    a deterministic simulation.) Tensor types (``nki.typing.tensor[...]``) may stand in for the
    arrays, as for ``nki.benchmark``. ``mode="timing"`` (neuronxsim's, not the SDK's) profiles
    without numerics, whatever the arguments. For a :class:`Profile` of one call, see
    :func:`profile_kernel`."""
    if mode not in ("full", "timing"):
        raise NKIError(f"nki.profile: mode must be 'full' or 'timing', not {mode!r}")
    if working_directory is None or not os.path.isabs(str(working_directory)):
        raise NKIError("nki.profile: working_directory must be given as an absolute path")
    for name, value in (("profile_nth", profile_nth), ("num_execs", num_execs)):
        if type(value) is not int or value < 1:
            raise NKIError(f"nki.profile: {name} must be a positive integer, not {value!r}")
    _check_compile_options(additional_compile_opt, "nki.profile")
    trace_name = save_trace_name or "profile.ntff"
    neff_name = save_neff_name or "file.neff"

    def make(kernel):
        directory = str(working_directory)
        targets = [os.path.join(directory, os.path.splitext(n)[0] + suffix)
                   for n, suffix in ((trace_name, ".json"), (neff_name, ".bir.json"))]
        if not overwrite and any(os.path.exists(t) for t in targets):
            raise NKIError(f"nki.profile: {next(t for t in targets if os.path.exists(t))} "
                           "exists (pass overwrite=True to replace it)")
        profiled = _TimingKernel(kernel, "profile", neff_name, trace_name, directory,
                                 returns_outputs=False)
        profiled.timing_only = mode == "timing"
        return profiled
    return _device_decorator(func, make)


__all__ = ["simulate_kernel", "simulate", "profile_kernel", "Profile", "baremetal", "benchmark",
           "profile", "DeviceKernel", "run_traced", "bound_arrays"]
