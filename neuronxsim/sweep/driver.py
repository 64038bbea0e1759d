"""The sweep itself: everything checked first, then every configuration run once, each result
appended to results.jsonl the moment it arrives, then the summary."""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from neuronxsim.sweep import build, kernel_file, space
from neuronxsim.sweep.results import ResultsFile, read_rows_sized
from neuronxsim.sweep.space import SweepError

MODES = ("timing", "full")

#: The public comparator's tolerances (nkilib's tests, for bfloat16 kernels): an output passes
#: when max|out - ref| <= ATOL + RTOL * max|ref|.
from neuronxsim.models.llama_decoder import ATOL, RTOL  # noqa: E402

RESULTS = "results.jsonl"


@dataclass
class Plan:
    """A checked sweep, ready to run: its configurations, jobs and output files."""
    kernel: kernel_file.KernelFile
    dialect: str
    grid: dict
    args: dict
    mode: str
    configurations: list
    jobs: list                       # one per configuration, in configuration order
    output: str                      # the folder
    done: dict = field(default_factory=dict)  # key -> row already in results.jsonl (resume)
    keep_bytes: int = 0              # bytes of results.jsonl that hold whole rows
    seen_bytes: int = 0              # its size when they were read (0: there was none)

    @property
    def results_path(self) -> str:
        return os.path.join(self.output, RESULTS)

    @property
    def todo(self) -> list:
        return [j for j in self.jobs if j["key"] not in self.done]


def plan(kernel: str, *, grid: dict, shapes: list, arch: Optional[list] = None,
         mode: str = "timing", args: Optional[dict] = None, reference: Optional[str] = None,
         rtol: float = RTOL, atol: float = ATOL, seed: int = 0, output: str = "neuronxsim-sweep",
         resume: bool = False, trace_cache: Optional[str] = None,
         allow_shadowing: bool = False, max_instructions: Optional[int] = None) -> Plan:
    """Checks everything a sweep needs before any work (see :func:`neuronxsim.sweep.sweep`)."""
    if mode not in MODES:
        raise SweepError(f"mode {mode!r}: expected 'timing' or 'full'")
    if max_instructions is not None and (type(max_instructions) is not int or max_instructions < 1):
        raise SweepError(f"--max-instructions {max_instructions!r}: a positive number of instructions")
    if trace_cache is not None:
        _check_trace_cache(trace_cache)
    # (what the command line's parsing checks, checked here too for the Python API's callers)
    space.check_args(args or {})
    args = dict(args or {})
    if type(seed) is not int or seed < 0:
        raise SweepError(f"--seed {seed!r}: a non-negative integer")
    space.check_grid(grid)
    if not isinstance(shapes, (list, tuple)) or not shapes or any(not s for s in shapes):
        raise SweepError("--shapes: give the arrays' shapes (one SHAPE[:DTYPE] per array argument)")
    if any(not isinstance(group, (list, tuple)) for group in shapes):
        raise SweepError(f"--shapes {shapes!r}: a list of shape sets, each a list of one "
                         "SHAPE[:DTYPE] per array argument ([['128x512']])")
    shape_sets = [[s if isinstance(s, space.ShapeSpec) else space.parse_shape(s) for s in group]
                  for group in shapes]
    if len({len(g) for g in shape_sets}) != 1:
        raise SweepError("--shapes: every shape set must give the same number of arrays")
    archs = ([None] if arch is None or (isinstance(arch, (list, tuple)) and not arch)
             else space.check_archs(arch, "arch"))
    if mode == "full":
        if reference is None:
            raise SweepError("--mode full checks the outputs against a reference: give "
                             "--reference FILE.py:FUNCTION")
        if not (rtol >= 0 and atol >= 0 and math.isfinite(rtol) and math.isfinite(atol)):
            raise SweepError(f"--rtol {rtol} / --atol {atol}: tolerances are finite and not negative")
    elif reference is not None:
        raise SweepError("--reference is for --mode full (timing mode computes no outputs)")

    kf = kernel_file.read(kernel)
    with kernel_file.kernel_imports(kf.path, allow_shadowing):
        obj = kernel_file.load(kf)
        dialect = kernel_file.dialect(obj, kf)
        kernel_file.check_parameters(obj, kf, len(shape_sets[0]), grid, args)
        ref_file = None
        if reference is not None:
            ref_file = kernel_file.read(reference, "function")
            if not callable(kernel_file.load(ref_file)):
                raise SweepError(f"{reference}: not a function")
        default = kernel_file.default_arch(dialect)
    archs = [a or default for a in archs]

    # The cap the workers apply: the resolved value (--max-instructions, else
    # $NEURONXSIM_MAX_INSTRUCTIONS here, else the default) is sent to them and keys the rows and
    # the trace cache, so that a cap that refused a trace never reuses a row or an entry another
    # cap let through, whichever way it was set.
    from neuronxsim.nki.errors import NKIError
    from neuronxsim.nki.tracer import instruction_cap
    try:
        cap = instruction_cap(max_instructions)
    except NKIError as e:
        raise SweepError(e.reason) from None
    fingerprint = build.fingerprint()
    location = os.path.realpath(kf.path)

    configs = space.configurations(grid, shape_sets, archs)
    check = {"reference": f"{ref_file.path}:{ref_file.name}", "reference_sha256": ref_file.sha256,
             "rtol": rtol, "atol": atol} if ref_file else None
    jobs = []
    for c in configs:
        params = c.param_dict
        key = json.dumps({"kernel": kf.name, "params": space.typed(params),
                          "args": space.typed(args),
                          "shapes": [s.text for s in c.shapes], "arch": c.arch, "mode": mode,
                          "seed": seed if mode == "full" else None, "check": check,
                          # (a cap that refused a trace refuses it again; another may not)
                          "max_instructions": cap},
                         sort_keys=True, separators=(",", ":"))
        jobs.append({"key": key, "kernel": kf.to_dict(), "kernel_location": location,
                     "dialect": dialect,
                     "shapes": [[list(s.shape), s.dtype] for s in c.shapes], "params": params,
                     "args": args, "arch": c.arch, "mode": mode, "seed": seed,
                     "reference": ref_file.to_dict() if ref_file else None,
                     "rtol": rtol, "atol": atol, "trace_cache": trace_cache,
                     "allow_shadowing": allow_shadowing, "max_instructions": cap,
                     "neuronxsim": fingerprint})
    if len({j["key"] for j in jobs}) != len(jobs):
        raise SweepError("two configurations are the same (a shape set listed twice?)")

    p = Plan(kf, dialect, grid, args, mode, configs, jobs, output)
    path = p.results_path
    if os.path.exists(path) and not os.path.isfile(path):
        raise SweepError(f"{path}: not a file")
    if os.path.isdir(output) or os.path.exists(output):
        if not os.path.isdir(output):
            raise SweepError(f"--output {output}: not a folder")
    if os.path.isfile(path):
        if not resume:
            raise SweepError(f"{path} exists: --resume continues that sweep (skipping the "
                             "configurations it has), or choose another --output")
        rows, p.keep_bytes, p.seen_bytes = read_rows_sized(path)
        keys = {j["key"] for j in jobs}
        for row in rows:
            if row["key"] not in keys:  # another sweep's row: kept in the file, not counted
                continue
            if row.get("source_sha256") not in (None, kf.sha256):
                raise SweepError(f"{path} holds results of another version of {kf.path} (its "
                                 "text changed): choose another --output to sweep this one")
            if row.get("build") != fingerprint:  # (a row of an older neuronxsim has none)
                raise SweepError(f"{path} holds rows of another neuronxsim build ("
                                 f"{row.get('build') or 'unrecorded'}; this one is {fingerprint}), whose "
                                 "results may differ: choose another --output")
            p.done.setdefault(row["key"], row)
    return p


