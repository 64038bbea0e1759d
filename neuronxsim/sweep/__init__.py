"""Kernel autotuning on the simulator: every combination of a kernel's meta-parameter values
(and shape sets, and generations) traced and simulated, on a local process pool or a Dask
cluster, one result row per configuration.

>>> from neuronxsim.sweep import sweep
>>> rows = sweep("blocked_matmul.py:blocked_matmul",                     # doctest: +SKIP
...              grid={"TILES_IN_BLOCK_M": [1, 2, 4], "TILES_IN_BLOCK_N": [1, 2]},
...              shapes=[["1024x4096:bfloat16", "1024x2048:bfloat16"]], output="sweep-out")
>>> min((r for r in rows if r["status"] == "ok"), key=lambda r: r["total_ns"])  # doctest: +SKIP

Rows are dicts, the lines of ``<output>/results.jsonl`` (see docs/sweep.md for every field).
The command line is ``neuronxsim sweep``.
"""

from __future__ import annotations

from typing import Callable, Optional

from neuronxsim.sweep.driver import ATOL, RTOL, plan, run_sweep
from neuronxsim.sweep.space import SweepError, parse_args, parse_grid
from neuronxsim.sweep.summary import check_colour, picture


def sweep(kernel: str, grid: dict, shapes: list, *, arch: Optional[list] = None,
          mode: str = "timing", args: Optional[dict] = None, reference: Optional[str] = None,
          rtol: float = RTOL, atol: float = ATOL, seed: int = 0,
          output: str = "neuronxsim-sweep", resume: bool = False, jobs: Optional[int] = None,
          scheduler: Optional[str] = None, trace_cache: Optional[str] = None,
          colour: Optional[str] = None, allow_shadowing: bool = False,
          on_row: Optional[Callable] = None, max_instructions: Optional[int] = None) -> list[dict]:
    """Runs every configuration of ``kernel`` and returns their rows, in configuration order.

    Args:
        kernel: ``"FILE.py:NAME"`` of an ``nki.jit`` kernel of either dialect (``import nki``
            or ``import neuronxcc.nki``; the file runs unmodified).
        grid: parameter name -> the values to try (the cross product is swept).
        shapes: shape sets, each one ``"DIMxDIM[:DTYPE]"`` per leading array argument.
        arch: generations (``["trn1", "trn2"]``); None: the dialect's default.
        mode: "timing" (time only) or "full" (numerics too, checked against ``reference``,
            ``"FILE.py:FUNCTION"`` called with the same arrays: pass when
            ``max|out - ref| <= atol + rtol * max|ref|`` for every output, over the
            reference's finite elements; its infinities and NaNs must be matched exactly).
        args: fixed values of other kernel parameters.
        seed: of the random inputs (full mode).
        output: folder of results.jsonl and sweep.png.
        resume: continue the sweep of ``output``/results.jsonl, skipping its configurations.
        jobs: local worker processes (default: the CPU count); Dask workers of a local cluster.
        scheduler: a Dask scheduler's address, or "local" for a LocalCluster.
        trace_cache: a folder of traced kernels reused across configurations and sweeps.
        colour: the parameter the picture colours by (default: the first of ``grid``).
        on_row: called as ``on_row(row, done, total)`` after each row is written.
        max_instructions: the cap on each trace's instructions (None: the default, see
            ``neuronxsim.nki.trace_kernel``); a configuration past it fails with that reason.
    """
    p = plan(kernel, grid=grid, shapes=shapes, arch=arch, mode=mode, args=args,
             reference=reference, rtol=rtol, atol=atol, seed=seed, output=output,
             resume=resume, trace_cache=trace_cache, allow_shadowing=allow_shadowing,
             max_instructions=max_instructions)
    colour = check_colour(colour, list(grid))
    rows, _, _ = run_sweep(p, jobs=jobs, scheduler=scheduler, on_row=on_row)
    picture(rows, p.output, colour, p.kernel.name)
    return rows


__all__ = ["sweep", "SweepError", "parse_grid", "parse_args", "RTOL", "ATOL"]
