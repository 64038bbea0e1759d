"""A kernel file as it travels to the workers: its path, its text and the name of a function in it
(``FILE.py:NAME``), and how a worker turns that back into the kernel object.

The text travels, not the path: a worker on another machine runs the same source. A worker runs
the file once per text (the loaded namespace is kept, keyed by the text's hash) with ``import
nki`` and ``import neuronxcc.nki`` mapped to neuronxsim's dialects (``neuronxsim.importer``) and,
where the file's folder exists on the worker, that folder first on ``sys.path`` so the file can
import its neighbours.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import linecache
import os
import sys
import types
from dataclasses import dataclass

from neuronxsim.sweep.space import SweepError

#: The kernel dialects, by the package their kernels come from.
DIALECTS = ("nki", "nki06")


@dataclass(frozen=True)
class KernelFile:
    """``FILE.py:NAME``: the file's path (as given) and text, and the name."""
    path: str
    text: str
    name: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def ref(self) -> str:
        return f"{self.path}:{self.name}"

    def to_dict(self) -> dict:
        return {"path": self.path, "text": self.text, "name": self.name}

    @staticmethod
    def from_dict(d: dict) -> "KernelFile":
        return KernelFile(d["path"], d["text"], d["name"])


def read(ref: str, what: str = "kernel") -> KernelFile:
    """The file of ``FILE.py:NAME``, read; SweepError for a malformed reference or an unreadable
    file."""
    path, _, name = ref.rpartition(":")
    if not path or not name:
        raise SweepError(f"{ref!r}: expected FILE.py:{what.upper()}")
    if not name.isidentifier():
        raise SweepError(f"{ref!r}: {name!r} is not a Python name")
    from neuronxsim.cli.inputs import InputError, read_bytes

    try:  # (a directory, pipe or device is refused saying what it is; a pipe is never waited on)
        data = read_bytes(path, "kernel file" if what == "kernel" else "file")
    except InputError as e:
        raise SweepError(str(e)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SweepError(f"{path}: not UTF-8 text (byte {e.start})") from None
    return KernelFile(path, text, name)


# The namespaces of the files this process has run, by (path, text hash).
_namespaces: dict = {}


# The (folder, allow_shadowing) of the kernel_imports blocks open, innermost last.
_open_imports: list = []


@contextlib.contextmanager
def kernel_imports(path: str, allow_shadowing: bool):
    """``import nki`` / ``import neuronxcc.nki`` mapped to neuronxsim, and the file's folder
    first on sys.path (where it exists), for the duration of the block. Inside a block for the
    same folder and flag, nothing more to do: a local worker keeps one open across its jobs
    (:func:`neuronxsim.sweep.worker.serve`), which each open one (setting it up costs about
    0.3 ms, the import hook's check for a real Neuron SDK included)."""
    from neuronxsim.importer import installed

    folder = os.path.dirname(os.path.abspath(path))
    if _open_imports and _open_imports[-1] == (folder, allow_shadowing):
        yield
        return
    added = os.path.isdir(folder) and folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        with installed(allow_shadowing=allow_shadowing):
            _open_imports.append((folder, allow_shadowing))
            try:
                yield
            finally:
                _open_imports.pop()
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)


# The user modules this process's kernel files (and their traces) use: name -> (file, SHA-256 of
# the file's bytes when the module was noticed). "User": a file outside the standard library,
# site-packages and neuronxsim (see _is_user_file).
_user_modules: dict = {}
#: How many times :func:`refresh_modules` forgot them (a memo of what the user's code computed
#: holds only within one generation).
generation = 0


def _library_roots() -> tuple:
    """The folders whose modules are not the user's: the standard library, site-packages (every
    scheme's) and neuronxsim's own."""
    import site
    import sysconfig

    import neuronxsim
    roots = {os.path.dirname(os.path.abspath(neuronxsim.__file__))}
    for scheme_path in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(scheme_path)
        if path:
            roots.add(path)
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # (a virtualenv's old site module)
        pass
    return tuple(os.path.realpath(r) + os.sep for r in roots if r)


_roots: tuple = ()


def _is_user_file(path) -> bool:
    global _roots
    if not isinstance(path, str) or not os.path.isabs(path) and not os.path.exists(path):
        return False
    if not _roots:
        _roots = _library_roots()
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    return (not real.startswith(_roots) and "site-packages" not in parts
            and "dist-packages" not in parts)


