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
            problem = row_problem(row)
        except (ValueError, RecursionError):  # (RecursionError: nested too deeply to be a row)
            problem = ""
        if problem is not None:
            if last:  # no newline after it: a write cut short
                break
            what = problem or "results.jsonl holds one JSON object per configuration"
            raise SweepError(f"{path}:{i + 1}: not a sweep result line ({what}); use another "
                             "--output")
        rows.append(row)
        good += len(line) + (not last)  # (a whole row without its newline: ResultsFile adds it)
    return rows, good, len(data)


#: A row's status: its configuration ran, its kernel or the simulator refused it, or (full mode)
#: its outputs are outside the tolerance of the reference.
STATUSES = ("ok", "failed", "mismatch")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def row_problem(row) -> str | None:
    """What makes ``row`` (a line's JSON value) not a sweep's row, None when nothing does: the
    fields every row has and those of a configuration that ran, which the summary and
    ``--resume`` read (see :func:`neuronxsim.sweep.driver.row_of`)."""
    if not isinstance(row, dict):
        return "not a JSON object"
    if not isinstance(row.get("key"), str):
        return "its key is not a text"
    if row.get("status") not in STATUSES:
        return f"its status is not one of {', '.join(STATUSES)}"
    if not isinstance(row.get("params"), dict):
        return "its params are not an object"
    if not isinstance(row.get("shapes"), list) or not all(isinstance(s, str) for s in row["shapes"]):
        return "its shapes are not a list of texts"
    for name in ("arch", "mode", "kernel"):
        if not isinstance(row.get(name), str):
            return f"its {name} is not a text"
    if row["status"] == "ok":
        if not (row.get("total_ns") is None or _number(row["total_ns"])):
            return "its total_ns is not a number"
        if not _number(row.get("pe_mfu")):
            return "its pe_mfu is not a number"
        busy = row.get("engine_busy")
        if not isinstance(busy, dict) or not all(_number(v) for v in busy.values()):
            return "its engine_busy is not an object of numbers"
        if not isinstance(row.get("instructions"), int) or isinstance(row["instructions"], bool):
            return "its instructions are not a count"
    elif not isinstance(row.get("error"), str):
        return "its error is not a text"
    return None


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
        try:
            written = os.write(self._fd, data)
            while written < len(data):  # a regular file takes it whole; a short write is continued
                written += os.write(self._fd, data[written:])
        except OSError as e:  # (a full disk: said with the file's name)
            raise SweepError(f"{self.path}: cannot write: {e.strerror or e}") from None

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.fsync(self._fd)
            except OSError as e:
                raise SweepError(f"{self.path}: cannot write: {e.strerror or e}") from None
            finally:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.close()
        except SweepError:
            if exc[0] is None:
                raise  # (else the error that ended the block is the one to tell)
        return False


__all__ = ["read_rows", "read_rows_sized", "row_problem", "ResultsFile", "STATUSES"]
