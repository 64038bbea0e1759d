"""Preparation (the sim::Program constructor: verify, decode, cost) of one long mixed stream, once,
for counting its instructions under callgrind, which repeat under load where wall-clock does not:

  valgrind --tool=callgrind --callgrind-out-file=F '--toggle-collect=sim::Program::Program(*' \
      python benchmarks/prep_ir.py [--iterations 2000] [--traced [--simulate]]
  callgrind_annotate --inclusive=yes F | head -60

Collected Ir divided by the instructions printed is the cost per prepared instruction. --traced
prepares a traced kernel's module instead: the tutorial matmul_tiled at [1024, 512] x [1024, 2048]
bf16, which the trace's scheduling pass prepares once (verifying it as it decodes).
--simulate then also prepares that module as the simulator does before a timing run (as
benchmarks/bench_sweep.py section 3 times it); collect only that preparation with
'--toggle-collect=sim::Simulator::Simulator(*' instead (it adds the latency model's construction,
bir::makeHwm, a few thousand Ir once per module). --reuse instead starts that simulator from the
scheduling pass's decoding, as a sweep's configuration does after a fresh trace in timing mode
(collected the same way: the reuse step, the Simulator's checks that the decoding is the module's).
"""

from __future__ import annotations

import argparse
import os
import sys

from modules import mixed_stream
from neuronxsim import sim


def traced_matmul(simulate: bool, reuse: bool) -> int:
    import ml_dtypes
    import numpy as np

    from neuronxsim import nki

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "nki"))
    import tutorial_kernels

    lhsT = np.zeros((1024, 512), ml_dtypes.bfloat16)
    rhs = np.zeros((1024, 2048), ml_dtypes.bfloat16)
    from neuronxsim.nki.kernel import traced_kernel

    traced = traced_kernel(tutorial_kernels.matmul_tiled, (lhsT, rhs), {}, "trn1", prepare=reuse)
    if simulate:
        from neuronxsim.starfish.lib import _core

        _core.sim.Simulator(traced.module, "trn1", "timing", None, 1, False, traced.take_prepared())
    return traced.module.functions[0].instruction_count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--traced", action="store_true", help="prepare the traced tutorial matmul_tiled instead")
    ap.add_argument("--simulate", action="store_true",
                    help="with --traced: then prepare it for a timing run, as the simulator does")
    ap.add_argument("--reuse", action="store_true",
                    help="with --traced --simulate: start the simulator from the scheduling pass's decoding")
    args = ap.parse_args()
    if args.simulate and not args.traced:
        ap.error("--simulate prepares the traced module: give --traced too")
    if args.reuse and not args.simulate:
        ap.error("--reuse starts the simulator from the pass's decoding: give --traced --simulate too")
    if args.traced:
        print(f"prepared {traced_matmul(args.simulate, args.reuse)} instructions")
        return
    module = mixed_stream(args.iterations).module
    r = sim.simulate(module, mode="timing", records=False)
    print(f"prepared {r.instruction_count} instructions")


if __name__ == "__main__":
    main()
