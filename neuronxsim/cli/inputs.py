"""The command line's input files, checked before any work starts: a regular file (a directory,
a named pipe, a device or a socket is refused by name, so nothing ever blocks reading one) of at
most :data:`MAX_FILE_BYTES`, read without following a swap of the file for a pipe in between."""

from __future__ import annotations

import os

from neuronxsim.bir import not_a_regular_file as _kind_problem
from neuronxsim.errors import NeuronxsimError

#: The largest input file read (a BIR module, a program, a kernel file, a KLR file).
MAX_FILE_BYTES = 1 << 30


class InputError(NeuronxsimError, ValueError):
    """An input file that cannot be used: missing, not a regular file, too large, not what the
    command reads. The message names the file."""


def check_file(path, what: str = "file", limit: int = MAX_FILE_BYTES) -> str:
    """``path`` as a string if it names a regular file of at most ``limit`` bytes, else
    :class:`InputError` saying what it is instead (``what`` names the role: "kernel file")."""
    path = os.fspath(path)
    if not path:
        raise InputError(f"the {what} is an empty name")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot use it as the {what} ({e.strerror})") from None
    problem = _kind_problem(st.st_mode)
    if problem:
        raise InputError(f"{path}: {problem}; the {what} must be a regular file")
    if st.st_size > limit:
        raise InputError(f"{path}: the file is larger than {limit >> 20} MiB")
    return path


def read_bytes(path, what: str = "file", limit: int = MAX_FILE_BYTES) -> bytes:
    """The contents of the regular file ``path`` (see :func:`check_file`). Opened without
    blocking and checked again once open, so a file swapped for a pipe is refused, not waited on."""
    path = check_file(path, what, limit)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise InputError(f"{path}: cannot open the {what} ({e.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        problem = _kind_problem(st.st_mode)
        if problem:
            raise InputError(f"{path}: {problem}; the {what} must be a regular file")
        if st.st_size > limit:
            raise InputError(f"{path}: the file is larger than {limit >> 20} MiB")
        try:
            return f.read(limit + 1)
        except OSError as e:
            raise InputError(f"{path}: cannot read the {what} ({e.strerror})") from None


def read_text(path, what: str = "file", limit: int = MAX_FILE_BYTES) -> str:
    """The file's contents as UTF-8 text; :class:`InputError` naming the first bad byte."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{os.fspath(path)}: the {what} is not UTF-8 text (byte {e.start} is "
                         f"0x{data[e.start]:02x})") from None


def check_output_file(path, option: str) -> str:
    """``path`` if it names no file yet or a regular file, which writing it replaces, else
    :class:`InputError` saying what it is instead (a FIFO or a device is never replaced).
    ``option`` names the argument that gave it ("-o")."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as e:
        raise InputError(f"{path}: cannot write there ({e.strerror})") from None
    problem = _kind_problem(mode)
    if problem:
        raise InputError(f"{path}: {problem}; {option} names the file to write, a regular file or a new one")
    return path


def check_python_source(path, what: str) -> str:
    """``path`` if it names a regular file that can be Python source (no NUL bytes)."""
    if b"\0" in read_bytes(path, what):
        raise InputError(f"{os.fspath(path)}: the {what} is not Python source (it holds NUL bytes)")
    return os.fspath(path)


__all__ = ["InputError", "MAX_FILE_BYTES", "check_file", "check_output_file", "read_bytes", "read_text",
           "check_python_source"]
