"""The MLP leaf: every option of the MLPKernel family, context-encoding and token-generation
tilings, fp32 and bf16, against nkilib's norm_mlp_ref (rtol 2e-2, atol 1e-5)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_leaves_kit as kit  # noqa: E402

from neuronxsim.starfish.penguin import ir  # noqa: E402

RTOL, ATOL = 2e-2, 1e-5


def mlp_case(rng, dtype, B, S, H, I, norm_type="RMS_NORM", act_fn="SiLU", store_add=False, skip_gate=False,
             gate_bias=False, up_bias=False, down_bias=False, eps=1e-6, tol=(RTOL, ATOL), **codegen):
    b = kit.Builder(dtype, rng)
    srcs = [b.t("hidden", [B, S, H])]
    if store_add:
        srcs.append(b.t("residual", [B, S, H]))
    srcs.append(b.t("ln_w", [1, H], offset=1.0, scale=0.1))
    if not skip_gate:
        srcs.append(b.t("gate_w", [H, I], scale=H ** -0.5))
    srcs += [b.t("up_w", [H, I], scale=H ** -0.5), b.t("down_w", [I, H], scale=I ** -0.5)]
    for present, name, n in ((gate_bias, "gate_b", I), (up_bias, "up_b", I), (down_bias, "down_b", H)):
        if present:
            srcs.append(b.t(name, [1, n], scale=0.5))
    dsts = [b.out("out", [B, S, H])] + ([b.out("add_out", [B, S, H])] if store_add else [])
    b.add(ir.MLPKernel([kit.F(t) for t in srcs], [kit.F(t) for t in dsts], norm_type=norm_type, act_fn=act_fn,
                       store_add=store_add, skip_gate=skip_gate, gate_bias=gate_bias, up_bias=up_bias,
                       down_bias=down_bias, eps=eps))
    outs, stats = b.run(**codegen)

    h = b.f("hidden") + (b.f("residual") if store_add else 0)
    x = kit.norm(h, norm_type, b.f("ln_w")[0], eps)
    up = x @ b.f("up_w") + (b.f("up_b")[0] if up_bias else 0)
    if skip_gate:
        inter = kit.activation(up, act_fn)
    else:
        inter = kit.activation(x @ b.f("gate_w") + (b.f("gate_b")[0] if gate_bias else 0), act_fn) * up
    expected = inter @ b.f("down_w") + (b.f("down_b")[0] if down_bias else 0)
    kit.assert_close(outs["out"], expected, *tol, "out")
    if store_add:
        kit.assert_close(outs["add_out"], h, *tol, "add_out")
    return stats


CTE = [
    ("float32", 1, 200, 256, 384, {}),
    ("bfloat16", 2, 100, 384, 300, dict(norm_type="LAYER_NORM", act_fn="GELU", store_add=True, up_bias=True,
                                        down_bias=True)),
    ("bfloat16", 1, 300, 256, 520, dict(norm_type="RMS_NORM_SKIP_GAMMA", act_fn="Swish", gate_bias=True)),
    ("float32", 1, 130, 200, 256, dict(norm_type="NO_NORM", act_fn="GELU_Tanh_Approx", skip_gate=True, up_bias=True)),
    ("bfloat16", 1, 512, 1024, 448, {}),  # nkilib's MLP CTE case [1, 1, 512, 1024, 448] (RMS)
]


@pytest.mark.parametrize("dtype, B, S, H, I, opts", CTE)
def test_mlp_context_encoding(rng, dtype, B, S, H, I, opts):
    mlp_case(rng, dtype, B, S, H, I, **opts)


TKG = [
    ("float32", 2, 5, 512, 448, dict(store_add=True)),  # nkilib's TKG [2, 4, 5, 8192, 896] with fused add, scaled
    ("bfloat16", 64, 1, 384, 135, {}),                  # nkilib's TKG [2, 64, 1, 3072, 135] bf16, scaled
    ("bfloat16", 3, 8, 256, 640, dict(norm_type="LAYER_NORM", act_fn="GELU", up_bias=True, gate_bias=True,
                                      down_bias=True)),
    ("float32", 1, 1, 320, 200, dict(skip_gate=True, act_fn="Swish")),
]


@pytest.mark.parametrize("dtype, B, S, H, I, opts", TKG)
def test_mlp_token_generation(rng, dtype, B, S, H, I, opts):
    mlp_case(rng, dtype, B, S, H, I, **opts)


def test_mlp_tilings_differ_by_is_tkg(rng):
    """The codegen's routing flag picks the tiling: the TKG expansion streams the weights as the
    moving operand (N = 512 per matmul), the CTE one keeps them stationary and transposes the
    output back (more PE transposes)."""
    tkg = mlp_case(rng, "float32", 1, 95, 256, 512)[0]  # B*S < TKG_BS_SEQLEN_THRESHOLD (96)
    cte = mlp_case(rng, "float32", 1, 96, 256, 512)[0]
    assert tkg["per_engine"]["PE"] < cte["per_engine"]["PE"]


def test_mlp_honours_auto_cast(rng):
    """fp32 weights under --auto-cast matmult / bf16 multiply in bf16: still within the public
    tolerance, but not fp32-exact (the fp32 run is within 1e-4)."""
    mlp_case(rng, "float32", 1, 128, 256, 256, auto_cast="matmult", auto_cast_type="bf16")
    with pytest.raises(AssertionError):
        b = kit.Builder("float32", rng)
        h = b.t("h", [1, 128, 256])
        srcs = [h, b.t("ln_w", [1, 256], offset=1.0), b.t("g", [256, 256], scale=1 / 16), b.t("u", [256, 256], scale=1 / 16),
                b.t("d", [256, 256], scale=1 / 16)]
        b.add(ir.MLPKernel([kit.F(t) for t in srcs], [kit.F(b.out("o", [1, 128, 256]))], norm_type="RMS_NORM"))
        outs, _ = b.run(auto_cast="matmult", auto_cast_type="bf16")
        x = kit.norm(b.f("h"), "RMS_NORM", b.f("ln_w")[0], 1e-6)
        expected = kit.activation(x @ b.f("g"), "SiLU") * (x @ b.f("u")) @ b.f("d")
        kit.assert_close(outs["o"], expected, 1e-4, 0.0, "bf16 matmuls are not fp32-exact")


@pytest.fixture
def rng():
    return np.random.default_rng(2024)
