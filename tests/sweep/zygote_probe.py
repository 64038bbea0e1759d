"""Run by test_pool_start.py in a fresh interpreter: a small timing sweep on two local workers
after setting up one kind of state a fork of this process must not inherit, then one JSON line
on stdout saying how the pool's zygote started and what it held.

    python zygote_probe.py STATE OUT_DIR

STATE: "plain" (nothing), "thread" (a Python thread waiting), "native" (a multi-threaded
full-mode simulation ran first: the simulator keeps its matmul helper threads).
"""

import atexit
import json
import os
import signal
import sys
import threading

import numpy as np

from neuronxsim.sweep import driver

from sweep_testing import FAULTS, GRID, MATMUL, SHAPES


def native_threads_left_behind() -> None:
    """A full-mode simulation on two host threads of a matmul the sweep's kernel traces."""
    from neuronxsim import sim
    from neuronxsim.sweep import job, kernel_file

    p = driver.plan(MATMUL, grid={k: v[:1] for k, v in GRID.items()}, shapes=SHAPES,
                    output=os.path.join(sys.argv[2], "setup"))
    with kernel_file.kernel_imports(p.kernel.path, False):
        traced, _, arrays, _ = job._trace(kernel_file.load(p.kernel), dict(p.jobs[0], mode="full"), {}, [])
    inputs = {spec.name: np.asarray(a) for spec, a in zip(traced.inputs, arrays)}
    sim.simulate(traced.module, inputs, mode="full", threads=2, records=False)


def main() -> None:
    state, out = sys.argv[1], sys.argv[2]
    atexit.register(lambda: open(os.path.join(out, "atexit"), "a").write(f"{os.getpid()}\n"))
    # A handler of this process's, for a signal whose default is to do nothing.
    signal.signal(signal.SIGWINCH,
                  lambda *_: open(os.path.join(out, "handled"), "a").write(f"{os.getpid()}\n"))
    held_r, held_w = os.pipe()  # the write end: a fork that keeps it open keeps a reader waiting
    stop = threading.Event()
    if state == "thread":
        threading.Thread(target=stop.wait, daemon=True).start()
    elif state == "native":
        native_threads_left_behind()
    threads_before = len(os.listdir("/proc/self/task"))
    p = driver.plan(FAULTS + ":scale", grid={"fault": ["none"], "factor": [1.0, 2.0, 3.0]},
                    shapes=[["128x512"]], output=os.path.join(out, "sweep"))
    seen = {}

    def look(row, done, total):
        zygote = seen["executor"]._zygote
        if "links" not in seen:
            fds = f"/proc/{zygote.process.pid}/fd"
            seen["links"] = [os.readlink(os.path.join(fds, fd)) for fd in os.listdir(fds)]
            seen["forked"] = zygote.forked
            os.kill(zygote.process.pid, signal.SIGWINCH)

    rows, _, _ = driver.run_sweep(p, jobs=2, on_row=look,
                                  on_start=lambda e: seen.update(executor=e))
    stop.set()
    print(json.dumps({"forked": seen["forked"], "threads_before": threads_before,
                      "statuses": [r["status"] for r in rows], "zygote_fds": seen["links"],
                      "held_pipe": f"pipe:[{os.fstat(held_w).st_ino}]",
                      "results": os.path.realpath(p.results_path), "pid": os.getpid()}))


if __name__ == "__main__":
    main()
