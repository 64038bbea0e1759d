"""``neuronxsim lower PROGRAM -o module.json``: a Penguin program -> BIR JSON with kernel nodes,
plus the kernel-metrics sidecar next to it."""

from __future__ import annotations

from neuronxsim import bir
from neuronxsim.cli.programs import load_program
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelMetricsCollector

#: BIR's name of each NeuronCore generation.
ARCH_TO_BIR = {"trn1": "gen2", "trn2": "gen3"}


def add_parser(sub) -> None:
    p = sub.add_parser("lower", help="lower a Penguin program (.py or .json) to BIR JSON with kernel nodes")
    p.add_argument("program", help="a .json program (Program.save) or a .py file defining `program` / `build_program()`")
    p.add_argument("-o", "--output", required=True, help="the BIR JSON file to write")
    p.add_argument("--arch", choices=sorted(ARCH_TO_BIR), default="trn1")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    program = load_program(args.program)
    module = bir.Module()
    module.arch = ARCH_TO_BIR[args.arch]
    loop = BirCodeGenLoop(module)
    loop.lower(program)
    loop.save(args.output)
    if not args.quiet:
        counts = ", ".join(f"{name} x{n}" for (_, name), n in sorted(loop.kernel_counts.items(), key=str))
        print(f"lowered '{program.name}': {len(program.insts)} macros -> {args.output} ({counts}); "
              f"metrics in {KernelMetricsCollector.sidecar_path(args.output)}")
    return 0
