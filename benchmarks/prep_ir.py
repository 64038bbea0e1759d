"""Preparation (the sim::Program constructor: verify, decode, cost) of one long mixed stream, once,
for counting its instructions under callgrind, which repeat under load where wall-clock does not:

  valgrind --tool=callgrind --callgrind-out-file=F '--toggle-collect=sim::Program::Program(*' \
      python benchmarks/prep_ir.py [--iterations 2000]
  callgrind_annotate --inclusive=yes F | head -60

Collected Ir divided by the instructions printed is the cost per prepared instruction.
"""

from __future__ import annotations

import argparse

from modules import mixed_stream
from neuronxsim import sim


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=2000)
    args = ap.parse_args()
    module = mixed_stream(args.iterations).module
    r = sim.simulate(module, mode="timing", records=False)
    print(f"prepared {r.instruction_count} instructions")


if __name__ == "__main__":
    main()
