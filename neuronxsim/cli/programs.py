"""Loading a Penguin macro program from a file: JSON (``Program.save``) or Python.

A Python program file defines ``program`` (a ``penguin.ir.Program``) or ``build_program()``
returning one; it runs as a script would (``__name__ == "__neuronxsim_program__"``). An exception
in it is reported at the program's own line (``failures.user_code``).
"""

from __future__ import annotations

import runpy

from neuronxsim.cli.failures import user_code
from neuronxsim.cli.inputs import InputError, check_file, check_python_source, read_bytes
from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin.ir import Program


def load_program(path) -> Program:
    path = check_file(path, "program")
    if not path.endswith((".json", ".py")):
        raise InputError(f"{path}: a program is a .json file (Program.save) or a .py file defining "
                         "`program` or `build_program()`")
    if path.endswith(".json"):
        data = read_bytes(path, "program")
        try:
            return Program.loads(data)
        except CodegenError as e:
            raise CodegenError(f"{path}: {e}") from None
    check_python_source(path, "program")
    with user_code(path):
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
