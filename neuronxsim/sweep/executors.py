"""Where the configurations run: a pool of local worker processes, or a Dask cluster.

Both take batches of jobs (lists of :mod:`neuronxsim.sweep.job` dicts) and yield (job, result)
for every job, in the order they finish:

* :class:`LocalPool` runs ``workers`` processes, each simulating on one host thread, forked
  from one process that has imported what they need (a fork of this process when it is safe,
  else ``python -m neuronxsim.sweep.worker``: see :mod:`neuronxsim.sweep.worker`). A
  worker that dies (killed, out of memory) is replaced and its unfinished jobs run again, one
  per batch; a job that takes down :data:`MAX_ATTEMPTS` workers becomes a failed result saying
  so.
* :class:`DaskPool` submits the batches to a Dask distributed scheduler (an existing one, or a
  ``LocalCluster`` it starts). Dask runs a lost worker's tasks again elsewhere; a task that keeps
  killing workers comes back as ``KilledWorker``: its configurations run again one per task,
  and one that still does so becomes a failed result.
"""

from __future__ import annotations

import collections
import itertools
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import sendfds
from typing import Optional

import neuronxsim
from neuronxsim.sweep.kernel_file import first_line
from neuronxsim.sweep.space import SweepError

#: Workers a job may take down before it counts as failed.
MAX_ATTEMPTS = 2

#: Batches a local worker holds at once (the next is waiting when it finishes one), while more
#: batches wait than there are workers; near the end, one each, so that no worker sits idle
#: while another still holds a batch it has not begun.
_DEPTH = 2

#: Host threads of the numerical libraries in a worker: one, like the simulator's.
_ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def failed(job: dict, error: str) -> dict:
    """The result of a job that did not finish (no worker returned one)."""
    return {"key": job["key"], "status": "failed", "error": error, "host_seconds": {}}


def _worker_env() -> dict:
    """The parent's environment, neuronxsim's folder first on PYTHONPATH (so the worker imports
    this neuronxsim), one numerical thread where the user has not chosen otherwise."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(neuronxsim.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONSAFEPATH"] = "1"  # not the working directory: it may hold another neuronxsim
    for k, v in _ONE_THREAD.items():
        env.setdefault(k, v)
    return env


class _ZygoteGone(Exception):
    """The zygote process has died (killed, out of memory)."""


class _ForkedChild:
    """A child process forked here, with the part of ``subprocess.Popen`` the pool uses."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: Optional[int] = None

    def wait(self, timeout: Optional[float] = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            pid, status = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
            elif time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"zygote {self.pid}", timeout)
            else:
                time.sleep(0.005)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)


