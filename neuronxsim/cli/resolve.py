"""``neuronxsim resolve module.json -o resolved.json``: expands every kernel node of a BIR module
(IT54 by InlineBIRKernel, IT55, IT56 by lowerKernelInst: one pass per kind) into ISA instructions.
File references of kernel nodes resolve inside the module's folder (or ``--base-dir``)."""

from __future__ import annotations

import collections
import contextlib
import os

from neuronxsim import bir, pipeline
from neuronxsim.cli import arguments, printing
from neuronxsim.cli.inputs import InputError, check_output_file, read_text
from neuronxsim.errors import KernelError, SimulationError


def add_parser(sub) -> None:
    p = sub.add_parser("resolve", help="expand the kernel nodes of a BIR JSON module into ISA instructions")
    p.add_argument("module", help="BIR JSON with kernel nodes (e.g. from `neuronxsim lower`)")
    p.add_argument("-o", "--output", required=True, help="the ISA-level BIR JSON file to write")
    p.add_argument("--base-dir", type=arguments.folder,
                   help="the folder kernel nodes' files are found in (default: the module's folder); "
                        "no file outside it is read")
    printing.add_options(p)
    p.set_defaults(func=run)


def load_module(path: str) -> bir.Module:
    """A BIR JSON module file, read as a regular file (see ``inputs``); errors name the file."""
    text = read_text(path, "module")
    try:
        return bir.Module.from_json(text)
    except bir.BIRError as e:
        raise bir.BIRError(f"{path}: {e}") from None


@contextlib.contextmanager
def naming_module_file(path: str):
    """Refusals of resolving or simulating the module read from ``path`` (they name a kernel node
    or an instruction by its place in the module) name the file too, as load_module's do."""
    try:
        yield
    except (KernelError, SimulationError) as e:
        raise type(e)(f"{path}: {e}") from None


def run(args) -> int:
    if not args.output.strip():
        raise InputError("-o is empty; name the file to write")
    check_output_file(args.output, "-o")
    base = args.base_dir or os.path.dirname(os.path.abspath(args.module))
    if args.base_dir and not os.path.isdir(args.base_dir):
        raise InputError(f"--base-dir {args.base_dir}: not a folder")
    module = load_module(args.module)
    with naming_module_file(args.module):
        resolved = pipeline.resolve(module, base)
    bir.save(resolved.module, args.output)
    per_kernel = collections.Counter(i.kernel for f in resolved.module.functions for b in f.blocks
                                     for i in b.instructions)
    sinks = collections.Counter(n.sink for n in resolved.nodes)
    nodes = [{"name": n.name, "sink": n.sink, "kernel": n.kernel, "instructions": per_kernel.get(n.name, 0)}
             for n in resolved.nodes]

    def text():
        print(f"resolved {len(nodes)} kernel nodes ({', '.join(f'{s} x{c}' for s, c in sorted(sinks.items()))}) -> "
              f"{args.output}: {sum(per_kernel.values())} instructions in {len(resolved.module.functions)} function(s)")
        for n in nodes:
            print(f"  {n['name']:<24} {n['sink']}  {n['kernel']:<40} {n['instructions']:>7} instructions")

    printing.emit(args, {"command": "resolve", "module": args.module, "output": args.output,
                         "instructions": sum(per_kernel.values()), "functions": len(resolved.module.functions),
                         "kernel_nodes": nodes}, text)
    return 0
