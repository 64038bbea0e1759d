"""NKI 0.6's element-wise instructions over the plain lane-wise path in C (``lanewise_plain``,
cpp/python/trace_lanewise.cpp) and the operand checks that skip their messages for the commonest
operands (``_paired``, ``_scalar_or_column``, ``_engine``): the same module as the Python path,
what NumPy computes, and the same refusals."""

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki import instructions
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki.tensor import Tensor
from neuronxsim.nki06.kernel import traced

from nki06_testing import close, run


@nki.jit
def norm_like(x, g, col):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
    gt = nl.ndarray((128, cols), dtype=g.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=gt, src=g)
    c = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=c, src=col)
    for r in nl.affine_range(rows // 128):
        t = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[r * 128:(r + 1) * 128, :])
        sq = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
        inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=inv, data=ss, op0=nl.multiply, operand0=1.0 / cols,
                           op1=nl.add, operand1=1)
        nisa.activation(dst=inv, op=nl.sqrt, data=inv)
        y = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=t, op0=nl.divide, operand0=inv)
        nisa.tensor_scalar(dst=y, data=y, op0=nl.multiply, operand0=c, op1=nl.add,
                           operand1=np.float32(0.5))
        nisa.activation(dst=y, op=nl.copy, data=y, bias=c, scale=2.0)
        nisa.tensor_tensor(dst=y, data1=y, data2=gt, op=nl.multiply)
        z = nl.ndarray((128, 2, cols // 2), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=z, data1=y, data2=gt, op=nl.add)  # paired by reshaping
        s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=s, op=nl.add, data=y, axis=1, keepdims=True)
        nisa.tensor_tensor(dst=y, data1=y, data2=s.broadcast(1, cols), op=nl.subtract)
        nisa.tensor_tensor(dst=y, data1=y, data2=z.reshape((128, cols)), op=nl.add)
        nisa.dma_copy(dst=out[r * 128:(r + 1) * 128, :], src=y)
    return out


def _args(rng, rows=256, cols=64):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, (128, cols)).astype(np.float32)
    col = rng.uniform(0.5, 1.0, (128, 1)).astype(np.float32)
    return x, g, col


def _expected(x, g, col):
    out = np.empty_like(x)
    for r in range(0, x.shape[0], 128):
        t = x[r:r + 128]
        inv = np.sqrt((t * t).sum(axis=1, keepdims=True) / x.shape[1] + 1)
        y = ((t / inv) * col + 0.5) * 2.0 + col
        y = y * g
        z = y + g
        y = y - y.sum(axis=1, keepdims=True)
        out[r:r + 128] = y + z
    return out


def _module(kernel, *args):
    t, _, _ = traced(kernel, args, {}, None)
    return t.module.to_json(-1)


def test_the_module_is_the_general_paths(rng, monkeypatch):
    args = _args(rng)
    calls = []
    real = instructions.lanewise_plain

    def counted(*a):
        made = real(*a)
        calls.append(made.__class__ is Tensor)
        return made
    monkeypatch.setattr(instructions, "lanewise_plain", counted)
    fast = _module(norm_like, *args)
    assert sum(calls) >= 16  # (the fast path took most of them)
    monkeypatch.setattr(instructions, "lanewise_plain", lambda *a: NotImplemented)
    assert _module(norm_like, *args) == fast


@pytest.mark.parametrize("fast", [True, False])
def test_norm_like_computes_what_numpy_does(rng, monkeypatch, fast):
    if not fast:
        monkeypatch.setattr(instructions, "lanewise_plain", lambda *a: NotImplemented)
    args = _args(rng)
    close(run(norm_like, *args), _expected(*args), atol=1e-3, rtol=1e-3)


def _refused(body, *shapes):
    @nki.jit
    def kernel(a):
        tiles = []
        for shape in shapes:
            t = nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[0:shape[0], 0:shape[1]])
            tiles.append(t)
        body(*tiles)
        return a
    with pytest.raises(NKIError) as e:
        traced(kernel, (np.zeros((128, 64), np.float32),), {}, None)
    return e.value


def _half_written_operand(d, a):
    u = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u[0:64], src=a[0:64])
    nisa.tensor_tensor(dst=d, data1=a, data2=u, op=nl.add)


@pytest.mark.parametrize("body,shapes,text", [
    (_half_written_operand, [(128, 64), (128, 64)],
     "nisa.tensor_tensor: data2: reads partitions 64..127"),
    (lambda d, a: nisa.tensor_tensor(dst=d, data1=a, data2=a, op=nl.add),
     [(128, 64), (128, 32)], "nisa.tensor_tensor: data1 has shape [128, 32]"),
    (lambda d, a: nisa.tensor_scalar(dst=d, data=a, op0=nl.add, operand0="x"),
     [(128, 64), (128, 64)], "nisa.tensor_scalar: operand0 must be a number"),
    (lambda d, a: nisa.tensor_scalar(dst=d, data=a, op0=nl.add, operand0=True),
     [(128, 64), (128, 64)], "nisa.tensor_scalar: operand0 must be a number"),
    (lambda d, a: nisa.tensor_scalar(dst=d, data=a, op0=nl.add, operand0=a),
     [(128, 64), (128, 64)], "nisa.tensor_scalar: operand0 must be a number or a [128, 1] tile"),
    (lambda d, a: nisa.activation(dst=d, op=nl.exp, data=a, scale=d),
     [(128, 64), (128, 64)], "nisa.activation: scale"),
    (lambda d, a: nisa.tensor_tensor(dst=d, data1=a, data2=a, op=nl.add, engine="dve"),
     [(128, 64), (128, 64)], "nisa.tensor_tensor: engine must be one of"),
])
def test_refusals_keep_their_messages(body, shapes, text):
    assert text in str(_refused(body, *shapes))
