"""Errors of the NKI front end, located at the kernel's own source line.

Every check the tracer makes (shapes, dtypes, partition counts, matmul operand limits, index
ranges, writes to inputs, reads of tiles nothing wrote, SBUF/PSUM capacity) raises
:class:`NKIError` whose message starts with ``path/to/kernel.py:LINE`` and quotes that line, so a
kernel author sees their own code and what is wrong with it. When the error leaves
``nki.trace`` / ``simulate_kernel`` / ``profile``, the traceback entries inside neuronxsim are
dropped: the last frame shown is the kernel's.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import types

from neuronxsim.errors import NeuronxsimError
from neuronxsim.starfish.lib import _core

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
#: Folders whose modules are the front end's own (their frames are not kernel code): this one and
#: the other dialects' (see add_internal_package).
_INTERNAL_DIRS = {_PACKAGE_DIR}


#: How the verifier and the simulator name an instruction of a module at the start of a refusal:
#: "functions[F].blocks[B].instructions[I]" (groups F, B, I).
INSTRUCTION_WHERE = re.compile(r"functions\[(\d+)\]\.blocks\[(\d+)\]\.instructions\[(\d+)\]")


class NKIError(NeuronxsimError, ValueError):
    """A kernel does something NKI or the NeuronCore does not allow.

    ``location`` is ``"path:LINE"`` of the kernel line responsible (or None), ``reason`` the bare
    description of what is wrong.
    """

    def __init__(self, reason: str, location: "SourceLocation | None" = None):
        if location is None:  # raised while the kernel (or its caller) runs: that is the place
            location = caller_location()
        self.reason = reason
        self.location = location
        if location is None:
            text = reason
        else:
            text = f"{location.path}:{location.line}: {reason}"
            code = linecache.getline(location.path, location.line).strip()
            if code:
                text += f"\n    {code}"
        super().__init__(text)


class NKIAllocationError(NKIError):
    """The tiles live at one moment need more SBUF or PSUM than the NeuronCore has."""


class SourceLocation:
    """Where in the kernel's source an instruction comes from."""

    __slots__ = ("path", "line", "short")

    def __init__(self, path: str, line: int):
        self.path = path
        self.line = line
        self.short = f"{os.path.basename(path)}:{line}"  # the form BIR ``source`` fields hold

    def __repr__(self) -> str:
        return f"{self.path}:{self.line}"


def is_internal_file(filename: str) -> bool:
    """True for the front end's own modules. Kernels shipped in subpackages (``_private_kernels``)
    are kernel code: their lines are the ones to report."""
    return os.path.dirname(filename) in _INTERNAL_DIRS


def add_internal_package(init_file: str):
    """Marks the modules beside ``init_file`` (another dialect's package, e.g. neuronxsim.nki06)
    as the front end's own, so errors point past them at the kernel's line. Call it when that
    package is imported, before any of its frames is classified."""
    _INTERNAL_DIRS.add(os.path.dirname(os.path.abspath(init_file)))
    _internal_files.clear()
    _core.nki.forget_call_sites()


_internal_files: dict[str, bool] = {}
_locations: dict[tuple, SourceLocation] = {}  # one object per kernel line


def _walk_to_kernel(skip: int = 0) -> SourceLocation | None:
    """caller_location's answer for a call site it has not seen: the innermost frame outside
    this package (``skip`` plays no part here), remembered by its code object and bytecode
    offset. (Reading a frame's f_lineno walks the code's line table, in Python 3.11 from its
    start on every read; the offset of the frame's current instruction costs nothing and names
    the line as well.)"""
    frame = sys._getframe(1)  # (caller_location is C: this is the function that called it)
    internal = _internal_files
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        flag = internal.get(filename)
        if flag is None:
            flag = internal[filename] = is_internal_file(filename)
        if not flag:
            line_key = (filename, frame.f_lineno)
            loc = _locations.get(line_key)
            if loc is None:
                loc = _locations[line_key] = SourceLocation(filename, frame.f_lineno)
            _core.nki.remember_call_site(code, frame.f_lasti, loc)
            return loc
        frame = frame.f_back
    return None


_core.nki.set_call_site_walk(_walk_to_kernel)

#: ``caller_location(skip=0)``: the kernel line that called into nki, the innermost frame outside
#: this package; ``skip``: how many more frames of this package lie between the function calling
#: it and the kernel. Usually the kernel called the nki function that calls this: that frame's
#: call site, if seen before, is answered from a table in C (``cpp/python/trace_call_site.cpp``),
#: anything else by :func:`_walk_to_kernel`.
caller_location = _core.nki.caller_location


def without_internal_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback with the entries of neuronxsim.nki's own frames removed."""
    kept = []
    while tb is not None:
        if not is_internal_file(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    result = None
    for entry in reversed(kept):
        result = types.TracebackType(result, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return result


__all__ = ["NKIError", "NKIAllocationError", "SourceLocation", "add_internal_package"]
