"""The harness of the IT54 leaf tests (imported by the test_leaves_* modules) and its own tests.

A leaf test builds a Penguin program holding one macro, lowers it with ``BirCodeGenLoop``,
expands it with ``InlineBIRKernel`` (:func:`lower_and_inline`), runs the expanded ISA module
(:func:`execute`, on the C++ simulator) and compares with a NumPy golden written from the public
reference math (nkilib's test references, nki-samples' flash attention; reference
klr-kernels-bir.md sections 2.2 and 3) using the public comparator
``|a - b| <= atol + rtol * max|b|`` (:func:`assert_close`).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from neuronxsim.reference.activation_functions import erf
from neuronxsim.starfish.penguin import ir
from neuronxsim.starfish.penguin.targets.codegen.BirCodeGenLoop import BirCodeGenLoop
from neuronxsim.walrus.inline import inline_bir_kernels

from neuronxsim import sim as _sim

F = ir.FullTensorAccess
NUMPY_DTYPES = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16,
                "float8e4": ml_dtypes.float8_e4m3,
                "int32": np.int32}


def lower_and_inline(program, **codegen_options):
    """(module, expansion stats): ``program`` lowered (auto-cast off unless asked) and its IT54
    nodes expanded."""
    codegen_options.setdefault("auto_cast", "none")
    module = BirCodeGenLoop(**codegen_options).lower(program)
    return module, inline_bir_kernels(module)


def execute(module, inputs):
    """The module's outputs for ``inputs`` (numpy arrays by tensor name), on the simulator."""
    return dict(_sim.simulate(module, inputs, arch="trn1", mode="full").outputs)


def run(program, inputs, **codegen_options):
    """Lowers, expands and executes ``program``; returns (outputs, stats)."""
    module, stats = lower_and_inline(program, **codegen_options)
    return execute(module, inputs), stats


def f32(a):
    return np.asarray(a).astype(np.float32)


def assert_close(actual, expected, rtol, atol, what=""):
    """nkilib's maxAllClose: every element within ``atol + rtol * max|expected|``."""
    actual, expected = f32(actual), f32(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite outputs"
    bound = atol + rtol * float(np.max(np.abs(expected)))
    worst = float(np.max(np.abs(actual - expected)))
    assert worst <= bound, f"{what}: max |a - b| = {worst:.4g} exceeds {bound:.4g} (rtol {rtol}, atol {atol})"


def random(rng, shape, dtype, scale=1.0, offset=0.0):
    return (rng.standard_normal(shape) * scale + offset).astype(NUMPY_DTYPES[dtype])


class Builder:
    """A program of one macro over fresh tensors: ``t(name, shape)`` makes input tensors (and
    records them for ``inputs``), ``out(name, shape)`` outputs."""

    def __init__(self, dtype, rng):
        self.program = ir.Program()
        self.dtype = dtype
        self.rng = rng
        self.inputs = {}

    def t(self, name, shape, dtype=None, scale=1.0, offset=0.0, values=None):
        dtype = dtype or self.dtype
        tensor = self.program.tensor(name, list(shape), dtype)
        self.inputs[name] = values if values is not None else random(self.rng, shape, dtype, scale, offset)
        return tensor

    def out(self, name, shape, dtype=None):
        return self.program.tensor(name, list(shape), dtype or self.dtype, "output")

    def add(self, macro):
        self.program.add(macro)
        return macro

    def run(self, **codegen_options):
        return run(self.program, self.inputs, **codegen_options)

    def f(self, name):
        return f32(self.inputs[name])


# ---- reference math ----

def activation(x, act_fn):
    """nkilib's ActFnType (test_kernel_common.py): SiLU, GELU (erf), GELU_Tanh_Approx, Swish."""
    if act_fn == "SiLU":
        return x / (1 + np.exp(-x))
    if act_fn == "GELU":
        return 0.5 * x * (1 + erf(x / np.sqrt(2.0)))
    if act_fn == "GELU_Tanh_Approx":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    if act_fn == "Swish":
        return x / (1 + np.exp(-1.702 * x))
    raise ValueError(act_fn)


def norm(h, norm_type, gamma, eps):
    """rms_norm = h / sqrt(mean(h^2) + eps) * gamma; layer_norm = (h - mean) / sqrt(var + eps) * gamma."""
    if norm_type in ("RMS_NORM", "RMS_NORM_SKIP_GAMMA"):
        out = h / np.sqrt(np.mean(h * h, -1, keepdims=True) + eps)
        return out if norm_type == "RMS_NORM_SKIP_GAMMA" else out * gamma
    if norm_type == "LAYER_NORM":
        return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + eps) * gamma
    return h


def attention(q, k, v, scale, causal, lse=False):
    """softmax(scale q^T k + mask) v per head ([BH, d, Sq], [BH, d, Sk], [BH, Sk, d]), as
    [BH, d, Sq]; with ``lse`` also the log-sum-exp of the scaled, masked logits [BH, Sq]."""
    s = scale * (q.transpose(0, 2, 1) @ k)  # matmul rather than einsum: BLAS, for the long sweeps
    if causal:
        s = np.where(np.arange(k.shape[2])[None, None, :] > np.arange(q.shape[2])[None, :, None], -np.inf, s)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    out = ((e / e.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1)
    return (out, (m + np.log(e.sum(-1, keepdims=True)))[..., 0]) if lse else out


# ---- the harness's own tests ----

def test_assert_close_is_the_public_comparator():
    b = np.array([1.0, -10.0, 3.0], np.float32)
    assert_close(b + np.array([0.09, -0.09, 0.0]), b, rtol=0.01, atol=0.0)  # bound 0.1 from max|b| = 10
    with pytest.raises(AssertionError, match="exceeds"):
        assert_close(b + np.array([0.2, 0.0, 0.0]), b, rtol=0.01, atol=0.0)
    with pytest.raises(AssertionError, match="non-finite"):
        assert_close(np.array([np.nan, 0, 0]), b, rtol=1, atol=1)


def test_reference_math_matches_known_values():
    x = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_allclose(activation(x, "SiLU"), [-0.26894142, 0.0, 1.76159416], rtol=1e-6)
    np.testing.assert_allclose(activation(x, "GELU"), [-0.15865525, 0.0, 1.95449974], rtol=1e-6)
    np.testing.assert_allclose(activation(x, "Swish"), x / (1 + np.exp(-1.702 * x)), rtol=1e-12)
    h = np.array([[3.0, 4.0]])
    np.testing.assert_allclose(norm(h, "RMS_NORM", np.array([1.0, 2.0]), 0.0), [[3 / np.sqrt(12.5), 8 / np.sqrt(12.5)]])
    q = np.zeros((1, 2, 2))
    out = attention(q, np.zeros((1, 2, 2)), np.arange(4.0).reshape(1, 2, 2), 1.0, causal=True)
    np.testing.assert_allclose(out[0, :, 0], [0.0, 1.0])  # query 0 sees key 0 only
