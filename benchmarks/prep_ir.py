"""Preparation (the sim::Program constructor: verify, decode, cost) of one long mixed stream, once,
for counting its instructions under callgrind, which repeat under load where wall-clock does not:

  valgrind --tool=callgrind --callgrind-out-file=F '--toggle-collect=sim::Program::Program(*' \
      python benchmarks/prep_ir.py [--iterations 2000] [--traced]
  callgrind_annotate --inclusive=yes F | head -60

Collected Ir divided by the instructions printed is the cost per prepared instruction. --traced
prepares a traced kernel's module instead: the tutorial matmul_tiled at [1024, 512] x [1024, 2048]
bf16, which the trace's scheduling pass prepares once.
"""

from __future__ import annotations

import argparse
import os
import sys

from modules import mixed_stream
from neuronxsim import sim


def traced_matmul() -> int:
    import ml_dtypes
    import numpy as np

    from neuronxsim import nki

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "nki"))
    import tutorial_kernels

    lhsT = np.zeros((1024, 512), ml_dtypes.bfloat16)
    rhs = np.zeros((1024, 2048), ml_dtypes.bfloat16)
    traced = nki.trace_kernel(tutorial_kernels.matmul_tiled, lhsT, rhs)
    return traced.module.functions[0].instruction_count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--traced", action="store_true", help="prepare the traced tutorial matmul_tiled instead")
    args = ap.parse_args()
    if args.traced:
        print(f"prepared {traced_matmul()} instructions")
        return
    module = mixed_stream(args.iterations).module
    r = sim.simulate(module, mode="timing", records=False)
    print(f"prepared {r.instruction_count} instructions")


if __name__ == "__main__":
    main()
