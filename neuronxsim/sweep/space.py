"""The configurations a sweep runs: the cross product of the kernel's meta-parameter values
(``--grid NAME=v1,v2,...``), the shape sets (``--shapes``) and the generations (``--arch``).

Values are read as Python literals (``2``, ``0.5``, ``True``, ``"mnk"``, ``(1, 2)``); any other
text is a string, as ``--arg`` reads it. Every configuration has a key, a JSON text of everything
that sets its result, by which a resumed sweep recognises the rows it already has.
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import math
import re
from dataclasses import dataclass

from neuronxsim.errors import NeuronxsimError


class SweepError(NeuronxsimError, ValueError):
    """A sweep that cannot start: a bad grid, shape, kernel, reference or scheduler."""


#: The largest number of configurations one sweep takes (a guard against a mistyped grid).
MAX_CONFIGURATIONS = 10_000_000


def split_values(text: str) -> list[str]:
    """``text`` cut at its top-level commas (commas inside brackets or quotes stay)."""
    parts, depth, quote, start, escaped = [], 0, None, 0, False
    for i, c in enumerate(text):
        if quote:  # (a backslash escapes the next character, another backslash too: "a\\")
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def literal(text: str):
    """A Python literal's value, else the text itself (a string)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


#: Texts that read as a string but were surely meant as Python's True, False or None (which
#: ``literal`` reads only capitalised): the string "false" is true, so a kernel's ``if FLAG:``
#: would take the branch meant to be off.
_NEAR_LITERALS = {"true": "True", "false": "False", "none": "None", "null": "None"}


def value(text: str, what: str):
    """``literal(text)``, refusing a near-literal (``false``, ``TRUE``, ``null``) with one line
    naming ``what`` (``--grid NAME``, ``--arg NAME``)."""
    text = text.strip()
    read = literal(text)
    meant = _NEAR_LITERALS.get(text.lower()) if isinstance(read, str) else None
    if meant is not None:
        raise SweepError(f"{what}={text}: write {meant} for Python's {meant}, or quote it "
                         f"({text!r}) for the text")
    return read


def parse_grid(specs: list[str]) -> dict[str, list]:
    """``["A=1,2", "B=x,y"]`` -> ``{"A": [1, 2], "B": ["x", "y"]}``, in the order given."""
    grid: dict[str, list] = {}
    for spec in specs:
        name, eq, text = spec.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier():
            raise SweepError(f"--grid {spec!r}: expected NAME=v1,v2,... (a parameter name, then "
                             "its values separated by commas)")
        if name in grid:
            raise SweepError(f"--grid {name}: given twice (list all its values in one --grid)")
        items = split_values(text) if text.strip() else []
        if not items or any(not item for item in items):
            raise SweepError(f"--grid {spec!r}: an empty value; expected NAME=v1,v2,...")
        grid[name] = [value(item, f"--grid {name}") for item in items]
    check_grid(grid)
    return grid


def check_grid(grid: dict) -> None:
    """Every parameter has values, none twice, each one JSON can carry."""
    if not grid:
        raise SweepError("an empty grid: give at least one --grid NAME=v1,v2,...")
    for name, values in grid.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise SweepError(f"--grid {name!r}: not a parameter name")
        if not isinstance(values, (list, tuple)):
            raise SweepError(f"--grid {name}: a list of values, not a {type(values).__name__}")
        if not values:
            raise SweepError(f"--grid {name}: no values")
        seen = []
        for value in values:
            if any(_same(value, v) for v in seen):
                raise SweepError(f"--grid {name}: the value {value!r} is listed twice")
            _check_json(value, f"--grid {name}={value!r}")
            seen.append(value)


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _check_json(value, what: str) -> None:
    """Values travel to the workers and into results.jsonl as JSON: numbers, strings, booleans,
    None and (nested) tuples or lists of them. JSON has no infinity or NaN (``1e999`` reads as
    one): such a value would be recorded as null, two of them as the same configuration."""
    if isinstance(value, (tuple, list)):
        for v in value:
            _check_json(v, what)
    elif isinstance(value, float) and not math.isfinite(value):
        raise SweepError(f"{what}: {value!r} is not a finite number (results.jsonl, JSON, cannot "
                         "record it)")
    elif value is not None and not isinstance(value, (bool, int, float, str)):
        raise SweepError(f"{what}: {type(value).__name__} values are not supported (numbers, "
                         "strings, booleans, None and tuples of them are)")


def parse_args(specs: list[str]) -> dict:
    """``--arg NAME=VALUE`` values: one fixed value per name."""
    args = {}
    for spec in specs:
        name, eq, text = spec.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier():
            raise SweepError(f"--arg {spec!r}: expected NAME=VALUE, e.g. pool_size=2")
        if name in args:
            raise SweepError(f"--arg {name}: given twice")
        read = value(text, f"--arg {name}")
        _check_json(read, f"--arg {spec}")
        args[name] = read
    return args


@dataclass(frozen=True)
class ShapeSpec:
    """One array argument: its shape and the name of its dtype (an ``nki.language`` dtype)."""
    shape: tuple
    dtype: str

    @property
    def text(self) -> str:
        return "x".join(map(str, self.shape)) + ":" + self.dtype


