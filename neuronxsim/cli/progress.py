"""A one-line progress bar on stderr for the command line's long steps.

On a terminal the line redraws in place and is erased when the work is done; elsewhere (a log, a
pipe) nothing is printed, so stderr carries only errors. ``quiet`` prints nothing. The host
seconds of each step are kept in ``seconds`` either way.

The bar moves between steps by their weights and, inside a step that reports how far it is
(``step.fraction(done, total)``: the simulator's instructions), by that fraction, with an ETA
from the step's own rate. A step that only counts (the NKI tracer's instructions while a
lowering traces kernels) shows the count. Redraws come from a background ticker at most ten
times a second, so elapsed time moves even while a step reports nothing.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable, Optional

#: Seconds between redraws.
TICK = 0.1


def traced_instructions() -> Optional[int]:
    """Instructions the NKI tracer has recorded in the kernel it is tracing now, or None when
    nothing is being traced (read from another thread, for the bar only)."""
    from neuronxsim.nki import tracer
    t = tracer.peek()
    return None if t is None else sum(len(core.record.ops) for core in t.cores)


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f} min"


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
        self._lock = threading.Lock()
        self._current: Optional[_Step] = None  # the step running now
        self._last = ""  # the name of the step that ran last
        self._ticker: Optional[threading.Thread] = None
        self._stop = threading.Event()

    @property
    def drawing(self) -> bool:
        return not self.quiet and self.tty

    def step(self, name: str, count: Optional[Callable[[], Optional[int]]] = None, unit: str = "instructions"):
        """A context manager around one step: shows it running, then counts it done. ``count``,
        if given, is polled for a number of ``unit`` done so far (shown without an ETA)."""
        return _Step(self, name, count, unit)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def _line(self) -> str:
        s = self._current
        overall = self.done + (dict(self.steps).get(s.name, 0.0) * s.fraction_done if s else 0.0)
        overall /= self.total
        filled = int(self.width * min(1.0, overall))
        bar = "#" * filled + "." * (self.width - filled)
        now = time.perf_counter()
        text = f"\r[{bar}] {100 * overall:3.0f}%  {s.name if s else self._last:<42} {now - self.t0:6.1f} s"
        return text + (s.detail(now) if s else "") + "\033[K"

    def _show(self) -> None:
        if not self.drawing:
            return
        with self._lock:
            try:
                self.stream.write(self._line())
                self.stream.flush()
            except (OSError, ValueError):  # stderr gone: stop drawing, never fail the command
                self.quiet = True

    def _tick(self) -> None:
        while not self._stop.wait(TICK):
            self._show()

    def _start_ticker(self) -> None:
        if self.drawing and self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="neuronxsim-progress", daemon=True)
            self._ticker.start()

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self.drawing:
            with self._lock:
                try:
                    self.stream.write("\r\033[K")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass


class _Step:
    def __init__(self, progress: Progress, name: str, count, unit: str):
        self.progress, self.name = progress, name
        self.count, self.unit = count, unit
        self.fraction_done = 0.0
        self.reported = None  # (done, total) from fraction()

    def fraction(self, done: int, total: int) -> None:
        """How far the step is (``done`` of ``total`` units); may be called from any thread."""
        self.reported = (done, total)
        self.fraction_done = min(1.0, done / total) if total else 1.0

    def detail(self, now: float) -> str:
        elapsed = now - self.start
        if self.reported is not None:
            done, total = self.reported
            text = f"  {done:,}/{total:,} {self.unit}"
            if 0.01 <= self.fraction_done < 1.0 and elapsed >= 1.0:
                text += f"  ETA {_duration(elapsed * (1 - self.fraction_done) / self.fraction_done)}"
            return text
        if self.count is not None:
            n = self.count()
            if n:
                return f"  {n:,} {self.unit}"
        return ""

    def __enter__(self):
        self.start = time.perf_counter()
        p = self.progress
        p._current = self
        p._start_ticker()
        p._show()
        return self

    def __exit__(self, kind, value, tb):
        p = self.progress
        p.seconds[self.name] = time.perf_counter() - self.start
        p._current, p._last = None, self.name
        if kind is None:
            p.done += dict(p.steps).get(self.name, 0.0)
            p._show()
        else:
            if isinstance(value, MemoryError):
                value.add_note(f"while: {self.name}")  # what ran out of memory, for the error line
            p.close()
        return False
