"""results.jsonl: one JSON object per line, one line per configuration, appended as results
arrive.

Each line is written with one ``write`` on a file opened for appending and flushed at once, so
an interrupted sweep (Ctrl-C, a killed process) leaves whole lines, except that a crash in the
middle of a write can leave a last line without its newline. Reading for ``--resume`` keeps a
last line without a newline that is a whole row (a cut-short write of a row never is: every
proper prefix of a JSON object's text lacks its closing brace; the file may also have been
written or edited by something else) and adds the newline before appending; a last line that
is not a row is a torn write: it is dropped (its configuration runs again) and cut from the
file. A malformed line anywhere else means the file is not a sweep's results and is refused.

One sweep writes a results file at a time: :class:`ResultsFile` holds an exclusive lock on it
while it is open, and refuses a file that another sweep holds, or that changed after the rows
to resume were read (a sweep that ended in between), since cutting it back would lose rows.
"""

from __future__ import annotations

import fcntl
import json
import os

from neuronxsim.sweep.space import SweepError


def read_rows(path: str) -> tuple[list[dict], int]:
    """(the rows of the whole lines, the byte length they take); a torn last line is left out,
    a whole row as last line without its newline is not (the length then ends without one)."""
    rows, good, _ = read_rows_sized(path)
    return rows, good


def read_rows_sized(path: str) -> tuple[list[dict], int, int]:
    """:func:`read_rows` and the size of the file as read (for :class:`ResultsFile`'s check that
    nothing wrote it since)."""
    with open(path, "rb") as f:
        data = f.read()
    rows, good = [], 0
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        last = i == len(lines) - 1
        if last and not line:
            break
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("key"), str) or "status" not in row:
                raise ValueError("not a sweep row")
        except (ValueError, RecursionError):  # (RecursionError: nested too deeply to be a row)
            if last:  # no newline after it: a write cut short
                break
            raise SweepError(f"{path}:{i + 1}: not a sweep result line (results.jsonl holds one "
                             "JSON object per configuration); use another --output") from None
        rows.append(row)
        good += len(line) + (not last)  # (a whole row without its newline: ResultsFile adds it)
    return rows, good, len(data)


class ResultsFile:
    """Appends rows to ``path`` (see the module docstring). ``keep`` bytes of an existing file
    are kept (what :func:`read_rows` found whole; a newline is added if they end without one);
    the rest is cut off. ``seen``: the file's size when its rows were read (0: it did not
    exist); a file of another size is refused, as is one another sweep has open."""

    def __init__(self, path: str, keep: int = 0, seen: int | None = None):
        self.path = path
        # (read too: to see whether the kept bytes end with their newline)
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(path, flags, 0o666)
        try:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise SweepError(f"{path}: another sweep is writing it; wait for it to end or "
                                 "choose another --output") from None
            size = os.fstat(self._fd).st_size
            if seen is not None and size != seen:
                raise SweepError(f"{path} changed after its rows were read (another sweep wrote "
                                 "it): run the command again") from None
            if keep or size:
                os.ftruncate(self._fd, keep)
            if keep and os.pread(self._fd, 1, keep - 1) != b"\n":
                self._write(b"\n")  # a whole last row written without its newline
        except BaseException:
            os.close(self._fd)
            self._fd = -1
            raise

    def append(self, row: dict) -> None:
        self._write((json.dumps(row, separators=(",", ":"), allow_nan=False) + "\n").encode())

    def _write(self, data: bytes) -> None:
        written = os.write(self._fd, data)
        while written < len(data):  # a regular file takes it whole; a short write is continued
            written += os.write(self._fd, data[written:])

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.fsync(self._fd)
            finally:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


__all__ = ["read_rows", "read_rows_sized", "ResultsFile"]