@functools.cache
def _dtypes_by_name() -> dict:
    from neuronxsim.nki import dtypes

    return {dtypes.name(d): d for d in dtypes.SUPPORTED}


def dtypes_by_name() -> dict:
    """The dtypes an array argument may have (``neuronxsim.nki``'s), by name (a new dict each
    call; the names are worked out once per process)."""
    return dict(_dtypes_by_name())


def parse_shape(spec: str) -> ShapeSpec:
    """``128x512`` (float32) or ``128x512:bfloat16``."""
    shape_text, _, dtype_name = spec.partition(":")
    dims = shape_text.lower().split("x")
    if not all(re.fullmatch(r"\d{1,10}", d.strip()) for d in dims):
        raise SweepError(f"--shapes {spec!r}: expected dims joined by 'x', e.g. 128x512 or "
                         "128x512:bfloat16")
    shape = tuple(int(d) for d in dims)
    if any(d < 1 for d in shape):
        raise SweepError(f"--shapes {spec!r}: every dim must be a positive integer")
    names = dtypes_by_name()
    dtype_name = dtype_name.strip() or "float32"
    if dtype_name not in names:
        raise SweepError(f"--shapes {spec!r}: unknown dtype {dtype_name!r}; expected one of "
                         f"{', '.join(names)}")
    return ShapeSpec(shape, dtype_name)


def parse_archs(text: str | None) -> list:
    """``trn1,trn2`` -> ``["trn1", "trn2"]``; None (the dialect's default) when not given."""
    if text is None:
        return [None]
    return check_archs(split_values(text), f"--arch {text!r}")


def check_archs(archs: list, what: str = "--arch") -> list:
    """``archs``, each a generation, none twice (SweepError naming ``what`` otherwise)."""
    from neuronxsim.pipeline import ARCHS

    if not isinstance(archs, (list, tuple)):  # (a string would be swept letter by letter)
        raise SweepError(f"{what}: a list of generations (['trn2']), not a {type(archs).__name__}")
    for a in archs:
        if not isinstance(a, str) or a not in ARCHS:
            raise SweepError(f"{what}: unknown generation {a!r}; expected "
                             f"{', '.join(sorted(ARCHS))}"
                             + (", separated by commas" if what.startswith("--") else ""))
    if len(set(archs)) != len(archs):
        raise SweepError(f"{what}: a generation is listed twice")
    return list(archs)


def check_args(args: dict) -> None:
    """Fixed values (``--arg``): each named by a parameter name, each one JSON can carry."""
    if not isinstance(args, dict):
        raise SweepError(f"--arg: a dict of values by parameter name, not a {type(args).__name__}")
    for name, v in args.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise SweepError(f"--arg {name!r}: not a parameter name")
        _check_json(v, f"--arg {name}={v!r}")


@dataclass(frozen=True)
class Configuration:
    """One point of the sweep: the meta-parameter values, the arrays' shapes and the
    generation (None: the kernel dialect's default, resolved by the worker)."""
    params: tuple  # ((name, value), ...) in grid order
    shapes: tuple  # ShapeSpec per array argument
    arch: str | None

    @property
    def param_dict(self) -> dict:
        return dict(self.params)


def configurations(grid: dict, shape_sets: list, archs: list) -> list[Configuration]:
    """Every configuration, shape sets outermost, then generations, then the grid (its first
    parameter outermost, its values in the order given)."""
    count = len(shape_sets) * len(archs)
    for values in grid.values():
        count *= len(values)
    if count > MAX_CONFIGURATIONS:
        raise SweepError(f"the grid has {count:,} configurations; a sweep takes at most "
                         f"{MAX_CONFIGURATIONS:,}")
    names = list(grid)
    out = []
    for shapes in shape_sets:
        for arch in archs:
            for values in itertools.product(*grid.values()):
                out.append(Configuration(tuple(zip(names, values)), tuple(shapes), arch))
    return out


def typed(value):
    """``value`` with its tuples told apart from its lists, for a key's JSON (which writes both
    as arrays: ``(1, 2)`` and ``[1, 2]``, which a kernel may treat differently, would otherwise
    share a trace-cache entry and a resumed row). A tuple becomes ``{"tuple": [...]}``; lists,
    dicts and scalars keep their JSON, so keys without tuples are unchanged."""
    if isinstance(value, tuple):
        return {"tuple": [typed(v) for v in value]}
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    return value


def row_key(kernel: str, params: dict, args: dict, shapes, arch: str | None, mode: str,
            seed: int | None) -> str:
    """The text that identifies a configuration's row (``key`` in results.jsonl)."""
    return json.dumps({"kernel": kernel, "params": params, "args": args,
                       "shapes": [s.text if isinstance(s, ShapeSpec) else s for s in shapes],
                       "arch": arch, "mode": mode, "seed": seed},
                      sort_keys=True, separators=(",", ":"))


__all__ = ["SweepError", "parse_grid", "check_grid", "dtypes_by_name", "parse_args", "parse_shape", "parse_archs", "ShapeSpec",
           "Configuration", "configurations", "row_key", "literal", "value", "split_values", "typed", "check_archs",
           "check_args"]
