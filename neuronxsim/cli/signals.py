"""How the command line stops when it is told to: SIGTERM (and SIGHUP) raise :class:`Terminated`
in the main thread, as Ctrl-C raises ``KeyboardInterrupt``, so ``with`` blocks unwind (an
``OutputSet`` removes its staging folder) before the process exits with 128 + the signal number.
"""

from __future__ import annotations

import contextlib
import signal
import threading


class Terminated(BaseException):
    """The process was asked to stop (SIGTERM, SIGHUP). A ``BaseException``, like
    ``KeyboardInterrupt``, so that no ``except Exception`` swallows it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise(signum, frame):
    raise Terminated(signum)


@contextlib.contextmanager
def handled():
    """Inside the block SIGTERM and SIGHUP raise :class:`Terminated` (in the main thread; other
    threads cannot set handlers and leave them as they are); the previous handlers come back
    after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _raise) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


__all__ = ["Terminated", "handled"]
