"""The analytic latency of an unexpanded IT54 node (bir::Hwm::getLatency(InstBIRKernel), the leaf
estimators of cpp/bir/KernelCost.cpp) against the simulated time of its expansion (issue 6):
within 25% for every leaf, at a moderate shape (timing mode). Ratios only, no wall-clock.
"""

from __future__ import annotations

import pytest

from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop
from neuronxsim.walrus.inline import inline_bir_kernels

sim = pytest.importorskip("neuronxsim.sim")

F = ir.FullTensorAccess
BF16, F32 = "bfloat16", "float32"


def _program(build):
    p = ir.Program()
    t = lambda name, shape, dtype=BF16, kind="input": F(p.tensor(name, shape, dtype, kind))  # noqa: E731
    o = lambda name, shape, dtype=BF16: t(name, shape, dtype, "output")  # noqa: E731
    p.add(build(t, o))
    return p


def _generic(name, ins, outs, **attrs):
    return _program(lambda t, o: ir.BIRKernel(name, [t(*a) for a in ins], [o(*a) for a in outs], kernel_attrs=attrs))


def _mlp(B, S, H, I):
    return _program(lambda t, o: ir.MLPKernel(
        [t("hidden", [B, S, H]), t("ln_w", [1, H]), t("gate_w", [H, I]), t("up_w", [H, I]), t("down_w", [I, H])],
        [o("out", [B, S, H])], norm_type="RMS_NORM"))


def _qkv(B, S, H, nq, nkv, d):
    n = nq + 2 * nkv
    return _program(lambda t, o: ir.NormQKV(
        [t("hidden", [B, S, H]), t("qkv_w", [H, n * d]), t("norm_w", [1, H])], [o("out", [n, B, S, d])],
        num_q_heads=nq, num_kv_heads=nkv, d_head=d, output_layout="NBSd"))


def _attention(BH, BKV, d, S, causal):
    return _program(lambda t, o: ir.AttentionMMSoftmaxMM(
        [t("q", [BH, d, S]), t("k", [BKV, d, S]), t("v", [BKV, S, d])], [o("out", [BH, d, S])],
        is_causal=causal, scale=d ** -0.5))


def _attention_bwd(BH, BKV, d, S):
    return _program(lambda t, o: ir.BackwardsAttention(
        [t("q", [BH, d, S]), t("k", [BKV, d, S]), t("v", [BKV, d, S]), t("o", [BH, d, S]), t("dy", [BH, d, S]),
         t("lse", [BH, S], F32)], [o("dq", [BH, d, S]), o("dk", [BKV, d, S]), o("dv", [BKV, d, S])],
        is_causal=True, scale=d ** -0.5))


# One moderate shape per leaf: large enough to be past the launch term, small enough to simulate fast.
CASES = {
    "MLP_CTE": lambda: _mlp(1, 512, 1024, 2816),
    "MLP_TKG": lambda: _mlp(8, 1, 1024, 2816),
    "QKV_CTE": lambda: _qkv(1, 512, 1024, 16, 4, 64),
    "QKV_TKG": lambda: _qkv(8, 1, 1024, 16, 4, 64),
    "QuantOnly": lambda: _program(lambda t, o: ir.RMSNormQuantKernel(
        [t("hidden", [1, 512, 2048]), t("ln_w", [1, 2048])], [o("out", [1, 512, 2052], "float8e4")])),
    "CausalAttention": lambda: _attention(4, 2, 128, 1024, True),
    "Attention": lambda: _attention(4, 2, 64, 512, False),
    "BackwardsAttention": lambda: _attention_bwd(2, 1, 128, 512),
    "AttentionTkgFwd": lambda: _generic("AttentionTkgFwd", [("q", [8, 128, 1]), ("k_prior", [2, 128, 2048]),
                                                            ("v_prior", [2, 2048, 128]), ("k_active", [2, 128, 1]),
                                                            ("v_active", [2, 1, 128])], [("out", [8, 128, 1])],
                                        scale=128 ** -0.5),
    "RouterTopK": lambda: _generic("RouterTopK", [("x", [512, 1024]), ("w", [1024, 16])],
                                   [("router_logits", [512, 16], F32), ("expert_index", [512, 4], "int32"),
                                    ("expert_affinities", [512, 16], F32)], k=4),
    "ExpertMLPs": lambda: _generic("ExpertMLPs", [("hidden", [256, 1024]), ("expert_affinities", [256, 4], F32),
                                                  ("gate_w", [4, 1024, 512]), ("up_w", [4, 1024, 512]),
                                                  ("down_w", [4, 512, 1024])], [("out", [256, 1024])]),
    "RowTiledMM": lambda: _generic("RowTiledMM", [("a", [512, 1024]), ("b", [1024, 2048])], [("out", [512, 2048])]),
    "ColumnTiledMM": lambda: _generic("ColumnTiledMM", [("a", [1024, 1024]), ("b", [1024, 1024])],
                                      [("out", [1024, 1024])]),
    "CaymanPackedPETranspose": lambda: _generic("CaymanPackedPETranspose", [("x", [16, 32, 2048])],
                                                [("out", [16, 2048, 32])]),
}


def _ratio(build, arch="trn1"):
    from neuronxsim import bir
    m = bir.Module()
    m.arch = {"trn1": "gen2", "trn2": "gen3"}[arch]
    module = BirCodeGenLoop(module=m).lower(build())
    analytic = sim.simulate(module, arch=arch, mode="timing").total_ns
    inline_bir_kernels(module)
    simulated = sim.simulate(module, arch=arch, mode="timing", records=False).total_ns
    return analytic / simulated


@pytest.mark.parametrize("leaf", sorted(CASES))
def test_analytic_latency_within_25_percent_of_the_expansion(leaf):
    ratio = _ratio(CASES[leaf])
    assert 0.75 <= ratio <= 1.25, f"{leaf}: analytic / simulated = {ratio:.2f}"
