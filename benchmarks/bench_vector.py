"""Streams of small vector/scalar instructions (softmax and LayerNorm over 128-row tiles) in full
mode vs NumPy doing the same math one call per compute instruction (the least any NumPy executor
of these modules does), and vs the NumPy reference executor once it exists.

  python benchmarks/bench_vector.py [--repeat 3] [--rows 8192]

Target: the reference executor takes at least 20x the simulator's time.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from common import host_note, interleaved, print_table, run_reference
from modules import layernorm_numpy_per_op, layernorm_rows, softmax_numpy_per_op, softmax_rows
from neuronxsim import sim


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rows", type=int, default=8192)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(host_note())
    rows = []
    for cols in (64, 512):
        x = rng.standard_normal((args.rows, cols), dtype=np.float32)
        g = rng.standard_normal((128, cols), dtype=np.float32)
        be = rng.standard_normal((128, cols), dtype=np.float32)
        cases = {
            f"softmax [{args.rows}, {cols}]": (softmax_rows(args.rows, cols).module, {"x": x},
                                               lambda: softmax_numpy_per_op(x)),
            f"layernorm [{args.rows}, {cols}]": (layernorm_rows(args.rows, cols).module,
                                                 {"x": x, "gamma": g, "beta": be},
                                                 lambda: layernorm_numpy_per_op(x, g, be)),
        }
        for name, (module, inputs, numpy_fn) in cases.items():
            res = interleaved({"sim": lambda: sim.simulate(module, inputs), "numpy": numpy_fn}, args.repeat)
            t_sim, r, t_np, ref = res["sim"].best, res["sim"].last, res["numpy"].best, res["numpy"].last
            err = float(np.abs(r.outputs["y"] - ref).max())
            n = r.instruction_count
            t0 = time.perf_counter()
            run_reference(module, inputs)
            ref_cell = (time.perf_counter() - t0) / t_sim
            rows.append([name, n, t_sim / n * 1e6, t_np / n * 1e6, t_np / t_sim, ref_cell, err])
    print_table(f"small-instruction streams, full mode (best of {args.repeat}, interleaved)",
                ["case", "instructions", "sim us/instr", "numpy-per-op us/instr", "numpy/sim", "ref/sim",
                 "max abs err"], rows)


if __name__ == "__main__":
    main()
