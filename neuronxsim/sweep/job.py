"""One configuration, run where a worker runs it: plain data in, plain data out.

A job is a dict (it travels to a process or a Dask worker as such)::

    {"key": ..., "neuronxsim": build (neuronxsim.sweep.build.fingerprint()),
     "kernel": {"path", "text", "name"}, "kernel_location": the file's resolved path,
     "dialect": "nki" | "nki06",
     "shapes": [[[1024, 4096], "bfloat16"], ...], "params": {...}, "args": {...},
     "arch": "trn1", "mode": "timing" | "full", "seed": 0,
     "reference": {"path", "text", "name"} | None, "rtol": 0.02, "atol": 0.01,
     "trace_cache": folder | None, "allow_shadowing": False,
     "max_instructions": int (the cap on traced instructions the sweep resolved)}

:func:`run` traces the kernel (or takes the trace from the cache), simulates it on one host
thread and returns what the row of results.jsonl reports: ``status`` "ok", "failed" (the kernel
or the simulator refused it: ``error`` is one line, with the kernel line where there is one) or,
in full mode, "mismatch" (outputs outside the tolerance of the reference). Nothing a
configuration does escapes as an exception, except an interruption.
"""

from __future__ import annotations

import inspect
import os
import socket
import time

import numpy as np

import neuronxsim
from neuronxsim.sweep import build, kernel_file
from neuronxsim.sweep.kernel_file import KernelFile, first_line

#: The engines a row reports busy shares for, and the label of the busiest DMA queue's share.
ENGINES = ("PE", "ACT", "DVE", "Pool", "SP")
DMA_MAX = "DMA max"

_HOSTNAME = socket.gethostname()


def run(job: dict) -> dict:
    """The result of one job (see the module docstring)."""
    start = time.perf_counter()
    seconds = {}
    result = {"key": job["key"], "worker": f"{_HOSTNAME}:{os.getpid()}"}
    path = job["kernel"]["path"]
    try:
        if job["neuronxsim"] != build.fingerprint():
            raise RuntimeError(f"this worker runs neuronxsim build {build.fingerprint()} "
                               f"({neuronxsim.__version__}), the sweep build {job['neuronxsim']}: "
                               "install the same build on every worker")
        with kernel_file.kernel_imports(path, job["allow_shadowing"]):
            kernel = kernel_file.load(KernelFile.from_dict(job["kernel"]))
            problems = []
            traced, prepared, arrays, cached = _trace(kernel, job, seconds, problems)
            if problems:
                result["trace_cache_error"] = problems[0]
            result["trace_cached"] = cached
            result["instructions"] = traced.instruction_count
            result["reordered"] = sum(traced.reordered)
            t0 = time.perf_counter()
            sim_result, outputs = _simulate(traced, arrays, job, prepared)
            seconds["simulate"] = time.perf_counter() - t0
            result.update(_measures(sim_result))
            result["status"] = "ok"
            if sim_result.unwritten_outputs:  # (the simulator's check, as run/profile warn; timing mode too)
                result["unwritten_outputs"] = [u.to_json() for u in sim_result.unwritten_outputs]
            if job["mode"] == "full":
                t0 = time.perf_counter()
                result.update(_check(job, arrays, outputs, traced))
                seconds["check"] = time.perf_counter() - t0
    except (KeyboardInterrupt, SystemExit) as e:
        if not _raised_by_user_code(e, job):
            raise  # the worker is being stopped
        result["status"] = "failed"  # the kernel's own sys.exit(): its row, not the worker's end
        result["error"] = describe_failure(e, path)
    except BaseException as e:  # a configuration's failure is its row, never the sweep's
        result["status"] = "failed"
        result["error"] = describe_failure(e, path)
    seconds["total"] = time.perf_counter() - start
    result["host_seconds"] = seconds
    return result


def _raised_by_user_code(e: BaseException, job: dict) -> bool:
    """Whether ``e`` passed through the kernel file, the reference file or a user module they
    loaded (a kernel defined in a module the swept file imports; a worker ignores SIGINT, so
    there it comes from the user's code, not from a Ctrl-C)."""
    paths = [job["kernel"]["path"]] + ([job["reference"]["path"]] if job.get("reference") else [])
    if any(kernel_file.innermost_line(e, p) is not None for p in paths):
        return True
    modules = set(kernel_file.dependencies())
    tb = e.__traceback__
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) in modules:
            return True
        tb = tb.tb_next
    return False


