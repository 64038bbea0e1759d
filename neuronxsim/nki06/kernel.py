"""``nki.jit``, ``nki.simulate`` and launching NKI 0.6 kernels on the simulator.

A kernel traces with the shared driver (``neuronxsim.nki.kernel``): its NumPy arguments become
``Input`` tensors, seen by the kernel as ``NkiTensor`` in ``nl.hbm`` (``nl.shared_hbm`` under
LNC=2), and the ``nl.shared_hbm`` tensors it returns become the outputs.

``kernel[2](...)`` launches it on a logical NeuronCore of two physical cores (LNC=2): the trace
holds one BIR function per core (``nl.program_id(0)`` is the core, ``nl.num_programs()`` 2),
and the simulator runs both at once on shared HBM, so time and numerics are those of the pair.
LNC=2 needs NeuronCore-v3 (trn2).

The target generation is ``NEURON_PLATFORM_TARGET_OVERRIDE`` (``trn1``/``inf2``/``gen2``,
``trn2``/``gen3``) as in NKI, read at each launch. Unset, it is :data:`DEFAULT_ARCH`: NKI itself
defaults to trn3 (NeuronCore-v4), which neuronxsim does not model, so kernels run on the newest
generation it does model.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from neuronxsim.bir import target
from neuronxsim.nki import tracer as _tracer
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki.execution import Profile, bound_arrays, run_traced
from neuronxsim.nki.kernel import DialectAdapter, GridKernel, Kernel as _SharedKernel
from neuronxsim.nki.kernel import TracedKernel, traced_kernel, user_facing
from neuronxsim.nki.language import nc
from neuronxsim.nki.tensor import HBM, INPUT, SHARED_HBM, Tensor

from . import dtypes as dt
from ._api import api
from .tensor import MemoryRegion, NkiTensor, wrap

#: The generation a kernel runs on when NEURON_PLATFORM_TARGET_OVERRIDE is unset.
DEFAULT_ARCH = "trn2"
# Every name of a generation the target description knows, but its NeuronCore-vN name (NKI's
# variable takes the instance and BIR names).
_TARGETS = {name: arch for arch in target.ARCHS for name in target.aliases(arch)
            if name != target.config(arch).neuron_core}
_UNMODELLED_TARGETS = ("trn3", "gen4")

#: The launch being traced: ``lnc`` cores, and whether the kernel was launched with brackets
#: (``nl.program_ndim``); set by :func:`traced` around the trace.
_launch = {"lnc": 1, "ndim": 0, "constants": {}}


def target_arch() -> str:
    """The generation NEURON_PLATFORM_TARGET_OVERRIDE names (see the module docstring)."""
    value = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE", "").strip()
    if not value:
        return DEFAULT_ARCH
    arch = _TARGETS.get(value.lower())
    if arch is not None:
        return arch
    if value.lower() in _UNMODELLED_TARGETS:
        raise NKIError(f"NEURON_PLATFORM_TARGET_OVERRIDE={value}: trn3 (NeuronCore-v4) is not "
                       "modelled by neuronxsim; use trn1 or trn2")
    raise NKIError(f"NEURON_PLATFORM_TARGET_OVERRIDE={value!r}: expected trn1, inf2, gen2, trn2 "
                   "or gen3")


class Kernel:
    """A function decorated with ``nki.jit``: call it with NumPy arrays to run it on the
    simulator; ``kernel[2]`` launches it on two physical NeuronCores (LNC=2)."""

    def __init__(self, func):
        self.func = func.func if isinstance(func, Kernel) else func
        functools.update_wrapper(self, self.func)

    def __getitem__(self, lnc) -> "LaunchedKernel":
        return LaunchedKernel(self, lnc)

    def __call__(self, *args, **kwargs):
        if _tracer.active():  # a kernel calling another: inline it
            return self.func(*args, **kwargs)
        return simulate_kernel(self, *args, **kwargs)

    def __repr__(self):
        return f"<nki kernel {self.func.__qualname__}>"


class LaunchedKernel:
    """A kernel with its LNC degree: ``kernel[lnc]``."""

    def __init__(self, kernel: Kernel, lnc):
        if isinstance(lnc, tuple) or isinstance(lnc, bool) or not isinstance(lnc, int):
            raise NKIError(f"kernel[{lnc!r}]: the launch bracket holds one integer, the number of "
                           "physical NeuronCores (LNC degree): kernel[1] or kernel[2]")
        if lnc < 1:
            raise NKIError(f"kernel[{lnc}]: the LNC degree must be at least 1")
        self.kernel = kernel
        self.lnc = lnc

    def __call__(self, *args, **kwargs):
        if _tracer.active():
            raise NKIError("launching a kernel (kernel[n](...)) inside a kernel is not supported")
        return simulate_kernel(self, *args, **kwargs)

    def __repr__(self):
        return f"<nki kernel {self.kernel.func.__qualname__}[{self.lnc}]>"


@api
def jit(fn=None):
    """Marks an NKI kernel: ``@nki.jit`` or ``nki.jit(fn)``."""
    if fn is None:
        return Kernel
    if not callable(fn):
        raise TypeError(f"nki.jit decorates a function, not {type(fn).__name__}")
    return Kernel(fn)


@api
def simulate(kernel):
    """``nki.simulate(kernel)(*arrays)``: runs the kernel (``kernel[2]`` for LNC=2) on the
    simulator and returns its outputs as NumPy arrays."""
    if not isinstance(kernel, (Kernel, LaunchedKernel)):
        if not callable(kernel):
            raise TypeError(f"nki.simulate takes a kernel, not {type(kernel).__name__}")
        kernel = Kernel(kernel)

    def run(*args, **kwargs):
        return simulate_kernel(kernel, *args, **kwargs)
    run.__name__ = getattr(kernel, "__name__", "kernel")
    return run


def _unwrap(kernel) -> tuple:
    """(python function, LNC degree)."""
    if isinstance(kernel, LaunchedKernel):
        return kernel.kernel.func, kernel.lnc, 1
    if isinstance(kernel, Kernel):
        return kernel.func, 1, 0
    if callable(kernel):
        return kernel, 1, 0
    raise NKIError(f"expected an nki.jit kernel or a function, got {type(kernel).__name__}")


class _Adapter(DialectAdapter):
    """NKI 0.6 arguments and results for the shared trace driver."""

    def __init__(self, lnc: int):
        self.region = MemoryRegion.shared_hbm if lnc > 1 else MemoryRegion.private_hbm

    def arguments(self, args, kwargs):
        def convert(v):
            return wrap(v, self.region) if isinstance(v, Tensor) else v
        return [convert(v) for v in args], {k: convert(v) for k, v in kwargs.items()}

    def returned(self, value, func, where):
        items = value if isinstance(value, (tuple, list)) else (value,)
        if value is None:
            return value
        views = []
        for i, t in enumerate(items):
            if not isinstance(t, NkiTensor):
                raise NKIError(f"kernel {func.__qualname__} returns {type(t).__name__} (output "
                               f"{i}); a kernel returns the nl.shared_hbm tensors it writes", where)
            st = t._view.storage
            if st.kind == HBM or (st.kind not in (SHARED_HBM, INPUT) and not st.on_chip):
                raise NKIError(f"kernel {func.__qualname__} returns {st.describe()}, allocated in "
                               f"{t.buffer.name}: all kernel output (return) tensors must be "
                               "allocated with buffer=nl.shared_hbm", where)
            views.append(t._view_of(f"kernel {func.__qualname__} output {i}", where))
        return tuple(views) if isinstance(value, (tuple, list)) else views[0]

    def local_tensors(self, local_vars):
        return {k: (v._view if isinstance(v, NkiTensor) else v) for k, v in local_vars.items()}


def _check_arrays(args, kwargs, arch: str):
    """Refuses array arguments of a data type ``arch`` lacks (with the generation named)."""
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, np.ndarray) and dt._dt.as_dtype(value.dtype) is None:
            dt.resolve(value.dtype, arch, None, "a kernel argument")


def traced(kernel, args: tuple, kwargs: dict, arch: str | None = None,
           max_instructions: int | None = None, schedule: str = "compiler", prepare: bool = False):
    """(TracedKernel, the shared driver's kernel object, arch) of an NKI 0.6 kernel;
    ``max_instructions`` (the cap on traced instructions) and ``schedule`` as
    :func:`neuronxsim.nki.kernel.trace_kernel` takes them, ``prepare`` as
    :func:`neuronxsim.nki.kernel.traced_kernel` does."""
    func, lnc, ndim = _unwrap(kernel)
    arch = arch or target_arch()
    if arch not in target.ARCHS:
        raise NKIError(f"unknown arch {arch!r}; expected one of {', '.join(target.ARCHS)}")
    most = target.config(arch).max_logical_cores  # (physical NeuronCores per logical core)
    if lnc > most:
        raise NKIError(f"kernel[{lnc}]: LNC={lnc} needs {lnc} physical NeuronCores per logical "
                       f"core; {arch} ({dt.CORE_NAMES[arch]}) has {most}")
    _check_arrays(args, kwargs, arch)
    shared = _SharedKernel(func)
    if lnc > 1:
        shared = GridKernel(shared, (nc(lnc),))
    previous = dict(_launch)
    _launch.update(lnc=lnc, ndim=ndim, constants={})
    try:
        t = traced_kernel(shared, args, kwargs, arch, max_instructions, adapter=_Adapter(lnc),
                          schedule=schedule, prepare=prepare)
        t.constants = {name: array for name, array in _launch["constants"].values()}
        return t, shared, arch
    finally:
        _launch.clear()
        _launch.update(previous)


@user_facing
def trace_kernel(kernel, *args, arch: str | None = None, max_instructions: int | None = None,
                 schedule: str = "compiler", **kwargs) -> TracedKernel:
    """Traces an NKI 0.6 kernel (``kernel`` or ``kernel[2]``) for these arguments: arrays or
    ``neuronxsim.nki.typing.tensor[[shape], dtype]`` stand-ins. ``max_instructions``: the most
    instructions the trace may record (default: ``$NEURONXSIM_MAX_INSTRUCTIONS`` if set, else
    one million); ``schedule``: "compiler" (the NKI compiler's instruction order) or "source"."""
    return traced(kernel, args, kwargs, arch, max_instructions, schedule)[0]


@user_facing
def simulate_kernel(kernel, *args, arch: str | None = None, max_instructions: int | None = None,
                    schedule: str = "compiler", **kwargs):
    """Runs ``kernel`` on the simulator; returns its outputs (one array, or a tuple).
    ``max_instructions``, ``schedule``: see :func:`trace_kernel`."""
    t, _, outputs = _run(kernel, args, kwargs, arch, schedule=schedule,
                         max_instructions=max_instructions)
    values = tuple(outputs[spec.name] for spec in t.outputs)
    return values[0] if len(values) == 1 else values


def _run(kernel, args, kwargs, arch, trace_file=None, mode="full", schedule="compiler",
         max_instructions=None) -> tuple:
    """(TracedKernel, the simulator's result, the outputs by name; none in timing mode)."""
    t, shared, arch = traced(kernel, args, kwargs, arch, max_instructions, schedule,
                             prepare=mode == "timing")
    arrays = bound_arrays(shared, args, kwargs) if mode == "full" else {}
    sim_result, outputs = run_traced(t, arrays, arch=arch, mode=mode)
    if trace_file is not None:
        sim_result.write_trace(trace_file)
    return t, sim_result, outputs


@user_facing
def profile(kernel, *args, arch: str | None = None, trace_file=None, mode: str = "full",
            schedule: str = "compiler", max_instructions: int | None = None, **kwargs) -> Profile:
    """Simulates ``kernel`` and reports time and per-engine statistics (``Profile``); with
    ``trace_file``, also writes the timeline trace (Chrome/Perfetto JSON). ``mode="timing"``:
    the same without numerics (no outputs; arguments may be tensor stand-ins). ``schedule``:
    "compiler" (the NKI compiler's instruction order) or "source". ``max_instructions``: see
    :func:`trace_kernel`."""
    t, sim_result, outputs = _run(kernel, args, kwargs, arch, trace_file, mode, schedule,
                                  max_instructions)
    return Profile(t, sim_result, outputs, trace_file)


def launch() -> dict:
    """The launch being traced (``lnc``, ``ndim``)."""
    return _launch


__all__ = ["jit", "simulate", "Kernel", "LaunchedKernel", "trace_kernel", "simulate_kernel",
           "profile", "target_arch", "DEFAULT_ARCH"]
