"""The local workers of a sweep, forked from one prepared process:
``python -m neuronxsim.sweep.worker CONTROL_FD``.

Starting a worker is mostly importing NumPy, ml_dtypes and the tracer (about 0.8 CPU-seconds,
as long as tracing a few dozen configurations), so the pool pays it once: this process (the
*zygote*) imports everything a job needs, then forks one worker per request. It is a fresh
interpreter started by the sweep, single-threaded (one numerical thread), so a fork shares
nothing with the process that started the sweep (its threads, locks, ``__main__``).

The control socket (``CONTROL_FD``, one end of a Unix socket pair) carries, from the sweep, one
socket per new worker (as an SCM_RIGHTS file descriptor) and, back to the sweep,
``multiprocessing.connection`` messages: ``("started", pid)`` for each worker and
``("exit", pid, code)`` when one ends (``code`` as ``Popen.returncode``: negative for a signal).
The zygote ends when the control socket closes.

A worker reads batches of jobs from its socket and writes their results back (as
``multiprocessing.connection`` messages), until the socket closes or a message is None. Anything
else written to stdout (a kernel's print) goes to stderr instead, so it cannot reach the sweep's
own output.
"""

from __future__ import annotations

import gc
import os
import select
import signal
import socket
import sys
from multiprocessing.connection import Connection
from multiprocessing.reduction import recvfds

#: What the zygote imports before forking: everything :func:`neuronxsim.sweep.job.run` uses.
PRELOAD = ("neuronxsim.sweep.job", "neuronxsim.nki.kernel", "neuronxsim.nki.typing",
           "neuronxsim.nki06.kernel", "neuronxsim.sim")


def serve(conn: Connection) -> None:
    """A worker's loop: a batch in, its results out."""
    from neuronxsim.sweep import job

    while True:
        try:
            batch = conn.recv()
        except EOFError:
            return
        if batch is None:
            return
        conn.send(job.run_many(batch))


def _fork_worker(worker_fd: int, zygote_fds: list) -> int:
    """Forks a worker serving ``worker_fd``; it closes the zygote's own descriptors, so that
    the zygote's end is seen when the zygote ends."""
    pid = os.fork()
    if pid:
        os.close(worker_fd)
        return pid
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        for fd in zygote_fds:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        serve(Connection(worker_fd))
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        sys.stderr.flush()
        os._exit(code)


def _reap(report: Connection) -> None:
    """Reports every worker that has ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        report.send(("exit", pid, os.waitstatus_to_exitcode(status)))


def main(argv: list) -> int:
    os.dup2(2, 1)  # print() goes to stderr, in the zygote and in every worker
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the sweep decides when it stops
    control = socket.socket(fileno=int(argv[0]))
    report = Connection(os.dup(control.fileno()), readable=False)
    for name in PRELOAD:
        __import__(name)
    gc.freeze()  # the imported objects: never scanned again, their pages stay shared with workers

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # delivered through the wakeup pipe
    try:
        while True:
            ready, _, _ = select.select([control, wake_r], [], [])
            if wake_r in ready:
                os.read(wake_r, 4096)
                _reap(report)
            if control in ready:
                fds = recvfds(control, 1)
                own = [control.fileno(), report.fileno(), wake_r, wake_w]
                report.send(("started", _fork_worker(fds[0], own)))
    except (EOFError, OSError):
        return 0  # the sweep is done (its workers see their sockets close and end)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
