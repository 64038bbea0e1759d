"""``MacroInst``: the base of every macro instruction of a Penguin program.

A macro reads ``srcs`` and writes ``dsts`` (operand accesses over program tensors) and carries
its family's named attrs as plain attributes (``inst.fused_rmsnorm``), declared once in the class's
``ATTRS``. It checks itself when built and again when the codegen lowers it (``validate``), so a
macro changed after construction cannot reach BIR with a wrong attr or shape.
"""

from __future__ import annotations

from typing import ClassVar, Dict, List, Optional, Sequence, Tuple

from neuronxsim.errors import CodegenError

from .access import Access
from .attrs import AttrSpec
from .operands import Operand, check_roster

_MISSING = object()


class MacroInst:
    """A macro instruction: ``srcs`` read, ``dsts`` written, named attrs per ``ATTRS``."""

    ATTRS: ClassVar[Tuple[AttrSpec, ...]] = ()
    #: Attrs whose being left unset means something besides their default (the norm attrs, where
    #: an explicit default contradicts the other): JSON leaves them out while unset.
    UNSET_MATTERS: ClassVar[Tuple[str, ...]] = ()

    def __init__(self, srcs: Sequence[Access], dsts: Sequence[Access], name: Optional[str] = None, **attrs):
        self.name = name
        self.srcs = list(srcs) if isinstance(srcs, (list, tuple)) else srcs
        self.dsts = list(dsts) if isinstance(dsts, (list, tuple)) else dsts
        known = {spec.name for spec in self.ATTRS}
        for key in attrs:
            if key not in known:
                raise CodegenError(f"{self.label}: unknown attr '{key}'; expected attrs: {', '.join(sorted(known)) or 'none'}")
        for spec in self.ATTRS:
            if spec.name in attrs:
                setattr(self, spec.name, spec.coerce(attrs[spec.name], self.label))
            elif spec.required:
                raise CodegenError(f"{self.label}: attr '{spec.name}' is missing; expected {spec.expected()}")
            else:
                object.__setattr__(self, spec.name, spec.default)  # not set: see is_set
        self.validate()

    def __setattr__(self, key, value):
        if any(spec.name == key for spec in type(self).ATTRS):
            # A new set each time: a copied macro (copy.copy) must not share its record.
            self.__dict__["_set_attrs"] = self.__dict__.get("_set_attrs", frozenset()) | {key}
        object.__setattr__(self, key, value)

    def is_set(self, attr: str) -> bool:
        """Whether the program gave ``attr`` (when built or since) rather than leaving it at its
        default: an explicit default is set."""
        return attr in self.__dict__.get("_set_attrs", ())

    # ---- naming ----

    @property
    def op(self) -> str:
        """The macro's family name (its class name; also its JSON ``op``)."""
        return type(self).__name__

    @property
    def label(self) -> str:
        """How errors name this macro: ``MLPKernel 'layer0.mlp'``."""
        name = getattr(self, "name", None)
        return f"{self.op} '{name}'" if name else self.op

    # ---- operands ----

    @property
    def srcs_shapes(self) -> List[List[int]]:
        return [list(a.access_shape) for a in self.srcs]

    @property
    def dsts_shapes(self) -> List[List[int]]:
        return [list(a.access_shape) for a in self.dsts]

    # The internal kernel registry's argument builders say operands / results.
    @property
    def operands(self) -> List[Access]:
        return self.srcs

    @property
    def results(self) -> List[Access]:
        return self.dsts

    def operand_roster(self) -> Optional[Tuple[Sequence[Operand], Sequence[Operand]]]:
        """The family's (srcs, dsts) rosters for its current attrs, or None if it has none."""
        return None

    def bound_symbols(self) -> Dict[str, Tuple[int, str]]:
        """Roster symbols fixed by attrs rather than by operand shapes: ``{symbol: (value, why)}``."""
        return {}

    # ---- checking ----

    def check_attrs(self) -> None:
        """Family rules between attrs (after each attr has its declared type)."""

    def validate(self) -> None:
        """Raises CodegenError naming the macro, the attr or operand and the expected form."""
        if self.name is not None and not isinstance(self.name, str):
            raise CodegenError(f"{self.op}: name is {self.name!r}; expected a str or None")
        for side in ("srcs", "dsts"):
            accesses = getattr(self, side)
            if not isinstance(accesses, list):
                raise CodegenError(f"{self.label} {side}: expected a list of accesses, got {accesses!r}")
            for i, a in enumerate(accesses):
                if not isinstance(a, Access):
                    raise CodegenError(f"{self.label} {side}[{i}]: expected a FullTensorAccess, "
                                       f"NDimSubTensorAccess, TileAccess or OpaqueAccess, got {a!r}")
        for i, a in enumerate(self.srcs):
            if getattr(a, "reduce", False):
                raise CodegenError(f"{self.label} srcs[{i}]: reduce marks an output the kernel may reduce along its "
                                   "partition dim; an input cannot be reduced")
        for i, a in enumerate(self.dsts):
            if a.tensor.kind == "input":
                raise CodegenError(f"{self.label} dsts[{i}]: writes the program input '{a.tensor.name}'; "
                                   "expected an output or internal tensor")
        for spec in self.ATTRS:
            value = getattr(self, spec.name, _MISSING)
            if value is _MISSING:
                raise CodegenError(f"{self.label}: attr '{spec.name}' is missing; expected {spec.expected()}")
            if not spec.is_valid(value):
                raise CodegenError(f"{self.label}: attr '{spec.name}' is {value!r}; expected {spec.expected()}")
        self.check_attrs()
        roster = self.operand_roster()
        if roster is not None:
            symbols = self.bound_symbols()
            check_roster(self.label, "srcs", self.srcs, roster[0], symbols)
            check_roster(self.label, "dsts", self.dsts, roster[1], symbols)

    # ---- JSON ----

    def attrs_json(self) -> dict:
        return {spec.name: spec.to_json(getattr(self, spec.name)) for spec in self.ATTRS
                if spec.name not in self.UNSET_MATTERS or self.is_set(spec.name)}

    def to_json(self) -> dict:
        j = {"op": self.op}
        if self.name is not None:
            j["name"] = self.name
        j["srcs"] = [a.to_json() for a in self.srcs]
        j["dsts"] = [a.to_json() for a in self.dsts]
        j["attrs"] = self.attrs_json()
        return j

    @classmethod
    def from_json_fields(cls, srcs, dsts, name, attrs: dict, label: str):
        """Builds the macro from its JSON fields (accesses already rebuilt)."""
        if not isinstance(attrs, dict):
            raise CodegenError(f"{label}.attrs: expected an object, got {attrs!r}")
        return cls(srcs, dsts, name=name, **attrs)

    def __repr__(self) -> str:
        attrs = ", ".join(f"{s.name}={getattr(self, s.name, _MISSING)!r}" for s in self.ATTRS)
        return f"<{self.label} srcs={self.srcs_shapes} dsts={self.dsts_shapes}{', ' + attrs if attrs else ''}>"


__all__ = ["MacroInst"]
