"""How fast `neuronxsim sweep` goes, and where a configuration's time goes.

  python benchmarks/bench_sweep.py [--jobs N] [--repeat 3]

On the blocked matmul of tests/sweep/kernels/blocked_matmul.py at [4096, 1024] @ [1024, 2048]
bf16 (lhsT 1024x4096, rhs 1024x2048) with its three TILES_IN_BLOCK_* parameters, timing mode:

1. End to end: the same grid swept on 1 worker and on N workers (default: the CPU count) with
   ``driver.run_sweep``, as a user's sweep runs. Two rates, each per second of wall time and per
   CPU-second (the sweep's processes: the parent, the zygote, the workers):
   - "whole sweep": every configuration over the whole call, starting and stopping the pool
     included: what a user sweeping this grid sees;
   - "after start": the configurations after the first result over the time from the first
     result to the last: the rate a longer sweep approaches once the pool runs;
   and the N-worker rate over the 1-worker rate for each (ideal: N by wall time; per
   CPU-second, ideal 1: what more workers cost on a loaded host). Then the pool's one-off start
   alone: CPU and wall of starting a one-worker pool until the worker answers, and closing it.
2. Where one configuration's time goes, in this process (CPU seconds per configuration): tracing
   (and per traced instruction), preparing the module for the simulator (verify, decode, cost),
   the same from the trace's scheduling pass's decoding (what job.run does after a fresh trace in
   timing mode: the Simulator's checks that the decoding is of this module), the timing run, the trace cache's write and read of the same trace, job.run (a worker's
   whole configuration), what job.run spends outside tracing and the simulator (the
   kernel's imports, freeing the trace, the row's measures), and job.run again with its trace
   from the cache (a configuration seen before: read back, prepared from the module, run).
3. Preparation speed against the timing run's, in instructions per second, on the traced modules
   and on a long mixed stream (benchmarks/modules.py), three ways: each module in turn (its
   memory last touched when the others were made, scattered as the tracer allocated it), again
   at once (the same module, its memory in the caches), and read back (each module read from its
   BIR binary just before, as a trace-cache hit prepares it: allocated in order, and in the
   caches); and for the traced modules, "reused": the timing run started from the scheduling
   pass's decoding, as a sweep's configuration does with the module it has just traced (section
   2's "prepare, reused"). A configuration whose trace is a cache hit prepares the module read
   back; modules given as BIR are prepared as "in turn" or "read back" says.
4. Reading and writing the traced modules, MB/s and M instructions/s: BIR JSON (the reader as
   used, plain text through its fast document, against nlohmann's document alone; to_json) and
   BIR binary (from_binary and to_binary: what a trace-cache hit reads and a miss writes).

Numbers, not a pass/fail check: the host is shared, so each figure is the best of ``--repeat``
runs, and the ratios compare runs made in the same process, interleaved.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import sys
import tempfile
import time

from common import host_note, print_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = os.path.join(ROOT, "tests", "sweep", "kernels", "blocked_matmul.py") + ":blocked_matmul"
SHAPES = [["1024x4096:bfloat16", "1024x2048:bfloat16"]]
GRID = {"TILES_IN_BLOCK_M": [1, 2, 4, 8], "TILES_IN_BLOCK_N": [1, 2, 4],
        "TILES_IN_BLOCK_K": [1, 2, 4, 8]}


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def end_to_end(workers: list, repeat: int) -> dict:
    """{workers: the best (by wall time) of ``repeat`` sweeps of GRID on that many}, the counts
    taking turns: configurations, wall and CPU seconds of the whole call, and from the first
    result to the last."""
    from neuronxsim.sweep import driver

    best = {}
    for _ in range(repeat):
        for jobs in workers:
            out = tempfile.mkdtemp(prefix="bench-sweep-")
            arrivals = []  # (wall, CPU) as the first and the last result arrive

            def on_row(row, done, total):
                if done == 1 or done == total:  # (reading /proc for every row would cost a lot)
                    arrivals.append((time.perf_counter(), cpu_seconds() + live_children_cpu()))
            try:
                p = driver.plan(KERNEL, grid=GRID, shapes=SHAPES, output=out)
                cpu0, wall0 = cpu_seconds(), time.perf_counter()
                rows, _, _ = driver.run_sweep(p, jobs=jobs, on_row=on_row)
                wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
            finally:
                shutil.rmtree(out)
            run = {"configurations": len(rows), "ok": sum(r["status"] == "ok" for r in rows),
                   "wall": wall, "cpu": cpu, "after": len(rows) - 1,
                   "after_wall": arrivals[-1][0] - arrivals[0][0],
                   "after_cpu": arrivals[-1][1] - arrivals[0][1]}
            if jobs not in best or run["wall"] < best[jobs]["wall"]:
                best[jobs] = run
    return best


def live_children_cpu() -> float:
    """CPU seconds of this process's live descendants (and of the children they reaped): the
    zygote and the workers while the sweep runs (Linux /proc; 0 elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, spent = {}, {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0.0
    for name in names:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rpartition(")")[2].split()
            except OSError:
                continue  # ended meanwhile
            parent[int(name)] = int(fields[1])
            spent[int(name)] = sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
    mine, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        kids = [k for k, pp in parent.items() if pp == pid and k not in mine]
        mine.update(kids)
        todo.extend(kids)
    return sum(spent[k] for k in mine)


def pool_start(repeat: int) -> tuple:
    """(CPU, wall) seconds of starting a one-worker local pool until the worker has answered an
    empty batch, and stopping it: the one-off part of an end-to-end figure (best of ``repeat``)."""
    from neuronxsim.sweep.executors import LocalPool

    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        cpu0, wall0 = cpu_seconds(), time.perf_counter()
        pool = LocalPool(1)
        worker = pool._new_worker()
        worker.conn.send([])
        worker.conn.recv()
        pool.close()
        best = min(best, (cpu_seconds() - cpu0, time.perf_counter() - wall0))
    return best


def prepare_and_run(module, arch: str, prepared=None) -> tuple:
    """CPU seconds of preparing ``module`` for a timing run (verify, decode, cost: the
    simulator's constructor; from ``prepared``, the scheduling pass's decoding, when given) and of
    the run, on this thread."""
    from neuronxsim.starfish.lib import _core

    t0 = time.thread_time()
    native = _core.sim.Simulator(module, arch, "timing", None, 1, False, prepared)
    t1 = time.thread_time()
    native.run()
    return t1 - t0, time.thread_time() - t1


def phases(repeat: int) -> tuple:
    """CPU seconds of each phase over the grid's configurations that trace (the best of
    ``repeat`` passes), and their (module, arch)."""
    from neuronxsim.sweep import job as job_module
    from neuronxsim.sweep import kernel_file
    from neuronxsim.sweep.driver import plan
    from neuronxsim.sweep.trace_cache import TraceCache

    out = tempfile.mkdtemp(prefix="bench-sweep-")
    try:
        p = plan(KERNEL, grid=GRID, shapes=SHAPES, output=out)
        cache = TraceCache(os.path.join(out, "cache"))
        best, modules, filled = None, [], set()
        with kernel_file.kernel_imports(p.kernel.path, False):
            kernel = kernel_file.load(p.kernel)
            for _ in range(repeat):
                spent = dict.fromkeys(PHASES, 0.0)
                spent.update(instructions=0, configurations=0)
                modules = []
                for i, j in enumerate(p.jobs):
                    t0 = time.thread_time()
                    try:
                        traced, prepared, _, _ = job_module._trace(kernel, dict(j, trace_cache=None), {}, [])
                    except Exception:
                        continue  # a configuration that does not trace: a failed row
                    spent["trace"] += time.thread_time() - t0
                    spent["prepare, reused"] += prepare_and_run(traced.module, j["arch"], prepared)[0]
                    # (freed first, as job.run frees its own: a decoding kept alive holds memory
                    # the next decoding would reuse)
                    prepared = None
                    prep, run = prepare_and_run(traced.module, j["arch"])
                    spent["prepare"] += prep
                    spent["run"] += run
                    t0 = time.thread_time()
                    cache.put(f"{i:064x}", traced, {})
                    t1 = time.thread_time()
                    cache.get(f"{i:064x}")
                    t2 = time.thread_time()
                    with timed_calls() as inside:
                        job_module.run(j)
                    t3 = time.thread_time()
                    hit = dict(j, trace_cache=os.path.join(out, "job-cache"))
                    if i not in filled:  # (the first pass writes the entry its hit reads)
                        job_module.run(hit)
                        filled.add(i)
                    t4 = time.thread_time()
                    job_module.run(hit)
                    spent["job.run, trace cached"] += time.thread_time() - t4
                    spent["cache write"] += t1 - t0
                    spent["cache read"] += t2 - t1
                    spent["job.run (all in)"] += t3 - t2
                    spent["job.run outside trace, simulate"] += t3 - t2 - inside[0]
                    spent["instructions"] += traced.instruction_count
                    spent["configurations"] += 1
                    modules.append((traced.module, j["arch"]))
                if best is None or spent["job.run (all in)"] < best["job.run (all in)"]:
                    best = spent
        return best, modules
    finally:
        shutil.rmtree(out)


PHASES = ("trace", "prepare", "prepare, reused", "run", "cache write", "cache read", "job.run (all in)",
          "job.run outside trace, simulate", "job.run, trace cached")


@contextlib.contextmanager
def timed_calls():
    """Inside the block, the CPU seconds spent in tracing (traced_kernel) and in the simulator
    (sim._simulate, which sim.simulate calls) add up in the yielded list's one item: what job.run spends elsewhere (the
    kernel's imports, freeing the trace, the row's measures) is the rest of its time."""
    from neuronxsim import sim
    from neuronxsim.nki import kernel

    inside = [0.0]
    originals = {(kernel, "traced_kernel"): kernel.traced_kernel, (sim, "_simulate"): sim._simulate}

    def timing(fn):
        def call(*args, **kwargs):
            t0 = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                inside[0] += time.thread_time() - t0
        return call
    for (owner, name), fn in originals.items():
        setattr(owner, name, timing(fn))
    try:
        yield inside
    finally:
        for (owner, name), fn in originals.items():
            setattr(owner, name, fn)


def preparation(modules: list, repeat: int) -> list:
    """Rows of M instructions/s of preparation and of the timing run (CPU, best of ``repeat``):
    each module prepared in turn (its memory last touched when the others were made), prepared
    again at once (its memory in the caches: the rate of the preparation's own work), and
    prepared just after being read from its BIR binary (a trace-cache hit); for the traced
    modules, started from the scheduling pass's decoding, made just before (a fresh trace's
    configuration: here the pass run again on a copy read back, outside the time)."""
    from neuronxsim.starfish.lib import _core
    from neuronxsim import bir

    from modules import mixed_stream

    stream = mixed_stream(20_000).module
    rows = []
    for name, mods in (("the traced modules", modules),
                       ("mixed stream (benchmarks/modules.py)", [(stream, "trn1")])):
        prep = again = back = reused = run = float("inf")
        n = sum(m.functions[0].instruction_count for m, _ in mods)
        blobs = [(m.to_binary(), arch) for m, arch in mods]
        for _ in range(repeat):
            times = [prepare_and_run(m, arch) + prepare_and_run(m, arch)[:1] for m, arch in mods]
            prep = min(prep, sum(t[0] for t in times))
            run = min(run, sum(t[1] for t in times))
            again = min(again, sum(t[2] for t in times))
            back = min(back, sum(prepare_and_run(bir.Module.from_binary(b), arch)[0] for b, arch in blobs))
            if mods is modules:
                total = 0.0
                for b, arch in blobs:
                    copy = bir.Module.from_binary(b)
                    _, prepared = _core.sim.schedule_module_prepared(copy, arch)
                    total += prepare_and_run(copy, arch, prepared)[0]
                reused = min(reused, total)
        rows.append([name, n, n / prep / 1e6, n / again / 1e6, n / back / 1e6,
                     n / reused / 1e6 if reused < float("inf") else "-", n / run / 1e6, run / prep])
    return rows


def module_forms(modules: list, repeat: int) -> list:
    """Rows of MB/s and M instructions/s reading the traced modules each way (BIR JSON as read,
    through nlohmann's document alone, BIR binary: what a trace-cache hit reads) and writing them
    (CPU, best of ``repeat``), with the ratio to reading through nlohmann's document."""
    from neuronxsim import bir

    texts = [m.to_json(-1) for m, _ in modules]
    blobs = [m.to_binary() for m, _ in modules]
    n = sum(m.functions[0].instruction_count for m, _ in modules)
    mb = {"json": sum(len(t) for t in texts) / 1e6, "binary": sum(len(b) for b in blobs) / 1e6}
    ways = {  # name: (form, what one call does)
        "JSON, as read (plain text first)": ("json", lambda i: bir.Module.from_json(texts[i], verify=False)),
        "JSON, nlohmann document only": ("json", lambda i: bir.Module.from_json(texts[i], verify=False,
                                                                                plain_first=False)),
        "binary, read (from_binary)": ("binary", lambda i: bir.Module.from_binary(blobs[i], verify=False)),
        "JSON, written (to_json)": ("json", lambda i: modules[i][0].to_json(-1)),
        "binary, written (to_binary)": ("binary", lambda i: modules[i][0].to_binary()),
    }
    best = {}
    for _ in range(repeat):  # interleaved, so that every way sees the same host
        for name, (_, call) in ways.items():
            t0 = time.thread_time()
            for i in range(len(modules)):
                call(i)
            best[name] = min(best.get(name, float("inf")), time.thread_time() - t0)
    slow = best["JSON, nlohmann document only"]
    return [[name, mb[form], mb[form] / best[name], n / best[name] / 1e6, slow / best[name]]
            for name, (form, _) in ways.items()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sections", default="1,2,3,4",
                    help="the sections to run, comma-separated numbers from 1 to 4 (default: all four)")
    args = ap.parse_args()
    try:
        sections = {int(x) for x in args.sections.split(",")}
    except ValueError:
        sections = set()
    if not sections or not sections <= {1, 2, 3, 4}:
        ap.error(f"--sections {args.sections!r}: give comma-separated numbers from 1 to 4, e.g. 2,3")
    print(host_note())
    configs = 1
    for v in GRID.values():
        configs *= len(v)

    if 1 in sections:
        runs = end_to_end([1, args.jobs], args.repeat)
        rows = []
        for jobs, r in runs.items():
            rows.append([jobs, r["configurations"], r["ok"], r["wall"], r["configurations"] / r["wall"],
                         r["configurations"] / r["cpu"], r["after"] / r["after_wall"],
                         r["after"] / r["after_cpu"]])
        print_table(f"1. end to end, timing mode, {configs} configurations (best of {args.repeat})",
                    ["workers", "configs", "ok", "wall s", "whole sweep /s", "/CPU-s",
                     "after start /s", "/CPU-s"], rows)
        one, many = runs[1], runs[args.jobs]
        for label, n, wall, cpu in (("whole sweep", "configurations", "wall", "cpu"),
                                    ("after start", "after", "after_wall", "after_cpu")):
            print(f"  {args.jobs} workers / 1 worker, {label}: "
                  f"{(many[n] / many[wall]) / (one[n] / one[wall]):.2f}x by wall time (ideal "
                  f"{args.jobs}), {(many[n] / many[cpu]) / (one[n] / one[cpu]):.2f}x per CPU-second (ideal 1)")
        start_cpu, start_wall = pool_start(args.repeat)
        print(f"  starting and stopping a one-worker pool (once per sweep): {start_cpu:.3f} CPU-s, "
              f"{start_wall:.3f} s wall")

    if sections & {2, 3, 4}:
        spent, modules = phases(args.repeat)
        n, per = spent["configurations"], spent["instructions"] / max(spent["configurations"], 1)
        table = [[phase, spent[phase] / n * 1e3, spent[phase] / spent["instructions"] * 1e6] for phase in PHASES]
        print_table(f"2. one configuration in one process, CPU ms (mean over the {n} that trace, {per:.0f} "
                    f"instructions each; best of {args.repeat})", ["phase", "ms", "us/instr"], table)
        all_in = spent["job.run (all in)"]
        print(f"  job.run: {n / all_in:.1f} configurations per CPU-second; tracing is "
              f"{spent['trace'] / all_in:.0%} of it, preparing (from the pass's decoding) and running "
              f"{(spent['prepare, reused'] + spent['run']) / all_in:.0%}; with its trace from the cache, "
              f"{n / spent['job.run, trace cached']:.1f}")

    if not sections & {3, 4}:
        return 0
    print_table(f"3. preparation (verify, decode, cost) and timing run, M instructions/s (best of {args.repeat})",
                ["modules", "instructions", "in turn", "again at once", "read back", "reused", "run",
                 "prepare/run"],
                preparation(modules, args.repeat))

    print_table(f"4. reading and writing the traced modules as BIR JSON and BIR binary (best of {args.repeat}; "
                "'x nlohmann': over reading JSON through nlohmann's document)",
                ["way", "MB", "MB/s", "M instr/s", "x nlohmann"], module_forms(modules, args.repeat))


if __name__ == "__main__":
    sys.exit(main())