def _check_trace_cache(folder: str) -> None:
    """Refuses a --trace-cache that cannot be a folder, or is one this process cannot write:
    otherwise every configuration would fail as its entry is written, after its tracing and
    simulation ran. (A folder that does not exist yet is left to the workers, which may be
    other hosts, to create.)"""
    if not str(folder).strip():
        raise SweepError("--trace-cache: an empty name; name a folder")
    path = os.path.abspath(folder)
    if os.path.isdir(path):
        if not os.access(path, os.W_OK | os.X_OK):
            raise SweepError(f"--trace-cache {folder}: the folder cannot be written")
        return
    while not os.path.lexists(path):
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        raise SweepError(f"--trace-cache {folder}: {path} is not a folder")


def _finite(value):
    """JSON has no NaN or infinity: such numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def row_of(job: dict, result: dict, kf: kernel_file.KernelFile) -> dict:
    """The results.jsonl row of a job's result: the configuration first, then the result."""
    row = {"params": job["params"], "shapes": ["x".join(map(str, s)) + ":" + d for s, d in job["shapes"]],
           "arch": job["arch"], "mode": job["mode"], "status": result["status"]}
    for k in ("total_ns", "pe_mfu", "engine_busy", "instructions", "reordered", "unwritten_outputs",
              "max_error", "error", "host_seconds", "trace_cached", "worker"):
        if k in result:
            row[k] = result[k]
    if job["args"]:
        row["args"] = job["args"]
    if job["mode"] == "full":
        row["seed"] = job["seed"]
        row["tolerance"] = {"rtol": job["rtol"], "atol": job["atol"]}
    row["kernel"] = f"{kf.path}:{kf.name}"
    row["source_sha256"] = kf.sha256
    row["build"] = job["neuronxsim"]
    row["key"] = job["key"]
    return _finite(row)


