"""Running kernels on the C++ tile-engine simulator (``neuronxsim.sim``): ``simulate_kernel``,
``simulate`` and ``profile``.

A kernel is traced for the call's arguments, its module simulated with the arrays bound to the
Input tensors by parameter name, and the Output tensors returned as NumPy arrays in the order
the kernel returns them (one array, or a tuple). A kernel traced for several NeuronCores
(``kernel[nl.nc(n)]``) runs each core's function on the same inputs; each output element is
taken from the core whose DMAs wrote it.
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


def run_traced(traced: TracedKernel, arrays: dict, executor: str = "simulator",
               arch: str = "trn1") -> tuple[list, dict]:
    """Runs a traced kernel on ``executor``: ``"simulator"`` (``neuronxsim.sim``, the default of
    every public entry point) or ``"reference"`` (the NumPy reference executor,
    ``neuronxsim.reference``: numerics only, no time). Returns (the simulator's result per core,
    or None for the reference; the outputs by name)."""
    if executor == "simulator":
        sim = _simulator()
        results = [sim.simulate(traced.module, arrays, arch=arch, neuron_core_id=core)
                   for core in range(traced.num_cores)]
        per_core = [r.outputs for r in results]
    elif executor == "reference":
        from neuronxsim import reference
        results = None
        per_core = [reference.execute(traced.module, arrays, neuron_core_id=core)
                    for core in range(traced.num_cores)]
    else:
        raise NKIError(f"unknown executor {executor!r}: 'simulator' or 'reference'")
    outputs = {}
    for spec in traced.outputs:
        if traced.num_cores == 1:
            value = np.asarray(per_core[0][spec.name])
        else:
            value = _merge_cores(spec, per_core, traced.written_regions)
        outputs[spec.name] = value.view(np.bool_) if spec.dtype == dt.bool_ else value
    return results, outputs


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
def simulate_kernel(kernel, *args, arch: str = "trn1", **kwargs):
    """Runs ``kernel`` (an ``nki.jit`` kernel, optionally with a launch grid) on the simulator
    and returns its outputs as NumPy arrays (a tuple when it returns several)."""
    traced = traced_kernel(kernel, args, kwargs, arch)
    _, outputs = run_traced(traced, bound_arrays(kernel, args, kwargs), arch=arch)
    return _returned(traced, outputs)


def simulate(kernel, arch: str = "trn1"):
    """``nki.simulate(kernel)(*arrays)``: the kernel as a function of NumPy arrays."""
    def run(*args, **kwargs):
        return simulate_kernel(kernel, *args, arch=arch, **kwargs)
    run.__name__ = getattr(kernel, "__name__", "kernel")
    return run


class Profile:
    """What ``nki.profile`` reports: the simulator's result for each NeuronCore (time,
    per-engine statistics, instructions with their kernel source lines), the outputs by name,
    the traced kernel, and the path of the timeline trace if one was written. Attributes not
    defined here are those of core 0's simulator result (``total_ns``, ``engines``, ``pe_mfu``,
    ``instructions``, ``write_trace``)."""

    def __init__(self, traced: TracedKernel, results: list, outputs: dict, trace_file):
        self.traced = traced
        self.results = results
        self.outputs = outputs
        self.trace_file = trace_file

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.results[0], name)

    def __repr__(self):
        return (f"<nki profile of {self.traced.num_cores} core(s), "
                f"{self.traced.instruction_count} instructions>")


@user_facing
def profile(kernel, *args, arch: str = "trn1", trace_file=None, **kwargs) -> Profile:
    """Simulates ``kernel`` and reports time and per-engine statistics; with ``trace_file``,
    also writes the simulator's timeline trace there (core 0)."""
    traced = traced_kernel(kernel, args, kwargs, arch)
    results, outputs = run_traced(traced, bound_arrays(kernel, args, kwargs), arch=arch)
    if trace_file is not None:
        results[0].write_trace(str(trace_file))
    return Profile(traced, results, outputs, trace_file)


__all__ = ["simulate_kernel", "simulate", "profile", "Profile", "run_traced", "bound_arrays"]
