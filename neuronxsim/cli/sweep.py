"""``neuronxsim sweep FILE.py:KERNEL --grid NAME=v1,v2,... --shapes ...``: every combination of a
kernel's meta-parameter values traced and simulated, on local worker processes or a Dask
cluster; one JSON line per configuration in DIR/results.jsonl, then a table of the best
configurations and DIR/sweep.png. Everything is checked before any configuration runs.
Exit status 0 when at least one configuration is ok (an autotuning grid expects some to fail);
1, after the table is printed, when none is (every one failed or mismatched): a script or CI
job then sees that the sweep found nothing to use."""

from __future__ import annotations

import sys
import time

import neuronxsim
from neuronxsim.cli import arguments, printing
from neuronxsim.cli.output_set import replace_file
from neuronxsim.pipeline import ARCHS


def add_parser(sub) -> None:
    p = sub.add_parser("sweep", help="autotune an NKI kernel: simulate every combination of its "
                                     "meta-parameters",
                       description="Simulate every combination of an NKI kernel's meta-parameters. "
                                   "Exit status 0 when at least one configuration is ok, 1 when "
                                   "none is (every one failed or mismatched; the table and "
                                   "results.jsonl are still written) or the input is bad.")
    p.add_argument("kernel", help="FILE.py:NAME of an @nki.jit kernel (either dialect)")
    p.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="values of a kernel parameter to try (repeat for more parameters: the "
                        "cross product is swept); values are Python literals, other text strings")
    p.add_argument("--shapes", action="append", nargs="+", default=[], metavar="SHAPE[:DTYPE]",
                   help="one per leading array argument, e.g. 1024x4096:bfloat16 (default "
                        "float32); repeat for several shape sets")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a fixed value of another kernel parameter (a Python literal, else text)")
    p.add_argument("--arch", default=None, metavar="ARCH[,ARCH]",
                   help=f"generations, separated by commas ({', '.join(sorted(ARCHS))}; default: "
                        "trn1 for 2.2x kernels; for NKI 0.6 NEURON_PLATFORM_TARGET_OVERRIDE, else trn2)")
    p.add_argument("--mode", choices=("timing", "full"), default="timing",
                   help="timing (default): simulated time only; full: numerics too, checked "
                        "against --reference")
    p.add_argument("--reference", default=None, metavar="FILE.py:FUNCTION",
                   help="full mode: a NumPy function of the same arrays (and of those kernel "
                        "parameters it names) returning the expected output(s)")
    p.add_argument("--rtol", type=float, default=None, help="full mode: relative tolerance "
                   "(default 2e-2, the public comparator's for bfloat16)")
    p.add_argument("--atol", type=float, default=None, help="full mode: absolute tolerance (default 1e-2)")
    p.add_argument("--seed", type=arguments.seed, default=0, help="full mode: seed of the random inputs")
    p.add_argument("--output", type=arguments.folder, default="neuronxsim-sweep", metavar="DIR",
                   help="folder of results.jsonl and sweep.png (default ./neuronxsim-sweep)")
    p.add_argument("--resume", action="store_true",
                   help="continue DIR/results.jsonl: run only the configurations it lacks")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="worker processes (default: the CPU count); with --scheduler local, Dask workers")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on a Dask distributed scheduler (tcp://host:8786), or 'local' for a "
                        "LocalCluster on this machine (needs pip install 'neuronxsim[dask]')")
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="how long to wait for the Dask scheduler to answer (default 10)")
    p.add_argument("--trace-cache", default=None, metavar="DIR",
                   help="keep traced kernels in DIR and reuse them for configurations seen before")
    p.add_argument("--colour", "--color", dest="colour", default=None, metavar="NAME",
                   help="the parameter sweep.png colours by (default: the first --grid; also "
                        "'shapes' or 'arch')")
    p.add_argument("--top", type=int, default=10, help="configurations in the table (default 10)")
    p.add_argument("--allow-shadowing", action="store_true",
                   help="run even when a real nki/neuronxcc package is importable")
    p.add_argument("--max-instructions", type=arguments.size, default=None, metavar="N",
                   help="refuse a trace past N instructions (default: $NEURONXSIM_MAX_INSTRUCTIONS "
                        "or one million)")
    printing.add_options(p)
    p.set_defaults(func=run)


