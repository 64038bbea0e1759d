"""``neuronxsim run``: the built-in Llama decoder layer, lowered, resolved, simulated, checked
against NumPy and profiled end to end (neuronxsim/models/llama_decoder.py).

Writes the folder ``--output`` (default ./neuronxsim-run), replaced as a whole (``OutputSet``):
``trace.json`` (Chrome trace events: open in https://ui.perfetto.dev), ``timeline.png`` (per-engine
Gantt chart),
``report.json`` (every number of the table), ``program.json`` (the Penguin program),
``lowered.json`` (BIR with the kernel nodes) and ``klr/`` (the IT56 kernel's KLR file).
Exit status 0, or 2 when an output is outside its tolerance (after the table is printed).
"""

from __future__ import annotations

import platform
import sys

import numpy as np

import neuronxsim
from neuronxsim import bir, pipeline
from neuronxsim.cli import arguments, files, kernel_report, memory, printing
from neuronxsim.cli.output_set import OutputSet
from neuronxsim.cli.progress import Progress, traced_instructions
from neuronxsim.models import llama_decoder as layer

EXIT_TOLERANCE = 2

#: The files of the output folder, by role (report.json lists them, relative to the folder).
FILES = (("trace", "trace.json"), ("timeline", "timeline.png"), ("report", "report.json"),
         ("program", "program.json"), ("lowered", "lowered.json"))

_SIZE_OPTIONS = (("tokens", "tokens of the sequence"), ("hidden", "hidden size"),
                 ("q_heads", "query heads"), ("kv_heads", "key/value heads (divides --q-heads)"),
                 ("head_dim", "features per head (even, <= 128)"), ("intermediate", "MLP intermediate size"),
                 ("seed", "seed of the random inputs and weights"))


def add_parser(sub) -> None:
    defaults = layer.DecoderConfig()
    p = sub.add_parser("run", help="lower, resolve, simulate and check the built-in Llama decoder layer",
                       description="Runs a Llama-style decoder layer (fused RMSNorm + QKV, RoPE as a user NKI "
                                   "kernel, causal attention, output projection, MLP with the fused residual add, "
                                   "and a registry transpose for the K cache) through the whole tool chain and "
                                   "prints where the time went.")
    for name, what in _SIZE_OPTIONS:
        p.add_argument("--" + name.replace("_", "-"), type=arguments.seed if name == "seed" else arguments.size,
                       default=getattr(defaults, name), help=f"{what} (default {getattr(defaults, name)})")
    p.add_argument("--arch", choices=sorted(pipeline.ARCHS), default="trn1", help="NeuronCore generation")
    p.add_argument("--mode", choices=("full", "timing"), default="full",
                   help="full: numerics, time and the check against NumPy; timing: time only (large sizes)")
    p.add_argument("--output", type=arguments.folder, default="neuronxsim-run",
                   help="output folder (default ./neuronxsim-run)")
    printing.add_options(p)
    p.set_defaults(func=run)


def _check_outputs(cfg, inputs, outputs):
    """Per checked tensor: max |a - b|, the public comparator's bound, and whether it holds."""
    expected = layer.reference(cfg, inputs)
    checks = {}
    for name, want in expected.items():
        got = np.asarray(outputs[name], np.float32)
        error = float(np.max(np.abs(got - want))) if np.all(np.isfinite(got)) else float("inf")
        bound = layer.ATOL + layer.RTOL * float(np.max(np.abs(want)))
        checks[name] = {"kernel": layer.PRODUCER[name], "max_abs_error": error, "max_abs_reference": float(
            np.max(np.abs(want))), "tolerance": bound, "ok": error <= bound}
    return checks


def _attach_errors(rows, checks) -> None:
    """Each kernel's worst checked tensor (by error over tolerance) goes into its row."""
    for row in rows:
        mine = [c for c in checks.values() if c["kernel"] == row.name]
        if mine:
            worst = max(mine, key=lambda c: (not c["ok"], c["max_abs_error"] / max(c["tolerance"], 1e-30)))
            row.max_error, row.tolerance = worst["max_abs_error"], worst["tolerance"]
            row.ok = all(c["ok"] for c in mine)


def _where_time_went(result, rows, busy) -> list:
    lines = [f"layer: {result.total_ns / 1e3:.1f} us on {result.config.neuron_core} ({result.arch}), "
             f"{result.instruction_count} instructions, {kernel_report.pe_mfu_text(result)}"]
    lines += kernel_report.busy_lines(result)
    if rows:
        top = sorted(rows, key=lambda r: -r.added_ns)[:3]
        lines.append("most time: " + ", ".join(
            f"{r.name} {r.added_ns / result.total_ns:.0%} (PE {r.busy['PE']:.0%}, DMA {r.busy['DMA']:.0%})" for r in top))
    return lines


