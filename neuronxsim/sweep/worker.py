"""The local workers of a sweep, forked from one prepared process (the *zygote*).

Starting a worker is mostly importing NumPy, ml_dtypes and the tracer (about 1.1 CPU-seconds, as
long as tracing a few dozen configurations; 0.8 of it is ml_dtypes registering its NumPy loops),
so the pool pays it at most once: the zygote has imported everything a job needs and forks one
worker per request, in milliseconds. The zygote is either

* a fork of the sweep's own process (:func:`become_zygote`), which has imported all of it
  already, so the pool starts for nothing. Only when the sweep's process was single-threaded at
  the fork (checked by the sweep; :mod:`neuronxsim.sweep.executors`), so that no lock or thread
  pool (the simulator's matmul helpers, a Dask client, a notebook's threads) is inherited
  half-held or without its threads; or
* a fresh interpreter, ``python -m neuronxsim.sweep.worker CONTROL_FD``, that imports it all
  (about a second), when the sweep's process had other threads, or runs full-mode
  configurations (its environment holds the numerical libraries to one thread each, which a
  fork cannot change once NumPy is loaded).

Either way the zygote holds no descriptor, signal handler or ``stdout`` of the sweep's.

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
    """A worker's loop: a batch in, its results out. The kernel file's imports (see
    :func:`neuronxsim.sweep.kernel_file.kernel_imports`) stay set up from one job to the next
    while the jobs' kernel folder stays the same, as it does in a sweep."""
    import contextlib

    from neuronxsim.sweep import job, kernel_file

    with contextlib.ExitStack() as held:
        imports = None  # (path, allow_shadowing) of the block held open
        while True:
            try:
                batch = conn.recv()
            except (EOFError, ConnectionError):  # the sweep has ended (or was interrupted)
                return
            if batch is None:
                return
            wanted = (batch[0]["kernel"]["path"], batch[0]["allow_shadowing"]) if batch else imports
            if wanted != imports:
                held.close()
                imports = None
                try:
                    held.enter_context(kernel_file.kernel_imports(*wanted))
                    imports = wanted
                except Exception:
                    pass  # (a real Neuron SDK importable): each job's row says so
            results = job.run_many(batch)
            try:
                conn.send(results)
            except ConnectionError:  # the sweep ended while this batch ran: no one to tell
                return


def _fork_worker(worker_fd: int, zygote_fds: list) -> int:
    """Forks a worker serving ``worker_fd``; it closes the zygote's own descriptors, so that
    the zygote's end is seen when the zygote ends."""
    zygote = os.getpid()
    pid = os.fork()
    if pid:
        os.close(worker_fd)
        return pid
    code = 0
    try:
        _end_with_parent(zygote)
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


def _end_with_parent(parent: int) -> None:
    """Has the kernel kill this worker when the zygote ends (Linux's PR_SET_PDEATHSIG). The
    zygote ends when the sweep does, however it ends, but a worker busy in a kernel that never
    returns would not see its socket close: after a ``kill -9`` of the sweep it would spin on,
    orphaned. (Elsewhere: nothing to do; such a worker is left to spin.)"""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the zygote ended before the call took effect
        os._exit(1)


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


def _serve_zygote(control_fd: int) -> None:
    """Forks a worker per socket received on ``control_fd`` and reports how they end, until
    the control socket closes. Runs with only 0, 1, 2 and ``control_fd`` open, stdin the null
    device, stdout a copy of stderr, SIGINT ignored (the sweep decides when it stops)."""
    control = socket.socket(fileno=control_fd)
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
        return  # the sweep is done (its workers see their sockets close and end)


def _standard_streams() -> None:
    """stdin the null device; print() to stderr, in the zygote and in every worker."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def become_zygote(control_fd: int, signal_mask: set) -> None:
    """Turns a fork of the sweep's process into the zygote; never returns. The fork keeps the
    sweep's imports and drops the rest of its state: every descriptor but the standard ones and
    ``control_fd`` (the sweep's results file, its end of this very socket pair, whatever its
    caller had open), the signal handlers it installed, its wakeup descriptor. It starts with
    every signal blocked and restores the sweep's mask (``signal_mask``) once its own handlers
    are in place. It ends with ``os._exit``: the sweep's ``atexit`` handlers and finalizers (an output folder's
    clean-up) are the sweep's, not this process's."""
    try:
        gc.freeze()  # nothing of the sweep's is collected here (a finalizer would close a descriptor)
        signal.set_wakeup_fd(-1)
        for sig in signal.valid_signals():
            if callable(signal.getsignal(sig)):  # a Python handler (SIGINT's default one too)
                signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, signal_mask)
        for fd in [int(name) for name in os.listdir("/proc/self/fd")]:
            if fd > 2 and fd != control_fd:
                try:
                    os.close(fd)
                except OSError:
                    pass  # the listing's own descriptor, already closed
        _standard_streams()
        _serve_zygote(control_fd)
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(0)


def main(argv: list) -> int:
    """The fresh-interpreter zygote (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _standard_streams()
    _serve_zygote(int(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
