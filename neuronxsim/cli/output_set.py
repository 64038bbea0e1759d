"""Output folders replaced as a whole: after any interruption the folder holds either the complete
previous set of files or the complete new one, never a mix.

Every command that writes a folder (``run``, ``simulate``, ``profile``, ``lower``, ``demo``, and
any future one such as a sweep) writes it through :class:`OutputSet`::

    with OutputSet("neuronxsim-run", command="run") as out:
        out.write_text("report.json", text)
        out.write_with("trace.json", result.write_trace)   # any writer that takes a path
    # here the new set has replaced the old one in a single step

How it works, and why each crash window is safe:

1. The new set is built in a sibling staging folder ``.<name>.neuronxsim-<random>`` in the same
   parent folder (so a rename moves it), which this process holds an exclusive ``flock`` on.
   An interruption here (Ctrl-C, SIGTERM, an I/O error such as a full disk) removes the staging
   folder; SIGKILL leaves it behind, unlocked, and the next command that writes a set there
   removes it. The target folder is not touched.
2. A manifest (:data:`MANIFEST`: the command and every file with its size) is written last.
3. The staging folder and the target are exchanged atomically (``renameat2(RENAME_EXCHANGE)``;
   a plain ``rename`` when there is no previous set). Before this system call the target holds
   the old set, after it the new one.
4. The old set, now under the staging name, is deleted (by the next writer if this process dies
   first).

On a file system without ``RENAME_EXCHANGE`` the old set is renamed aside before the new one is
renamed in; a process killed between those two renames leaves no target folder, and the next
writer puts the previous set back before it starts.

The target is refused when it holds anything its manifest does not list as written by neuronxsim
(a file the user added or changed, or any file at all when there is no manifest), when it holds
one of the command's input files, or when it is the working directory or one of its parents, so
that a stray ``--output .`` can never replace a folder of the user's own files.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import atexit
import fcntl
import json
import os
import shutil
import signal
import tempfile
import threading
from typing import Callable, Optional

import neuronxsim
from neuronxsim.errors import NeuronxsimError

#: The manifest each output folder holds: {"neuronxsim", "command", "files": {name: bytes}}.
MANIFEST = ".neuronxsim-output.json"

_STAGING = ".neuronxsim-"   # staging folders: .<target name>.neuronxsim-<random>
_ASIDE = ".neuronxsim-old-"  # the previous set, renamed aside (fallback without RENAME_EXCHANGE)

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class OutputError(NeuronxsimError, OSError):
    """An output folder cannot be used or written; the message names the file and the reason."""


def _reason(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__


def _exchange(a: str, b: str) -> bool:
    """Swaps two paths in one step; False when the system cannot (then nothing happened)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), b)


