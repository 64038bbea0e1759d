"""``neuronxsim simulate module.json [--inputs inputs.npz]``: runs a BIR module on the simulator.

Kernel nodes are resolved first (``--analytic`` keeps them in timing mode, each timed as one
step: the cached simulated time of the node's own expansion, walrus KernelNodeLatency). Inputs come from an .npz by tensor name (checked before anything is decompressed,
see ``npz``), converted to each tensor's dtype (floats may round; a value the dtype cannot hold,
such as one that would wrap or overflow, is refused); any input it lacks (or all, without
``--inputs``) is seeded random normal. Writes outputs.npz (full mode), report.json, trace.json
and timeline.png to the folder ``--output``, replaced as a whole. An output the run left partly
unwritten is a warning on stderr (and ``unwritten_outputs`` in the report), not a failure.
"""

from __future__ import annotations

import os

import numpy as np

from neuronxsim import pipeline
from neuronxsim.bir import target
from neuronxsim.cli import arguments, files, kernel_report, memory, printing
from neuronxsim.cli.inputs import check_file
from neuronxsim.cli.npz import read_npz
from neuronxsim.cli.output_set import OutputSet
from neuronxsim.cli.progress import Progress
from neuronxsim.cli.resolve import load_module, naming_module_file
from neuronxsim.errors import SimulationError


def add_parser(sub) -> None:
    p = sub.add_parser("simulate", help="simulate a BIR JSON module (outputs, report, trace, timeline)")
    p.add_argument("module", help="BIR JSON (kernel nodes are resolved first)")
    p.add_argument("--inputs", type=arguments.file, help=".npz of input arrays by tensor name (missing ones: seeded random)")
    p.add_argument("--arch", choices=sorted(pipeline.ARCHS),
                   help="the module's generation (default: its own \"arch\"; another is refused)")
    p.add_argument("--mode", choices=pipeline.MODES, default="full")
    p.add_argument("--analytic", action="store_true",
                   help="timing mode: keep kernel nodes unexpanded, each timed as one step by the cached "
                        "simulated time of its expansion")
    p.add_argument("--seed", type=arguments.seed, default=0, help="seed of generated inputs")
    p.add_argument("--output", type=arguments.folder, default="neuronxsim-sim",
                   help="output folder (default ./neuronxsim-sim)")
    printing.add_options(p)
    p.set_defaults(func=run)


def _inputs(wanted: dict, path, seed: int) -> tuple[dict, list]:
    """(arrays by name, names generated at random)."""
    given = read_npz(path, wanted) if path else {}
    rng = np.random.default_rng(seed)
    arrays, generated = {}, []
    for name, (shape, dtype) in wanted.items():
        if name in given:
            arrays[name] = given[name]
        else:
            values = rng.standard_normal(shape) if dtype.kind in "fV" else rng.integers(0, 8, shape)
            arrays[name] = values.astype(dtype)
            generated.append(name)
    return arrays, generated


def run(args) -> int:
    from neuronxsim import sim

    if args.analytic and args.mode != "timing":
        raise SimulationError("--analytic times kernel nodes without running them: it needs --mode timing")
    output = OutputSet(args.output, "simulate", inputs=(args.module, args.inputs))
    if args.inputs:
        check_file(args.inputs, "inputs archive", limit=1 << 62)
    full = args.mode == "full"
    steps = [("read the module", 1), ("resolve kernel nodes", 1), (f"simulate ({args.mode} mode)", 6),
             ("write outputs, trace, timeline, report", 1)]
    progress = Progress(steps, quiet=args.quiet or args.json)
    with progress:
        with progress.step(steps[0][0]):
            module = load_module(args.module)
            nodes = kernel_report.kernel_nodes(module)
            args.arch = args.arch or target.canonical_arch(module.arch)
        with progress.step(steps[1][0]), naming_module_file(args.module):
            if nodes and not args.analytic:
                module = pipeline.resolve(module, os.path.dirname(os.path.abspath(args.module))).module
        memory.check(memory.simulation_bytes(module, args.arch, args.mode), f"simulating {args.module}",
                     "Try --mode timing (no numerics)." if full else "Try a smaller module.")
        with progress.step(steps[2][0]) as step:
            with naming_module_file(args.module):
                wanted = sim.input_tensors(module, args.arch) if full else None
            inputs, generated = _inputs(wanted, args.inputs, args.seed) if full else (None, [])
            with naming_module_file(args.module):
                result = pipeline.simulate(module, inputs, arch=args.arch, mode=args.mode,
                                           on_progress=step.fraction)
        summary = pipeline.report(result, nodes)
        printing.warn_unwritten_outputs(summary)
        with progress.step(steps[3][0], unit="trace slices written") as step, output as out:
            if full:
                out.write_with("outputs.npz", files.npz_writer(result.outputs))
            out.write_with("trace.json", lambda path: result.write_trace(path, on_progress=step.fraction))
            out.write_with("timeline.png", files.timeline_writer(
                result, summary.rows, f"{os.path.basename(args.module)}: {args.arch}, {result.total_ns / 1e3:.1f} us"))
            document = {"command": "simulate", "module": os.path.abspath(args.module), "arch": args.arch,
                        "mode": args.mode, "seed": args.seed, **summary.to_json(), "generated_inputs": generated}
            out.write_json("report.json", document)

    def text():
        if generated:
            print(f"inputs generated at random (seed {args.seed}): {', '.join(generated)}")
        if summary.rows:
            print(kernel_report.format_table(summary.rows, result.total_ns, with_errors=False))
        print(f"{result.total_ns / 1e3:.1f} us on {result.config.neuron_core} ({args.arch}), "
              f"{result.instruction_count} instructions, {kernel_report.pe_mfu_text(result)}")
        print("\n".join(kernel_report.busy_lines(result)))
        print(f"wrote {args.output}/: " + ("outputs.npz, " if full else "") + "report.json, trace.json, timeline.png")

    printing.emit(args, {**document, "output": args.output}, text)
    return 0
