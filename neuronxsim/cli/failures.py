"""How the command line reports a failure: one line on stderr that says what and where.

* :func:`one_line` makes any message one printable line of at most :data:`MAX_LINE` characters.
* :func:`user_code` wraps the places where the user's own code runs (a program file, a kernel
  file, a traced kernel): an exception raised there becomes :class:`UserCodeError` naming the
  user's file, line and message, without neuronxsim's frames.
* :func:`describe` turns any exception the command line catches into its line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import traceback
from typing import Optional

import neuronxsim
from neuronxsim.cli.signals import Terminated
from neuronxsim.errors import NeuronxsimError

#: The longest error line printed; a longer message is cut, saying how much was left out.
MAX_LINE = 400

_PACKAGE_DIR = os.path.dirname(os.path.abspath(neuronxsim.__file__)) + os.sep
_LIBRARY_DIRS = tuple(sorted({os.path.abspath(p) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                              if (p := sysconfig.get_paths().get(key))}))


class UserCodeError(NeuronxsimError):
    """An exception in the user's own code (a program or kernel file), located in that code."""


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """``text`` as one line: line breaks and their indentation become " | ", other control
    characters are escaped, and anything past ``limit`` characters is cut with a note."""
    parts = [p.strip() for p in str(text).splitlines()]
    line = " | ".join(p for p in parts if p)
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)
    if len(line) > limit:
        cut = limit - 60
        line = f"{line[:cut]}... ({len(line) - cut} more characters; --debug shows all)"
    return line


def _is_user_file(filename: str) -> bool:
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    return not path.startswith(_PACKAGE_DIR) and not path.startswith(_LIBRARY_DIRS)


def user_location(tb) -> Optional[str]:
    """``file:line`` of the innermost frame of ``tb`` in the user's code (not neuronxsim's, not
    the standard library's or an installed package's), or None."""
    where = None
    for frame in traceback.extract_tb(tb):
        if _is_user_file(frame.filename):
            where = f"{frame.filename}:{frame.lineno}"
    return where


@contextlib.contextmanager
def user_code(what: str):
    """Runs the user's code (``what`` says which, e.g. the program file's path): an exception
    it raises becomes :class:`UserCodeError` at the user's innermost line; ``sys.exit`` is an
    error too (the command has not done its work). neuronxsim's own errors keep their message,
    prefixed with the user's line when they do not already name a place in the user's code."""
    try:
        yield
    except SyntaxError as e:
        if e.filename and not _is_user_file(e.filename):
            raise
        where = f"{e.filename}:{e.lineno}" if e.filename and e.lineno else what
        raise UserCodeError(f"{where}: SyntaxError: {e.msg}") from e
    except SystemExit as e:
        where = user_location(e.__traceback__) or what
        raise UserCodeError(f"{where}: the code called sys.exit({e.code!r}) while neuronxsim was running "
                            f"it ({what})") from e
    except NeuronxsimError as e:
        where = user_location(e.__traceback__)
        if where is None or isinstance(e, UserCodeError) or str(e).startswith(where.rsplit(":", 1)[0]):
            raise
        raise UserCodeError(f"{where}: {e}") from e
    except (MemoryError, RecursionError):
        raise
    except (KeyboardInterrupt, GeneratorExit, Terminated):
        raise  # the process is being stopped
    except BaseException as e:  # (not only Exception: a BaseException of the user's own, pytest.skip's)
        where = user_location(e.__traceback__)
        if where is None:  # raised by neuronxsim's code, not the user's: not theirs to fix
            raise
        raise UserCodeError(f"{where}: {type(e).__name__}: {e}") from e


def describe(e: BaseException) -> str:
    """The text after ``neuronxsim: error:`` for an exception that ended a command."""
    if isinstance(e, MemoryError) and not isinstance(e, NeuronxsimError):
        where = "; ".join(getattr(e, "__notes__", ()))
        # NumPy's message spells out a structured dtype at length: the size and shape say enough,
        # and the hint must fit the line.
        detail = str(e).split(" and data type ", 1)[0]
        return ("out of memory" + (f" {where}" if where else "") + (f" ({detail})" if detail else "") +
                "; try smaller sizes, or --mode timing where the command has it")
    if isinstance(e, RecursionError):
        return f"the input is nested too deeply to process ({e})"
    if isinstance(e, OSError) and not isinstance(e, NeuronxsimError) and e.strerror:
        name = e.filename if e.filename is not None else ""
        return f"{name}: {e.strerror}" if name else e.strerror
    if isinstance(e, (NeuronxsimError, OSError)):
        return str(e)
    return (f"internal error: {type(e).__name__}: {e} (this is a bug in neuronxsim; --debug shows where)")


__all__ = ["MAX_LINE", "UserCodeError", "one_line", "user_location", "user_code", "describe"]
