"""RouterTopK and ExpertMLPs through the generic BIRKernel macro, against nkilib's router_topk
reference (atol 1e-5, rtol 1e-3; indices: the k largest, ties in any order) and the MoE expert math (rtol 2e-2, atol 1e-5)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "private_kernels"))
import kernel_refs as refs  # noqa: E402
import test_leaves_kit as kit  # noqa: E402

from neuronxsim.errors import KernelError  # noqa: E402
from neuronxsim.starfish.penguin import ir  # noqa: E402


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


@pytest.mark.parametrize("dtype, T, H, E, k, act_fn, pre_norm, norm_topk, bias", [
    ("float32", 200, 256, 16, 2, "SOFTMAX", True, False, False),
    ("bfloat16", 130, 128, 64, 10, "SIGMOID", True, True, True),   # two rounds of max8
    ("float32", 100, 256, 8, 3, "SOFTMAX", False, False, False),
    ("float32", 60, 128, 5, 2, "SIGMOID", False, False, True),     # fewer experts than max8 takes
    ("bfloat16", 96, 384, 128, 8, "SOFTMAX", True, True, False),
])
def test_router_topk(rng, dtype, T, H, E, k, act_fn, pre_norm, norm_topk, bias):
    router_case(rng, dtype, T, H, E, k, act_fn, pre_norm, norm_topk, bias)


def router_case(rng, dtype, T, H, E, k, act_fn, pre_norm, norm_topk, bias, tol=(1e-3, 1e-5)):
    """Runs RouterTopK; checks the logits with (rtol, atol) ``tol``, the indices exactly against a
    stable sort of the kernel's own logits, and the affinities with nkilib's (1e-3, 1e-5)."""
    b = kit.Builder(dtype, rng)
    srcs = [b.t("x", [T, H]), b.t("w", [H, E], scale=H ** -0.5)] + ([b.t("bias", [1, E])] if bias else [])
    dsts = [b.out("logits", [T, E], "float32"), b.out("index", [T, k], "int32"), b.out("affinities", [T, E], "float32")]
    b.add(ir.BIRKernel("RouterTopK", [kit.F(t) for t in srcs], [kit.F(t) for t in dsts],
                       kernel_attrs={"k": k, "act_fn": act_fn, "router_pre_norm": pre_norm, "norm_topk_prob": norm_topk}))
    outs, _ = b.run()
    logits = b.f("x") @ b.f("w") + (b.f("bias") if bias else 0)
    kit.assert_close(outs["logits"], logits, *tol, "router logits")
    # The selection and affinities follow the kernel's own (fp32) logits, so ties broken by
    # rounding do not count as errors; of tied logits any k may be chosen in any order, and the
    # affinities are checked at the ones the kernel chose.
    lk = outs["logits"]
    index = outs["index"].astype(np.int64)
    refs.assert_topk_indices(lk, index, k)
    act = softmax if act_fn == "SOFTMAX" else sigmoid
    if pre_norm:
        aff = act(lk)
        if norm_topk:
            mask = np.zeros_like(aff)
            np.put_along_axis(mask, index, 1.0, -1)
            aff = aff * mask / (aff * mask).sum(-1, keepdims=True)
    else:
        aff = np.zeros_like(lk)
        np.put_along_axis(aff, index, act(np.take_along_axis(lk, index, -1)), -1)
    kit.assert_close(outs["affinities"], aff, 1e-3, 1e-5, "affinities")


@pytest.mark.parametrize("dtype, T, H, I, E, act_fn", [
    ("float32", 200, 256, 192, 3, "SiLU"),
    ("bfloat16", 100, 128, 256, 4, "GELU"),
    ("bfloat16", 520, 256, 128, 2, "Swish"),  # two token blocks
])
def test_expert_mlps(rng, dtype, T, H, I, E, act_fn):
    experts_case(rng, dtype, T, H, I, E, act_fn)


def experts_case(rng, dtype, T, H, I, E, act_fn, tol=(2e-2, 1e-5)):
    """Runs ExpertMLPs with sparse random affinities; checks the affinity-weighted sum of the
    experts' gated MLPs with (rtol, atol) ``tol``."""
    b = kit.Builder(dtype, rng)
    affinities = rng.random((T, E)).astype(np.float32)
    affinities[affinities < 0.6] = 0.0  # most tokens use a few experts
    srcs = [b.t("hidden", [T, H]), b.t("affinities", [T, E], "float32", values=affinities),
            b.t("gate_w", [E, H, I], scale=H ** -0.5), b.t("up_w", [E, H, I], scale=H ** -0.5),
            b.t("down_w", [E, I, H], scale=I ** -0.5)]
    b.add(ir.BIRKernel("ExpertMLPs", [kit.F(t) for t in srcs], [kit.F(b.out("out", [T, H]))],
                       kernel_attrs={"act_fn": act_fn}))
    outs, _ = b.run()
    x = b.f("hidden")
    expected = sum(affinities[:, e:e + 1] * ((kit.activation(x @ b.f("gate_w")[e], act_fn) * (x @ b.f("up_w")[e]))
                                             @ b.f("down_w")[e]) for e in range(E))
    kit.assert_close(outs["out"], expected, *tol, "expert mlps")


def test_router_refuses_k_beyond_the_experts(rng):
    b = kit.Builder("float32", rng)
    b.add(ir.BIRKernel("RouterTopK", [kit.F(b.t("x", [4, 128])), kit.F(b.t("w", [128, 4]))],
                       [kit.F(b.out("l", [4, 4])), kit.F(b.out("i", [4, 5], "int32")), kit.F(b.out("a", [4, 4]))],
                       kernel_attrs={"k": 5}))
    with pytest.raises(KernelError, match=r"kernel 'RouterTopK'\): k = 5; expected 1 <= k <= E = 4"):
        kit.lower_and_inline(b.program)


@pytest.fixture
def rng():
    return np.random.default_rng(23)
