"""How the MLP and QKV leaves load their weights, weights stationary (context encoding: 256 tokens)
and moving (token generation: 64): in wide row runs, each weight element once per token block. The DMA engines pay a floor per contiguous run
(target field dma_descriptor_ns, docs/calibration.md), so a [K, 128] bf16 column block loaded on its
own moves 256-byte rows at a fraction of the peak rate; the leaves load as many columns as rows of
dma_descriptor_ns x dma_engine_bandwidth_gbps bytes need, and the 128-column projections take their
slices of the load (512-column ones moving; their numerics are the sweeps' business: test_leaves_mlp/qkv, test_sweep_leaves)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_leaves_kit as kit  # noqa: E402

from neuronxsim.bir import target  # noqa: E402
from neuronxsim.starfish.penguin import ir  # noqa: E402


def weight_loads(build, weights):
    """{weight: [(first column, columns per run, elements)]} of the expanded program's DMAs out of them."""
    b = kit.Builder("bfloat16", np.random.default_rng(0))
    build(b)
    module, _ = kit.lower_and_inline(b.program)
    loads = {w: [] for w in weights}
    for i in module.functions[0].blocks[0].instructions:
        if i.node_class == "InstDMA" and i.ins[0].memref in weights:
            src = i.ins[0]
            step, run = src.pattern[-1].step, src.pattern[-1].num
            assert step == 1, src.pattern
            loads[src.memref].append((src.offset % weights[src.memref], run, src.num_elements))
    return loads


def full_rate_columns(arch="trn1", dtype_bytes=2):
    c = target.config(arch)
    return int(c.dma_descriptor_ns * c.dma_engine_bandwidth_gbps) // dtype_bytes


def assert_wide_and_once(loads, shapes):
    for w, (rows, cols) in shapes.items():
        assert sum(n for _, _, n in loads[w]) == rows * cols, w  # every element once (one token block)
        for c0, run, _ in loads[w]:
            assert run >= full_rate_columns() or c0 + run == cols, (w, c0, run)


@pytest.mark.parametrize("T, H, I", [(256, 1024, 2048), (256, 640, 5632 // 4), (64, 1024, 2048)])
def test_mlp_loads_its_weights_in_wide_rows_once(T, H, I):
    def build(b):
        srcs = [b.t("hidden", [1, T, H]), b.t("ln_w", [1, H]), b.t("gate_w", [H, I]), b.t("up_w", [H, I]),
                b.t("down_w", [I, H])]
        b.add(ir.MLPKernel([kit.F(t) for t in srcs], [kit.F(b.out("out", [1, T, H]))], norm_type="RMS_NORM",
                           act_fn="SiLU", store_add=False, skip_gate=False, gate_bias=False, up_bias=False,
                           down_bias=False, eps=1e-6))

    shapes = {"gate_w": (H, I), "up_w": (H, I), "down_w": (I, H)}
    assert_wide_and_once(weight_loads(build, {w: c for w, (_, c) in shapes.items()}), shapes)


@pytest.mark.parametrize("T", [256, 64])
def test_qkv_loads_its_weights_in_wide_rows_once(T):
    H, I = 1024, (8 + 2 * 2) * 128

    def build(b):
        srcs = [b.t("hidden", [1, T, H]), b.t("qkv_w", [H, I]), b.t("norm_w", [1, H])]
        b.add(ir.NormQKV([kit.F(t) for t in srcs], [kit.F(b.out("out", [1, T, I]))], num_q_heads=8, num_kv_heads=2,
                         d_head=128, output_layout="BSD", norm_type="RMS_NORM", bias=False, residual_adds=0, eps=1e-6))

    assert_wide_and_once(weight_loads(build, {"qkv_w": I}), {"qkv_w": (H, I)})
