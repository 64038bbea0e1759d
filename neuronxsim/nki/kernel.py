"""``nki.jit`` kernels, launch grids and tracing a kernel to BIR.

A kernel traces by running its Python once per SPMD instance of its launch grid, over symbolic
tensors: every array argument becomes an ``Input`` DRAM tensor named after its parameter (other
arguments are passed through as compile-time constants), loops unroll, and every ``nl``/``nisa``
call records ISA instructions. The tensors the kernel returns become ``Output`` DRAM tensors.

Naming of the outputs: a tensor created with ``nl.ndarray(..., name="y")`` is called ``y``;
otherwise it takes the name of the kernel's local variable that holds it when the kernel returns
(``return c_output`` gives ``c_output``); failing both, ``out`` (one output) or ``out0``, ``out1``,
... by position.

Launch grids: ``kernel[4]`` or ``kernel[2, 3]`` runs that many SPMD instances on one NeuronCore
(``nl.program_id(axis)`` tells them apart; every instance writes the same shared outputs).
``kernel[nl.nc(2)]`` (also ``kernel[nl.nc(2), 4]``) spreads a grid dimension over NeuronCores:
the module gets one function per core, ``functions[c]`` holding the instructions of the
instances whose ``nl.program_id`` along that dimension is ``c``.
"""

from __future__ import annotations

import functools
import gc
import inspect
import itertools
import re
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from neuronxsim import bir
from neuronxsim.errors import BIRError

from . import dtypes as dt
from .allocator import allocate
from .emit import emit_core
from .schedule import Schedule, check_schedule
from .errors import NKIError, without_internal_frames
from .language import nc
from .tensor import HBM, SHARED_HBM, Tensor
from .tracer import ARCHS, Tracer
from . import tracer as _tracer


@dataclass(frozen=True)
class TensorSpec:
    """Name, shape and dtype of a kernel input or output (a DRAM tensor of the trace)."""
    name: str
    shape: tuple
    dtype: np.dtype


