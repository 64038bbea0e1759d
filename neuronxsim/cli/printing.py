"""What a subcommand prints: one JSON document with ``--json``, its text otherwise, nothing with
``--quiet``. Everything else a command says goes to stderr (the progress bar, warnings, errors)."""

from __future__ import annotations

import json
import sys
from typing import Callable

import neuronxsim


def add_options(p) -> None:
    """``--json`` and ``--quiet``, which every subcommand takes."""
    p.add_argument("--json", action="store_true", help="print one JSON document to stdout instead of text")
    p.add_argument("--quiet", action="store_true", help="print nothing to stdout (errors still go to stderr)")


def emit(args, document: dict, text: Callable[[], None]) -> None:
    """Prints ``document`` as JSON (``--json``; it gains ``neuronxsim``: the version, first), or
    calls ``text()`` to print the human form (neither with ``--quiet``)."""
    if args.json:
        print(json.dumps({"neuronxsim": neuronxsim.__version__, **document}, indent=1, default=_plain))
    elif not args.quiet:
        text()


def warn(line: str) -> None:
    """One warning line on stderr (``neuronxsim: warning: <line>``): something the command did
    that is allowed but rarely meant. Printed with ``--json`` and ``--quiet`` too."""
    print(f"neuronxsim: warning: {line}", file=sys.stderr)


def warn_unwritten_outputs(simulated) -> None:
    """A warning for each output the simulation left partly unwritten (the ``unwritten_outputs``
    of a ``pipeline.Report`` or a ``sim.SimResult``)."""
    for unwritten in simulated.unwritten_outputs:
        warn(str(unwritten))


def _plain(value):
    """JSON for the values documents hold besides JSON's own: NumPy scalars, enums, tuples."""
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "name"):
        return value.name
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


__all__ = ["add_options", "emit", "warn", "warn_unwritten_outputs"]
