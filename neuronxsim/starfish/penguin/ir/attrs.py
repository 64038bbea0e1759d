"""Typed macro attrs: their declaration, checking, and their string form in BIR.

A bespoke macro family declares its named attrs as ``AttrSpec``s; the macro coerces what it is
given when built or loaded (an enum member's name becomes the member, an int becomes a float where
a float is expected) and checks strictly when validated, so the codegen reads exactly the declared
types. BIR stores a kernel's attrs as ``(str, str)`` pairs; ``attr_to_str`` is the one place a
value becomes that string.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import Optional, Tuple

from neuronxsim.errors import CodegenError

#: Marks an attr without a default: a macro must be given it.
REQUIRED = object()


@dataclasses.dataclass(frozen=True)
class AttrSpec:
    """A named attr: ``type`` is bool, int, float or an IntEnum; ``choices`` narrows an enum."""

    name: str
    type: type
    default: object = REQUIRED
    minimum: Optional[int] = None
    choices: Optional[Tuple[enum.Enum, ...]] = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def expected(self) -> str:
        """The expected form, as error messages say it."""
        if self.type is bool:
            return "a bool"
        if self.type is int:
            return "an int" + (f" >= {self.minimum}" if self.minimum is not None else "")
        if self.type is float:
            return "a finite number"
        members = self.choices or tuple(self.type)
        article = "an" if self.type.__name__[0] in "AEIOU" else "a"
        return f"{article} {self.type.__name__}: one of {', '.join(m.name for m in members)}"

    def is_valid(self, value) -> bool:
        """Whether ``value`` is exactly of the declared form (no coercion)."""
        if self.type is bool:
            return type(value) is bool
        if self.type is int:
            return (isinstance(value, int) and not isinstance(value, bool)
                    and (self.minimum is None or value >= self.minimum))
        if self.type is float:
            return type(value) is float and math.isfinite(value)
        return isinstance(value, self.type) and (self.choices is None or value in self.choices)

    def coerce(self, value, label: str):
        """``value`` in the declared form (enum names and ints for floats are converted)."""
        coerced = value
        if issubclass(self.type, enum.Enum) and isinstance(value, str) and value in self.type.__members__:
            coerced = self.type[value]
        elif self.type is float and isinstance(value, int) and not isinstance(value, bool):
            coerced = float(value)
        if not self.is_valid(coerced):
            raise CodegenError(f"{label}: attr '{self.name}' is {value!r}; expected {self.expected()}")
        return coerced

    def to_json(self, value):
        return value.name if isinstance(value, enum.Enum) else value


def _plain(value):
    """``value`` as plain JSON data: enums become their integer values; floats must be finite."""
    if isinstance(value, enum.Enum):
        return int(value.value)
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not finite")
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    raise ValueError(f"{value!r} ({type(value).__name__}) has no BIR attr string form")


def attr_to_str(value) -> str:
    """The BIR string of an attr value: strings unchanged; ``true``/``false``; an enum's integer
    value; decimal ints; the shortest round-tripping repr of floats; lists as JSON text."""
    value = _plain(value)
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def normalise_kernel_attrs(kernel_attrs, label: str) -> Tuple[Tuple[str, str], ...]:
    """A generic kernel's attr bag as BIR's ``(str, str)`` pairs, in the order given.

    Accepts a dict or a sequence of ``(key, value)`` pairs; values go through ``attr_to_str``.
    Keys must be non-empty strings and unique.
    """
    items = kernel_attrs.items() if isinstance(kernel_attrs, dict) else kernel_attrs
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise CodegenError(f"{label}: attr 'kernel_attrs' is {kernel_attrs!r}; expected a dict or (key, value) pairs")
    pairs, seen = [], set()
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise CodegenError(f"{label}: attr 'kernel_attrs' entry {item!r}; expected a (key, value) pair")
        key, value = item
        if not isinstance(key, str) or not key:
            raise CodegenError(f"{label}: attr 'kernel_attrs' key {key!r}; expected a non-empty str")
        if key in seen:
            raise CodegenError(f"{label}: attr 'kernel_attrs' has key '{key}' twice; expected unique keys")
        seen.add(key)
        try:
            pairs.append((key, attr_to_str(value)))
        except ValueError as e:
            raise CodegenError(
                f"{label}: attr 'kernel_attrs[{key}]': {e}; expected a str, bool, int, finite float, "
                "enum or a list of those") from None
    return tuple(pairs)


__all__ = ["AttrSpec", "REQUIRED", "attr_to_str", "normalise_kernel_attrs"]