def _locked_by_someone(path: str) -> bool:
    """Whether a live process holds the lock of a staging folder (then it is not stale)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the probe's lock


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)  # another writer may be removing the same stale folder


_PARTIAL = ".neuronxsim-partial-"  # a single file being written: .neuronxsim-partial-<pid>-<name>


def replace_file(path: str, writer: Callable[[str], object]) -> None:
    """Writes one file of a folder that is not replaced as a whole (a sweep's picture beside its
    append-only results.jsonl): ``writer(tmp)`` writes a temporary file beside ``path``, which
    then replaces ``path`` in one rename, so ``path`` is always the old file or the whole new one.
    Temporary files a killed writer left are removed first. Failures are one :class:`OutputError`
    naming the file and the reason."""
    folder, name = os.path.split(os.path.abspath(path))
    try:
        for stale in os.listdir(folder):
            if stale.startswith(_PARTIAL) and stale.endswith(f"-{name}"):
                try:
                    os.unlink(os.path.join(folder, stale))
                except FileNotFoundError:
                    pass
    except OSError as e:
        raise OutputError(f"{path}: cannot write it ({_reason(e)})") from e
    tmp = os.path.join(folder, f"{_PARTIAL}{os.getpid()}-{name}")  # the same extension: writers look at it
    try:
        writer(tmp)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, (OSError, NeuronxsimError)) and not isinstance(e, OutputError):
            raise OutputError(f"{path}: cannot write it ({_reason(e)}); it keeps its previous contents") from e
        raise


def _foreign_entries(target: str) -> list:
    """The entries of the existing folder ``target`` (relative, '/'-separated) that its manifest
    does not list as written by neuronxsim: anything but the manifest's files, each a regular file
    of the size it records, and the folders holding them. Without a readable manifest that is
    every entry, the manifest too (neuronxsim writes it valid)."""
    try:
        with open(os.path.join(target, MANIFEST), "rb") as f:
            listed = json.loads(f.read(1 << 24))["files"]
        if not (isinstance(listed, dict) and all(isinstance(n, str) and type(b) is int for n, b in listed.items())):
            raise ValueError("files is not {name: bytes}")
    except (OSError, ValueError, KeyError, TypeError):
        listed = None
    folders = {"/".join(n.split("/")[:k]) for n in listed or () for k in range(1, n.count("/") + 1)}
    foreign = []

    def scan(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for e in sorted(entries, key=lambda e: e.name):
                name = prefix + e.name
                if listed is not None and e.is_dir(follow_symlinks=False) and name in folders:
                    scan(e.path, name + "/")
                elif listed is not None and e.is_file(follow_symlinks=False) and (
                        name == MANIFEST or listed.get(name) == e.stat(follow_symlinks=False).st_size):
                    continue
                else:
                    foreign.append(name)  # (a changed file is one neuronxsim did not write as it is)

    scan(target, "")
    return foreign


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_target(path: str, inputs=()) -> str:
    """The absolute path of an output folder ``path``, or :class:`OutputError` saying why it
    cannot be one (see the module docstring). ``inputs`` are the paths of the files the command
    reads: none may be in the folder, which is replaced after they are read."""
    if not isinstance(path, str) or not path.strip():
        raise OutputError("--output is empty; name a folder")
    target = os.path.realpath(path)
    cwd = os.path.realpath(os.getcwd())
    if _inside(cwd, target):
        raise OutputError(f"{path}: is the working directory or one of its parents; name a folder for the results")
    for given in inputs:
        if given and any(_inside(p, target) for p in (
                os.path.realpath(given), os.path.join(os.path.realpath(os.path.dirname(given) or "."),
                                                      os.path.basename(given)))):
            raise OutputError(f"{path}: holds {given}, which this command reads; name another folder for the results")
    if os.path.lexists(target) and not os.path.isdir(target):
        raise OutputError(f"{path}: exists and is not a folder")
    if os.path.isdir(target):
        try:
            foreign = _foreign_entries(target)
            has_manifest = os.path.lexists(os.path.join(target, MANIFEST))
        except OSError as e:
            raise OutputError(f"{path}: cannot read the folder ({_reason(e)})") from None
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            if has_manifest:
                raise OutputError(f"{path}: holds files neuronxsim did not write or that changed since "
                                  f"({shown}); move them or name a new or empty folder")
            raise OutputError(f"{path}: exists and is not a neuronxsim output folder (it holds {shown}); "
                              "name a new or empty folder")
    return target


def recover(target: str) -> None:
    """Tidies what an interrupted writer left beside ``target``: removes stale staging folders
    and, if the target is missing but a previous set was left aside, puts it back."""
    parent, name = os.path.split(target)
    try:
        entries = os.listdir(parent)
    except FileNotFoundError:
        return
    aside = sorted(e for e in entries if e.startswith(f".{name}{_ASIDE}"))
    for e in aside:
        full = os.path.join(parent, e)
        if _locked_by_someone(full):
            continue
        if not os.path.lexists(target):
            try:
                os.rename(full, target)
                continue
            except OSError:
                pass
        _remove_tree(full)
    for e in entries:
        if e.startswith(f".{name}{_STAGING}") and not e.startswith(f".{name}{_ASIDE}"):
            full = os.path.join(parent, e)
            if not _locked_by_someone(full):
                _remove_tree(full)


class OutputSet:
    """A new set of files for the folder ``path``, swapped in whole when the ``with`` block
    ends without an exception (see the module docstring). ``path`` is the staging folder to
    write into; :meth:`file` gives a file's path in it."""

    def __init__(self, path: str, command: str, inputs=()):
        self.display = path
        self.target = check_target(path, inputs)
        self.command = command
        self.path: Optional[str] = None
        self._lock_fd: Optional[int] = None

    # ---- writing ----

    def file(self, name: str) -> str:
        """The path to write ``name`` (relative, '/'-separated) at in the staging folder."""
        full = os.path.join(self.path, *name.split("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        return full

    def write_with(self, name: str, writer: Callable[[str], object]) -> None:
        """Calls ``writer(path)`` to write file ``name``; any failure becomes one
        :class:`OutputError` naming the file and the reason."""
        try:
            writer(self.file(name))
        except (OSError, NeuronxsimError) as e:
            if isinstance(e, OutputError):
                raise
            raise OutputError(f"{os.path.join(self.display, name)}: cannot write it ({_reason(e)}); "
                              "the folder keeps its previous contents") from e

    def write_files(self, writer: Callable[[str], object]):
        """Returns ``writer(folder)``, a writer that puts files of its own naming into the
        staging folder (``pipeline.lower``'s KLR files and compiled kernels). A failure that
        names a file there (an ``OSError``'s file name, or a neuronxsim error's message, such
        as the KLR writer's) is one :class:`OutputError` naming it under the folder the user
        gave, not under the staging folder, which is gone by the time the message is read."""
        try:
            return writer(self.path)
        except OSError as e:
            if isinstance(e, OutputError) or not self._holds(e.filename):
                raise
            shown = os.path.join(self.display, os.path.relpath(e.filename, self.path))
            raise OutputError(f"{shown}: cannot write it ({_reason(e)}); "
                              "the folder keeps its previous contents") from e
        except NeuronxsimError as e:
            message = str(e)
            if self.path + os.sep not in message:
                raise
            message = message.replace(self.path + os.sep, os.path.join(self.display, ""))
            raise OutputError(f"{message}; the folder keeps its previous contents") from e

    def _holds(self, path) -> bool:
        return isinstance(path, str) and path.startswith(self.path + os.sep)

    def write_bytes(self, name: str, data: bytes) -> None:
        def write(path):
            with open(path, "wb") as f:
                f.write(data)
        self.write_with(name, write)

    def write_text(self, name: str, text: str) -> None:
        self.write_bytes(name, text.encode("utf-8"))

    def write_json(self, name: str, obj) -> None:
        self.write_text(name, json.dumps(obj, indent=1) + "\n")

    # ---- the swap ----

    def __enter__(self) -> "OutputSet":
        parent, name = os.path.split(self.target)
        try:
            os.makedirs(parent, exist_ok=True)
            recover(self.target)
            with _signals_deferred():  # the staging folder is made, named here and locked at once
                self.path = tempfile.mkdtemp(prefix=f".{name}{_STAGING}", dir=parent)
                self._lock_fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
                _open_sets.add(self)
        except OSError as e:
            self._discard_surely()
            raise OutputError(f"{self.display}: cannot create the output folder ({_reason(e)})") from None
        except BaseException:
            self._discard_surely()
            raise
        return self

    def __exit__(self, kind, value, tb) -> bool:
        try:
            if kind is None:
                self._commit()
        finally:
            self._discard_surely()
        return False

    def _discard_surely(self) -> None:
        """``_discard``, even when a signal's exception (Ctrl-C, SIGTERM) lands before it has
        deferred signals: it is idempotent, so it runs again, and the exception is raised after."""
        interrupted = None
        while True:
            try:
                self._discard()
                break
            except Exception:
                raise  # a real error, not a signal: no second try
            except BaseException as e:  # KeyboardInterrupt, signals.Terminated
                interrupted = interrupted or e
        if interrupted is not None:
            raise interrupted

    def _manifest(self) -> dict:
        files = {}
        for root, _, names in os.walk(self.path):
            for n in names:
                full = os.path.join(root, n)
                files[os.path.relpath(full, self.path).replace(os.sep, "/")] = os.path.getsize(full)
        return {"neuronxsim": neuronxsim.__version__, "command": self.command, "files": dict(sorted(files.items()))}

    def _commit(self) -> None:
        self.write_json(MANIFEST, self._manifest())
        try:
            os.chmod(self.path, 0o777 & ~_umask())  # mkdtemp's 0700 is for the staging folder only
            with _signals_deferred():  # the swap and what self.path names change together
                if os.path.isdir(self.target):
                    if not _exchange(self.path, self.target):
                        self._swap_by_two_renames()
                else:
                    os.rename(self.path, self.target)
                    self.path = None
        except OSError as e:
            raise OutputError(f"{self.display}: cannot replace the folder ({_reason(e)}); "
                              "it keeps its previous contents") from None

    def _swap_by_two_renames(self) -> None:
        parent, name = os.path.split(self.target)
        aside = tempfile.mkdtemp(prefix=f".{name}{_ASIDE}", dir=parent)
        os.rmdir(aside)
        os.rename(self.target, aside)
        try:
            os.rename(self.path, self.target)
        except OSError:
            os.rename(aside, self.target)  # the old set goes back
            raise
        self.path = aside  # removed as the old set

    def _discard(self) -> None:
        """Removes the staging folder (the new set before the swap, the old one after)."""
        with _signals_deferred():
            if self.path is not None:
                _remove_tree(self.path)
                self.path = None
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None
            _open_sets.discard(self)


#: Sets entered and not discarded yet. A signal's exception can land as a call begins (Python runs
#: signal handlers on entering a function), so also as ``__exit__`` or ``_discard_surely`` begins,
#: before any ``try`` of theirs: the set is then never discarded by its ``with`` block, and the
#: interpreter's exit discards it (an interrupted command exits through ``sys.exit`` or an
#: uncaught ``KeyboardInterrupt``, both of which run ``atexit``; SIGKILL's is left to ``recover``).
_open_sets: "set[OutputSet]" = set()


@atexit.register
def _discard_sets_left_open() -> None:
    for s in list(_open_sets):
        s._discard()


#: The signals whose handling waits until a ``_signals_deferred`` block is over.
_DEFERRED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_deferred():
    """Ctrl-C, SIGTERM and SIGHUP wait until the block is over (then they are handled as usual),
    so that a few steps that must happen together are never cut between two of them.

    Their handlers are swapped for one that notes the signal, rather than the signals blocked:
    a thread's signal mask is its own, and the kernel hands a signal the main thread blocks to
    another thread (the simulator's matmul helpers, a progress bar's ticker), whose delivery
    still runs Python's handler in the main thread, inside the block."""
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers can only be set, and only run, in the main thread
        return
    arrived = []

    def note(signum, frame):
        arrived.append(signum)

    previous = {}
    try:
        for s in _DEFERRED:
            handler = signal.getsignal(s)  # (read first: a handler may run as signal() returns)
            if handler is not None:  # (None: set outside Python, so it cannot be put back)
                previous[s] = handler
                signal.signal(s, note)
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        for s in dict.fromkeys(arrived):
            signal.raise_signal(s)  # handled now, by the handler it would have met


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["OutputSet", "OutputError", "MANIFEST", "check_target", "recover", "replace_file"]
