"""Shared pieces of the benchmarks: timing, the reference-executor column, tables.

Every benchmark measures the simulator and its comparison in the same process, interleaved, and
reports ratios (never pass/fail thresholds): the host is shared, so absolute times drift.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Callable, NamedTuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def run_reference(module, inputs) -> dict:
    """The NumPy reference executor's outputs for ``module`` (``neuronxsim.reference.execute``).

    This is the one place the "reference executor" column plugs in: every benchmark calls it next to
    the simulator and NumPy, and prints its time.
    """
    from neuronxsim.reference import execute

    return execute(module, inputs)


class Timed(NamedTuple):
    best: float          # the fastest call, s
    rounds: list[float]  # every call, s, in round order
    last: object         # the last call's result


def interleaved(runs: dict[str, Callable[[], object]], repeat: int, settle_s: float = 0.3) -> dict[str, Timed]:
    """Runs every callable `repeat` times, round-robin, and returns each one's times and last
    result. Round-robin so that load from other processes hits all of them alike.

    Each timed call starts after `settle_s` of idleness: after a NumPy product returns,
    OpenBLAS's threads keep spinning for up to 2**THREAD_TIMEOUT cycles (2**28 by default, about
    0.1 s) and would otherwise take a core from whatever is timed next."""
    rounds: dict[str, list[float]] = {k: [] for k in runs}
    last = {}
    for _ in range(repeat):
        for k, fn in runs.items():
            time.sleep(settle_s)
            t0 = time.perf_counter()
            last[k] = fn()
            rounds[k].append(time.perf_counter() - t0)
    return {k: Timed(min(rounds[k]), rounds[k], last[k]) for k in runs}


def median_round_ratio(a: Timed, b: Timed) -> float:
    """The median over rounds of a's time / b's time in the same round (the two calls back to
    back). Best-of pairs each side's luckiest moment; this pairs calls that saw the same moment of
    the host, and shows how far a typical round is from the best-of ratio. On a shared host it
    swings more than best-of: one slow call moves its round's ratio."""
    return statistics.median(x / y for x, y in zip(a.rounds, b.rounds))


def host_note() -> str:
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    return f"host: {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"


def print_table(title: str, header: list[str], rows: list[list]) -> None:
    cells = [[str(c) for c in header]] + [[f"{c:.4g}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    for j, r in enumerate(cells):
        print("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)))
        if j == 0:
            print("  " + "  ".join("-" * w for w in widths))