def run_many(jobs: list) -> list:
    """:func:`run` of each job, in order (a batch sent to a worker at once)."""
    return [run(job) for job in jobs]


def _arrays(job: dict) -> list:
    """The kernel's array arguments: seeded random arrays (full mode) or tensor types (timing
    mode: the trace needs only shapes and dtypes, the simulator no values)."""
    from neuronxsim.nki.typing import tensor
    from neuronxsim.sweep.space import dtypes_by_name

    by_name = dtypes_by_name()
    specs = [(tuple(shape), by_name[dtype]) for shape, dtype in job["shapes"]]
    if job["mode"] == "timing":
        return [tensor[list(shape), dtype] for shape, dtype in specs]
    rng = np.random.default_rng(job["seed"])
    return [rng.standard_normal(shape).astype(dtype) for shape, dtype in specs]


def _trace(kernel, job: dict, seconds: dict, problems: list):
    """(TracedKernel, the scheduling pass's decoding of its module for the timing run or None, the
    array arguments, whether the trace came from the cache); a cache entry that cannot be written
    is a line in ``problems``, not the configuration's failure. The decoding comes only with a fresh
    trace in timing mode, taken off the TracedKernel at once: nothing but the cache's write (which
    reads the module) comes between the pass that made it and the run that uses it."""
    from neuronxsim.sweep.trace_cache import TraceCache, cache_key

    arrays = _arrays(job)
    kwargs = dict(job["args"], **job["params"])
    cache = key = None
    t0 = time.perf_counter()
    if job["trace_cache"]:
        cache = TraceCache(job["trace_cache"])
        key = cache_key(KernelFile.from_dict(job["kernel"]).sha256, job["kernel_location"],
                        job["kernel"]["name"], job["shapes"], kwargs, job["arch"], job["dialect"],
                        job["max_instructions"])
        traced = cache.get(key)
        if traced is not None:
            seconds["cache_read"] = time.perf_counter() - t0
            return traced, None, arrays, True
    prepare = job["mode"] == "timing"
    # (what the trace imports is part of what it depends on: recorded with its cache entry)
    with kernel_file.noting_modules():
        if job["dialect"] == "nki06":
            from neuronxsim.nki06.kernel import traced as trace06
            traced = trace06(kernel, tuple(arrays), kwargs, job["arch"], job["max_instructions"],
                             prepare=prepare)[0]
        else:
            from neuronxsim.nki.kernel import traced_kernel
            traced = traced_kernel(kernel, tuple(arrays), kwargs, job["arch"],
                                   job["max_instructions"], prepare=prepare)
    prepared = traced.take_prepared()
    seconds["trace"] = time.perf_counter() - t0
    if cache is not None:
        t0 = time.perf_counter()
        try:
            cache.put(key, traced, kernel_file.dependencies())
            seconds["cache_write"] = time.perf_counter() - t0
        except OSError as e:  # (a full disk: the trace and its run are still good)
            problems.append(f"cannot write the trace cache entry {e.filename or cache.path(key)}: "
                            f"{e.strerror or e}")
    return traced, prepared, arrays, False


def _simulate(traced, arrays: list, job: dict, prepared=None):
    """(the simulator's result, the outputs by name: empty in timing mode), on one host thread;
    from ``prepared`` (see :func:`_trace`) when it is not None."""
    from neuronxsim import sim
    from neuronxsim.errors import SimulationError
    from neuronxsim.nki.execution import at_kernel_line  # the instruction's kernel line

    full = job["mode"] == "full"
    inputs = None
    if full:
        inputs = dict(traced.constants)
        for spec, a in zip(traced.inputs, arrays):
            a = np.ascontiguousarray(a)
            inputs[spec.name] = a.view(np.uint8) if a.dtype == np.bool_ else a
    try:
        result = sim._simulate(traced.module, inputs, job["arch"], job["mode"], None, threads=1,
                               records=False, on_progress=None, prepared=prepared)
    except SimulationError as e:
        raise at_kernel_line(e, traced.module) from None
    outputs = {}
    if full:
        for spec in traced.outputs:
            value = np.asarray(result.outputs[spec.name])
            outputs[spec.name] = value.view(np.bool_) if spec.dtype == np.bool_ else value
    return result, outputs


