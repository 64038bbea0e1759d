"""Loading a Penguin macro program from a file: JSON (``Program.save``) or Python.

A Python program file defines ``program`` (a ``penguin.ir.Program``) or ``build_program()``
returning one; it runs as a script would (``__name__ == "__neuronxsim_program__"``).
"""

from __future__ import annotations

import os
import runpy

from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin.ir import Program


def load_program(path) -> Program:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if path.endswith(".json"):
        return Program.load(path)
    if not path.endswith(".py"):
        raise CodegenError(f"{path}: a program is a .json file (Program.save) or a .py file defining "
                           "`program` or `build_program()`")
    namespace = runpy.run_path(path, run_name="__neuronxsim_program__")
    if "program" in namespace:
        program = namespace["program"]
    elif callable(namespace.get("build_program")):
        program = namespace["build_program"]()
    else:
        raise CodegenError(f"{path}: defines neither `program` nor `build_program()`")
    if not isinstance(program, Program):
        raise CodegenError(f"{path}: `program` is {type(program).__name__}; expected a penguin.ir Program")
    return program
