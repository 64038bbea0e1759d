"""``neuronxsim resolve module.json -o resolved.json``: expands every kernel node of a BIR module
(IT54 and IT55 by InlineBIRKernel, IT56 by lowerKernelInst) into ISA instructions."""

from __future__ import annotations

import collections
import os

from neuronxsim import bir
from neuronxsim import pipeline
from neuronxsim.cli import kernel_report


def add_parser(sub) -> None:
    p = sub.add_parser("resolve", help="expand the kernel nodes of a BIR JSON module into ISA instructions")
    p.add_argument("module", help="BIR JSON with kernel nodes (e.g. from `neuronxsim lower`)")
    p.add_argument("-o", "--output", required=True, help="the ISA-level BIR JSON file to write")
    p.add_argument("--base-dir", help="where relative IT56 KLR paths are found (default: the module's folder)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    module = bir.load(args.module)
    nodes = kernel_report.kernel_nodes(module)
    base = args.base_dir or os.path.dirname(os.path.abspath(args.module))
    resolved = pipeline.resolve(module, base).module
    bir.save(resolved, args.output)
    if not args.quiet:
        per_kernel = collections.Counter(i.kernel for f in resolved.functions for b in f.blocks for i in b.instructions)
        sinks = collections.Counter(n.sink for n in nodes)
        print(f"resolved {len(nodes)} kernel nodes ({', '.join(f'{s} x{c}' for s, c in sorted(sinks.items()))}) -> "
              f"{args.output}: {sum(per_kernel.values())} instructions in {len(resolved.functions)} function(s)")
        for n in nodes:
            print(f"  {n.name:<24} {n.sink}  {n.kernel:<40} {per_kernel.get(n.name, 0):>7} instructions")
    return 0
