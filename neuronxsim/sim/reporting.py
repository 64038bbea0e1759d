"""Progress of a long call into the C++ core, for a progress bar: the call runs (releasing the
GIL) while a thread reports how far it is."""

from __future__ import annotations

import threading
from typing import Callable, TypeVar

T = TypeVar("T")


def run_reporting(work: Callable[[], T], poll: Callable[[], tuple[int, int]],
                  on_progress: Callable[[int, int], None], interval: float = 0.1) -> T:
    """``work()``, while ``on_progress(*poll())`` is called every ``interval`` seconds from
    another thread; once more with ``(total, total)`` when it has returned."""
    finished = threading.Event()

    def report():
        while not finished.wait(interval):
            try:
                on_progress(*poll())
            except Exception:  # a failing display must not outlive or break the work
                return

    reporter = threading.Thread(target=report, name="neuronxsim-progress-report", daemon=True)
    reporter.start()
    try:
        result = work()
    finally:
        finished.set()
        reporter.join()
    total = poll()[1]
    on_progress(total, total)
    return result


__all__ = ["run_reporting"]