class _Bar:
    """The sweep's progress on stderr, on a terminal only: done / total, failures, rate, ETA."""

    def __init__(self, total: int, done: int, quiet: bool):
        self.total, self.start_done = total, done
        self.tty = not quiet and sys.stderr.isatty()
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.failed = 0

    def row(self, row: dict, done: int, total: int) -> None:
        self.failed += row["status"] != "ok"
        now = time.perf_counter()
        if not self.tty or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        elapsed = now - self.t0
        rate = (done - self.start_done) / elapsed if elapsed > 0 else 0.0
        eta = f"ETA {_duration((total - done) / rate)}" if rate > 0 and done < total else ""
        filled = int(28 * done / max(total, 1))
        line = (f"\r[{'#' * filled}{'.' * (28 - filled)}] {100 * done / max(total, 1):3.0f}%  "
                f"{done}/{total} configurations, {self.failed} not ok, {rate:.1f}/s  {eta}\033[K")
        try:
            sys.stderr.write(line)
            sys.stderr.flush()
        except (OSError, ValueError):
            self.tty = False

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f} min"


def _states(counts: dict, names: tuple) -> str:
    return ", ".join(f"{counts[s]} {s}" for s in names if s in counts)


def run(args) -> int:
    from neuronxsim.sweep import driver, space, summary

    if args.mode != "full" and (args.rtol is not None or args.atol is not None):
        raise space.SweepError("--rtol/--atol are for --mode full")
    if args.top < 0:
        raise space.SweepError(f"--top {args.top}: not a count")
    if args.jobs is not None and args.jobs < 1:
        raise space.SweepError(f"--jobs {args.jobs}: at least one worker")
    grid = space.parse_grid(args.grid)
    fixed = space.parse_args(args.arg)
    archs = space.parse_archs(args.arch)
    p = driver.plan(args.kernel, grid=grid, shapes=args.shapes, arch=None if archs == [None] else archs,
                    mode=args.mode, args=fixed, reference=args.reference,
                    rtol=driver.RTOL if args.rtol is None else args.rtol,
                    atol=driver.ATOL if args.atol is None else args.atol, seed=args.seed,
                    output=args.output, resume=args.resume, trace_cache=args.trace_cache,
                    allow_shadowing=args.allow_shadowing, max_instructions=args.max_instructions)
    colour = summary.check_colour(args.colour, list(grid))
    bar = _Bar(len(p.jobs), len(p.done), args.quiet or args.json)
    try:
        rows, seconds, executor = driver.run_sweep(p, jobs=args.jobs, scheduler=args.scheduler,
                                                   on_row=bar.row, connect_timeout=args.connect_timeout)
    finally:
        bar.close()
    png = summary.picture(rows, p.output, colour, p.kernel.name, write=replace_file)
    counts = summary.counts(rows)
    ran = len(p.jobs) - len(p.done)
    document = {"command": "sweep", "kernel": args.kernel, "mode": args.mode, "output": p.output,
                "results": p.results_path, "picture": png, "counts": counts, "ran": ran,
                "resumed": len(p.done), "seconds": seconds, "executor": executor,
                "best": summary.best(rows, args.top),
                "unranked_unwritten": len(summary.unranked(rows))}

    def text():
        states = _states(counts, ("ok", "failed", "mismatch"))
        rate = f" ({ran / seconds:.1f}/s)" if seconds > 0 and ran else ""
        resumed = f", {len(p.done)} from the results before" if p.done else ""
        print(f"{p.kernel.name}: {len(rows)} configurations ({states}){resumed}; ran {ran} in "
              f"{seconds:.1f} s on {executor}{rate}")
        table = summary.table(rows, list(grid), args.top)
        if table:
            print(table)
        wrote = "results.jsonl" + (", sweep.png" if png else "")
        print(f"wrote {p.output}/: {wrote}")

    printing.emit(args, document, text)
    if not counts.get("ok"):
        states = _states(counts, ("failed", "mismatch"))
        print(f"neuronxsim: error: no configuration is ok ({states}): see {p.results_path}",
              file=sys.stderr)
        return 1
    return 0
