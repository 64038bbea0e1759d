"""``neuronxsim simulate module.json [--inputs inputs.npz]``: runs a BIR module on the simulator.

Kernel nodes are resolved first (``--analytic`` keeps them in timing mode, timed by their
analytic cost). Inputs come from an .npz by tensor name, converted to each tensor's dtype; any
input it lacks (or all, without ``--inputs``) is seeded random normal. Writes outputs.npz (full
mode), report.json, trace.json and timeline.png to the folder ``--output``, replaced as a whole.
"""

from __future__ import annotations

import os

import numpy as np

from neuronxsim import bir
from neuronxsim import pipeline
from neuronxsim.cli import files, kernel_report
from neuronxsim.cli.output_set import OutputSet
from neuronxsim.errors import SimulationError


def add_parser(sub) -> None:
    p = sub.add_parser("simulate", help="simulate a BIR JSON module (outputs, report, trace, timeline)")
    p.add_argument("module", help="BIR JSON (kernel nodes are resolved first)")
    p.add_argument("--inputs", help=".npz of input arrays by tensor name (missing ones: seeded random)")
    p.add_argument("--arch", choices=sorted(pipeline.ARCHS), default="trn1")
    p.add_argument("--mode", choices=("full", "timing"), default="full")
    p.add_argument("--analytic", action="store_true",
                   help="timing mode: keep kernel nodes and time them by their analytic cost")
    p.add_argument("--seed", type=int, default=0, help="seed of generated inputs")
    p.add_argument("--output", default="neuronxsim-sim", help="output folder (default ./neuronxsim-sim)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=run)


def _inputs(module, arch: str, path, seed: int) -> tuple[dict, list]:
    """(arrays by name, names generated at random)."""
    from neuronxsim import sim

    wanted = sim.input_tensors(module, arch)
    given = {}
    if path:
        with np.load(path, allow_pickle=False) as npz:
            given = {k: npz[k] for k in npz.files}
        unknown = sorted(set(given) - set(wanted))
        if unknown:
            raise SimulationError(f"{path}: arrays {unknown} are not inputs of the module; its inputs are "
                                  f"{sorted(wanted)}")
    rng = np.random.default_rng(seed)
    arrays, generated = {}, []
    for name, (shape, dtype) in wanted.items():
        if name in given:
            a = given[name]
            if tuple(a.shape) != shape:
                raise SimulationError(f"{path}: '{name}' is {list(a.shape)}; the module's input is {list(shape)}")
            arrays[name] = a.astype(dtype)
        else:
            values = rng.standard_normal(shape) if dtype.kind in "fV" else rng.integers(0, 8, shape)
            arrays[name] = values.astype(dtype)
            generated.append(name)
    return arrays, generated


def run(args) -> int:
    from neuronxsim import sim

    if args.analytic and args.mode != "timing":
        raise SimulationError("--analytic times kernel nodes without running them: it needs --mode timing")
    output = OutputSet(args.output, "simulate")
    module = bir.load(args.module)
    nodes = kernel_report.kernel_nodes(module)
    if nodes and not args.analytic:
        module = pipeline.resolve(module, os.path.dirname(os.path.abspath(args.module))).module
    full = args.mode == "full"
    inputs, generated = _inputs(module, args.arch, args.inputs, args.seed) if full else (None, [])
    result = pipeline.simulate(module, inputs, arch=args.arch, mode=args.mode)
    summary = pipeline.report(result, nodes)
    rows, busy = summary.rows, summary.engine_busy
    with output as out:
        if full:
            out.write_with("outputs.npz", files.npz_writer(result.outputs))
        out.write_with("trace.json", result.write_trace)
        out.write_with("timeline.png", files.timeline_writer(
            result, rows, f"{os.path.basename(args.module)}: {args.arch}, {result.total_ns / 1e3:.1f} us"))
        out.write_json("report.json", {
            "command": "simulate", "module": os.path.abspath(args.module), "arch": args.arch, "mode": args.mode,
            "seed": args.seed, **summary.to_json(), "generated_inputs": generated})
    if not args.quiet:
        if generated:
            print(f"inputs generated at random (seed {args.seed}): {', '.join(generated)}")
        if rows:
            print(kernel_report.format_table(rows, result.total_ns, with_errors=False))
        print(f"{result.total_ns / 1e3:.1f} us on {result.config.neuron_core} ({args.arch}), "
              f"{result.instruction_count} instructions, PE MFU {result.pe_mfu:.1%}; busy: "
              + ", ".join(f"{e} {busy[e]:.0%}" for e in kernel_report.ENGINES))
        print(f"wrote {args.output}/: " + ("outputs.npz, " if full else "") + "report.json, trace.json, timeline.png")
    return 0