@dataclass
class TracedKernel:
    """A traced kernel: its BIR module and what a caller needs to bind and run it."""
    module: "bir.Module"
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    num_cores: int
    arch: str
    instruction_counts: list[int]
    sbuf_peak_bytes: list[int]  # per core: bytes per partition live at the busiest moment
    psum_peak_bytes: list[int]
    trace_seconds: float
    #: per core and output name: the (offset, [(step, num), ...]) regions its DMAs write (for
    #: kernels traced for several NeuronCores; empty otherwise)
    written_regions: list[dict] = field(default_factory=list)
    #: arrays of Input tensors the kernel made itself (nl.shared_constant), by name: bound with
    #: the arguments' arrays when the kernel runs
    constants: dict = field(default_factory=dict)

    @property
    def input_names(self) -> list[str]:
        return [t.name for t in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [t.name for t in self.outputs]

    @property
    def instruction_count(self) -> int:
        return sum(self.instruction_counts)


class Kernel:
    """A function decorated with ``nki.jit``. Calling it with NumPy arrays simulates it and
    returns its outputs (as ``nki.simulate_kernel``); inside another kernel's trace it is
    inlined. ``kernel[grid]`` launches it over a grid."""

    def __init__(self, func, **options):
        if isinstance(func, Kernel):
            func = func.func
        self.func = func
        self.options = options
        functools.update_wrapper(self, func)

    def __getitem__(self, grid) -> "GridKernel":
        return GridKernel(self, grid)

    def __call__(self, *args, **kwargs):
        if _tracer.active():
            return self.func(*args, **kwargs)
        from .execution import simulate_kernel
        return simulate_kernel(self, *args, **kwargs)

    def __repr__(self):
        return f"<nki kernel {self.func.__qualname__}>"


class GridKernel:
    """A kernel bound to a launch grid."""

    def __init__(self, kernel: Kernel, grid):
        self.kernel = kernel
        self.grid = grid if isinstance(grid, tuple) else (grid,)

    def __call__(self, *args, **kwargs):
        if _tracer.active():
            raise NKIError("launching a grid inside a kernel is not supported")
        from .execution import simulate_kernel
        return simulate_kernel(self, *args, **kwargs)

    def __repr__(self):
        return f"<nki kernel {self.kernel.func.__qualname__}{list(self.grid)}>"


def jit(func=None, **options):
    """Marks an NKI kernel: ``@nki.jit``, ``@nki.jit()``, ``nki.jit(fn)``,
    ``nki.jit(mode=...)(fn)``. Options of the real compiler (``mode``, ...) are accepted and
    ignored."""
    if func is None:
        return lambda f: Kernel(f, **options)
    return Kernel(func, **options)


def user_facing(fn):
    """Public entry points raise NKIError with neuronxsim's own frames cut from the traceback."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NKIError as e:
            raise e.with_traceback(without_internal_frames(e.__traceback__)) from None
    return wrapper


def _unwrap(kernel) -> tuple:
    """(python function, grid) of a Kernel, a GridKernel or a plain function."""
    if isinstance(kernel, GridKernel):
        return kernel.kernel.func, kernel.grid
    if isinstance(kernel, Kernel):
        return kernel.func, (1,)
    if callable(kernel):
        return kernel, (1,)
    raise NKIError(f"expected an nki.jit kernel or a function, got {type(kernel).__name__}")


def _parse_grid(grid: tuple) -> tuple[tuple, int]:
    """(sizes of the grid dimensions, index of the NeuronCore dimension or -1)."""
    sizes, core_axis = [], -1
    for axis, g in enumerate(grid):
        if isinstance(g, nc):
            if core_axis >= 0:
                raise NKIError("a launch grid can spread one dimension over NeuronCores")
            core_axis = axis
            sizes.append(g.n)
        else:
            try:
                n = int(g)
            except TypeError:
                raise NKIError(f"launch grid entries are integers or nl.nc(n), not "
                               f"{type(g).__name__}") from None
            if n < 1:
                raise NKIError(f"launch grid {list(grid)} has an empty dimension")
            sizes.append(n)
    return tuple(sizes), core_axis


class _ArraySpec:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype


def _array_spec(name: str, value):
    """The (shape, dtype) of an array-like argument, or None for a compile-time constant."""
    from .typing import TensorType
    if isinstance(value, TensorType):
        if value.dtype is None:
            raise NKIError(f"argument '{name}': a tensor type standing in for an array needs a "
                           "dtype (nt.tensor[[128, 512], nl.float32])")
        return _ArraySpec(value.shape, value.dtype)
    if isinstance(value, np.ndarray):
        d = dt.as_dtype(value.dtype)
        if d is None:
            raise NKIError(f"argument '{name}' is a {value.dtype} array; NKI tensors are "
                           f"{dt.supported_names()} (convert it, e.g. .astype(np.float32))")
        if value.ndim == 0:
            raise NKIError(f"argument '{name}' is a 0-dimensional array; pass a number instead")
        return _ArraySpec(tuple(int(n) for n in value.shape), d)
    return None


def _bind(func, args, kwargs) -> tuple[list, dict]:
    """The call's arguments by parameter, [(name, value, "pos" | "varpos" | "kw" | "varkw")],
    and the array spec (or None) of each by name."""
    sig = inspect.signature(func)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise NKIError(f"calling kernel {func.__qualname__}: {e}") from None
    bound.apply_defaults()
    params = []
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind == inspect.Parameter.VAR_POSITIONAL:
            params += [(f"{name}{i}", v, "varpos") for i, v in enumerate(value)]
        elif kind == inspect.Parameter.VAR_KEYWORD:
            params += [(k, v, "varkw") for k, v in value.items()]
        elif kind == inspect.Parameter.KEYWORD_ONLY:
            params.append((name, value, "kw"))
        else:
            params.append((name, value, "pos"))
    return params, {name: _array_spec(name, value) for name, value, _ in params}


@user_facing
def trace_kernel(kernel, *args, arch: str = "trn1", schedule: str = "compiler",
                 **kwargs) -> TracedKernel:
    """Traces ``kernel`` for the given arguments (arrays or ``nki.typing.tensor[...]`` specs).
    ``schedule``: "compiler" orders the instructions as the NKI compiler's scheduler does,
    "source" keeps the kernel's order (:mod:`neuronxsim.nki.schedule`)."""
    return traced_kernel(kernel, args, kwargs, arch, schedule=schedule)


@user_facing
def trace(kernel, *args, arch: str = "trn1", schedule: str = "compiler", **kwargs) -> "bir.Module":
    """The BIR module of ``kernel`` traced for these arguments (see :func:`trace_kernel`)."""
    return traced_kernel(kernel, args, kwargs, arch, schedule=schedule).module


def traced_kernel(kernel, args: tuple, kwargs: dict, arch: str, adapter=None,
                  schedule: str = "compiler") -> TracedKernel:
    """:func:`trace_kernel` for the other entry points (which filter tracebacks themselves).
    ``adapter``: how another dialect's kernel sees its arguments and hands back its results
    (see :class:`DialectAdapter`); None for this dialect's."""
    check_schedule(schedule)
    # The trace allocates many small objects and frees none until it ends: the cyclic garbage
    # collector would only rescan them, over and over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _trace(kernel, args, arch, kwargs, adapter, schedule)
    finally:
        if collecting:
            gc.enable()


class DialectAdapter:
    """What a dialect other than this one (``neuronxsim.nki06``) changes in a trace: the objects
    its kernels receive and return. The default methods are this dialect's (identity)."""

    def arguments(self, args: list, kwargs: dict) -> tuple[list, dict]:
        """The kernel's arguments, from the views of its ``Input`` tensors (and constants)."""
        return args, kwargs

    def returned(self, value, func):
        """The kernel's return value as this dialect's tensors (one, or a tuple)."""
        return value

    def local_tensors(self, local_vars: dict) -> dict:
        """The kernel's local variables with its tensors as this dialect's (for output names)."""
        return local_vars


def _trace(kernel, args, arch: str, kwargs, adapter=None, schedule: str = "compiler") -> TracedKernel:
    start = time.perf_counter()
    func, grid = _unwrap(kernel)
    sizes, core_axis = _parse_grid(grid)
    num_cores = sizes[core_axis] if core_axis >= 0 else 1
    params, specs = _bind(func, args, kwargs)
    inputs = [TensorSpec(n, s.shape, s.dtype) for n, s in specs.items() if s is not None]
    if arch not in ARCHS:
        raise NKIError(f"unknown arch {arch!r}; expected one of {', '.join(ARCHS)}")

    tracer = Tracer(arch, num_cores)
    tracer.grid = sizes
    results = []  # per core: the storages returned
    out_names = None
    with tracer:
        for core in range(num_cores):
            tracer.set_core(core)
            ranges = [range(core, core + 1) if a == core_axis else range(n)
                      for a, n in enumerate(sizes)]
            returned = None
            for instance, ids in enumerate(itertools.product(*ranges)):
                tracer.begin_instance(ids, instance)
                call_args, call_kwargs = _symbolic_args(tracer, params, specs)
                if adapter is not None:
                    call_args, call_kwargs = adapter.arguments(call_args, call_kwargs)
                frame_probe = _FrameProbe(func)
                with frame_probe:
                    value = func(*call_args, **call_kwargs)
                if adapter is not None:
                    value = adapter.returned(value, func)
                storages = _returned_storages(value, func)
                if returned is None:
                    returned = storages
                    if out_names is None:
                        local_vars = frame_probe.locals()
                        if adapter is not None:
                            local_vars = adapter.local_tensors(local_vars)
                        out_names = _output_names(value, storages, local_vars)
                elif [id(s) for s in storages] != [id(s) for s in returned]:
                    raise NKIError(f"program {ids} of kernel {func.__qualname__} returns different "
                                   "tensors than program 0; every SPMD instance must return the "
                                   "same shared outputs")
                # The kernel's frame refers back to this one (f_back): holding on to it would make
                # a reference cycle that keeps the whole trace alive until the cyclic collector.
                frame_probe.frame = None
            results.append(returned)

    module = bir.Module()
    module.arch = ARCHS[arch]["bir_arch"]
    counts, sbuf_peaks, psum_peaks, regions = [], [], [], []
    for core, returned in zip(tracer.cores, results):
        for st, name in zip(returned, out_names):
            _rename(core, st, name)
        peaks = allocate(core, tracer.sbuf_bytes)
        sbuf_peaks.append(peaks["sbuf"])
        psum_peaks.append(peaks["psum"])
        counts.append(emit_core(module, core, set(returned)).instruction_count)
        if num_cores > 1:  # to merge the cores' outputs when they run one at a time
            regions.append(_written_regions(core, returned))
    outputs = [TensorSpec(st.name, st.shape, st.dtype) for st in results[0]]
    try:
        module.verify()
    except BIRError as e:
        raise _located_bir_error(e, tracer) from None
    if schedule == "compiler":
        Schedule().run(module, arch)
    for core in tracer.cores:
        core.break_cycles()
    return TracedKernel(module, inputs, outputs, num_cores, arch, counts, sbuf_peaks, psum_peaks,
                        time.perf_counter() - start, regions)


def _symbolic_args(tracer: Tracer, params, specs):
    args, kwargs = [], {}
    for name, value, kind in params:
        spec = specs[name]
        if spec is not None:
            value = tracer.input_storage(name, spec.dtype, spec.shape).full_view()
        if kind in ("pos", "varpos"):
            args.append(value)
        else:
            kwargs[name] = value
    return args, kwargs


class _FrameProbe:
    """Catches the kernel's frame when it returns, to read the names of its local variables.

    The hook is installed just around the kernel's call and removes itself at the kernel
    frame's first event, so the trace itself runs unhooked. When a profiler already owns the
    hook, the probe stands aside (outputs are then named by position)."""

    def __init__(self, func):
        self.code = getattr(func, "__code__", None)
        self.frame = None
        self.installed = False

    def _hook(self, frame, event, arg):
        if frame.f_code is self.code:
            self.frame = frame
            sys.setprofile(None)

    def __enter__(self):
        if self.code is not None and sys.getprofile() is None:
            sys.setprofile(self._hook)
            self.installed = True
        return self

    def __exit__(self, *exc):
        if self.installed and sys.getprofile() == self._hook:
            sys.setprofile(None)

    def locals(self) -> dict:
        return dict(self.frame.f_locals) if self.frame is not None else {}


def _returned_storages(value, func) -> list:
    items = value if isinstance(value, (tuple, list)) else (value,)
    if value is None or not items:
        raise NKIError(f"kernel {func.__qualname__} returns nothing; a kernel returns the HBM "
                       "tensors it writes (nl.ndarray(..., buffer=nl.shared_hbm))")
    storages = []
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise NKIError(f"kernel {func.__qualname__} returns {type(t).__name__} (output {i}); "
                           "a kernel returns HBM tensors")
        st = t.storage
        if st.kind not in (SHARED_HBM, HBM) or not t.is_full_view():
            what = "a kernel input" if st.kind == "input" else (
                f"an {st.kind.upper()} tile" if st.on_chip else "part of an HBM tensor")
            raise NKIError(f"kernel {func.__qualname__} returns {what} ({st.describe()}); it must "
                           "return whole HBM tensors created with nl.ndarray(..., "
                           "buffer=nl.shared_hbm)", st.created_at)
        if st.write_count == 0:
            raise NKIError(f"kernel {func.__qualname__} returns {st.describe()}, which it never "
                           "writes", st.created_at)
        if st in storages:
            raise NKIError(f"kernel {func.__qualname__} returns {st.describe()} twice")
        storages.append(st)
    return storages


def _output_names(value, storages, local_vars: dict) -> list[str]:
    by_id = {}
    for var, obj in local_vars.items():
        if isinstance(obj, Tensor) and obj.is_full_view():
            by_id.setdefault(id(obj.storage), var)
    names = []
    for i, st in enumerate(storages):
        if st.explicit_name:
            name = st.name
        else:
            name = by_id.get(id(st)) or ("out" if len(storages) == 1 else f"out{i}")
        names.append(name)
    return names


def _rename(core, st, name: str):
    if st.name == name:
        return
    if st.name is not None:
        core.names.discard(st.name)
    base, i = name, 0
    while name in core.names:
        i += 1
        name = f"{base}_{i}"
    core.names.add(name)
    st.name = name


def _written_regions(core, returned) -> dict:
    outs = {id(st): st.name for st in returned}
    regions = {}
    for op in core.ops:
        if not op.enabled:
            continue
        for acc in op.outs:
            if id(acc.storage) in outs:
                regions.setdefault(outs[id(acc.storage)], []).append((acc.offset, acc.pairs))
    return regions


def _located_bir_error(e: BIRError, tracer: Tracer) -> NKIError:
    """A verifier complaint about an emitted instruction, pointed at its kernel line."""
    m = re.match(r"functions\[(\d+)\]\.blocks\[0\]\.instructions\[(\d+)\]", str(e))
    loc = None
    if m:
        core, index = int(m.group(1)), int(m.group(2))
        enabled = [op for op in tracer.cores[core].ops if op.enabled]
        if index < len(enabled):
            loc = enabled[index].loc
    return NKIError(f"the traced BIR is invalid: {e}", loc)


__all__ = ["jit", "Kernel", "GridKernel", "trace", "trace_kernel", "TracedKernel", "TensorSpec",
           "DialectAdapter"]
