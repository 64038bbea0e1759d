"""Every IT54 leaf at one large, realistic shape (--shapes second: a second, different one; all:
both): expanded by InlineBIRKernel and timed by the simulator (timing mode, trn1). (The unexpanded
node's latency is the cached time of this same expansion, walrus KernelNodeLatency, so it is not
shown beside it: the two agree by construction.)

    PYTHONPATH=$PWD python benchmarks/bench_leaves.py [--arch trn1] [--only MLP_CTE,QKV_CTE] [--shapes all]

For each leaf: instructions emitted, host seconds to expand and to simulate, simulated time,
PE busy fraction, PE MFU (useful matmul flops / bf16 peak x time), ACT and DVE busy fractions.
Numbers, never pass/fail: the tests own correctness.
"""

from __future__ import annotations

import argparse
import time

from neuronxsim import sim
from neuronxsim import pipeline
from neuronxsim.models.leaf_programs import F32, attention, attention_bwd, generic, mlp, qkv, quant
from neuronxsim.walrus.inline import inline_bir_kernels


CASES = {
    "MLP_CTE": lambda: mlp(1, 2048, 4096, 14336),
    "MLP_TKG": lambda: mlp(32, 1, 4096, 14336),
    "QKV_CTE": lambda: qkv(1, 2048, 4096, 32, 8, 128),
    "QKV_TKG": lambda: qkv(32, 1, 4096, 32, 8, 128),
    "QuantOnly": lambda: quant(1, 2048, 4096),
    "CausalAttention": lambda: attention(32, 8, 128, 2048, True),
    "Attention": lambda: attention(32, 8, 128, 2048, False),
    "BackwardsAttention": lambda: attention_bwd(8, 2, 128, 2048),
    "AttentionTkgFwd": lambda: generic("AttentionTkgFwd", [("q", [32, 128, 1]), ("k_prior", [8, 128, 8192]),
                                                           ("v_prior", [8, 8192, 128]), ("k_active", [8, 128, 1]),
                                                           ("v_active", [8, 1, 128])], [("out", [32, 128, 1])],
                                       scale=128 ** -0.5),
    "RouterTopK": lambda: generic("RouterTopK", [("x", [2048, 4096]), ("w", [4096, 64])],
                                  [("router_logits", [2048, 64], F32), ("expert_index", [2048, 8], "int32"),
                                   ("expert_affinities", [2048, 64], F32)], k=8),
    "ExpertMLPs": lambda: generic("ExpertMLPs", [("hidden", [512, 4096]), ("expert_affinities", [512, 8], F32),
                                                 ("gate_w", [8, 4096, 1024]), ("up_w", [8, 4096, 1024]),
                                                 ("down_w", [8, 1024, 4096])], [("out", [512, 4096])]),
    "RowTiledMM": lambda: generic("RowTiledMM", [("a", [2048, 4096]), ("b", [4096, 4096])], [("out", [2048, 4096])]),
    "ColumnTiledMM": lambda: generic("ColumnTiledMM", [("a", [2048, 4096]), ("b", [4096, 4096])],
                                     [("out", [2048, 4096])]),
    "CaymanPackedPETranspose": lambda: generic("CaymanPackedPETranspose", [("x", [64, 64, 4096])],
                                               [("out", [64, 4096, 64])]),
}


# A second, different realistic shape per leaf (smaller models, other head dims, GQA ratios,
# expert counts, matmul aspect ratios), so the expansions are measured away from CASES' point.
SECOND = {
    "MLP_CTE": lambda: mlp(1, 1024, 2048, 8192),
    "MLP_TKG": lambda: mlp(16, 1, 2048, 8192),
    "QKV_CTE": lambda: qkv(1, 1024, 2048, 32, 8, 64),
    "QKV_TKG": lambda: qkv(16, 1, 2048, 32, 8, 64),
    "QuantOnly": lambda: quant(4, 256, 8192),
    "CausalAttention": lambda: attention(8, 8, 128, 4096, True),
    "Attention": lambda: attention(16, 4, 64, 1024, False),
    "BackwardsAttention": lambda: attention_bwd(4, 4, 64, 1024),
    "AttentionTkgFwd": lambda: generic("AttentionTkgFwd", [("q", [16, 64, 4]), ("k_prior", [4, 64, 4096]),
                                                           ("v_prior", [4, 4096, 64]), ("k_active", [4, 64, 4]),
                                                           ("v_active", [4, 4, 64])], [("out", [16, 64, 4])],
                                       scale=64 ** -0.5),
    "RouterTopK": lambda: generic("RouterTopK", [("x", [1024, 4096]), ("w", [4096, 8])],
                                  [("router_logits", [1024, 8], F32), ("expert_index", [1024, 2], "int32"),
                                   ("expert_affinities", [1024, 8], F32)], k=2),
    "ExpertMLPs": lambda: generic("ExpertMLPs", [("hidden", [1024, 2048]), ("expert_affinities", [1024, 4], F32),
                                                 ("gate_w", [4, 2048, 1536]), ("up_w", [4, 2048, 1536]),
                                                 ("down_w", [4, 1536, 2048])], [("out", [1024, 2048])]),
    "RowTiledMM": lambda: generic("RowTiledMM", [("a", [512, 8192]), ("b", [8192, 2048])], [("out", [512, 2048])]),
    "ColumnTiledMM": lambda: generic("ColumnTiledMM", [("a", [4096, 1024]), ("b", [1024, 3072])],
                                     [("out", [4096, 3072])]),
    "CaymanPackedPETranspose": lambda: generic("CaymanPackedPETranspose", [("x", [32, 32, 2048])],
                                               [("out", [32, 2048, 32])]),
}
SHAPES = {"large": CASES, "second": SECOND}


def measure(name, build, arch):
    lowered = pipeline.lower(build(), arch)
    t0 = time.perf_counter()
    resolved = pipeline.resolve(lowered)
    t1 = time.perf_counter()
    stats = resolved.passes["InlineBIRKernel"][0]
    r = sim.simulate(resolved.module, arch=arch, mode="timing", records=False)
    t2 = time.perf_counter()
    return {"leaf": name, "instructions": stats["instructions"], "expand_s": t1 - t0, "simulate_s": t2 - t1,
            "sim_us": r.total_ns / 1e3, "pe_busy": r.engines["PE"].utilization, "mfu": r.pe_mfu,
            "act": r.engines["ACT"].utilization, "dve": r.engines["DVE"].utilization}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="trn1", choices=("trn1", "trn2"))
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--shapes", default="large", choices=("large", "second", "all"),
                    help="CASES (large), SECOND (a second realistic shape per leaf) or both")
    args = ap.parse_args()
    head = f"{'leaf':24} {'instrs':>7} {'expand s':>8} {'sim s':>6} {'sim us':>10} {'PE busy':>7} {'MFU':>6} " \
           f"{'ACT':>5} {'DVE':>5}"
    for shapes in (("large", "second") if args.shapes == "all" else (args.shapes,)):
        cases = SHAPES[shapes]
        names = [n for n in cases if not args.only or n in args.only.split(",")]
        print(f"arch {args.arch}, shapes {shapes}\n{head}")
        for name in names:
            r = measure(name, cases[name], args.arch)
            print(f"{r['leaf']:24} {r['instructions']:7d} {r['expand_s']:8.2f} {r['simulate_s']:6.2f} "
                  f"{r['sim_us']:10.1f} {r['pe_busy']:7.1%} {r['mfu']:6.1%} {r['act']:5.0%} {r['dve']:5.0%}",
                  flush=True)


if __name__ == "__main__":
    main()
