"""Where one leaf's time goes: the simulated expansion broken down by engine and by `source`
section ("MLP:gate_proj", "CausalAttentionMMSoftmaxMMWithoutSwap:softmax", ...), and what the PE
waits for -- the tool for tuning a leaf's schedule.

    PYTHONPATH=$PWD python -P benchmarks/bench_leaves_profile.py CausalAttention [--arch trn1] [--trace t.json]

Cases are bench_leaves.CASES (--second: bench_leaves.SECOND). For each engine: busy time per section. For the PE: its idle gaps,
each charged to the section of the PE instruction that waited (what it waited for is in the trace).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench_leaves import CASES, SECOND  # noqa: E402

from neuronxsim import sim  # noqa: E402
from neuronxsim import pipeline  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--arch", default="trn1", choices=("trn1", "trn2"))
    ap.add_argument("--trace", help="also write a Chrome/Perfetto trace here")
    ap.add_argument("--second", action="store_true", help="the leaf's second shape (bench_leaves.SECOND)")
    args = ap.parse_args()
    lowered = pipeline.lower((SECOND if args.second else CASES)[args.case](), args.arch)
    r = sim.simulate(pipeline.resolve(lowered).module, arch=args.arch, mode="timing")
    rec = r.instructions
    print(r)
    for engine in ("PE", "ACT", "DVE", "Pool", "DMA"):
        sel = rec[rec["engine"] == engine]
        if not len(sel):
            continue
        busy = collections.Counter()
        for s, a, b in zip(sel["source"], sel["start_ns"], sel["end_ns"]):
            busy[s] += b - a
        total = sum(busy.values())
        print(f"\n{engine}: {len(sel)} instructions, busy {total / 1e3:.1f} us of {r.total_ns / 1e3:.1f} us")
        for s, t in busy.most_common(8):
            print(f"  {t / 1e3:10.1f} us  {s}")
    pe = rec[rec["engine"] == "PE"]
    order = np.argsort(pe["start_ns"])
    starts, ends, sources = pe["start_ns"][order], pe["end_ns"][order], pe["source"][order]
    gaps = collections.Counter()
    for i in range(1, len(starts)):
        gaps[sources[i]] += max(0.0, starts[i] - ends[i - 1])
    if len(starts):
        gaps["(before the first)"] += starts[0]
        gaps["(after the last)"] += r.total_ns - ends[-1]
    print(f"\nPE idle {sum(gaps.values()) / 1e3:.1f} us, charged to the instruction that waited:")
    for s, t in gaps.most_common(8):
        print(f"  {t / 1e3:10.1f} us  {s}")
    if args.trace:
        r.write_trace(args.trace)


if __name__ == "__main__":
    main()
