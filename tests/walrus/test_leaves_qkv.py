"""The QKV leaf: norms, residual adds, bias, the three output layouts, both tilings, fp32 and
bf16, against nkilib's qkv reference (x = input + residuals; x = norm(x); qkv = x @ W + b) with
rtol = atol = 1e-2 (the fused rms-norm QKV tests)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import test_leaves_kit as kit  # noqa: E402

from neuronxsim.errors import KernelError  # noqa: E402
from neuronxsim.starfish.penguin import ir  # noqa: E402

RTOL = ATOL = 1e-2


def qkv_case(rng, dtype, B, S, H, nq, nkv, d, layout="BSD", norm_type="RMS_NORM", bias=False, residual_adds=0,
             eps=1e-6, tol=(RTOL, ATOL), **codegen):
    b = kit.Builder(dtype, rng)
    N, I = nq + 2 * nkv, (nq + 2 * nkv) * d
    srcs = [b.t("hidden", [B, S, H])] + [b.t(f"residual{i}", [B, S, H]) for i in range(residual_adds)]
    srcs += [b.t("qkv_w", [H, I], scale=H ** -0.5), b.t("norm_w", [1, H], offset=1.0, scale=0.1)]
    if bias:
        srcs.append(b.t("bias", [1, I], scale=0.5))
    shape = {"BSD": [B, S, I], "NBSd": [N, B, S, d], "NBdS": [N, B, d, S]}[layout]
    b.add(ir.NormQKV([kit.F(t) for t in srcs], [kit.F(b.out("out", shape))], num_q_heads=nq, num_kv_heads=nkv,
                     d_head=d, output_layout=layout, norm_type=norm_type, bias=bias, residual_adds=residual_adds,
                     eps=eps))
    outs, stats = b.run(**codegen)
    h = b.f("hidden") + sum(b.f(f"residual{i}") for i in range(residual_adds))
    qkv = kit.norm(h, norm_type, b.f("norm_w")[0], eps) @ b.f("qkv_w") + (b.f("bias")[0] if bias else 0)
    if layout == "NBSd":
        qkv = qkv.reshape(B, S, N, d).transpose(2, 0, 1, 3)
    elif layout == "NBdS":
        qkv = qkv.reshape(B, S, N, d).transpose(2, 0, 3, 1)
    kit.assert_close(outs["out"], qkv, *tol, f"qkv {layout}")
    return stats


CASES = [
    # dtype, B, S, H, nq, nkv, d, options
    ("float32", 1, 128, 512, 4, 2, 64, {}),  # nkilib QKV CTE [1, 1, 128, 512, None, 512]
    ("bfloat16", 1, 127, 512, 4, 2, 64, {}),  # ... and its S = 127 case
    ("bfloat16", 2, 100, 384, 4, 1, 32, dict(layout="NBSd", norm_type="LAYER_NORM", bias=True, residual_adds=2)),
    ("float32", 1, 300, 128, 2, 1, 48, dict(layout="NBdS", bias=True, residual_adds=1)),
    ("float32", 2, 30, 256, 4, 2, 64, dict(layout="NBSd", bias=True)),  # TKG (B*S < 96)
    ("bfloat16", 1, 40, 192, 2, 2, 40, dict(layout="NBdS", norm_type="NO_NORM", residual_adds=1)),  # TKG
    ("bfloat16", 4, 2, 320, 8, 8, 128, dict(layout="BSD", norm_type="RMS_NORM_SKIP_GAMMA")),  # TKG
]


@pytest.mark.parametrize("dtype, B, S, H, nq, nkv, d, opts", CASES)
def test_qkv(rng, dtype, B, S, H, nq, nkv, d, opts):
    qkv_case(rng, dtype, B, S, H, nq, nkv, d, **opts)


def test_qkv_refuses_weights_of_the_wrong_width(rng):
    from neuronxsim.bir import DType, InstructionType, Module, MemoryType
    m = Module()
    f = m.addFunction()
    node = f.addBlock().addInstruction(InstructionType.BIRKernel, "qkv0")
    for name, shape, out in (("h", [1, 4, 64], False), ("w", [64, 100], False), ("g", [1, 64], False),
                             ("o", [1, 4, 100], True)):
        t = f.createDramTensor(name, MemoryType.Output if out else MemoryType.Input, DType.float32, shape)
        node.addSeqAccess(t, out)
    node.set_kernel_name("QKV")
    node.set_kernel_attrs([("num_q_heads", "2"), ("num_kv_heads", "1"), ("d_head", "32")])
    from neuronxsim.walrus.inline import inline_bir_kernels
    with pytest.raises(KernelError, match=r"InstBIRKernel 'qkv0' \(kernel 'QKV'\): qkv_w must be \[H, \(nq \+ 2 nkv\) \* d\] = \[64, 128\]"):
        inline_bir_kernels(m)


@pytest.fixture
def rng():
    return np.random.default_rng(7)
