"""The public NKI tutorial kernels (tutorial_kernels.py, imports changed only) traced and run on
the C++ simulator (as nki.simulate_kernel runs them) and on the NumPy reference executor, against
NumPy. Tolerances are stated per kernel: exact for pure data movement, the output dtype's
rounding otherwise."""

import ml_dtypes
import numpy as np
import pytest

import tutorial_kernels as tk
from nki_testing import close, run_on

bf16 = ml_dtypes.bfloat16


def test_tensor_add_over_an_spmd_grid(rng, executor):
    a = rng.random((256, 1024)).astype(np.float16)
    b = rng.random((256, 1024)).astype(np.float16)
    out = run_on(executor, tk.tensor_add_launch(a), a, b)
    # fp16 add, rounded once: exact against NumPy's fp16 add.
    np.testing.assert_array_equal(out, a + b)


@pytest.mark.parametrize("kernel", [tk.matmul_tiled, tk.matmul_hoisted, tk.matmul_blocked],
                         ids=["tiled", "hoisted", "blocked"])
def test_tiled_matmul_accumulates_k_tiles_in_psum(kernel, rng, executor):
    K, M, N = 512, 256, 1024
    lhsT = rng.standard_normal((K, M)).astype(bf16)
    rhs = rng.standard_normal((K, N)).astype(bf16)
    out = run_on(executor, kernel, lhsT, rhs)
    l64, r64 = lhsT.astype(np.float64), rhs.astype(np.float64)
    if kernel is tk.matmul_blocked:
        # This variant adds each K block's fp32 PSUM result into a bf16 SBUF accumulator.
        ref = np.zeros((M, N), bf16)
        for k0 in range(0, K, 256):
            part = (l64[k0:k0 + 256].T @ r64[k0:k0 + 256]).astype(np.float32)
            ref = (ref.astype(np.float32) + part).astype(bf16)
    else:
        ref = l64.T @ r64
    assert out.dtype == bf16
    # fp32 accumulation (its order may move a bf16 rounding by one ulp), values ~sqrt(K) = 22.
    close(out, ref, atol=0.25, rtol=2 ** -7)


def test_transpose2d_by_access_patterns(executor):
    P, X, Y = 5, 3, 4
    a = np.arange(P * X * Y, dtype=np.int8).reshape(P, X * Y)
    out = run_on(executor, tk.transpose2d_kernel, a, (X, Y))
    np.testing.assert_array_equal(out, a.reshape(P, X, Y).transpose(0, 2, 1).reshape(P, X * Y))


@pytest.mark.parametrize("shape,pool", [((2, 6, 6), 2), ((16, 24, 32), 4)])
def test_average_pool(shape, pool, rng, executor):
    C, H, W = shape
    x = (np.arange(C * H * W).reshape(shape) % 97).astype(np.float32) + rng.random(shape,
                                                                                    np.float32)
    out = run_on(executor, tk.avgpool_kernel, x, pool)
    ref = x.reshape(C, H // pool, pool, W // pool, pool).mean(axis=(2, 4))
    close(out, ref, atol=1e-5, rtol=1e-6)


def test_rmsnorm_with_a_masked_last_tile(rng, executor):
    a = rng.random((250, 512)).astype(np.float32)  # the tutorial's shape: 128 + 122 rows
    g = rng.random(512).astype(np.float32)
    out = run_on(executor, tk.rmsnorm_kernel, a, g)
    ref = a / np.sqrt(np.mean(a * a, axis=1, keepdims=True)) * g
    close(out, ref, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kernel", [tk.layernorm_v1, tk.layernorm_v2], ids=["nl", "bn_stats"])
def test_layernorm(kernel, rng, executor):
    x = rng.standard_normal((300, 1024)).astype(np.float32)
    gamma = rng.random(1024).astype(np.float32)
    beta = rng.random(1024).astype(np.float32)
    eps = 1e-5
    out = run_on(executor, kernel, x, eps, gamma, beta)
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + eps) * gamma + beta
    close(out, ref, atol=1e-4, rtol=1e-4)


def test_softmax_rows(rng, executor):
    a = (rng.standard_normal((250, 512)) * 4).astype(np.float32)
    out = run_on(executor, tk.softmax_kernel, a)
    e = np.exp(a - a.max(1, keepdims=True))
    close(out, e / e.sum(1, keepdims=True), atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("kernel", [tk.attention_fwd_v1, tk.attention_fwd_v2], ids=["nl", "nisa"])
def test_attention_forward(kernel, rng, executor):
    q, k, v = (rng.standard_normal((128, 128)).astype(np.float32) * 0.3 for _ in range(3))
    out = run_on(executor, kernel, q, k, v)
    s = q.T.astype(np.float64) @ k
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v.T
    close(out, ref, atol=1e-5, rtol=1e-4)


def _mamba_reference(delta, u, A, B, C):
    dA = np.exp(delta[:, :, None, :] * A[None, :, :, None])  # [b, ch, state, seq]
    dBu = (delta * u)[:, :, None, :] * B[:, None, :, :]
    h = np.zeros(dA.shape[:3])
    y = np.zeros(delta.shape)
    for t in range(delta.shape[2]):
        h = dA[..., t] * h + dBu[..., t]
        y[..., t] = (h * C[:, None, :, t]).sum(2)
    return y


@pytest.mark.parametrize("kernel", [tk.mamba_v1, tk.mamba_v2], ids=["v1", "v2"])
def test_mamba_selective_scan(kernel, rng, executor):
    batch, channels, seq, states = 2, 256, 512, 4
    delta = (rng.random((batch, channels, seq)) * 0.1).astype(np.float32)
    u = rng.standard_normal((batch, channels, seq)).astype(np.float32)
    A = -rng.random((channels, states)).astype(np.float32)
    B = rng.standard_normal((batch, states, seq)).astype(np.float32)
    C = rng.standard_normal((batch, states, seq)).astype(np.float32)
    out = run_on(executor, kernel, delta, u, A, B, C)
    # A sequential fp32 scan of 512 steps: errors stay at a few fp32 ulps of the state.
    close(out, _mamba_reference(delta, u, A, B, C), atol=1e-4, rtol=1e-4)


def test_every_tutorial_kernel_is_covered():
    kernels = {name for name in dir(tk) if hasattr(getattr(tk, name), "func")}
    tested = {"tensor_add_kernel", "matmul_tiled", "matmul_hoisted", "matmul_blocked",
              "transpose2d_kernel", "avgpool_kernel", "rmsnorm_kernel", "layernorm_v1",
              "layernorm_v2", "softmax_kernel", "attention_fwd_v1", "attention_fwd_v2",
              "mamba_v1", "mamba_v2"}
    assert kernels == tested