def execute(p: Plan, executor, on_row: Optional[Callable] = None, batch: int = 1) -> list:
    """Runs the plan's remaining configurations on ``executor``; appends each row as it comes;
    ``on_row(row, done, total)`` after each. Returns every configuration's row, in
    configuration order."""
    os.makedirs(p.output, exist_ok=True)
    todo = p.todo
    rows = dict(p.done)
    total, done = len(p.jobs), len(p.jobs) - len(todo)
    batches = [todo[i:i + batch] for i in range(0, len(todo), batch)]
    warned = False
    with ResultsFile(p.results_path, keep=p.keep_bytes, seen=p.seen_bytes) as out:
        for job, result in executor.run(batches):
            if "trace_cache_error" in result and not warned:  # (once: it is the same disk)
                from neuronxsim.cli.printing import warn
                warn(f"{result['trace_cache_error']} (the sweep goes on without it)")
                warned = True
            row = row_of(job, result, p.kernel)
            out.append(row)
            rows[job["key"]] = row
            done += 1
            if on_row is not None:
                on_row(row, done, total)
    missing = [j for j in p.jobs if j["key"] not in rows]
    if missing:  # (an executor that ends without every answer would lose them silently)
        raise SweepError(f"{len(missing)} of {total} configurations got no result (the first: "
                         f"{missing[0]['key']}); their rows are not in {p.results_path}: run "
                         f"again with --resume")
    return [rows[j["key"]] for j in p.jobs]


#: Seconds to wait for a Dask scheduler to answer before giving up.
CONNECT_TIMEOUT = 10.0
#: The longest --connect-timeout taken: a day (longer is a mistyped value, infinity a wait for
#: ever).
MAX_CONNECT_TIMEOUT = 86400.0


def make_executor(jobs: Optional[int] = None, scheduler: Optional[str] = None,
                  connect_timeout: float = CONNECT_TIMEOUT, mode: str = "timing",
                  configurations: Optional[int] = None):
    """A LocalPool of ``jobs`` processes (default: the CPU count; no more than the
    ``configurations`` to run) for a sweep in ``mode``, or a DaskPool on ``scheduler`` ("local":
    a LocalCluster of as many workers)."""
    from neuronxsim.sweep.executors import DaskPool, LocalPool

    n = jobs if jobs is not None else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                       else os.cpu_count() or 1)
    if n < 1:
        raise SweepError(f"--jobs {n}: at least one worker")
    if configurations is not None:  # (a LocalCluster's workers too: each is a process to start)
        n = min(n, max(1, configurations))
    if scheduler is not None:
        if not scheduler.strip():
            raise SweepError("--scheduler: an empty address (a Dask scheduler's, or 'local')")
        if not 0 < connect_timeout <= MAX_CONNECT_TIMEOUT:  # (NaN too)
            raise SweepError(f"--connect-timeout {connect_timeout}: a positive number of seconds, "
                             f"at most a day ({MAX_CONNECT_TIMEOUT:g})")
        return DaskPool(scheduler, n, connect_timeout)
    return LocalPool(n, fork_here=mode == "timing")


def batch_size(todo: int, workers: int, scheduler: Optional[str]) -> int:
    """Configurations per task: one on the local pool; on Dask about 16 tasks per worker, at
    most 32 configurations each (a task costs the scheduler about a millisecond)."""
    if scheduler is None:
        return 1
    return max(1, min(32, todo // (16 * workers)))


def run_sweep(p: Plan, jobs: Optional[int] = None, scheduler: Optional[str] = None,
              on_row: Optional[Callable] = None, on_start: Optional[Callable] = None,
              connect_timeout: float = CONNECT_TIMEOUT) -> tuple:
    """(rows, seconds, executor description): the plan run on a new executor; ``on_start``
    is called with the executor before the first configuration is sent."""
    executor = make_executor(jobs, scheduler, connect_timeout, p.mode, len(p.todo))
    try:
        workers = executor.worker_count()
        description = executor.describe()
        if on_start is not None:
            on_start(executor)
        t0 = time.perf_counter()
        rows = execute(p, executor, on_row, batch_size(len(p.todo), workers, scheduler))
        return rows, time.perf_counter() - t0, description
    finally:
        executor.close()


__all__ = ["plan", "Plan", "execute", "run_sweep", "make_executor", "row_of", "MODES", "RTOL",
           "ATOL", "RESULTS"]
