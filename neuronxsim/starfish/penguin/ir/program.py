"""``Program``: DRAM tensors and the macro instructions over them, in program order; saved and
loaded as JSON.

A program targets one NeuronCore generation, ``arch`` ("trn1" or "trn2"): the NKI front end
compiles its user kernels (``ExternalNativeNkiKernel``) for it when they are added, so that the
codegen only names the compiled kernels (seed 000: IT55 is "a kernel ... the front end already
AOT-compiled"). ``for_arch`` gives the same program for another generation.

JSON form (``format`` and ``version`` are checked on load; ``arch`` defaults to "trn1")::

    {"format": "neuronxsim-penguin", "version": 1, "name": "...", "arch": "trn1",
     "tensors": [{"name", "shape", "dtype", "kind"}, ...],
     "insts": [{"op": "MLPKernel", "name"?, "srcs": [access...], "dsts": [access...],
                "attrs": {...}}, ...]}

An access is ``{"access": "<kind>", "tensor": "<name>", <kind's fields>}``; enum attrs are
written by member name.
"""

from __future__ import annotations

import json
import os
from typing import Dict, List, Union

from neuronxsim.errors import CodegenError

from .access import access_from_json
from .families import AttentionMMSoftmaxMM, BackwardsAttention, MLPKernel, NormQKV, RMSNormQuantKernel
from .kernels import BIRKernel, ExternalNativeNkiKernel, ExternalNativeNkiKlirKernel, InternalNativeNkiKernel
from .macro import MacroInst
from .nki_compile import ARCHS
from .tensor import Tensor

FORMAT = "neuronxsim-penguin"
VERSION = 1

#: The longest message a refused program file gets (they quote what they found, which can be large).
MAX_MESSAGE = 600

#: Every macro class by its JSON ``op``.
MACRO_CLASSES = {cls.__name__: cls for cls in (
    MLPKernel, NormQKV, RMSNormQuantKernel, AttentionMMSoftmaxMM, BackwardsAttention, BIRKernel,
    ExternalNativeNkiKernel, ExternalNativeNkiKlirKernel, InternalNativeNkiKernel)}


