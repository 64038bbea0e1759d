"""``neuronxsim lower PROGRAM -o DIR``: a Penguin program -> the folder DIR, replaced as a whole:
``module.json`` (BIR JSON with kernel nodes), ``module.kernel_metrics.json`` (the kernel metrics
sidecar) and, for IT56 nodes, their KLR files in ``klr/`` (referred to as ``klr/<file>``, relative
to the folder, so it can be moved)."""

from __future__ import annotations

import os

from neuronxsim import bir, pipeline
from neuronxsim.cli.output_set import OutputSet
from neuronxsim.cli.programs import load_program
from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelMetricsCollector

#: The module's name in the output folder.
MODULE = "module.json"


def add_parser(sub) -> None:
    p = sub.add_parser("lower", help="lower a Penguin program (.py or .json) to BIR JSON with kernel nodes")
    p.add_argument("program", help="a .json program (Program.save) or a .py file defining `program` / `build_program()`")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the output folder: module.json, its kernel metrics and klr/")
    p.add_argument("--arch", choices=sorted(pipeline.ARCHS), default="trn1")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.output.endswith(".json"):
        raise CodegenError(f"-o {args.output}: lower writes a folder (module.json, its kernel metrics and "
                           "klr/); name the folder, e.g. -o lowered")
    output = OutputSet(args.output, "lower")
    program = load_program(args.program)
    with output as out:
        lowered = pipeline.lower(program, args.arch, out_dir=out.path)
        out.write_with(MODULE, lambda path: bir.save(lowered.module, path))
        metrics = KernelMetricsCollector.get_instance()
        out.write_with(KernelMetricsCollector.sidecar_path(MODULE), lambda path: metrics.write_sidecar(
            os.path.join(os.path.dirname(path), MODULE), lowered.kernel_counts))
    if not args.quiet:
        counts = ", ".join(f"{name} x{n}" for (_, name), n in sorted(lowered.kernel_counts.items(), key=str))
        print(f"lowered '{program.name}': {len(program.insts)} macros -> {os.path.join(args.output, MODULE)} "
              f"({counts}); metrics in {os.path.join(args.output, KernelMetricsCollector.sidecar_path(MODULE))}")
    return 0
