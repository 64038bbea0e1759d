"""The macros that name their kernel instead of being a fixed family.

* ``BIRKernel`` -- a library kernel by name with a generic attr bag (RouterTopK, ExpertMLPs,
  RowTiledMM, ColumnTiledMM, CaymanPackedPETranspose, AttentionTkgFwd, ...): IT54, passed through;
* ``ExternalNativeNkiKernel`` -- a user ``@nki.jit`` kernel and its arguments: IT55, compiled by the
  NKI front end when the program is built or loaded (``nki_compile``), never traced by the codegen;
  ``ExternalNativeNkiKlirKernel`` is its KLIR-path twin (the artifact is a KLR file);
* ``InternalNativeNkiKernel`` -- a kernel of the internal kernel registry by ``func_name``, with
  typed attrs its registry entry turns into kernel arguments: IT56.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
from typing import Callable, Optional

from neuronxsim.errors import CodegenError

from .attrs import normalise_kernel_attrs
from .macro import MacroInst


def _check_name(label: str, attr: str, value) -> None:
    if not isinstance(value, str) or not value:
        raise CodegenError(f"{label}: attr '{attr}' is {value!r}; expected a non-empty str")


class BIRKernel(MacroInst):
    """A library kernel named ``kernel_name`` with the attr bag ``kernel_attrs``.

    ``kernel_attrs`` may be given as a dict or ``(key, value)`` pairs of strings, bools, ints,
    floats, enums or lists; it is stored as BIR's ``(str, str)`` pairs (``attr_to_str``), in the
    order given, and the codegen passes it to the node verbatim.
    """

    def __init__(self, kernel_name: str, srcs, dsts, kernel_attrs=(), name: Optional[str] = None):
        self.name = name
        self.kernel_name = kernel_name
        self.kernel_attrs = normalise_kernel_attrs(kernel_attrs, self.label)
        super().__init__(srcs, dsts, name=name)

    def validate(self) -> None:
        super().validate()
        _check_name(self.label, "kernel_name", self.kernel_name)
        attrs = self.kernel_attrs
        if not (isinstance(attrs, tuple) and all(
                isinstance(p, tuple) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in attrs)):
            raise CodegenError(f"{self.label}: attr 'kernel_attrs' is {attrs!r}; expected a tuple of (str, str) "
                               "pairs (build the macro with a dict to have values converted)")
        if not self.dsts:
            raise CodegenError(f"{self.label} dsts: no operands; expected at least one output")

    def attrs_json(self) -> dict:
        return {"kernel_name": self.kernel_name, "kernel_attrs": [list(p) for p in self.kernel_attrs]}

    @classmethod
    def from_json_fields(cls, srcs, dsts, name, attrs, label):
        if not isinstance(attrs, dict) or set(attrs) - {"kernel_name", "kernel_attrs"}:
            raise CodegenError(f"{label}.attrs: expected {{kernel_name, kernel_attrs}}, got {attrs!r}")
        return cls(attrs.get("kernel_name"), srcs, dsts, kernel_attrs=attrs.get("kernel_attrs", ()), name=name)


def kernel_function(kernel) -> Callable:
    """The Python function under a ``@nki.jit`` kernel object (or the function itself)."""
    fn = inspect.unwrap(kernel)
    while not inspect.isfunction(fn) and callable(getattr(fn, "func", None)):
        fn = inspect.unwrap(fn.func)
    return fn


def kernel_reference(kernel) -> str:
    """``"module:qualname"``, by which a saved program finds ``kernel`` again."""
    fn = kernel_function(kernel)
    module, qualname = getattr(kernel, "__module__", None), getattr(kernel, "__qualname__", None)
    if not module or not qualname:
        module, qualname = fn.__module__, fn.__qualname__
    ref = f"{module}:{qualname}"
    try:
        found = resolve_kernel_reference(ref, "kernel")
    except CodegenError:
        found = None
    if found is not kernel:
        raise CodegenError(f"kernel {qualname!r}: not importable as {ref!r}; expected a kernel defined at module "
                           "level so that a saved program can find it")
    return ref


def resolve_kernel_reference(ref, where: str):
    """The object a ``"module:qualname"`` reference names."""
    if not isinstance(ref, str) or ref.count(":") != 1:
        raise CodegenError(f"{where}: {ref!r}; expected 'module:qualname'")
    module_name, qualname = ref.split(":")
    try:
        obj = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise CodegenError(f"{where}: cannot import {ref!r} ({e})") from None
    return obj


class ExternalNativeNkiKernel(MacroInst):
    """A user ``@nki.jit`` kernel called on ``srcs`` (its arguments, in parameter order) and
    returning ``dsts`` (its results, in order).

    ``compiled`` is the kernel compiled by the NKI front end (``nki_compile.CompiledNkiKernel``):
    set when the macro is added to a program, for the program's arch; None before."""

    #: The artifact the front end compiles the kernel into: BIR JSON.
    ARTIFACT_FORMAT = "bir"

    def __init__(self, kernel, srcs, dsts, name: Optional[str] = None):
        self.kernel = kernel
        self.compiled = None
        super().__init__(srcs, dsts, name=name)

    def compile(self, arch: str) -> None:
        """Compiles the kernel for ``arch`` with the NKI front end (``Program.add`` does)."""
        from .nki_compile import compile_user_kernel

        self.validate()
        self.compiled = compile_user_kernel(self, arch, self.ARTIFACT_FORMAT)

    def validate(self) -> None:
        super().validate()
        if not callable(self.kernel):
            raise CodegenError(f"{self.label}: attr 'kernel' is {self.kernel!r}; expected an @nki.jit kernel")
        if callable(getattr(getattr(self.kernel, "kernel", None), "func", None)):
            # A launch binding (kernel[nl.nc(2)], NKI 0.6's kernel[2]): the IT55 node has no grid,
            # and a program saves the kernel by reference, which cannot say one.
            raise CodegenError(f"{self.label}: attr 'kernel' is {self.kernel!r}, a kernel bound to a launch grid; "
                               f"an {self.op} calls a one-core kernel once (InstNKIKernel has no grid): pass the "
                               "@nki.jit kernel itself")
        if not self.dsts:
            raise CodegenError(f"{self.label} dsts: no operands; expected the kernel's results")

    @property
    def func_name(self) -> str:
        return kernel_function(self.kernel).__name__

    def attrs_json(self) -> dict:
        try:
            return {"kernel": kernel_reference(self.kernel)}
        except CodegenError as e:
            raise CodegenError(f"{self.label}: {e}") from None

    @classmethod
    def from_json_fields(cls, srcs, dsts, name, attrs, label):
        if not isinstance(attrs, dict) or set(attrs) != {"kernel"}:
            raise CodegenError(f"{label}.attrs: expected {{kernel: 'module:qualname'}}, got {attrs!r}")
        return cls(resolve_kernel_reference(attrs["kernel"], f"{label}.attrs.kernel"), srcs, dsts, name=name)


