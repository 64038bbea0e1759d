"""The checked-in type stubs (``.pyi``) of the compiled modules match the modules as built.

``scripts/gen-stubs.sh`` writes the stubs with pybind11-stubgen; this test reads them back (with
``ast``) and compares, for every function, class, method and property a compiled module defines,
its name, its parameters' names and types and its return type with what the module reports
itself (pybind11's signatures, ``inspect.signature`` for Cython). A binding added, removed,
renamed or retyped without regenerating the stubs fails here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

import neuronxsim

ROOT = Path(neuronxsim.__file__).parent
PYBIND_MODULES = ["neuronxsim.starfish.lib._core." + sub for sub in ("bir", "sim", "walrus")]
CYTHON_MODULES = ["neuronxsim.starfish.penguin.targets.codegen." + m for m in ("BirCodeGenLoop", "KernelBuilder")]


def stub_path(module_name: str) -> Path:
    parts = module_name.split(".")[1:]
    return ROOT.joinpath(*parts).with_suffix(".pyi")


def normalise(annotation: str | None) -> str | None:
    """A type as text, without module paths or spaces: ``neuronxsim...bir.Module`` -> ``Module``."""
    if annotation is None:
        return None
    text = re.sub(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", annotation)
    text = re.sub(r"\bobject\b", "Any", text)  # pybind11's py::object is typing.Any in a stub
    return re.sub(r"\s+", "", text).replace("'", "").replace('"', "")


def split_top_level(text: str) -> list[str]:
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>" and not text[i - 1 : i + 1] == "->":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:])
    return parts


# A signature: ((parameter name, type or None), ...), return type or None.
def pybind_signatures(name: str, obj) -> list[tuple]:
    """The signatures pybind11 put at the top of a compiled function's docstring."""
    sigs = []
    for line in (obj.__doc__ or "").splitlines():
        m = re.match(rf"^\s*(?:\d+\. )?{re.escape(name)}\((.*)\)(?: -> (.*))?$", line)
        if not m:
            continue
        params = []
        for p in split_top_level(m.group(1)):
            p = p.split("=", 1)[0] if "=" in p and ":" not in p.split("=", 1)[0] else p
            pname, _, ann = p.partition(":")
            ann = ann.rsplit(" = ", 1)[0] if " = " in ann else ann
            params.append((pname.strip().lstrip("*"), normalise(ann.strip()) or None))
        sigs.append((tuple(params), normalise(m.group(2))))
    if len(sigs) > 1:  # an overloaded function: its first line is name(*args, **kwargs)
        sigs = [sig for sig in sigs if [n for n, _ in sig[0]] != ["args", "kwargs"]]
    return sigs


def python_signatures(obj) -> list[tuple]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    params = tuple((p.name, None) for p in sig.parameters.values())
    return [(params, None)]


def is_pybind(obj) -> bool:
    return type(obj).__name__ in ("builtin_function_or_method", "instancemethod")


def compared(name: str) -> bool:
    """Public names and constructors; not the dunders pybind11 and Python give every class."""
    return name == "__init__" or not name.startswith("_")


def live_api(module) -> dict:
    """What ``module`` defines: {name: signatures} for functions, {name: {member: ...}} for classes."""
    api = {}
    for name, obj in vars(module).items():
        if name.startswith("__") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj):
            members = {}
            for member, value in vars(obj).items():
                if not compared(member) or member == "__init__" and not (
                        is_pybind(value) or inspect.isfunction(value) or type(value).__name__.startswith("cython")):
                    continue  # no constructor of its own (pybind11's default raises)
                if isinstance(value, property):
                    fget = value.fget
                    sigs = pybind_signatures("", fget) if is_pybind(fget) else []
                    members[member] = ("property", sigs[0][1] if sigs else None)
                elif isinstance(value, (staticmethod, classmethod)):
                    f = value.__func__
                    members[member] = pybind_signatures(member, f) if is_pybind(f) else python_signatures(f)
                elif is_pybind(value):
                    members[member] = pybind_signatures(member, value)
                elif inspect.isroutine(value):
                    members[member] = python_signatures(value)
            api[name] = members
        elif inspect.isroutine(obj):
            api[name] = pybind_signatures(name, obj) if is_pybind(obj) else python_signatures(obj)
    return api


def stub_signature(fn: ast.FunctionDef) -> tuple:
    args = fn.args
    params = [*args.posonlyargs, *args.args]
    if args.vararg:
        params.append(args.vararg)
    params += args.kwonlyargs
    if args.kwarg:
        params.append(args.kwarg)
    unparse = lambda a: normalise(ast.unparse(a)) if a is not None else None  # noqa: E731
    return tuple((p.arg, unparse(p.annotation)) for p in params), unparse(fn.returns)


