"""``neuronxsim demo``: a module with all three kernel nodes (neuronxsim/demo.py), printed and
written as BIR JSON to a folder."""

from __future__ import annotations

import os

from neuronxsim.cli import arguments, printing


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="build a module with all three kernel nodes, print it, write its BIR JSON")
    p.add_argument("--output", type=arguments.folder, default="neuronxsim-demo",
                   help="output folder (default ./neuronxsim-demo)")
    printing.add_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from neuronxsim.bir.printer import format_module
    from neuronxsim.demo import write_demo

    path, module = write_demo(args.output)
    printing.emit(args, {"command": "demo", "module": path, "nodes": [
        {"name": i.name, "opcode": i.opcode_name} for b in module.function(0).blocks for i in b.instructions]},
        lambda: print(f"{format_module(module)}\n\nwrote {path} ({os.path.getsize(path)} bytes)"))
    return 0