class ExternalNativeNkiKlirKernel(ExternalNativeNkiKernel):
    """``ExternalNativeNkiKernel`` through the KLIR path: the front end compiles the kernel into a
    KLR file; the node is IT55 all the same (IT56 is for the internal kernel registry only)."""

    ARTIFACT_FORMAT = "klir"


def _check_plain(label: str, key: str, value) -> None:
    """Registry kernels receive their attrs as keyword arguments: JSON values only."""
    if isinstance(value, (list, tuple)):
        for v in value:
            _check_plain(label, key, v)
    elif not isinstance(value, (str, bool, int, float)) or (isinstance(value, float) and not math.isfinite(value)):
        raise CodegenError(f"{label}: attr '{key}' is {value!r}; expected a str, bool, int, finite float or a list of those")


class InternalNativeNkiKernel(MacroInst):
    """A registry kernel: ``func_name`` (the registry key) and ``attrs`` (keyword arguments for
    the kernel). Lowered to IT56 by the internal kernel registry's codegen."""

    def __init__(self, func_name: str, srcs, dsts, attrs=None, name: Optional[str] = None):
        self.func_name = func_name
        self.attrs = {} if attrs is None else dict(attrs) if isinstance(attrs, dict) else attrs
        super().__init__(srcs, dsts, name=name)

    def get_attrs_dict(self) -> dict:
        """The attrs as a new dict (the registry's argument builders extend it)."""
        return json.loads(json.dumps(self.attrs))

    def validate(self) -> None:
        super().validate()
        _check_name(self.label, "func_name", self.func_name)
        if not isinstance(self.attrs, dict):
            raise CodegenError(f"{self.label}: attr 'attrs' is {self.attrs!r}; expected a dict")
        for key, value in self.attrs.items():
            if not isinstance(key, str) or not key:
                raise CodegenError(f"{self.label}: attrs key {key!r}; expected a non-empty str")
            _check_plain(self.label, key, value)

    def attrs_json(self) -> dict:
        return {"func_name": self.func_name, "attrs": self.get_attrs_dict()}

    @classmethod
    def from_json_fields(cls, srcs, dsts, name, attrs, label):
        if not isinstance(attrs, dict) or set(attrs) - {"func_name", "attrs"}:
            raise CodegenError(f"{label}.attrs: expected {{func_name, attrs}}, got {attrs!r}")
        return cls(attrs.get("func_name"), srcs, dsts, attrs=attrs.get("attrs"), name=name)


__all__ = ["BIRKernel", "ExternalNativeNkiKernel", "ExternalNativeNkiKlirKernel", "InternalNativeNkiKernel",
           "kernel_function", "kernel_reference", "resolve_kernel_reference"]
