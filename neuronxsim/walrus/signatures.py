"""The IT54 leaves' signatures: each leaf's one declaration of its interface.

Every library kernel the walrus resolver inlines by name (``neuronxsim.walrus.inline``) declares,
beside its C++ expander, its operands by role -- in node order, with symbolic dims, present always,
when its attrs say so, or as a variadic or optional group -- and its attrs with their type and
default. The C++ resolver binds a node's operands and attrs by it; the Penguin families build
their attrs and operand rosters from it, and the codegen its ``kernel_attrs`` lists.

>>> from neuronxsim import walrus
>>> sig = walrus.leaf_signature("MLP")
>>> [op.role for op in sig.ins][:3]
['hidden', 'residual', 'ln_w']
>>> sig.attr("gate_bias").default
False
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Optional, Tuple, Union

from neuronxsim.errors import KernelError
from neuronxsim.starfish.lib import _core

AttrValue = Union[bool, int, float]


@dataclasses.dataclass(frozen=True)
class AttrSignature:
    """One attr: ``type`` is ``bool``, ``int``, ``float`` or ``enum`` (members by value, member
    ``i`` having value ``i``; ``allowed`` narrows them for the leaf); ``default`` is None when the
    attr is required (enums: the member's value). ``from_codegen``: the codegen's routing decision,
    not a macro attr. ``only_when_set``: beyond the seed's attr roster of the family, so the codegen
    emits it only when it differs from its default."""

    name: str
    type: str
    default: Optional[AttrValue]
    enum_type: str
    members: Tuple[str, ...]
    allowed: Tuple[str, ...]
    minimum: Optional[int]
    from_codegen: bool
    only_when_set: bool
    doc: str

    @property
    def required(self) -> bool:
        return self.default is None


@dataclasses.dataclass(frozen=True)
class OperandSignature:
    """One operand by role: ``dims`` are symbols (``"H"``), integers (``"1"``), a symbol plus a
    constant (``"H+4"``), ``"num_partitions"`` or ``"..."`` (any leading dims); present when every
    condition of ``when`` holds (``"attr"``, ``"!attr"``, ``"attr=MEMBER"``). ``max_count > 0``: a
    variadic group ``role0``, ``role1``, ...; ``optional``: a trailing input the node may omit."""

    role: str
    dims: Tuple[str, ...]
    when: Tuple[str, ...]
    max_count: int
    optional: bool


@dataclasses.dataclass(frozen=True)
class LeafSignature:
    """A leaf's interface: its attrs in the codegen's ``kernel_attrs`` order, its inputs and outputs."""

    name: str
    summary: str
    attrs: Tuple[AttrSignature, ...]
    ins: Tuple[OperandSignature, ...]
    outs: Tuple[OperandSignature, ...]

    def attr(self, name: str) -> AttrSignature:
        for a in self.attrs:
            if a.name == name:
                return a
        raise KernelError(f"leaf '{self.name}': no attr '{name}'; its signature declares: "
                          f"{', '.join(a.name for a in self.attrs) or 'none'}")


def _default(kind: str, text: Optional[str]) -> Optional[AttrValue]:
    if text is None:
        return None
    if kind == "bool":
        return text == "true"
    if kind == "float":
        return float(text)
    return int(text)


def _operands(rows) -> Tuple[OperandSignature, ...]:
    return tuple(OperandSignature(r["role"], tuple(r["dims"]), tuple(r["when"]), r["max_count"], r["optional"])
                 for r in rows)


def _load() -> Dict[str, LeafSignature]:
    out = {}
    for row in _core.walrus.leaf_signatures():
        attrs = tuple(AttrSignature(a["name"], a["type"], _default(a["type"], a["default"]), a["enum_type"],
                                    tuple(a["members"]), tuple(a["allowed"]), a["minimum"], a["from_codegen"],
                                    a["only_when_set"], a["doc"]) for a in row["attrs"])
        out[row["name"]] = LeafSignature(row["name"], row["summary"], attrs, _operands(row["ins"]),
                                         _operands(row["outs"]))
    return out


_SIGNATURES: Dict[str, LeafSignature] = _load()


def leaf_signatures() -> Dict[str, LeafSignature]:
    """Every IT54 leaf's signature, by kernel name (sorted)."""
    return dict(_SIGNATURES)


def leaf_signature(kernel_name: str) -> LeafSignature:
    """The signature of the leaf ``kernel_name``; :class:`KernelError` naming the known leaves if
    there is none."""
    try:
        return _SIGNATURES[kernel_name]
    except KeyError:
        raise KernelError(f"no IT54 leaf '{kernel_name}'; known: {', '.join(_SIGNATURES)}") from None


__all__ = ["AttrSignature", "OperandSignature", "LeafSignature", "leaf_signature", "leaf_signatures"]
