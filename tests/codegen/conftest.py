"""Shared builders for the codegen tests: small programs of each macro family."""

import types

import pytest

from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop
from neuronxsim.starfish.penguin.targets.codegen.KernelMetricsCollector import KernelMetricsCollector

F = ir.FullTensorAccess


@pytest.fixture(autouse=True)
def fresh_metrics():
    """Each test counts kernels from zero."""
    KernelMetricsCollector.get_instance().reset()
    yield
    KernelMetricsCollector.get_instance().reset()


def whole_tile(tensor):
    """A TileAccess whose single tile is the whole tensor (same elements as a FullTensorAccess)."""
    return ir.TileAccess(tensor, ir.MemrefTile(tensor.shape, [0] * len(tensor.shape)))


def family_program(family, access=F, batch=1, seqlen=128, **attrs):
    """A program holding one macro of ``family`` ("mlp", "qkv", "rmsnorm_quant", "attention",
    "backwards_attention") with every operand marshalled through ``access(tensor)``."""
    p = ir.Program(family)
    B, S, H, I = batch, seqlen, 256, 512
    t = lambda name, shape, kind="input", dtype="bfloat16": p.tensor(name, shape, dtype, kind)  # noqa: E731
    if family == "mlp":
        srcs = [t("hidden", [B, S, H]), t("ln_w", [1, H]), t("gate_w", [H, I]), t("up_w", [H, I]), t("down_w", [I, H])]
        dsts = [t("out", [B, S, H], "output")]
        cls = ir.MLPKernel
    elif family == "qkv":
        srcs = [t("hidden", [B, S, H]), t("qkv_w", [H, 12 * 64]), t("norm_w", [1, H])]
        dsts = [t("qkv", [B, S, 12 * 64], "output")]
        cls = ir.NormQKV
        attrs = {"num_q_heads": 8, "num_kv_heads": 2, "d_head": 64, **attrs}
    elif family == "rmsnorm_quant":
        srcs = [t("hidden", [B, S, H]), t("ln_w", [1, H])]
        dsts = [t("q", [B, S, H + 4], "output", "float8e4")]
        cls = ir.RMSNormQuantKernel
    elif family == "attention":
        srcs = [t("q", [8, 64, S], dtype="float32"), t("k", [8, 64, S], dtype="float32"),
                t("v", [8, S, 64], dtype="float32")]
        dsts = [t("o", [8, 64, S], "output", "float32")]
        cls = ir.AttentionMMSoftmaxMM
        attrs = {"is_causal": True, **attrs}
    elif family == "backwards_attention":
        srcs = [t(n, [8, 64, S], dtype="float32") for n in ("q", "k", "v", "o", "dy")] + \
               [t("lse", [8, S], dtype="float32")]
        dsts = [t(n, [8, 64, S], "output", "float32") for n in ("dq", "dk", "dv")]
        cls = ir.BackwardsAttention
        attrs = {"is_causal": True, **attrs}
    else:
        raise ValueError(family)
    p.add(cls([access(x) for x in srcs], [access(x) for x in dsts], **attrs))
    return p


def lower(program, **options):
    """(codegen, the function's kernel nodes) after lowering ``program``."""
    cg = BirCodeGenLoop(**options)
    module = cg.lower(program)
    return cg, module.functions[0].blocks[0].instructions


@pytest.fixture
def build():
    return types.SimpleNamespace(family_program=family_program, whole_tile=whole_tile, lower=lower)
