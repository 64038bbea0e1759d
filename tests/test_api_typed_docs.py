"""Every public name of the user-facing packages has a docstring (issue 22, "typed, documented API").

Public names are a package's ``__all__`` (or its names without a leading underscore); for each
public class, also the methods and properties it defines itself. Data attributes (constants, enum
members) cannot carry a docstring and are left out, as are the ``name``/``value`` properties
pybind11 gives every enum. A pybind11 function's ``__doc__`` always
starts with its signature, which does not count as documentation.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

from neuronxsim.starfish.lib import _core

PACKAGES = ["neuronxsim", "neuronxsim.bir", "neuronxsim.sim", "neuronxsim.nki"]


def public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return list(names)


def own_doc(obj, name: str) -> str:
    """``obj``'s docstring less the signature lines pybind11 puts first."""
    if isinstance(obj, property):
        obj = obj.fget if not (obj.__doc__ or "").strip() else obj
    elif isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj) and doc == inspect.getdoc(type):
        return ""
    lines = [ln for ln in doc.splitlines()
             if not re.match(rf"^\s*(\d+\. )?{re.escape(name)}\(.*\)( -> .*)?$", ln)
             and ln.strip() != "Overloaded function."]
    return "\n".join(lines).strip()


def documentable(obj) -> bool:
    return (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)
            or isinstance(obj, _core.nki.FastCall)  # (a function taking a C path first)
            or isinstance(obj, (property, staticmethod, classmethod)))


def undocumented(package: str) -> list[str]:
    module = importlib.import_module(package)
    missing = []
    for name in public_names(module):
        obj = getattr(module, name)
        if not documentable(obj):
            continue
        if not own_doc(obj, name):
            missing.append(f"{package}.{name}")
        if not inspect.isclass(obj):
            continue
        for member, value in vars(obj).items():
            if member.startswith("_") or not documentable(value) or inspect.isclass(value):
                continue
            if member in ("name", "value") and hasattr(obj, "__members__"):
                continue  # an enum's, made by pybind11
            if not own_doc(value, member):
                missing.append(f"{package}.{name}.{member}")
    return missing


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_has_a_docstring(package):
    assert undocumented(package) == []


def test_the_check_sees_a_missing_docstring():
    class Bare:
        def method(self):
            pass

    assert own_doc(Bare, "Bare") == ""
    assert own_doc(vars(Bare)["method"], "method") == ""
    from neuronxsim.starfish.lib import _core

    # A pybind11 method's signature line alone is not a docstring.
    assert own_doc(_core.bir.Module.verify, "verify") != ""
    assert own_doc(type("Shell", (), {"__doc__": "verify(self) -> None"}), "verify") == ""
