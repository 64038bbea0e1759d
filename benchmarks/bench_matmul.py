"""Full-mode numerics on matmul-heavy modules vs NumPy float32 doing the same matrix products.

  python benchmarks/bench_matmul.py [--repeat 10] [--small]

GEMM: C[2048, 2048] = lhsT[2048, 2048]^T @ rhs[2048, 2048] (bf16 in, fp32 PSUM).
MLP chain: 512 tokens, 4096 -> 11008 -> 4096 (Gelu between). NumPy times only the products, in
float32, on the same (bf16-valued) operands. Target: simulator / NumPy <= 1.5.

Ten rounds by default: on a shared host either side's time moves by a quarter from one second to
the next, and the best of three often pairs one side's good moment with the other's bad one.
"""

from __future__ import annotations

import argparse
import math
import time

import ml_dtypes
import numpy as np

from common import host_note, interleaved, median_round_ratio, print_table, run_reference
from modules import mlp_chain, tiled_gemm
from neuronxsim import sim

_erf = np.vectorize(math.erf, otypes=[np.float32])


def gemm_case(n: int, rng) -> dict:
    b = tiled_gemm(n, n, n)
    lhsT = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    rhs = rng.standard_normal((n, n), dtype=np.float32).astype(ml_dtypes.bfloat16)
    a32, b32 = lhsT.astype(np.float32).T.copy(), rhs.astype(np.float32)
    products = lambda: a32 @ b32  # noqa: E731

    def rel_err(outputs):
        ref = products()
        return float(np.abs(outputs["c"] - ref).max() / np.abs(ref).max())
    return dict(module=b.module, inputs={"lhsT": lhsT, "rhs": rhs}, numpy=products, rel_err=rel_err)


def mlp_case(tokens: int, d: int, f: int, rng) -> dict:
    b = mlp_chain(tokens, d, f)
    x = (rng.standard_normal((tokens, d), dtype=np.float32) * 0.5).astype(ml_dtypes.bfloat16)
    w1 = (rng.standard_normal((d, f), dtype=np.float32) / np.sqrt(d)).astype(ml_dtypes.bfloat16)
    w2 = (rng.standard_normal((f, d), dtype=np.float32) / np.sqrt(f)).astype(ml_dtypes.bfloat16)
    x32, w132, w232 = x.astype(np.float32), w1.astype(np.float32), w2.astype(np.float32)

    def products():  # the two matrix products; the Gelu between them is not matrix work
        h = x32 @ w132
        return h @ w232

    def rel_err(outputs):  # the module keeps h = gelu(x @ W1) in SBUF as bf16
        h = x32 @ w132
        h = (0.5 * h * (1 + _erf(h / np.float32(math.sqrt(2))))).astype(ml_dtypes.bfloat16).astype(np.float32)
        ref = h @ w232
        return float(np.abs(outputs["yT"].T - ref).max() / np.abs(ref).max())
    return dict(module=b.module, inputs={"xT": np.ascontiguousarray(x.T), "w1": w1, "w2": w2}, numpy=products,
                rel_err=rel_err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--small", action="store_true", help="quick sizes for a smoke run")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    cases = {
        "GEMM 2048x2048x2048": gemm_case(512 if args.small else 2048, rng),
        "MLP 512x4096x11008x4096": mlp_case(512, 512 if args.small else 4096, 1024 if args.small else 11008, rng),
    }
    print(host_note())
    rows = []
    for name, c in cases.items():
        res = interleaved({"sim": lambda: sim.simulate(c["module"], c["inputs"]), "numpy": c["numpy"]}, args.repeat)
        t_sim, t_np, r = res["sim"].best, res["numpy"].best, res["sim"].last
        t0 = time.perf_counter()
        run_reference(c["module"], c["inputs"])
        ref_cell = (time.perf_counter() - t0) / t_sim
        rows.append([name, t_sim, t_np, t_sim / t_np, median_round_ratio(res["sim"], res["numpy"]), ref_cell,
                     r.total_ns / 1e3, f"{r.pe_mfu:.1%}", c["rel_err"](r.outputs)])
    print_table(f"full mode vs NumPy float32 products (best of {args.repeat}, interleaved; median of the "
                f"per-round ratios)", ["case", "sim s", "numpy s", "sim/numpy", "median", "ref/sim", "simulated us",
                                       "PE MFU", "max rel err"], rows)


if __name__ == "__main__":
    main()
