"""The analytic latency of an unexpanded IT54 node (bir::Hwm::getLatency(InstBIRKernel), the leaf
estimators of cpp/bir/KernelCost.cpp) against the simulated time of its expansion (issue 6):
within 25% for every leaf, at a moderate shape (timing mode). Ratios only, no wall-clock.
"""

from __future__ import annotations

import pytest

from neuronxsim import pipeline, sim
from neuronxsim.models.leaf_programs import F32, attention, attention_bwd, generic, mlp, qkv, quant


# One moderate shape per leaf: large enough to be past the launch term, small enough to simulate fast.
CASES = {
    "MLP_CTE": lambda: mlp(1, 512, 1024, 2816),
    "MLP_TKG": lambda: mlp(8, 1, 1024, 2816),
    "QKV_CTE": lambda: qkv(1, 512, 1024, 16, 4, 64),
    "QKV_TKG": lambda: qkv(8, 1, 1024, 16, 4, 64),
    "QuantOnly": lambda: quant(1, 512, 2048),
    "CausalAttention": lambda: attention(4, 2, 128, 1024, True),
    "Attention": lambda: attention(4, 2, 64, 512, False),
    "BackwardsAttention": lambda: attention_bwd(2, 1, 128, 512),
    "AttentionTkgFwd": lambda: generic("AttentionTkgFwd", [("q", [8, 128, 1]), ("k_prior", [2, 128, 2048]),
                                                            ("v_prior", [2, 2048, 128]), ("k_active", [2, 128, 1]),
                                                            ("v_active", [2, 1, 128])], [("out", [8, 128, 1])],
                                        scale=128 ** -0.5),
    "RouterTopK": lambda: generic("RouterTopK", [("x", [512, 1024]), ("w", [1024, 16])],
                                   [("router_logits", [512, 16], F32), ("expert_index", [512, 4], "int32"),
                                    ("expert_affinities", [512, 16], F32)], k=4),
    "ExpertMLPs": lambda: generic("ExpertMLPs", [("hidden", [256, 1024]), ("expert_affinities", [256, 4], F32),
                                                  ("gate_w", [4, 1024, 512]), ("up_w", [4, 1024, 512]),
                                                  ("down_w", [4, 512, 1024])], [("out", [256, 1024])]),
    "RowTiledMM": lambda: generic("RowTiledMM", [("a", [512, 1024]), ("b", [1024, 2048])], [("out", [512, 2048])]),
    "ColumnTiledMM": lambda: generic("ColumnTiledMM", [("a", [1024, 1024]), ("b", [1024, 1024])],
                                      [("out", [1024, 1024])]),
    "CaymanPackedPETranspose": lambda: generic("CaymanPackedPETranspose", [("x", [16, 32, 2048])],
                                                [("out", [16, 2048, 32])]),
}


def _ratio(build, arch="trn1"):
    lowered = pipeline.lower(build(), arch)
    analytic = sim.simulate(lowered.module, arch=arch, mode="timing").total_ns
    resolved = pipeline.resolve(lowered).module
    simulated = sim.simulate(resolved, arch=arch, mode="timing", records=False).total_ns
    return analytic / simulated


# The leaf estimators (cpp/bir/KernelCost.cpp) predate the calibrated timing model (docs/calibration.md):
# they charge neither the DMA descriptor floor (these leaves load weights in 256-byte runs and gather
# norm weights element by element, which the DMA bandwidth guide calls overhead-bound) nor the latency
# of dependent instructions and DMA semaphores. They are being replaced; until then these fail.
STALE_ESTIMATORS = {"Attention", "AttentionTkgFwd", "BackwardsAttention", "CausalAttention", "ColumnTiledMM",
                    "ExpertMLPs", "MLP_CTE", "MLP_TKG", "QKV_CTE", "QKV_TKG", "RouterTopK"}


@pytest.mark.parametrize("leaf", [pytest.param(k, marks=pytest.mark.xfail(
    k in STALE_ESTIMATORS, strict=True, reason="leaf estimator predates the calibrated timing model"))
    for k in sorted(CASES)])
def test_analytic_latency_within_25_percent_of_the_expansion(leaf):
    ratio = _ratio(CASES[leaf])
    assert 0.75 <= ratio <= 1.25, f"{leaf}: analytic / simulated = {ratio:.2f}"
