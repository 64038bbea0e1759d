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
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from neuronxsim import bir
from neuronxsim.bir import target
from neuronxsim.errors import BIRError

from . import dtypes as dt
from .arguments import located as located_argument_error
from .schedule import Schedule, check_schedule
from .errors import INSTRUCTION_WHERE, NKIError, SourceLocation, without_internal_frames
from .language import nc, spmd_dim
from .passes import PIPELINE, Program, run_pipeline
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
    #: per core: the SBUF spill transfers the allocator added (``stores``, ``reloads`` and the
    #: ``bytes`` they move, both ways; see :mod:`neuronxsim.nki.spill`)
    spills: list[dict] = field(default_factory=list)
    #: per core: how many instructions were moved out of program order so that the on-chip tiles
    #: fit (0: program order fits; see :mod:`neuronxsim.nki.pressure`)
    reordered: list[int] = field(default_factory=list)
    #: the scheduling pass's timing-mode decoding of ``module`` (``_core.sim.PreparedProgram``),
    #: for the library's own trace-then-simulate paths: set only when such a path asks
    #: (``traced_kernel(..., prepare=True)``), which takes it (:meth:`take_prepared`) before the
    #: module goes anywhere else. It points into the module, so a TracedKernel user code sees
    #: never holds one: a module changed since would be simulated from a stale decoding.
    prepared: object = field(default=None, init=False, repr=False, compare=False)

    def take_prepared(self):
        """The prepared decoding (or None), which this object then no longer holds."""
        prepared, self.prepared = self.prepared, None
        return prepared

    @property
    def input_names(self) -> list[str]:
        """The kernel's input tensors' names, in parameter order."""
        return [t.name for t in self.inputs]

    @property
    def output_names(self) -> list[str]:
        """The kernel's output tensors' names, in order."""
        return [t.name for t in self.outputs]

    @property
    def instruction_count(self) -> int:
        """How many instructions the trace emitted, summed over its NeuronCores."""
        return sum(self.instruction_counts)


#: ``nki.jit(mode=...)``: how the real compiler runs a kernel (for a framework, on a device,
#: on its simulator). Here a kernel called with NumPy arrays always runs on the simulator.
JIT_MODES = ("auto", "simulation", "baremetal", "benchmark", "trace", "jax", "torchxla")
#: neuronx-cc flags public kernels pass in ``additional_compile_opt``, and why none changes what
#: the simulator runs.
KNOWN_COMPILE_OPTIONS = {
    "--internal-skip-backend-allocation-opt-nki": "keeps the kernel's own SBUF/PSUM allocation "
                                                   "(the tracer never moves it)",
    "--disable-internal-io-dge": "moves kernel I/O without the descriptor-generation engine "
                                 "(a DMA detail the simulator's DMA model does not distinguish)",
}


class Kernel:
    """A function decorated with ``nki.jit``. Calling it with NumPy arrays simulates it and
    returns its outputs (as ``nki.simulate_kernel``); inside another kernel's trace it is
    inlined. ``kernel[grid]`` launches it over a grid. ``arch``: the generation of its
    ``platform_target`` (None: the caller's choice)."""

    def __init__(self, func, mode: str = "auto", arch: str | None = None,
                 compile_options: tuple = ()):
        if isinstance(func, Kernel):
            func = func.func
        self.func = func
        self.mode = mode
        self.arch = arch
        self.compile_options = compile_options
        self.force_auto_alloc = False  # (nki.compiler.force_auto_alloc)
        functools.update_wrapper(self, func)

    def __getitem__(self, grid) -> "GridKernel":
        return GridKernel(self, grid)

    def __call__(self, *args, **kwargs):
        if _tracer.active():
            return self.func(*args, **kwargs)
        return self.launch(self, args, kwargs)

    def launch(self, target, args: tuple, kwargs: dict):
        """Runs ``target`` (this kernel, or it on a grid) called with NumPy arrays: simulates it
        and returns its outputs."""
        from .execution import simulate_kernel
        return simulate_kernel(target, *args, **kwargs)

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
        return self.kernel.launch(self, args, kwargs)

    @property
    def benchmark_result(self):
        """An ``nki.benchmark`` kernel's result of its last call, read from the kernel launched
        on a grid as from the kernel itself (``bench[b](...)``, then ``bench[b].benchmark_result``
        or the launched object's)."""
        return self.kernel.benchmark_result

    def __repr__(self):
        return f"<nki kernel {self.kernel.func.__qualname__}{list(self.grid)}>"


