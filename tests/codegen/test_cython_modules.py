"""The codegen is compiled by Cython, as the shipped BirCodeGenLoop (seed 000: "Cython -O3 -fwrapv
-fPIC -g"): the modules are extension modules built from the .pyx sources, not Python files."""

import importlib
import importlib.machinery
import os

import pytest

MODULES = ["BirCodeGenLoop", "KernelBuilder"]
PACKAGE = "neuronxsim.starfish.penguin.targets.codegen"


@pytest.mark.parametrize("name", MODULES)
def test_the_codegen_modules_are_cython_extension_modules(name):
    module = importlib.import_module(f"{PACKAGE}.{name}")
    assert isinstance(module.__loader__, importlib.machinery.ExtensionFileLoader)
    assert module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    folder = os.path.dirname(module.__file__)
    assert not os.path.exists(os.path.join(folder, name + ".py"))
    # Cython compiles each def into a cython_function_or_method (CPython would make a function).
    cls = getattr(module, name)
    method = cls.codegenBIRKernel if name == "BirCodeGenLoop" else cls.__dict__["codegen_method"].__func__
    assert type(method).__name__ == "cython_function_or_method"
