"""Running kernels on the C++ tile-engine simulator (``neuronxsim.sim``): ``simulate_kernel``,
``simulate`` and ``profile``.

A kernel is traced for the call's arguments, its module simulated with the arrays bound to the
Input tensors by parameter name, and the Output tensors returned as NumPy arrays in the order
the kernel returns them (one array, or a tuple). A kernel traced for several NeuronCores
(``kernel[nl.nc(n)]``) runs on that many simulated cores sharing the DRAM tensors.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as dt
from .errors import NKIError
from .kernel import TracedKernel, _bind, traced_kernel, user_facing


def _simulator():
    try:
        from neuronxsim import sim
    except ImportError:
        raise NKIError("the tile-engine simulator (neuronxsim.sim) is not part of this "
                       "installation") from None
    return sim


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
    unused, no outputs). Returns (the simulator's result, or None for the reference; the outputs
    by name)."""
    if mode not in MODES:
        raise NKIError(f"mode {mode!r}: 'full' (numerics and time) or 'timing' (time only)")
    if mode == "timing":
        if executor != "simulator":
            raise NKIError(f"mode 'timing' runs on the simulator, not the {executor!r} executor")
        return _simulator().simulate(traced.module, arch=arch, mode="timing", neuron_core_id=None), {}
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
def simulate_kernel(kernel, *args, arch: str = "trn1", schedule: str = "compiler", **kwargs):
    """Runs ``kernel`` (an ``nki.jit`` kernel, optionally with a launch grid) on the simulator
    and returns its outputs as NumPy arrays (a tuple when it returns several). ``schedule``: see
    :func:`~neuronxsim.nki.kernel.trace_kernel`."""
    traced = traced_kernel(kernel, args, kwargs, arch, schedule=schedule)
    _, outputs = run_traced(traced, bound_arrays(kernel, args, kwargs), arch=arch)
    return _returned(traced, outputs)


def simulate(kernel, arch: str = "trn1", schedule: str = "compiler"):
    """``nki.simulate(kernel)(*arrays)``: the kernel as a function of NumPy arrays."""
    def run(*args, **kwargs):
        return simulate_kernel(kernel, *args, arch=arch, schedule=schedule, **kwargs)
    run.__name__ = getattr(kernel, "__name__", "kernel")
    return run


class Profile:
    """What ``nki.profile`` reports: the simulator's result (``result``: time, per-engine
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
        """A few lines: time, instructions, PE utilisation and MFU, busy engines."""
        r = self.result
        busy = ", ".join(f"{e} {s.utilization:.1%}" for e, s in r.engines.items()
                         if s.instructions and not e.startswith("DMA"))
        dma = sum(s.busy_ns for e, s in r.engines.items() if e.startswith("DMA"))
        lines = [f"{self.traced.instruction_count} instructions on {self.traced.num_cores} "
                 f"NeuronCore(s), {r.total_ns / 1e3:.2f} us",
                 f"PE utilisation {self.pe_utilization:.1%}, PE MFU {r.pe_mfu:.1%}",
                 f"engines busy: {busy}; DMA queues busy {dma / 1e3:.2f} us in total"]
        if self.trace_file is not None:
            lines.append(f"trace: {self.trace_file}")
        return "\n".join(lines)

    def __repr__(self):
        return (f"<nki profile: {self.traced.instruction_count} instructions, "
                f"{self.result.total_ns / 1e3:.2f} us, PE {self.pe_utilization:.1%}>")


@user_facing
def profile(kernel, *args, arch: str = "trn1", trace_file=None, mode: str = "full",
            schedule: str = "compiler", **kwargs) -> Profile:
    """Simulates ``kernel`` and reports time and per-engine statistics; with ``trace_file``,
    also writes the simulator's timeline trace there (Chrome/Perfetto JSON, one track per
    engine and DMA queue, each instruction with its kernel source line). ``mode="timing"``
    gives the same timeline and statistics without numerics (no outputs): the arguments may
    then be ``nki.typing.tensor`` stand-ins, and large sizes run fast. ``schedule``: see
    :func:`~neuronxsim.nki.kernel.trace_kernel`."""
    traced = traced_kernel(kernel, args, kwargs, arch, schedule=schedule)
    arrays = bound_arrays(kernel, args, kwargs) if mode == "full" else {}
    result, outputs = run_traced(traced, arrays, arch=arch, mode=mode)
    if trace_file is not None:
        result.write_trace(trace_file)
    return Profile(traced, result, outputs, trace_file)


__all__ = ["simulate_kernel", "simulate", "profile", "Profile", "run_traced", "bound_arrays"]