def _thread_count() -> Optional[int]:
    """This process's threads (the interpreter's and every native library's); None where the
    system does not say (not Linux)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def _fork_zygote(theirs: socket.socket) -> Optional[_ForkedChild]:
    """The zygote as a fork of this process (:func:`neuronxsim.sweep.worker.become_zygote`), or
    None when this process is not single-threaded at the fork.

    Why a fork of this process and not a fresh interpreter (nor a multiprocessing forkserver,
    which is one): this process has imported NumPy, ml_dtypes and neuronxsim already, and a
    fresh one spends about a second of CPU importing them again, as long as tracing a few dozen
    configurations, paid on a sweep's critical path. Why the thread check: a fork keeps only
    the forking thread, so another thread's locks stay held for ever in the child and a thread
    pool (the simulator's matmul helpers after a multi-threaded simulation here, a Dask client,
    a notebook's threads) is left without its threads. The check counts the threads right after
    the fork, in this process: NumPy's OpenBLAS pool is shut down by its own fork handler before
    the fork (and restarted on its next use), any other thread is still there. The child waits
    for the verdict before it touches anything and, on a no, exits at once."""
    if threading.active_count() > 1 or _thread_count() is None:
        return None  # (a Python thread is one for certain: no need to fork to see it)
    for stream in (sys.stdout, sys.stderr):  # what they hold would be written twice
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    verdict_r, verdict_w = os.pipe()
    # Signals wait until the child has put its own handlers in place: a handler of this
    # process's (the CLI's SIGTERM one) must never run there, nor an exception unwind this
    # process's stack there.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    if pid == 0:  # the child: nothing before the verdict, and never back to the caller
        try:
            os.close(verdict_w)
            if os.read(verdict_r, 1) == b"y":
                os.close(verdict_r)
                from neuronxsim.sweep.worker import become_zygote
                become_zygote(theirs.fileno(), mask)
        finally:
            os._exit(0)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    os.close(verdict_r)
    alone = _thread_count() == 1
    os.write(verdict_w, b"y" if alone else b"n")
    os.close(verdict_w)
    child = _ForkedChild(pid)
    if not alone:
        child.wait()
        return None
    return child


class _Zygote:
    """The process local workers are forked from (:mod:`neuronxsim.sweep.worker`): it has
    imported what a job needs, so a new worker starts in milliseconds. ``fork_here``: the
    zygote is a fork of this process when that is safe (:func:`_fork_zygote`), else a fresh
    interpreter (``forked`` says which)."""

    def __init__(self, env: dict, fork_here: bool):
        ours, theirs = socket.socketpair()
        try:
            self.process = _fork_zygote(theirs) if fork_here else None
            self.forked = self.process is not None
            if not self.forked:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "neuronxsim.sweep.worker", str(theirs.fileno())],
                    stdin=subprocess.DEVNULL, pass_fds=(theirs.fileno(),), env=env)
        finally:
            theirs.close()
        self.control = ours
        self.reports = Connection(os.dup(ours.fileno()), writable=False)
        self.exits: dict = {}  # pid -> exit code, reported and not yet asked for
        self.alive = True  # False once its reports have stopped

    def fork(self) -> tuple:
        """A new worker's pid and the sweep's end of its socket (a duplex Connection)."""
        ours, theirs = socket.socketpair()
        try:
            sendfds(self.control, [theirs.fileno()])
        finally:
            theirs.close()
        while True:
            message = self._next()
            if message[0] == "started":
                return message[1], Connection(ours.detach())

    def exit_code(self, pid: int, timeout: float) -> Optional[int]:
        """The exit code of worker ``pid`` once it has ended; None if not within ``timeout``."""
        deadline = time.monotonic() + timeout
        try:
            while pid not in self.exits:
                left = deadline - time.monotonic()
                if left <= 0 or not self.reports.poll(left):
                    return None
                self._next()
        except _ZygoteGone:
            self.alive = False
            return None  # its workers live on, but nobody reports how they end
        return self.exits.pop(pid)

    def _next(self):
        try:
            message = self.reports.recv()
        except (EOFError, OSError):
            raise _ZygoteGone() from None
        if message[0] == "exit":
            self.exits[message[1]] = message[2]
        return message

    def close(self) -> None:
        self.control.close()  # the zygote ends when its control socket closes
        self.reports.close()
        try:
            self.process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _Worker:
    def __init__(self, zygote: _Zygote):
        self.pid, self.conn = zygote.fork()
        self.inflight = collections.deque()  # (batch, attempt) sent, not yet answered


class LocalPool:
    """``workers`` local processes (see the module docstring). ``fork_here``: their zygote may
    be a fork of this process (see :mod:`neuronxsim.sweep.worker`); False for full-mode sweeps,
    whose reference functions' NumPy must run on one thread per worker."""

    def __init__(self, workers: int, fork_here: bool = True):
        if workers < 1:
            raise SweepError(f"--jobs {workers}: at least one worker")
        self.workers = workers
        self.fork_here = fork_here
        self._pool: list[_Worker] = []
        self._env = _worker_env()
        self._zygote: Optional[_Zygote] = None

    def describe(self) -> str:
        return f"{self.workers} local worker process{'es' if self.workers != 1 else ''}"

    def worker_count(self) -> int:
        return self.workers

    def pids(self) -> list[int]:
        """The process ids of the workers running now."""
        return [w.pid for w in self._pool]

    def run(self, batches: list[list[dict]]):
        """Yields (job, result) for every job of every batch."""
        pending = collections.deque((b, 1) for b in batches if b)
        try:
            # (no more workers than batches: --jobs is a ceiling, not a number of processes to fork)
            while len(self._pool) < min(self.workers, len(pending)):
                self._pool.append(self._new_worker())
            for w in self._pool:
                self._feed(w, pending)
            # While batches wait, a worker holding none is one whose pipe refused them (it died
            # as it was fed): waiting on it too reads its end-of-file, and it is replaced.
            while pending or any(w.inflight for w in self._pool):
                ready = wait([w.conn for w in self._pool if w.inflight or pending])
                for w in [w for w in self._pool if w.conn in ready]:
                    yield from self._collect(w, pending)
        finally:
            self.close()

    def _feed(self, w: _Worker, pending) -> None:
        while pending and (not w.inflight or
                           (len(w.inflight) < _DEPTH and len(pending) > len(self._pool))):
            batch, attempt = pending.popleft()
            try:
                w.conn.send(batch)
            except OSError:  # the worker is gone: its pipe's end-of-file says so
                pending.appendleft((batch, attempt))
                return
            w.inflight.append((batch, attempt))

    def _collect(self, w: _Worker, pending):
        """The answer ``w`` has sent; if instead it died, its unanswered batches go back to
        ``pending`` (one job per batch, so that a job that kills workers is singled out), a new
        worker takes its place and every worker with room takes some."""
        try:
            results = w.conn.recv()
        except (EOFError, OSError):
            results = None
        if results is not None:
            batch, _ = w.inflight.popleft()
            yield from zip(batch, results)
            self._feed(w, pending)
            return
        w.conn.close()
        self._pool.remove(w)
        code = self._zygote.exit_code(w.pid, timeout=10)
        cause = ("an unknown cause" if code is None else
                 f"signal {-code}" if code < 0 else f"exit status {code}")
        for batch, attempt in w.inflight:
            if attempt >= MAX_ATTEMPTS:
                for job in batch:
                    yield job, failed(job, f"the worker process died ({cause}) running this "
                                           f"configuration, {attempt} times")
            else:
                pending.extendleft(([job], attempt + 1) for job in reversed(batch))
        if pending:
            self._pool.append(self._new_worker())
            for other in self._pool[::-1]:  # the new one first; then an idle one too: it waits
                self._feed(other, pending)  # for nothing that would wake it

    def _new_worker(self) -> _Worker:
        """A worker forked from the zygote; a zygote that has died is replaced once."""
        for _ in range(2):
            if self._zygote is None:
                self._zygote = _Zygote(self._env, self.fork_here)
            try:
                return _Worker(self._zygote)
            except (_ZygoteGone, OSError):
                self._zygote.close()
                self._zygote = None
        raise SweepError("the local workers' zygote process (python -m neuronxsim.sweep.worker) "
                         "died as it started: run it by hand to see why")

    def close(self) -> None:
        """Stops the workers (asked to end, killed if they do not within a few seconds), then
        the zygote."""
        for w in self._pool:
            try:
                w.conn.send(None)
            except OSError:
                pass
        for w in self._pool:
            w.conn.close()
            # Killed only while the zygote lives: until it reaps the worker, the pid is not reused.
            if self._zygote.exit_code(w.pid, timeout=3) is None and self._zygote.alive:
                try:
                    os.kill(w.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self._pool = []
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None


def dask_missing() -> str:
    return ("--scheduler needs Dask's distributed scheduler, which is not installed: "
            "pip install 'neuronxsim[dask]' (or pip install 'dask[distributed]')")


def _local_cluster(distributed, workers: int):
    """A LocalCluster of ``workers`` processes of one thread, started through a multiprocessing
    forkserver that has imported Dask and what a job needs (:data:`neuronxsim.sweep.worker.
    PRELOAD`), so that the second and later workers do not import them again (about 2
    CPU-seconds each otherwise: Dask spawns each worker as a fresh interpreter). A forkserver,
    not a fork of this process: the Dask client's event loop is a thread here. The forkserver
    is Python's, shared by this process's later clusters; a worker Dask restarts after this
    start is spawned as usual.

    Its scheduler gives a worker a task only when its thread is free (``worker-saturation`` 1,
    not Dask's 1.1, which with one thread queues a second task on the worker): Dask blames a
    worker's death on every task the worker holds, so a task queued behind one that kills its
    worker would fail with it."""
    import dask
    from neuronxsim.sweep.worker import PRELOAD

    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver",
                          "distributed.scheduler.worker-saturation": 1.0}):
        distributed.utils.get_mp_context().set_forkserver_preload(["distributed", *PRELOAD])
        return distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True,
            dashboard_address=None, env=dict(_ONE_THREAD), silence_logs=logging.CRITICAL)


