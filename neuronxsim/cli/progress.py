"""A one-line progress bar on stderr for the command line's long steps.

On a terminal the line redraws in place and is erased when the work is done; elsewhere (a log, a
pipe) nothing is printed, so stderr carries only errors. ``quiet`` prints nothing. The host
seconds of each step are kept in ``seconds`` either way.
"""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, steps, quiet: bool = False, stream=None, width: int = 28):
        """``steps``: (name, weight) pairs in the order they run; weights set the bar's share."""
        self.steps = list(steps)
        self.total = float(sum(w for _, w in self.steps)) or 1.0
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.width = width
        self.done = 0.0
        self.t0 = time.perf_counter()
        self.seconds = {}  # host seconds per finished step

    def step(self, name: str):
        """A context manager around one step: shows it running, then counts it done."""
        return _Step(self, name)

    def _show(self, name: str) -> None:
        if self.quiet or not self.tty:
            return
        elapsed = time.perf_counter() - self.t0
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r[{bar}] {100 * self.done / self.total:3.0f}%  {name:<42} {elapsed:6.1f} s\033[K")
        self.stream.flush()

    def close(self) -> None:
        if not self.quiet and self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()


class _Step:
    def __init__(self, progress: Progress, name: str):
        self.progress, self.name = progress, name

    def __enter__(self):
        self.start = time.perf_counter()
        self.progress._show(self.name)
        return self

    def __exit__(self, kind, value, tb):
        p = self.progress
        p.seconds[self.name] = time.perf_counter() - self.start
        if kind is None:
            p.done += dict(p.steps).get(self.name, 0.0)
            p._show(self.name)
        else:
            p.close()
        return False