def jit(func=None, mode="auto", *, platform_target=None, additional_compile_opt=None):
    """Marks an NKI kernel: ``@nki.jit``, ``@nki.jit()``, ``nki.jit(fn)``,
    ``nki.jit(mode=...)(fn)``. Every ``mode`` (see :data:`JIT_MODES`) runs a kernel called with
    NumPy arrays on the simulator; ``platform_target`` (a generation's name, as
    ``neuronxsim.bir.target`` knows them) is the arch a
    call without its own ``arch=`` traces for; ``additional_compile_opt`` takes the neuronx-cc
    flags of :data:`KNOWN_COMPILE_OPTIONS` (none changes what the simulator runs; any other
    flag is refused)."""
    if mode not in JIT_MODES:
        raise NKIError(f"nki.jit: mode {mode!r} is not one of {', '.join(JIT_MODES)}")
    arch = None
    if platform_target is not None:
        arch = target.canonical_arch(platform_target) if isinstance(platform_target, str) \
            else ""
        if not arch:
            names = (n for a in target.ARCHS for n in target.aliases(a))
            raise NKIError(f"nki.jit: platform_target {platform_target!r} is not one of "
                           f"{', '.join(names)}")
    options = ()
    if additional_compile_opt is not None:
        if not isinstance(additional_compile_opt, str):
            raise NKIError("nki.jit: additional_compile_opt is a string of compiler flags")
        options = tuple(additional_compile_opt.split())
        unknown = [o for o in options if o not in KNOWN_COMPILE_OPTIONS]
        if unknown:
            raise NKIError(f"nki.jit: compiler option(s) {', '.join(unknown)} are not known to "
                           "the simulator, which cannot tell what they would change; it knows "
                           f"{', '.join(KNOWN_COMPILE_OPTIONS)}")
    if func is None:
        return lambda f: Kernel(f, mode, arch, options)
    return Kernel(func, mode, arch, options)