def stub_api(path: Path, live: dict) -> dict:
    tree = ast.parse(path.read_text())
    api = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in live:
            api.setdefault(node.name, []).append(stub_signature(node))
        elif isinstance(node, ast.ClassDef) and node.name in live:
            members = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    annotation = ast.unparse(item.annotation)
                    if compared(item.target.id) and not annotation.startswith("typing.ClassVar"):
                        members[item.target.id] = ("property", normalise(annotation))  # a plain attribute
                    continue
                if not isinstance(item, ast.FunctionDef) or not compared(item.name):
                    continue
                decorators = {ast.unparse(d) for d in item.decorator_list}
                if "property" in decorators:
                    members[item.name] = ("property", stub_signature(item)[1])
                elif not any(d.endswith(".setter") for d in decorators):
                    members.setdefault(item.name, []).append(stub_signature(item))
            api[node.name] = members
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            api[node.name] = "in the stub only"
    return api


def same_signature(live: tuple, stub: tuple) -> bool:
    (live_params, live_ret), (stub_params, stub_ret) = live, stub
    if [n for n, _ in live_params] != [n for n, _ in stub_params]:
        return False
    for (_, a), (_, b) in zip(live_params, stub_params):
        if a is not None and b is not None and a != b:
            return False
    return live_ret is None or live_ret == stub_ret


def differences(live: dict, stub: dict, where: str) -> list[str]:
    out = []
    for name in sorted(set(live) | set(stub)):
        if name not in stub:
            out.append(f"{where}{name}: not in the stub")
        elif name not in live:
            out.append(f"{where}{name}: not in the module")
        elif isinstance(live[name], dict):
            out += differences(live[name], stub[name], f"{where}{name}.") if isinstance(stub[name], dict) else [
                f"{where}{name}: a class in the module, not in the stub"]
        elif isinstance(live[name], tuple):  # a property
            ok = isinstance(stub[name], tuple) and (live[name][1] is None or live[name][1] == stub[name][1])
            if not ok:
                out.append(f"{where}{name}: property {live[name]} in the module, {stub[name]} in the stub")
        elif live[name] and not (len(live[name]) == len(stub[name])
                                 and all(same_signature(a, b) for a, b in zip(live[name], stub[name]))):
            out.append(f"{where}{name}: {live[name]} in the module, {stub[name]} in the stub")
    return out


@pytest.mark.parametrize("module_name", PYBIND_MODULES + CYTHON_MODULES)
def test_stub_matches_the_compiled_module(module_name):
    module = importlib.import_module(module_name)
    path = stub_path(module_name)
    assert path.is_file(), f"{path}: missing (scripts/gen-stubs.sh writes it)"
    live = live_api(module)
    assert live, f"{module_name} defines nothing the test can see"
    stale = differences(live, stub_api(path, live), f"{module_name}.")
    assert stale == [], f"{path.name} is stale (run scripts/gen-stubs.sh):\n" + "\n".join(stale)


def test_every_compiled_module_has_a_stub_and_is_typed():
    compiled = {p.name.split(".")[0] for p in ROOT.rglob("*.so")}
    assert {"_core", "BirCodeGenLoop", "KernelBuilder"} <= compiled
    assert (ROOT / "py.typed").is_file()
    assert (ROOT / "starfish/lib/_core/__init__.pyi").is_file()
    # No compiled function returns an untyped object where pybind11 knows the type.
    for module_name in PYBIND_MODULES:
        text = stub_path(module_name).read_text()
        assert not re.search(r"-> (typing\.Any|object):", text), f"{module_name}: an untyped return"


def test_the_comparison_sees_a_stale_stub(tmp_path):
    from neuronxsim.starfish.lib._core import bir

    live = live_api(bir)
    good = stub_api(stub_path(bir.__name__), live)
    assert differences(live, good, "") == []
    text = stub_path(bir.__name__).read_text()
    renamed = tmp_path / "bir.pyi"
    renamed.write_text(text.replace("def to_json(self, indent:", "def to_json(self, spaces:"))
    assert any("Module.to_json" in d for d in differences(live, stub_api(renamed, live), ""))
    dropped = tmp_path / "dropped.pyi"
    dropped.write_text(re.sub(r"\ndef dtype_size\(.*\n(    .*\n)*", "\n", text))
    assert "dtype_size: not in the stub" in differences(live, stub_api(dropped, live), "")