class Program:
    """A Penguin macro program. Build it with ``tensor`` and ``add``, or load it from JSON."""

    def __init__(self, name: str = "penguin", arch: str = "trn1"):
        if arch not in ARCHS:
            raise CodegenError(f"Program '{name}': arch {arch!r}; expected one of {', '.join(ARCHS)}")
        self.name = name
        self.arch = arch
        self.tensors: Dict[str, Tensor] = {}
        self.insts: List[MacroInst] = []

    def tensor(self, name: str, shape, dtype: str = "float32", kind: str = "input") -> Tensor:
        """Creates and adds a program tensor."""
        return self.add_tensor(Tensor(name, shape, dtype, kind))

    def add_tensor(self, tensor: Tensor) -> Tensor:
        if not isinstance(tensor, Tensor):
            raise CodegenError(f"Program '{self.name}': expected a Tensor, got {tensor!r}")
        if tensor.name in self.tensors:
            raise CodegenError(f"Program '{self.name}': tensor '{tensor.name}' is added twice")
        self.tensors[tensor.name] = tensor
        return tensor

    def add(self, inst: MacroInst) -> MacroInst:
        """Appends a macro instruction (its operands must be over this program's tensors); a user
        kernel is compiled for the program's arch by the NKI front end."""
        self._check_inst(len(self.insts), inst)
        if isinstance(inst, ExternalNativeNkiKernel):
            try:
                inst.compile(self.arch)
            except CodegenError as e:
                raise CodegenError(f"insts[{len(self.insts)}] {e}") from None
        self.insts.append(inst)
        return inst

    def for_arch(self, arch: str) -> "Program":
        """This program for another NeuronCore generation: the same tensors and macros, its user
        kernels compiled again for ``arch`` (``self`` when it already targets it)."""
        if arch == self.arch:
            return self
        other = Program(self.name, arch)
        for tensor in self.tensors.values():
            other.add_tensor(tensor)
        for inst in self.insts:
            if isinstance(inst, ExternalNativeNkiKernel):
                inst = type(inst)(inst.kernel, inst.srcs, inst.dsts, name=inst.name)
            other.add(inst)
        return other

    def _check_inst(self, index: int, inst) -> None:
        if not isinstance(inst, MacroInst):
            raise CodegenError(f"insts[{index}]: expected a macro instruction, got {inst!r}")
        for side in ("srcs", "dsts"):
            for i, access in enumerate(getattr(inst, side)):
                if self.tensors.get(getattr(access.tensor, "name", None)) != access.tensor:
                    raise CodegenError(f"insts[{index}] {inst.label} {side}[{i}]: tensor "
                                       f"'{access.tensor.name}' is not a tensor of program '{self.name}'")

    def validate(self) -> None:
        """Checks every instruction again (they may have been changed since they were added)."""
        for index, inst in enumerate(self.insts):
            inst.validate()
            self._check_inst(index, inst)

    # ---- JSON ----

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "name": self.name, "arch": self.arch,
                "tensors": [t.to_json() for t in self.tensors.values()],
                "insts": [inst.to_json() for inst in self.insts]}

    def dumps(self, indent: int = 1) -> str:
        return json.dumps(self.to_json(), indent=indent)

    def save(self, path: Union[str, os.PathLike]) -> None:
        from neuronxsim.bir import atomic_write_text

        atomic_write_text(path, self.dumps() + "\n")

    @classmethod
    def from_json(cls, j) -> "Program":
        if not isinstance(j, dict) or j.get("format") != FORMAT:
            raise CodegenError(f"not a Penguin program: expected an object with format '{FORMAT}'")
        if j.get("version") != VERSION:
            raise CodegenError(f"version: {j.get('version')!r}; this build reads version {VERSION}")
        program = cls(j.get("name", "penguin"), j.get("arch", "trn1"))
        tensors, insts = j.get("tensors"), j.get("insts")
        if not isinstance(tensors, list) or not isinstance(insts, list):
            raise CodegenError("tensors, insts: expected two lists")
        for i, t in enumerate(tensors):
            if not isinstance(t, dict) or set(t) - {"name", "shape", "dtype", "kind"}:
                raise CodegenError(f"tensors[{i}]: expected {{name, shape, dtype, kind}}, got {t!r}")
            try:
                program.add_tensor(Tensor(t.get("name"), t.get("shape"), t.get("dtype", "float32"),
                                          t.get("kind", "input")))
            except CodegenError as e:
                raise CodegenError(f"tensors[{i}]: {e}") from None
        for i, ij in enumerate(insts):
            program.add(_inst_from_json(ij, program.tensors, f"insts[{i}]"))
        return program

    @classmethod
    def loads(cls, text: Union[str, bytes]) -> "Program":
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as e:
                raise CodegenError(f"not UTF-8 text (byte {e.start} is 0x{text[e.start]:02x})") from None
        try:
            j = json.loads(text)
        except json.JSONDecodeError as e:
            raise CodegenError(f"not JSON: {e}") from None
        except RecursionError:
            raise CodegenError("not a Penguin program: the JSON is nested too deeply") from None
        except ValueError as e:  # an integer of more digits than Python converts
            raise CodegenError(f"not a Penguin program: {str(e).split(';')[0]}") from None
        try:
            return cls.from_json(j)
        except RecursionError:
            raise CodegenError("not a Penguin program: a value is nested too deeply") from None
        except CodegenError as e:  # messages quote what they got: keep a quote of a large value short
            message = str(e)
            if len(message) <= MAX_MESSAGE:
                raise
            cut = MAX_MESSAGE - 40
            raise CodegenError(f"{message[:cut]}... ({len(message) - cut} more characters)") from None

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Program":
        with open(path, "rb") as f:
            data = f.read()
        try:
            return cls.loads(data)
        except CodegenError as e:
            raise CodegenError(f"{os.fspath(path)}: {e}") from None

    def __repr__(self) -> str:
        return f"<Program '{self.name}': {len(self.tensors)} tensors, {len(self.insts)} insts>"


def _inst_from_json(j, tensors, where: str) -> MacroInst:
    if not isinstance(j, dict) or set(j) - {"op", "name", "srcs", "dsts", "attrs"}:
        raise CodegenError(f"{where}: expected {{op, name?, srcs, dsts, attrs}}, got {j!r}")
    cls = MACRO_CLASSES.get(j.get("op")) if isinstance(j.get("op"), str) else None
    if cls is None:
        raise CodegenError(f"{where}.op: {j.get('op')!r}; expected one of {', '.join(MACRO_CLASSES)}")
    sides = {}
    for side in ("srcs", "dsts"):
        items = j.get(side)
        if not isinstance(items, list):
            raise CodegenError(f"{where}.{side}: expected a list of accesses, got {items!r}")
        sides[side] = [access_from_json(a, tensors, f"{where}.{side}[{k}]") for k, a in enumerate(items)]
    try:
        return cls.from_json_fields(sides["srcs"], sides["dsts"], j.get("name"), j.get("attrs", {}), f"{where}")
    except CodegenError as e:  # from the macro's constructor, or already naming its JSON path
        message = str(e)
        raise CodegenError(message if message.startswith(where) else f"{where}: {message}") from None
    except TypeError as e:  # unknown keyword (attr) names
        raise CodegenError(f"{where}.attrs: {e}") from None


__all__ = ["Program", "MACRO_CLASSES", "FORMAT", "VERSION"]
