"""A bespoke family's attrs and operand roster, read from its IT54 leaf's signature.

The leaf declares its interface once, in C++ beside its expander (``neuronxsim.walrus.leaf_signature``);
a family derives its ``AttrSpec``s (every attr but the codegen's routing decisions) and, for its
current attrs, its operand roster from it, so the family, the codegen and the leaf cannot drift.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Sequence, Tuple

from neuronxsim.bir import target
from neuronxsim.errors import CodegenError
from neuronxsim.walrus.signatures import OperandSignature, leaf_signature

from . import enums
from .attrs import REQUIRED, AttrSpec
from .operands import Dim, Operand

_SCALAR_TYPES = {"bool": bool, "int": int, "float": float}


def family_attrs(kernel_name: str, required: Iterable[str] = ()) -> Tuple[AttrSpec, ...]:
    """The ``AttrSpec``s of the leaf's macro attrs, in its signature's order; ``required`` names
    attrs the family needs given although the leaf has a default (attention's ``is_causal``, which
    selects the leaf)."""
    required = set(required)
    specs = []
    for a in leaf_signature(kernel_name).attrs:
        if a.from_codegen:
            continue
        if a.type == "enum":
            kind = getattr(enums, a.enum_type)
            default = REQUIRED if a.required else kind(a.default)
            choices = tuple(kind[m] for m in a.allowed) or None
        else:
            kind, default, choices = _SCALAR_TYPES[a.type], (REQUIRED if a.required else a.default), None
        specs.append(AttrSpec(a.name, kind, REQUIRED if a.name in required else default, a.minimum, choices))
    return tuple(specs)


def _dim(text: str) -> Dim:
    if text == "num_partitions":
        return target.uniform("num_partitions")
    if text.isdigit():
        return int(text)
    symbol, plus, offset = text.partition("+")
    return (symbol, int(offset)) if plus else symbol


def _holds(inst, condition: str) -> bool:
    if condition.startswith("!"):
        return not getattr(inst, condition[1:])
    name, eq, member = condition.partition("=")
    return getattr(inst, name).name == member if eq else bool(getattr(inst, name))


def _side(inst, roster: Sequence[OperandSignature], counts: Dict[str, int]) -> List[Operand]:
    out = []
    for op in roster:
        if not all(_holds(inst, c) for c in op.when):
            continue
        dims = tuple(_dim(d) for d in op.dims)
        if op.max_count:
            n = counts[op.role]
            if not 0 <= n <= op.max_count:
                raise CodegenError(f"{inst.label}: {n} '{op.role}' operands; expected 0 to {op.max_count}")
            out += [Operand(f"{op.role}{i}", dims) for i in range(n)]
        elif not op.optional:
            out.append(Operand(op.role, dims))
    return out


def family_roster(inst, kernel_name: str, counts: Dict[str, int] = None) -> Tuple[List[Operand], List[Operand]]:
    """The (srcs, dsts) rosters of the leaf's signature for ``inst``'s attrs; ``counts`` gives the
    number of each variadic operand."""
    sig = leaf_signature(kernel_name)
    counts = counts or {}
    return _side(inst, sig.ins, counts), _side(inst, sig.outs, counts)


__all__ = ["family_attrs", "family_roster"]
