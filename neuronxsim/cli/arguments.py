"""Command-line arguments, checked before any work starts: the parser reports a bad argument as
one line, and the value types below refuse what no command can use (a negative seed, a size past
what the machine model can address, a number too long to be one)."""

from __future__ import annotations

import argparse
import re
import sys

#: The largest size (tokens, a dimension, a count) an option takes: the simulator addresses
#: elements with 32-bit counts per dimension; anything larger is refused before work starts.
MAX_SIZE = 2**31 - 1

#: The largest seed: NumPy's generators take any non-negative integer, this keeps it a 64-bit one.
MAX_SEED = 2**63 - 1

_DIGITS = 24  # longer input is not a number any option takes


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors (``neuronxsim: error: profile: argument --seed: ...``, exit
    status 2), and ``-1x512`` or ``-5`` taken as values, not as unknown options."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\d")  # argparse's hook for "is this a value?"

    def error(self, message: str):
        from neuronxsim.cli.failures import one_line

        command = self.prog.split(" ", 1)[1] + ": " if " " in self.prog else ""
        sys.stderr.write(f"neuronxsim: error: {command}{one_line(message)} (see {self.prog} --help)\n")
        sys.exit(2)


def _integer(text: str, what: str) -> int:
    text = text.strip()
    if len(text) > _DIGITS or not re.fullmatch(r"[+-]?\d+", text):
        shown = text if len(text) <= _DIGITS else text[:_DIGITS] + "..."
        raise argparse.ArgumentTypeError(f"{shown!r} is not {what}")
    return int(text)


def size(text: str) -> int:
    """A positive integer up to :data:`MAX_SIZE`."""
    n = _integer(text, "a positive integer")
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is not a positive integer")
    if n > MAX_SIZE:
        raise argparse.ArgumentTypeError(f"{n} is too large (at most {MAX_SIZE})")
    return n


def count(text: str) -> int:
    """A non-negative integer up to :data:`MAX_SIZE`."""
    n = _integer(text, "a non-negative integer")
    if not 0 <= n <= MAX_SIZE:
        raise argparse.ArgumentTypeError(f"{n} is not between 0 and {MAX_SIZE}")
    return n


def seed(text: str) -> int:
    """A seed: an integer from 0 to :data:`MAX_SEED`."""
    n = _integer(text, "a seed (a non-negative integer)")
    if not 0 <= n <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{n} is not a seed: expected an integer from 0 to {MAX_SEED}")
    return n


def folder(text: str) -> str:
    """An output folder's name (not empty)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name; name a folder")
    return text


def file(text: str) -> str:
    """An input file's name (not empty: an empty --inputs must not read as no option at all)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name; name a file")
    return text


size.__name__ = "size"  # argparse names the type in "invalid <name> value" messages
count.__name__ = "count"
seed.__name__ = "seed"
folder.__name__ = "folder"
file.__name__ = "file"

__all__ = ["ArgumentParser", "MAX_SIZE", "MAX_SEED", "size", "count", "seed", "folder", "file"]