def file_sha256(path: str) -> str | None:
    """The SHA-256 of a file's bytes, None when it cannot be read (deleted: a change too)."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def note_modules(names, folder: str | None = None) -> None:
    """Records the user modules among ``names`` (modules a kernel file or a trace just loaded)
    and, with ``folder``, every module in sys.modules whose file lies in that folder (the kernel
    file's neighbours, also when the caller imported them first), with their files' hashes."""
    candidates = set(names)
    if folder is not None:
        prefix = os.path.realpath(folder) + os.sep
        for name, module in list(sys.modules.items()):
            f = getattr(module, "__file__", None)
            if isinstance(f, str) and os.path.realpath(f).startswith(prefix):
                candidates.add(name)
    for name in candidates:
        if name in _user_modules or name in ("__main__", "__mp_main__"):
            continue
        f = getattr(sys.modules.get(name), "__file__", None)
        if _is_user_file(f):
            path = os.path.realpath(f)
            _user_modules[name] = (path, file_sha256(path))


@contextlib.contextmanager
def noting_modules(folder: str | None = None):
    """Records the user modules loaded during the block (see :func:`note_modules`)."""
    before = set(sys.modules)
    try:
        yield
    finally:
        note_modules(set(sys.modules) - before, folder)


def dependencies() -> dict:
    """{file: SHA-256} of the user modules recorded (what a trace may have read)."""
    return {path: sha for path, sha in _user_modules.values()}


def _stale(name: str, path: str, sha: str | None, folder: str | None) -> bool:
    """Whether the recorded module ``name`` (file ``path``, loaded with hash ``sha``) is not
    what an import would read now: its file changed, or (a top-level module) ``folder``, first
    on sys.path for the kernel about to load, holds another file of that name (two kernel
    folders, each with its own helper.py)."""
    if file_sha256(path) != sha:
        return True
    if folder is None or "." in name:
        return False
    for candidate in (os.path.join(folder, name + ".py"), os.path.join(folder, name, "__init__.py")):
        if os.path.exists(candidate):
            return os.path.realpath(candidate) != path
    return False


def refresh_modules(folder: str | None = None) -> bool:
    """When a recorded user module is stale (see :func:`_stale`; ``folder``: the folder of the
    kernel file about to load), forgets all of them (out of sys.modules, so the next import
    reads the files as they are now; a module that imported a stale one would keep it
    otherwise) and every kernel namespace run with them. True when it did."""
    if not any(_stale(name, path, sha, folder) for name, (path, sha) in _user_modules.items()):
        return False
    for name in _user_modules:
        sys.modules.pop(name, None)
    _user_modules.clear()
    _namespaces.clear()
    global generation
    generation += 1
    import importlib
    importlib.invalidate_caches()
    return True


def load(kf: KernelFile):
    """The object ``kf.name`` names in the file (run once per text and process, and again when a
    user module it loaded changed: :func:`refresh_modules`; call inside :func:`kernel_imports`).
    SweepError when the file fails to run or lacks the name."""
    refresh_modules(os.path.dirname(os.path.abspath(kf.path)))
    key = (kf.path, kf.sha256)
    namespace = _namespaces.get(key)
    if namespace is None:
        module = types.ModuleType("__neuronxsim_sweep__")
        module.__file__ = kf.path
        # Tracebacks and the tracer's source lines read the text through linecache, also where
        # the file does not exist (a remote worker).
        lines = kf.text.splitlines(keepends=True)
        linecache.cache[kf.path] = (len(kf.text), None, lines, kf.path)
        try:
            code = compile(kf.text, kf.path, "exec")
            # What the file prints as it runs goes to stderr: stdout is the sweep's own (its
            # --json document).
            with contextlib.redirect_stdout(sys.stderr), \
                    noting_modules(os.path.dirname(os.path.abspath(kf.path))):
                exec(code, module.__dict__)
        except SyntaxError as e:
            raise SweepError(f"{kf.path}:{e.lineno}: {e.msg}") from None
        except Exception as e:
            raise SweepError(f"{kf.path}: {_where(e, kf.path)}{type(e).__name__}: "
                             f"{first_line(e)}") from None
        except SystemExit as e:  # (else the sweep would end as the file says, having run nothing)
            raise SweepError(f"{kf.path}: {_where(e, kf.path)}exits at import "
                             f"(sys.exit({e.code!r}))") from None
        namespace = module.__dict__
        _namespaces[key] = namespace
    if kf.name not in namespace:
        raise SweepError(f"{kf.path} defines no {kf.name!r}")
    return namespace[kf.name]


def innermost_line(e: BaseException, path: str) -> int | None:
    """The line of the innermost frame of ``path`` in the exception's traceback, if any."""
    line = None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _where(e: BaseException, path: str) -> str:
    """``line N: `` of the innermost frame of ``path`` in the exception's traceback."""
    line = innermost_line(e, path)
    return f"line {line}: " if line is not None else ""


def first_line(e: BaseException) -> str:
    """The first non-empty line of an exception's message (its type name when it has none, or
    when its ``__str__`` fails: the user's exception class may have a broken one)."""
    try:
        message = str(e)
    except Exception:
        return type(e).__name__
    for line in message.splitlines():
        if line.strip():
            return line.strip()
    return type(e).__name__


def dialect(kernel, kf: KernelFile) -> str:
    """"nki06" for an NKI 0.6 kernel (``import nki``), "nki" for a 2.2x one (``neuronxcc.nki``);
    SweepError naming ``kf`` (the kernel's FILE.py:NAME) for anything else."""
    from neuronxsim.nki.kernel import GridKernel, Kernel
    from neuronxsim.nki06.kernel import Kernel as Kernel06
    from neuronxsim.nki06.kernel import LaunchedKernel

    if isinstance(kernel, (Kernel06, LaunchedKernel)):
        return "nki06"
    if isinstance(kernel, (Kernel, GridKernel)):
        return "nki"
    what = "a function" if inspect.isfunction(kernel) else f"a {type(kernel).__name__}"
    raise SweepError(f"{kf.ref}: {what}, not an NKI kernel (decorate it with @nki.jit)")


def default_arch(kernel_dialect: str) -> str:
    """The generation a kernel runs on when ``--arch`` is not given: trn1 for the 2.2x dialect;
    for NKI 0.6 ``NEURON_PLATFORM_TARGET_OVERRIDE``, else trn2 (as ``neuronxsim profile``)."""
    if kernel_dialect == "nki06":
        from neuronxsim.nki06.kernel import target_arch
        from neuronxsim.nki.errors import NKIError
        try:
            return target_arch()
        except NKIError as e:  # (its reason only: its place would be this file's line)
            raise SweepError(e.reason) from None
    return "trn1"


def python_function(kernel):
    """The Python function of a kernel object of either dialect."""
    for attr in ("kernel", "func"):  # launched / grid kernels hold a kernel, kernels a func
        inner = getattr(kernel, attr, None)
        if inner is not None and not isinstance(inner, (int, tuple)):
            return python_function(inner)
    return kernel


def check_parameters(kernel, kf: KernelFile, arrays: int, grid: dict, args: dict) -> None:
    """The kernel takes ``arrays`` leading arrays and every grid and ``--arg`` name as a
    parameter, and nothing it needs is missing; SweepError naming the first problem."""
    func = python_function(kernel)
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        raise SweepError(f"{kf.ref}: the kernel's parameters cannot be read") from None
    names = [n for n, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    positional = [n for n, p in params.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if arrays > len(positional) and not any(p.kind == p.VAR_POSITIONAL for p in params.values()):
        raise SweepError(f"{kf.ref}: --shapes gives {arrays} arrays but the kernel takes "
                         f"{len(positional)} positional parameters ({', '.join(positional)})")
    takes_array = positional[:arrays]
    varkw = any(p.kind == p.VAR_KEYWORD for p in params.values())
    for option, given in (("--grid", grid), ("--arg", args)):
        for name in given:
            if name not in names and not varkw:
                raise SweepError(f"{option} {name}: {kf.name} has no parameter {name!r} (its "
                                 f"parameters: {', '.join(names)})")
            if name in takes_array:
                raise SweepError(f"{option} {name}: that parameter takes an array from --shapes")
            if params.get(name) is not None and params[name].kind == params[name].POSITIONAL_ONLY:
                raise SweepError(f"{option} {name}: a positional-only parameter cannot be given "
                                 "by name")
    both = set(grid) & set(args)
    if both:
        raise SweepError(f"{', '.join(sorted(both))}: given both by --grid and --arg")
    missing = [n for n in names if n not in takes_array and n not in grid and n not in args
               and params[n].default is inspect.Parameter.empty]
    if missing:
        raise SweepError(f"{kf.name} needs {', '.join(repr(m) for m in missing)}: give an array "
                         "with --shapes, values with --grid or a value with --arg NAME=VALUE")


__all__ = ["KernelFile", "read", "load", "kernel_imports", "noting_modules", "dependencies",
           "refresh_modules", "file_sha256", "dialect", "default_arch",
           "check_parameters", "python_function", "first_line", "DIALECTS"]