def user_facing(fn):
    """Public entry points raise NKIError with neuronxsim's own frames cut from the traceback,
    and a call of the NKI API with arguments it does not take as an
    :class:`~neuronxsim.nki.arguments.NKIArgumentError` naming the kernel line."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NKIError as e:
            raise e.with_traceback(without_internal_frames(e.__traceback__)) from None
        except TypeError as e:
            error = located_argument_error(e)
            if error is None:
                raise
            raise error.with_traceback(without_internal_frames(e.__traceback__)) from None
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


def _parse_grid(grid: tuple) -> tuple[tuple, int, object]:
    """(sizes of the grid dimensions, number of NeuronCores, the core of an instance's ids)."""
    sizes, spread = [], None  # spread: (axis, core of an index along it, number of cores)
    for axis, g in enumerate(grid):
        if isinstance(g, nc):
            g = spmd_dim(g, 1)
        if isinstance(g, spmd_dim):
            if g.cores > 1 or isinstance(g.outer, nc) or isinstance(g.inner, nc):
                if spread is not None:
                    raise NKIError("a launch grid can spread one dimension over NeuronCores")
                spread = (axis, g.core_of, g.cores)
            sizes.append(g.size)
            continue
        if type(g) is not int and not isinstance(g, np.integer):
            raise NKIError(f"launch grid entries are integers, nl.nc(n) or nl.spmd_dim(...), "
                           f"not {type(g).__name__}")
        if g < 1:
            raise NKIError(f"launch grid {list(grid)} has an empty dimension")
        sizes.append(int(g))
    if spread is None:
        return tuple(sizes), 1, lambda ids: 0
    axis, core_of, cores = spread
    return tuple(sizes), cores, lambda ids: core_of(ids[axis])


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
def trace_kernel(kernel, *args, arch: str | None = None,
                 max_instructions: int | None = None, schedule: str = "compiler",
                 **kwargs) -> TracedKernel:
    """Traces ``kernel`` for the given arguments (arrays or ``nki.typing.tensor[...]`` specs).
    ``arch``: "trn1" or "trn2" (default: the kernel's ``platform_target``, else "trn1");
    ``max_instructions``: the most instructions the trace may record (all cores together)
    before it is refused (default: ``$NEURONXSIM_MAX_INSTRUCTIONS`` if set, else
    ``tracer.DEFAULT_MAX_INSTRUCTIONS``, one million); ``schedule``: "compiler" orders the
    instructions as the NKI compiler's scheduler does, "source" keeps the kernel's order
    (:mod:`neuronxsim.nki.schedule`)."""
    return traced_kernel(kernel, args, kwargs, arch, max_instructions, schedule=schedule)


@user_facing
def trace(kernel, *args, arch: str | None = None, max_instructions: int | None = None,
          schedule: str = "compiler", **kwargs) -> "bir.Module | Kernel":
    """The BIR module of ``kernel`` traced for these arguments (see :func:`trace_kernel`).

    NKI's own ``nki.trace`` is a decorator, as ``nki.jit`` (``@nki.trace``, or
    ``nki_jit = nki.trace``): a plain function given alone, with no argument or option, is
    decorated (a :class:`Kernel` of ``mode="trace"``), not traced. To trace a kernel that takes
    no arguments, give it decorated (``nki.trace(nki.jit(f))``) or call :func:`trace_kernel`."""
    if not args and not kwargs and arch is None and max_instructions is None and \
            schedule == "compiler" and not isinstance(kernel, (Kernel, GridKernel)):
        if not callable(kernel):
            raise NKIError(f"nki.trace decorates a kernel function, not {type(kernel).__name__}")
        return Kernel(kernel, "trace")
    return traced_kernel(kernel, args, kwargs, arch, max_instructions, schedule=schedule).module


def traced_kernel(kernel, args: tuple, kwargs: dict, arch: str | None,
                  max_instructions: int | None = None, adapter=None,
                  schedule: str = "compiler", prepare: bool = False) -> TracedKernel:
    """:func:`trace_kernel` for the other entry points (which filter tracebacks themselves).
    ``adapter``: how another dialect's kernel sees its arguments and hands back its results
    (see :class:`DialectAdapter`); None for this dialect's. ``prepare``: keep the scheduling
    pass's decoding in ``prepared`` (see :attr:`TracedKernel.prepared`), for a caller that
    simulates the module in timing mode before anything can change it."""
    check_schedule(schedule)
    if arch is None:
        jitted = kernel.kernel if isinstance(kernel, GridKernel) else kernel
        arch = (jitted.arch if isinstance(jitted, Kernel) else None) or "trn1"
    # The trace allocates many small objects and frees none until it ends: the cyclic garbage
    # collector would only rescan them, over and over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _trace(kernel, args, arch, kwargs, max_instructions, adapter, schedule, prepare=prepare)
    finally:
        if collecting:
            gc.enable()


class DialectAdapter:
    """What a dialect other than this one (``neuronxsim.nki06``) changes in a trace: the objects
    its kernels receive and return. The default methods are this dialect's (identity)."""

    def arguments(self, args: list, kwargs: dict) -> tuple[list, dict]:
        """The kernel's arguments, from the views of its ``Input`` tensors (and constants)."""
        return args, kwargs

    def returned(self, value, func, where: "SourceLocation | None"):
        """The kernel's return value as this dialect's tensors (one, or a tuple); an NKIError
        about it at ``where`` (the kernel's return line)."""
        return value

    def local_tensors(self, local_vars: dict) -> dict:
        """The kernel's local variables with its tensors as this dialect's (for output names)."""
        return local_vars



@dataclass
class Recording:
    """A kernel launch as recorded, before the passes: the :class:`Tracer` (whose
    ``cores[c].record`` is core ``c``'s :class:`~neuronxsim.nki.record.CoreRecord`), the input
    specs, and per core the storages the kernel returns (already named)."""
    tracer: Tracer
    inputs: list[TensorSpec]
    returned: list[list]


def record_kernel(kernel, args: tuple, kwargs: dict, arch: str,
                  max_instructions: int | None = None,
                  adapter: DialectAdapter | None = None) -> Recording:
    """Runs the kernel's Python once per SPMD instance of its grid, recording every core."""
    func, grid = _unwrap(kernel)
    sizes, num_cores, core_of = _parse_grid(grid)
    params, specs = _bind(func, args, kwargs)
    inputs = [TensorSpec(n, s.shape, s.dtype) for n, s in specs.items() if s is not None]
    if arch not in ARCHS:
        raise NKIError(f"unknown arch {arch!r}; expected one of {', '.join(ARCHS)}")

    dialect = adapter or DialectAdapter()
    tracer = Tracer(arch, num_cores, max_instructions, func.__qualname__)
    tracer.grid = sizes
    jitted = kernel.kernel if isinstance(kernel, GridKernel) else kernel
    tracer.force_auto_alloc = getattr(jitted, "force_auto_alloc", False)
    results = []  # per core: the storages returned
    out_names = None
    frame_probe = None
    try:
        with tracer:
            for core in range(num_cores):
                tracer.set_core(core)
                returned = None
                mine = (ids for ids in itertools.product(*map(range, sizes)) if core_of(ids) == core)
                for instance, ids in enumerate(mine):
                    tracer.begin_instance(ids, instance)
                    call_args, call_kwargs = _symbolic_args(tracer, params, specs)
                    call_args, call_kwargs = dialect.arguments(call_args, call_kwargs)
                    frame_probe = _FrameProbe(func)
                    with frame_probe:
                        value = func(*call_args, **call_kwargs)
                    if tracer.unassigned_reductions:
                        raise NKIError("the value of nl.loop_reduce is never assigned to a tile "
                                       "(dst[...] = nl.loop_reduce(x, op, loop_indices)): the "
                                       "reduction would be dropped",
                                       tracer.unassigned_reductions[0].loc)
                    where = frame_probe.returned_at()
                    value = dialect.returned(value, func, where)
                    storages = _returned_storages(value, func, where)
                    if returned is None:
                        returned = storages
                        if out_names is None:
                            local_vars = frame_probe.locals()
                            local_vars = dialect.local_tensors(local_vars)
                            out_names = _output_names(value, storages, local_vars)
                    elif [id(s) for s in storages] != [id(s) for s in returned]:
                        raise NKIError(f"program {ids} of kernel {func.__qualname__} returns different "
                                       "tensors than program 0; every SPMD instance must return the "
                                       "same shared outputs", where)
                    # The kernel's frame refers back to this one (f_back): holding on to it would make
                    # a reference cycle that keeps the whole trace alive until the cyclic collector.
                    frame_probe.frame = None
                results.append(returned)
    except BaseException:
        # A refused trace: the exception's traceback holds the kernel's frame, which refers back
        # to this one (f_back) and so to the probe holding it and to the record, whose own
        # cycles (see _break_cycles) would wait for the cyclic collector otherwise.
        if frame_probe is not None:
            frame_probe.frame = None
        for core in tracer.cores:
            _break_cycles(core.record)
        raise
    for core, returned in zip(tracer.cores, results):
        for st, name in zip(returned, out_names):
            _rename(core.record, st, name)
    return Recording(tracer, inputs, results)


def _trace(kernel, args, arch: str, kwargs, max_instructions: int, adapter=None,
           schedule: str = "compiler", pipeline=PIPELINE, prepare: bool = False) -> TracedKernel:
    start = time.perf_counter()
    recording = record_kernel(kernel, args, kwargs, arch, max_instructions, adapter)
    tracer, results = recording.tracer, recording.returned
    # Also when the trace is refused (an allocation that does not fit, say): the exception's
    # traceback holds this frame and so the record, whose cycles would otherwise wait for the
    # cyclic collector (tens of ms for a large record, in a sweep's next configuration).
    try:
        module = bir.Module()
        module.arch = ARCHS[arch]["bir_arch"]
        programs = [run_pipeline(Program(core.record, arch, tracer.sbuf_bytes, returned, module),
                                 pipeline)
                    for core, returned in zip(tracer.cores, results)]
        outputs = [TensorSpec(st.name, st.shape, st.dtype) for st in results[0]]
        # The scheduling pass decodes the module for the simulator, which verifies each operand as
        # it reads it, the verifier's checks in one pass with the decoding (module.verify() first
        # and a decoding that skips them read every instruction twice). A module it refuses keeps
        # its order, and is verified on its own: the verifier's message, located, where that is why.
        stats, prepared = [], None
        if schedule == "compiler":
            stats, prepared = (Schedule().run_prepared(module, arch) if prepare
                               else (Schedule().run(module, arch), None))
        if schedule != "compiler" or any(s["refused"] for s in stats):
            try:
                module.verify()
            except BIRError as e:
                raise _located_bir_error(e, programs) from None
            _refuse_what_the_core_cannot_run(module, arch, programs)
        regions = []
        if len(programs) > 1:  # to merge the cores' outputs when they run one at a time
            regions = [_written_regions(p.ops, returned) for p, returned in zip(programs, results)]
        counts = [p.function.instruction_count for p in programs]
        sbuf_peaks = [p.peak_bytes["sbuf"] for p in programs]
        psum_peaks = [p.peak_bytes["psum"] for p in programs]
    finally:
        for core in tracer.cores:
            _break_cycles(core.record)
    constants = {}
    for core in tracer.cores:
        constants.update(core.record.constants)
    traced = TracedKernel(module, recording.inputs, outputs, len(programs), arch, counts, sbuf_peaks,
                          psum_peaks, time.perf_counter() - start, regions, constants,
                          [p.spills for p in programs], [p.reordered for p in programs])
    traced.prepared = prepared
    return traced


def _break_cycles(record):
    """Drops the references from storages back to ops (nl.zeros memsets, open matmul groups,
    redirects), so that reference counting frees the trace at once instead of leaving it to the
    cyclic garbage collector."""
    for st in record.storages:
        st.state = None


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

    def returned_at(self) -> "SourceLocation | None":
        """Where the kernel returned (its first line when the probe stood aside): the place of
        an error in what it returns. (Not the caller's line: that is a harness's, such as
        neuronxsim sweep's worker, when the kernel is not called from the user's program.)"""
        if self.frame is not None:
            return SourceLocation(self.frame.f_code.co_filename, self.frame.f_lineno)
        if self.code is not None:
            return SourceLocation(self.code.co_filename, self.code.co_firstlineno)
        return None


def _returned_storages(value, func, where: "SourceLocation | None") -> list:
    """The storages of the HBM tensors the kernel returned; NKIError at ``where`` (the line it
    returned at) for anything else."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    if value is None or not items:
        raise NKIError(f"kernel {func.__qualname__} returns nothing; a kernel returns the HBM "
                       "tensors it writes (nl.ndarray(..., buffer=nl.shared_hbm))", where)
    storages = []
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise NKIError(f"kernel {func.__qualname__} returns {type(t).__name__} (output {i}); "
                           "a kernel returns HBM tensors", where)
        st = t.storage
        if st.kind not in (SHARED_HBM, HBM) or not t.is_full_view():
            what = "a kernel input" if st.kind == "input" else (
                f"an {st.kind.upper()} tile" if st.on_chip else "part of an HBM tensor")
            raise NKIError(f"kernel {func.__qualname__} returns {what} ({st.describe()}); it must "
                           "return whole HBM tensors created with nl.ndarray(..., "
                           "buffer=nl.shared_hbm)", where)
        if st.state.write_count == 0:
            raise NKIError(f"kernel {func.__qualname__} returns {st.describe()}, which it never "
                           "writes", where)
        if st in storages:
            raise NKIError(f"kernel {func.__qualname__} returns {st.describe()} twice", where)
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


def _rename(record, st, name: str):
    names = record.names
    if st.name == name:
        return
    if st.name is not None:
        names.discard(st.name)
    base, i = name, 0
    while name in names:
        i += 1
        name = f"{base}_{i}"
    names.add(name)
    st.name = name


def _written_regions(ops: list, returned) -> dict:
    outs = {id(st): st.name for st in returned}
    regions = {}
    for op in ops:
        for acc in op.outs:
            if id(acc.storage) in outs:
                regions.setdefault(outs[id(acc.storage)], []).append((acc.offset, acc.pairs))
    return regions


def _located_bir_error(e: BIRError, programs: list) -> NKIError:
    """A verifier complaint about an emitted instruction, pointed at its kernel line."""
    return NKIError(f"the traced BIR is invalid: {e}", _kernel_line(str(e), programs))


def _refuse_what_the_core_cannot_run(module, arch: str, programs: list):
    """Raises, at its kernel line, the simulator's refusal of a traced module that verifies (an
    instruction a NeuronCore of ``arch`` cannot run: a matmul accumulating into a bfloat16 PSUM
    tile, say), as the NKI compiler refuses it; returns if the simulator takes the module.
    (The scheduling pass decodes it for the simulator: only a module it refused, or one traced in
    source order, which it does not see, comes here.)"""
    from neuronxsim.errors import SimulationError
    from neuronxsim.starfish.lib import _core
    try:
        _core.sim.Simulator(module, arch, "timing", None, 1, False, None)
    except SimulationError as e:
        text = str(e)
        m = INSTRUCTION_WHERE.match(text)
        reason = text[m.end():].lstrip() if m else text
        raise NKIError(reason, _kernel_line(text, programs)) from None


def _kernel_line(text: str, programs: list):
    """The kernel line of the instruction ``text`` names (None if it names none). A traced
    module has one block per function, its instructions the program's ops."""
    m = INSTRUCTION_WHERE.match(text)
    if m and m.group(2) == "0":
        core, index = int(m.group(1)), int(m.group(3))
        if core < len(programs) and index < len(programs[core].ops):
            return programs[core].ops[index].loc
    return None


__all__ = ["jit", "Kernel", "GridKernel", "trace", "trace_kernel", "TracedKernel", "TensorSpec",
           "DialectAdapter"]
