"""``neuronxsim lower PROGRAM -o DIR``: a Penguin program -> the folder DIR, replaced as a whole:
``module.json`` (BIR JSON with kernel nodes), ``module.kernel_metrics.json`` (the kernel metrics
sidecar) and, for IT56 nodes, their KLR files in ``klr/`` (referred to as ``klr/<file>``, relative
to the folder, so it can be moved)."""

from __future__ import annotations

import os

from neuronxsim import bir, pipeline
from neuronxsim.cli import arguments, printing
from neuronxsim.cli.output_set import OutputSet
from neuronxsim.cli.programs import load_program
from neuronxsim.errors import CodegenError
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelMetricsCollector

#: The module's name in the output folder.
MODULE = "module.json"


def add_parser(sub) -> None:
    p = sub.add_parser("lower", help="lower a Penguin program (.py or .json) to BIR JSON with kernel nodes")
    p.add_argument("program", help="a .json program (Program.save) or a .py file defining `program` / `build_program()`")
    p.add_argument("-o", "--output", required=True, metavar="DIR", type=arguments.folder,
                   help="the output folder: module.json, its kernel metrics and klr/")
    p.add_argument("--arch", choices=sorted(pipeline.ARCHS), default="trn1")
    printing.add_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.output.endswith(".json"):
        raise CodegenError(f"-o {args.output}: lower writes a folder (module.json, its kernel metrics and "
                           "klr/); name the folder, e.g. -o lowered")
    output = OutputSet(args.output, "lower", inputs=(args.program,))
    program = load_program(args.program)
    with output as out:
        lowered = out.write_files(lambda folder: pipeline.lower(program, args.arch, out_dir=folder))
        out.write_with(MODULE, lambda path: bir.save(lowered.module, path))
        metrics = KernelMetricsCollector.get_instance()
        out.write_with(KernelMetricsCollector.sidecar_path(MODULE), lambda path: metrics.write_sidecar(
            os.path.join(os.path.dirname(path), MODULE), lowered.kernel_counts))
    kernels = [{"category": category.value, "kernel_name": name, "count": n}
               for (category, name), n in sorted(lowered.kernel_counts.items(), key=str)]
    module_path = os.path.join(args.output, MODULE)
    sidecar = os.path.join(args.output, KernelMetricsCollector.sidecar_path(MODULE))

    def text():
        counts = ", ".join(f"{k['kernel_name']} x{k['count']}" for k in kernels)
        print(f"lowered '{program.name}': {len(program.insts)} macros -> {module_path} ({counts}); metrics in {sidecar}")

    printing.emit(args, {"command": "lower", "program": program.name, "macros": len(program.insts),
                         "module": module_path, "kernel_metrics": sidecar, "kernels": kernels}, text)
    return 0