def _connect(distributed, address: str, timeout: float):
    """A Client of the scheduler at ``address``, connected within ``timeout`` seconds, else
    SweepError. The Client's own timeout does not bound its handshake (a peer that accepts and
    then says nothing holds it for ever), so the Client is made on a helper thread that is given
    up on after the timeout (and a second for the Client's own error to come first); a Client
    that thread makes after that is closed there."""
    made: dict = {}
    lock = threading.Lock()

    def connect() -> None:
        try:
            client = distributed.Client(address, timeout=timeout)
        except BaseException as e:
            with lock:
                made["error"] = e
            return
        with lock:
            late = made.get("abandoned", False)
            if not late:
                made["client"] = client
        if late:
            client.close()

    thread = threading.Thread(target=connect, name="neuronxsim-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    with lock:
        made.setdefault("abandoned", "client" not in made and "error" not in made)
    if made["abandoned"]:
        raise SweepError(f"--scheduler {address}: no Dask scheduler answered there within "
                         f"--connect-timeout {timeout:g} s")
    e = made.get("error")
    if isinstance(e, (OSError, TimeoutError, ValueError)):
        raise SweepError(f"--scheduler {address}: cannot reach a Dask scheduler there "
                         f"({first_line(e)})") from None
    if e is not None:
        raise e
    return made["client"]


class DaskPool:
    """A Dask distributed client: ``address`` of a running scheduler (``tcp://host:8786``), or
    ``"local"`` for a LocalCluster of ``workers`` processes with one thread each."""

    def __init__(self, address: str, workers: int, connect_timeout: float):
        try:
            import distributed
        except ImportError:
            raise SweepError(dask_missing()) from None
        self.address = address
        self.cluster = None
        self._keep_lost_workers = None
        if address == "local":
            import dask

            # A LocalCluster closes the nanny of a worker that has not come back 15 s after it
            # was lost (``lost-worker-timeout``, read when that time is up); the nanny restarts
            # its worker itself, but a configuration that kills its worker again and again keeps
            # it away at those moments, and the cluster ran out of workers: the sweep waited for
            # ever. Kept for this cluster's life (and undone by close()).
            self._keep_lost_workers = dask.config.set({"distributed.deploy.lost-worker-timeout": "365 days"})
            self.cluster = _local_cluster(distributed, workers)
            self.client = distributed.Client(self.cluster)
        else:
            self.client = _connect(distributed, address, connect_timeout)
        self._distributed = distributed

    def describe(self) -> str:
        n = len(self.client.scheduler_info().get("workers", {}))
        where = "a local Dask cluster" if self.cluster is not None else f"Dask at {self.address}"
        return f"{where} ({n} worker{'s' if n != 1 else ''})"

    def worker_count(self) -> int:
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def run(self, batches: list[list[dict]]):
        """Yields (job, result) for every job of every batch."""
        from neuronxsim.sweep import job as job_module

        tag = uuid.uuid4().hex[:12]
        numbers = itertools.count()
        futures = {}  # the batch of each task not yet finished

        def submit(batch: list):
            future = self.client.submit(job_module.run_many, batch, pure=False,
                                        key=f"neuronxsim-sweep-{tag}-{next(numbers)}")
            futures[future] = batch
            return future

        finished = self._distributed.as_completed([submit(batch) for batch in batches if batch])
        try:
            for future in finished:
                batch = futures.pop(future)
                try:
                    results = future.result()
                except self._distributed.KilledWorker:
                    if len(batch) > 1:
                        # Which of its configurations took the workers down is not known: each
                        # runs again as a task of its own, so that only that one fails.
                        for job in batch:
                            finished.add(submit([job]))
                        continue
                    results = [failed(batch[0], "Dask workers died running this configuration "
                                                "(KilledWorker)")]
                except Exception as e:  # the task failed outside job.run (a worker without neuronxsim)
                    results = [failed(j, f"the Dask task failed: {type(e).__name__}: "
                                         f"{str(e).splitlines()[0] if str(e) else ''}")
                               for j in batch]
                yield from zip(batch, results)
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        if self._keep_lost_workers is not None:
            self._keep_lost_workers.__exit__(None, None, None)


__all__ = ["LocalPool", "DaskPool", "MAX_ATTEMPTS", "failed", "dask_missing"]
