"""Operand rosters: the operands a macro family takes, in order, with symbolic shapes.

A family states its operands as ``Operand(name, dims)`` where each dim is an int, a symbol
(``"H"``) or a symbol plus a constant (``("H", 4)`` for ``H+4``). ``check_roster`` binds each
symbol at its first use and requires every later use to agree; a disagreement names the macro,
the operand, the expected form and where each symbol got its value.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Sequence, Tuple, Union

from neuronxsim.errors import CodegenError

Dim = Union[int, str, Tuple[str, int]]


@dataclasses.dataclass(frozen=True)
class Operand:
    """One operand of a family: its role name and symbolic access shape."""

    name: str
    dims: Tuple[Dim, ...]

    def form(self) -> str:
        return f"{self.name} [{', '.join(_dim_text(d) for d in self.dims)}]"


def _dim_text(d: Dim) -> str:
    if isinstance(d, tuple):
        return f"{d[0]}{d[1]:+d}"
    return str(d)


def roster_text(roster: Sequence[Operand]) -> str:
    return "[" + ", ".join(op.form() for op in roster) + "]"


def check_roster(label: str, side: str, accesses, roster: Sequence[Operand], symbols: Dict[str, Tuple[int, str]]):
    """Checks ``accesses`` (a macro's ``srcs`` or ``dsts``) against ``roster``.

    ``symbols`` maps a symbol to ``(value, where it came from)``; it is extended in place, so
    checking ``srcs`` then ``dsts`` with one dict ties them together.
    """
    if len(accesses) != len(roster):
        raise CodegenError(
            f"{label} {side}: {len(accesses)} operands, expected {len(roster)}: {roster_text(roster)}")
    for i, (access, op) in enumerate(zip(accesses, roster)):
        where = f"{label} {side}[{i}] '{op.name}'"
        shape = tuple(access.access_shape)
        if len(shape) != len(op.dims):
            raise CodegenError(f"{where}: access shape {list(shape)} has rank {len(shape)}; expected {op.form()}")
        for dim, actual in zip(op.dims, shape):
            symbol, offset = (dim if isinstance(dim, tuple) else (dim, 0))
            if isinstance(symbol, int):
                expected = symbol
            elif symbol in symbols:
                expected = symbols[symbol][0] + offset
            else:
                if actual - offset < 1:
                    raise CodegenError(f"{where}: access shape {list(shape)} leaves {symbol} = "
                                       f"{actual - offset}; expected {op.form()} with {symbol} >= 1")
                symbols[symbol] = (actual - offset, f"{side}[{i}] '{op.name}'")
                continue
            if actual != expected:
                bound = ", ".join(f"{s} = {v} from {origin}" for s, (v, origin) in symbols.items()
                                  if s in {d[0] if isinstance(d, tuple) else d for d in op.dims})
                raise CodegenError(f"{where}: access shape {list(shape)} does not match {op.form()} ({bound})")


__all__ = ["Operand", "check_roster", "roster_text"]