def run(args) -> int:
    cfg = layer.DecoderConfig(**{name: getattr(args, name) for name, _ in _SIZE_OPTIONS})
    cfg.check()
    full = args.mode == "full"
    output = OutputSet(args.output, "run")
    memory.check(layer.host_bytes(cfg, args.mode), f"checking {cfg.tokens} tokens against the NumPy layer",
                 "Use --mode timing (time only, no numerics) or fewer --tokens.")
    steps = [("build program and inputs", 1), ("lower: BirCodeGenLoop", 1),
             ("resolve: InlineBIRKernel, lowerKernelInst", 1), (f"simulate ({args.mode} mode)", 4)]
    if full:
        steps.append(("check against NumPy", 2))
    steps.append(("write trace, timeline, report", 1))
    with Progress(steps, quiet=args.quiet or args.json) as progress, output as out:
        with progress.step(steps[0][0]):
            program = layer.build_program(cfg)
            inputs = layer.make_inputs(cfg) if full else None
        with progress.step(steps[1][0], count=traced_instructions, unit="instructions traced"):
            lowered = out.write_files(lambda folder: pipeline.lower(program, args.arch, out_dir=folder))
        with progress.step(steps[2][0]):
            resolved = pipeline.resolve(lowered)
        memory.check(memory.simulation_bytes(resolved.module, args.arch, args.mode),
                     f"simulating the layer's {sum(len(b.instructions) for f in resolved.module.functions for b in f.blocks)} "
                     "instructions", "Use --mode timing (no numerics) or smaller sizes." if full else "Use smaller sizes.")
        with progress.step(steps[3][0]) as step:
            result = pipeline.simulate(resolved, inputs, arch=args.arch, mode=args.mode, on_progress=step.fraction)
        summary = pipeline.report(result, resolved.nodes)
        printing.warn_unwritten_outputs(summary)
        rows = summary.rows
        checks = {}
        if full:
            with progress.step("check against NumPy"):
                checks = _check_outputs(cfg, inputs, result.outputs)
                _attach_errors(rows, checks)
        with progress.step(steps[-1][0], unit="trace slices written") as step:
            report = {
                "neuronxsim": neuronxsim.__version__, "command": "run", "arch": args.arch, "mode": args.mode,
                "layer": {"name": program.name, **vars(cfg)}, **summary.to_json(), "checks": checks,
                "tolerance": {"rtol": layer.RTOL, "atol": layer.ATOL,
                              "rule": "max|a - b| <= atol + rtol * max|reference|"},
                "host_seconds": dict(progress.seconds), "host": platform.platform(),
                "files": dict(FILES),
            }
            out.write_text("program.json", program.dumps() + "\n")
            out.write_with("lowered.json", lambda path: bir.save(lowered.module, path))
            out.write_with("trace.json", lambda path: result.write_trace(path, on_progress=step.fraction))
            out.write_with("timeline.png", files.timeline_writer(
                result, rows, f"{program.name}: {cfg.tokens} tokens, hidden {cfg.hidden}, {args.arch}, "
                              f"{result.total_ns / 1e3:.1f} us"))
            out.write_json("report.json", report)

    failed = [name for name, c in checks.items() if not c["ok"]]

    def text():
        print(f"{program.name}: {cfg.tokens} tokens, hidden {cfg.hidden}, {cfg.q_heads} query / {cfg.kv_heads} kv "
              f"heads of {cfg.head_dim}, intermediate {cfg.intermediate}, bf16; {args.arch}, {args.mode} mode\n")
        print(kernel_report.format_table(rows, result.total_ns, with_errors=full))
        print()
        print("\n".join(_where_time_went(result, rows, summary.engine_busy)))
        if full:
            print(f"check: {len(checks) - len(failed)} of {len(checks)} outputs within max|a - b| <= "
                  f"{layer.ATOL} + {layer.RTOL} * max|ref| of the NumPy layer")
        print(f"wrote {args.output}/: trace.json (Perfetto), timeline.png, report.json, program.json, lowered.json, klr/")

    printing.emit(args, {k: v for k, v in report.items() if k != "neuronxsim"}, text)
    if failed:
        print(f"neuronxsim: error: outside tolerance: {', '.join(failed)}", file=sys.stderr)
        return EXIT_TOLERANCE
    return 0
