"""``neuronxsim lower PROGRAM -o module.json``: a Penguin program -> BIR JSON with kernel nodes,
plus the kernel-metrics sidecar next to it (and, for IT56 nodes, their KLR files in ``klr/``
beside the output, made only when there are some)."""

from __future__ import annotations

import os

from neuronxsim import bir
from neuronxsim import pipeline
from neuronxsim.cli.programs import load_program
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelMetricsCollector


def add_parser(sub) -> None:
    p = sub.add_parser("lower", help="lower a Penguin program (.py or .json) to BIR JSON with kernel nodes")
    p.add_argument("program", help="a .json program (Program.save) or a .py file defining `program` / `build_program()`")
    p.add_argument("-o", "--output", required=True, help="the BIR JSON file to write")
    p.add_argument("--arch", choices=sorted(pipeline.ARCHS), default="trn1")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    program = load_program(args.program)
    lowered = pipeline.lower(program, args.arch, out_dir=os.path.dirname(os.path.abspath(args.output)))
    bir.save(lowered.module, args.output)
    KernelMetricsCollector.get_instance().write_sidecar(args.output, lowered.kernel_counts)
    if not args.quiet:
        counts = ", ".join(f"{name} x{n}" for (_, name), n in sorted(lowered.kernel_counts.items(), key=str))
        print(f"lowered '{program.name}': {len(program.insts)} macros -> {args.output} ({counts}); "
              f"metrics in {KernelMetricsCollector.sidecar_path(args.output)}")
    return 0
