"""Peak memory of a full-mode simulation vs the SBUF + PSUM + DRAM tensors it holds.

  python benchmarks/bench_memory.py [--n 2048]

Runs the tiled GEMM in a fresh interpreter; measures the peak resident set during simulate()
(Linux: VmHWM after resetting it through /proc/self/clear_refs) above the resident set before
the DRAM arrays existed. Target: <= 1.2x the bytes of SBUF + PSUM + the DRAM tensors.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from modules import N_TILE

CHILD = r"""
import json, sys
import numpy as np, ml_dtypes
sys.path.insert(0, sys.argv[2])
from modules import tiled_gemm
from neuronxsim import sim

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
n = int(sys.argv[1])
module = tiled_gemm(n, n, n).module
warm = tiled_gemm(128, 128, 512).module
warm.arch = "gen3"  # load code, not the trn1 state
sim.simulate(warm, {"lhsT": np.zeros((128, 128), ml_dtypes.bfloat16), "rhs": np.zeros((128, 512), ml_dtypes.bfloat16)})
base = status("VmRSS")
lhsT = np.ones((n, n), ml_dtypes.bfloat16)
rhs = np.ones((n, n), ml_dtypes.bfloat16)
open("/proc/self/clear_refs", "w").write("5")  # reset VmHWM
r = sim.simulate(module, {"lhsT": lhsT, "rhs": rhs})
peak = status("VmHWM")
cfg = sim.config("trn1")
held = {"sbuf": cfg.num_partitions * cfg.sbuf_bytes_per_partition,
        "psum": cfg.num_partitions * cfg.psum_bytes_per_partition,
        "dram": lhsT.nbytes + rhs.nbytes + r.outputs["c"].nbytes}
print(json.dumps({"peak_above_base": peak - base, "held": held}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2048)
    args = ap.parse_args()
    if args.n <= 0 or args.n % N_TILE:
        ap.error(f"--n {args.n}: the tiled GEMM takes a positive multiple of {N_TILE} (its moving tile)")
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", CHILD, str(args.n), here], check=True, capture_output=True, text=True)
    d = json.loads(out.stdout.strip().splitlines()[-1])
    held = sum(d["held"].values())
    mib = 1 << 20
    print(f"GEMM {args.n}^3, trn1, full mode")
    print("  held: " + ", ".join(f"{k} {v / mib:.1f} MiB" for k, v in d["held"].items()) + f" = {held / mib:.1f} MiB")
    print(f"  peak resident above the pre-array baseline: {d['peak_above_base'] / mib:.1f} MiB")
    print(f"  ratio: {d['peak_above_base'] / held:.3f}")


if __name__ == "__main__":
    main()
