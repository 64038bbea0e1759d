"""BackwardsAttention: dq, dk, dv of softmax(scale q^T k + mask) v from the forward's o and
log-sum-exp, causal or not, grouped-query heads (dk and dv summed over each group), against the
nki-samples flash_attn_bwd math: fp32 with its atol 1e-2; bf16 (P and dS are multiplied in bf16,
as a mixed-precision backward does) with atol 1e-2 plus nkilib's rtol 1e-2 of the largest
gradient."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_leaves_kit as kit  # noqa: E402

from neuronxsim.starfish.penguin import ir  # noqa: E402

ATOL = 1e-2
RTOL = {"float32": 0.0, "bfloat16": 1e-2}


@pytest.mark.parametrize("dtype, BH, BKV, d, S, causal", [
    ("float32", 2, 1, 64, 256, True),
    ("float32", 2, 2, 32, 200, False),
    ("bfloat16", 2, 1, 64, 384, True),
    ("float32", 4, 2, 128, 640, True),  # two key blocks, GQA (nki-samples' [1, 4, 2, ...] scaled down)
])
def test_attention_backward(rng, dtype, BH, BKV, d, S, causal):
    backward_case(rng, dtype, BH, BKV, d, S, causal, (RTOL[dtype], ATOL))


def backward_case(rng, dtype, BH, BKV, d, S, causal, tol):
    """Runs BackwardsAttention on the forward's own o and lse and checks dq, dk and dv against the
    flash_attn_bwd math with (rtol, atol) ``tol``."""
    scale = d ** -0.5
    group = BH // BKV
    b = kit.Builder(dtype, rng)
    q, k, v, dy = b.t("q", [BH, d, S]), b.t("k", [BKV, d, S]), b.t("v", [BKV, d, S]), b.t("dy", [BH, d, S])
    kr, vr = np.repeat(b.f("k"), group, 0), np.repeat(b.f("v"), group, 0)
    o, lse = kit.attention(b.f("q"), kr, vr.transpose(0, 2, 1), scale, causal, lse=True)
    o_t = b.t("o", [BH, d, S], values=o.astype(kit.NUMPY_DTYPES[dtype]))
    lse_t = b.t("lse", [BH, S], "float32", values=lse.astype(np.float32))
    outs_t = [b.out("dq", [BH, d, S]), b.out("dk", [BKV, d, S]), b.out("dv", [BKV, d, S])]
    b.add(ir.BackwardsAttention([kit.F(t) for t in (q, k, v, o_t, dy, lse_t)], [kit.F(t) for t in outs_t],
                                is_causal=causal, scale=scale))
    outs, _ = b.run()

    qf, dyf, of = b.f("q"), b.f("dy"), b.f("o")
    s = scale * (qf.transpose(0, 2, 1) @ kr)
    if causal:
        s = np.where(np.arange(S)[None, None, :] > np.arange(S)[None, :, None], -np.inf, s)
    p = np.exp(s - b.f("lse")[..., None])
    dp = dyf.transpose(0, 2, 1) @ vr
    ds = p * (dp - (dyf * of).sum(1)[..., None])
    expected = {
        "dq": scale * (kr @ ds.transpose(0, 2, 1)),
        "dk": (scale * (qf @ ds)).reshape(BKV, group, d, S).sum(1),
        "dv": (dyf @ p).reshape(BKV, group, d, S).sum(1),
    }
    for name, want in expected.items():
        kit.assert_close(outs[name], want, *tol, name)


@pytest.fixture
def rng():
    return np.random.default_rng(17)
