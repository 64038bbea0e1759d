"""Attention forward (CausalAttentionMMSoftmaxMMWithoutSwap / AttentionMMSoftmaxMMWithoutSwap) and
decode attention (AttentionTkgFwd): flash tiling, causal masks, grouped-query heads, fp32 and
bf16, against softmax(scale q^T k + mask) v with the flash-attention tests' atol 1e-2."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_leaves_kit as kit  # noqa: E402

from neuronxsim.starfish.penguin import ir  # noqa: E402

ATOL = 1e-2


@pytest.mark.parametrize("dtype, BH, BKV, d, Sq, Sk, causal", [
    ("float32", 2, 1, 64, 256, 256, True),
    ("float32", 2, 2, 64, 200, 700, False),     # keys in two blocks of 512, partial tiles
    ("bfloat16", 4, 2, 128, 300, 300, True),    # GQA, S not a multiple of 128
    ("float32", 1, 1, 96, 640, 640, True),      # the diagonal inside the second key block
    ("bfloat16", 6, 3, 128, 512, 512, False),   # nki-samples' training case [1, 6, *, *] kv=3, scaled
    ("float32", 1, 1, 160, 128, 256, True),     # d > 128: q.k accumulates over two d tiles
    ("float32", 4, 2, 64, 1300, 1300, True),    # items of 1 and 2 key blocks interleaved over the lanes
    # Regression (issue 21): 18 items of 1 or 2 key blocks on 3 lanes; the lanes drifted apart and
    # a softmax-state buffer shared by all lanes in turn went to two live items at once.
    ("bfloat16", 2, 1, 64, 1153, 1153, True),
])
def test_attention_forward(rng, dtype, BH, BKV, d, Sq, Sk, causal):
    stats = attention_case(rng, dtype, BH, BKV, d, Sq, Sk, causal)
    assert stats[0]["kernel_name"] == ("CausalAttentionMMSoftmaxMMWithoutSwap" if causal else
                                       "AttentionMMSoftmaxMMWithoutSwap")


def attention_case(rng, dtype, BH, BKV, d, Sq, Sk, causal, tol=(0.0, ATOL)):
    """Runs the forward leaf on random q, k, v and checks it against kit.attention with
    (rtol, atol) ``tol``; returns the expansion stats."""
    b = kit.Builder(dtype, rng)
    q, k, v = b.t("q", [BH, d, Sq]), b.t("k", [BKV, d, Sk]), b.t("v", [BKV, Sk, d])
    scale = d ** -0.5
    b.add(ir.AttentionMMSoftmaxMM([kit.F(q), kit.F(k), kit.F(v)], [kit.F(b.out("o", [BH, d, Sq]))],
                                  is_causal=causal, scale=scale))
    outs, stats = b.run()
    group = BH // BKV
    expected = kit.attention(b.f("q"), np.repeat(b.f("k"), group, 0), np.repeat(b.f("v"), group, 0), scale, causal)
    kit.assert_close(outs["o"], expected, *tol, "attention out")
    return stats


@pytest.mark.parametrize("dtype, BH, BKV, d, Sa, Sp, prior_len, causal", [
    ("float32", 8, 2, 64, 4, 700, 650, True),   # the group's 4 heads x 4 tokens share one pass
    ("bfloat16", 4, 4, 128, 1, 256, 256, True),
    ("float32", 16, 1, 32, 5, 300, 0, True),    # no prior: the active block alone
    ("float32", 6, 2, 64, 50, 100, 90, False),  # 3 heads x 50 tokens: two passes per kv head
])
def test_attention_token_generation(rng, dtype, BH, BKV, d, Sa, Sp, prior_len, causal):
    token_generation_case(rng, dtype, BH, BKV, d, Sa, Sp, prior_len, causal)


def token_generation_case(rng, dtype, BH, BKV, d, Sa, Sp, prior_len, causal, tol=(0.0, ATOL)):
    """Runs AttentionTkgFwd (scale 0.1) and checks it against softmax over the prior's first
    ``prior_len`` keys and the active ones, with (rtol, atol) ``tol``."""
    b = kit.Builder(dtype, rng)
    ops = [b.t("q", [BH, d, Sa]), b.t("k_prior", [BKV, d, Sp]), b.t("v_prior", [BKV, Sp, d]),
           b.t("k_active", [BKV, d, Sa]), b.t("v_active", [BKV, Sa, d])]
    scale = 0.1
    b.add(ir.BIRKernel("AttentionTkgFwd", [kit.F(t) for t in ops], [kit.F(b.out("o", [BH, d, Sa]))],
                       kernel_attrs={"scale": scale, "prior_len": prior_len, "causal_active": causal}))
    outs, _ = b.run()
    group = BH // BKV
    k = np.concatenate([b.f("k_prior")[:, :, :prior_len], b.f("k_active")], 2)
    v = np.concatenate([b.f("v_prior")[:, :prior_len], b.f("v_active")], 1)
    s = scale * (b.f("q").transpose(0, 2, 1) @ np.repeat(k, group, 0))
    if causal:
        j = np.arange(Sa)
        s[:, :, prior_len:] = np.where(j[None, None, :] > j[None, :, None], -np.inf, s[:, :, prior_len:])
    p = np.exp(s - s.max(-1, keepdims=True))
    expected = ((p / p.sum(-1, keepdims=True)) @ np.repeat(v, group, 0)).transpose(0, 2, 1)
    kit.assert_close(outs["o"], expected, *tol, "decode attention out")


@pytest.fixture
def rng():
    return np.random.default_rng(13)


# The causal mask's -1e30 is built in fp32 whatever the matmul dtype: in an fp16 mask tile it
# was -inf, and the mask matmul's 0 * -inf made every output NaN. S crosses a 128-query tile
# (129) and a 512-key accumulation group (600).
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("S", [129, 600])
def test_causal_attention_masks_in_every_matmul_dtype(rng, dtype, S):
    attention_case(rng, dtype, 2, 1, 64, S, S, True, tol=(0.0, 2e-2 if dtype == "bfloat16" else ATOL))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_decode_attention_masks_the_active_keys_in_every_matmul_dtype(rng, dtype):
    token_generation_case(rng, dtype, 4, 2, 64, 5, 600, 600, True)
