"""One-macro Penguin programs of the IT54 library kernels at a given shape, over fresh bf16
tensors: what the leaf benchmark (benchmarks/bench_leaves.py) and the kernel-node latency test time."""

from __future__ import annotations

from neuronxsim.starfish.penguin import ir

F = ir.FullTensorAccess
BF16, F32 = "bfloat16", "float32"


def program(build) -> ir.Program:
    """A program holding ``build(t, o)``: ``t(name, shape, dtype=bf16)`` makes an input operand,
    ``o(...)`` an output operand."""
    p = ir.Program()
    t = lambda name, shape, dtype=BF16, kind="input": F(p.tensor(name, shape, dtype, kind))  # noqa: E731
    o = lambda name, shape, dtype=BF16: t(name, shape, dtype, "output")  # noqa: E731
    p.add(build(t, o))
    return p


def mlp(B, S, H, I):
    return program(lambda t, o: ir.MLPKernel(
        [t("hidden", [B, S, H]), t("ln_w", [1, H]), t("gate_w", [H, I]), t("up_w", [H, I]), t("down_w", [I, H])],
        [o("out", [B, S, H])], norm_type="RMS_NORM"))


def qkv(B, S, H, nq, nkv, d):
    n = nq + 2 * nkv
    return program(lambda t, o: ir.NormQKV(
        [t("hidden", [B, S, H]), t("qkv_w", [H, n * d]), t("norm_w", [1, H])], [o("out", [n, B, S, d])],
        num_q_heads=nq, num_kv_heads=nkv, d_head=d, output_layout="NBSd"))


def quant(B, S, H):
    return program(lambda t, o: ir.RMSNormQuantKernel(
        [t("hidden", [B, S, H]), t("ln_w", [1, H])], [o("out", [B, S, H + 4], "float8e4")]))


def attention(BH, BKV, d, S, causal):
    return program(lambda t, o: ir.AttentionMMSoftmaxMM(
        [t("q", [BH, d, S]), t("k", [BKV, d, S]), t("v", [BKV, S, d])], [o("out", [BH, d, S])],
        is_causal=causal, scale=d ** -0.5))


def attention_bwd(BH, BKV, d, S):
    return program(lambda t, o: ir.BackwardsAttention(
        [t("q", [BH, d, S]), t("k", [BKV, d, S]), t("v", [BKV, d, S]), t("o", [BH, d, S]), t("dy", [BH, d, S]),
         t("lse", [BH, S], F32)], [o("dq", [BH, d, S]), o("dk", [BKV, d, S]), o("dv", [BKV, d, S])],
        is_causal=True, scale=d ** -0.5))


def generic(name, ins, outs, **attrs):
    """A generic BIRKernel macro: ``ins`` / ``outs`` are ``(name, shape[, dtype])``."""
    return program(lambda t, o: ir.BIRKernel(name, [t(*a) for a in ins], [o(*a) for a in outs], kernel_attrs=attrs))