def _measures(r) -> dict:
    """Time, engine busy shares (the five engines and the busiest DMA queue), PE MFU."""
    busy = {e: r.engines[e].utilization for e in ENGINES if e in r.engines}
    queues = [s.utilization for name, s in r.engines.items() if name.startswith("DMA")]
    busy[DMA_MAX] = max(queues, default=0.0)
    return {"total_ns": r.total_ns, "engine_busy": busy, "pe_mfu": r.pe_mfu}


def _check(job: dict, arrays: list, outputs: dict, traced) -> dict:
    """Every output against the reference function's, by the public comparator:
    ``max|out - ref| <= atol + rtol * max|ref|`` over the reference's finite elements (one
    infinity would make the bound infinite and pass anything); its non-finite elements must be
    matched exactly: an infinity by the same infinity, a NaN by a NaN."""
    expected = _expected(job, arrays)
    names = [s.name for s in traced.outputs]
    if len(expected) != len(names):
        raise ValueError(f"the reference {job['reference']['name']} returns {len(expected)} array(s); the "
                         f"kernel returns {len(names)} ({', '.join(names)})")
    worst, failures = 0.0, []
    for name, want in zip(names, expected):
        got = outputs[name].astype(np.float64)
        want = np.asarray(want, dtype=np.float64)
        if want.shape != got.shape:
            raise ValueError(f"output {name}: the reference's shape {list(want.shape)} differs "
                             f"from the kernel's {list(got.shape)}")
        finite = np.isfinite(want)
        err = float(np.max(np.abs(got[finite] - want[finite]))) if finite.any() else 0.0
        tol = job["atol"] + job["rtol"] * (float(np.max(np.abs(want[finite]))) if finite.any() else 0.0)
        if not err <= tol:  # NaN fails too
            failures.append(f"{name}: max|out - ref| = {err:.4g} > {tol:.4g}")
        special = ~finite
        unmatched = int(np.count_nonzero(special & ~((got == want) | (np.isnan(got) & np.isnan(want)))))
        if unmatched:
            failures.append(f"{name}: {unmatched} of the reference's {int(np.count_nonzero(special))} "
                            "infinite or NaN elements not matched exactly")
        if not err <= worst:
            worst = err
    out = {"max_error": worst}
    if failures:
        out["status"] = "mismatch"
        out["error"] = "; ".join(failures)
    return out


# The last reference call's outputs: configurations that differ only in what the reference does
# not take (the kernel's tuning knobs) share them.
_last_expected: dict = {}


def _expected(job: dict, arrays: list) -> list:
    """The reference's outputs for the job's arrays (a list, one per kernel output)."""
    ref_file = KernelFile.from_dict(job["reference"])
    with kernel_file.kernel_imports(ref_file.path, job["allow_shadowing"]):
        reference = kernel_file.load(ref_file)
        kwargs = _accepted(reference, dict(job["args"], **job["params"]))
        memo = (ref_file.path, ref_file.sha256, repr(job["shapes"]), job["seed"], repr(kwargs),
                kernel_file.generation)
        if _last_expected.get("memo") != memo:
            _last_expected.clear()
            expected = reference(*arrays, **kwargs)
            expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
            _last_expected.update(memo=memo, expected=expected)
    return _last_expected["expected"]


def _accepted(func, values: dict) -> dict:
    """The entries of ``values`` that ``func`` takes by name (all, if it has ``**kwargs``)."""
    params = inspect.signature(func).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return dict(values)
    return {k: v for k, v in values.items() if k in params and
            params[k].kind in (params[k].POSITIONAL_OR_KEYWORD, params[k].KEYWORD_ONLY)}


def describe_failure(e: BaseException, path: str) -> str:
    """One line: the exception's type and first message line, led by the kernel file's line
    where the exception passed through it and the message does not already name a line."""
    name = os.path.basename(path)
    message = first_line(e)
    if f"{name}:" not in message and path not in message:
        line = kernel_file.innermost_line(e, path)
        if line is not None:
            message = f"{name}:{line}: {message}"
    return f"{type(e).__name__}: {message}"


__all__ = ["run", "run_many", "describe_failure", "ENGINES", "DMA_MAX"]
