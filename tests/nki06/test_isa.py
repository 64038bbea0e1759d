"""nki.isa (NKI 0.6, destination first) against NumPy, with the engines and BIR each call
records. Tolerances: exact where the hardware path is exact (copies, DMA, min/max, integer
ops, fp32 adds of small integers); 1e-6 relative for one fp32 operation; the activation
functions within 2e-6 relative (the simulator rounds them once from double)."""

import math

import ml_dtypes
import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim import bir
from neuronxsim.nki.errors import NKIError
from nki06_testing import close, emitted, opcodes, run, stored, tile_kernel


def test_dma_copy_and_tensor_tensor_over_tiles(rng):
    @nki.jit
    def add(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for m in range(a.shape[0] // 128):
            for n in range(a.shape[1] // 512):
                rows, cols = slice(m * 128, (m + 1) * 128), slice(n * 512, (n + 1) * 512)
                x = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                y = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a[rows, cols])
                nisa.dma_copy(dst=y, src=b[rows, cols])
                z = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
                nisa.dma_copy(dst=out[rows, cols], src=z)
        return out

    a = rng.standard_normal((256, 1024)).astype(np.float32)
    b = rng.standard_normal((256, 1024)).astype(np.float32)
    np.testing.assert_array_equal(run(add, a, b), a + b)
    assert opcodes(add, a, b).count("TensorTensor") == 4


@pytest.mark.parametrize("op,ref", [(nl.subtract, np.subtract), (nl.multiply, np.multiply),
                                    (nl.maximum, np.maximum), (nl.minimum, np.minimum),
                                    (nl.divide, np.divide)])
def test_tensor_tensor_ops(op, ref, rng):
    a = rng.standard_normal((64, 100)).astype(np.float32)
    b = rng.standard_normal((64, 100)).astype(np.float32) + 3
    k = tile_kernel(lambda d, x, y: nisa.tensor_tensor(dst=d, data1=x, data2=y, op=op))
    close(run(k, a, b), ref(a, b), atol=0, rtol=1e-6)


def test_tensor_tensor_pairs_free_shapes_of_one_size(rng):
    a = rng.standard_normal((32, 4, 8)).astype(np.float32)
    b = rng.standard_normal((32, 32)).astype(np.float32)
    k = tile_kernel(lambda d, x, y: nisa.tensor_tensor(dst=d, data1=x, data2=y, op=nl.add),
                    out_shape=(32, 32))
    np.testing.assert_array_equal(run(k, a, b), a.reshape(32, 32) + b)


def test_tensor_tensor_int32_defaults_to_gpsimd(rng):
    a = rng.integers(-1000, 1000, (16, 8)).astype(np.int32)
    k = tile_kernel(lambda d, x, y: nisa.tensor_tensor(dst=d, data1=x, data2=y, op=nl.add))
    np.testing.assert_array_equal(run(k, a, a), 2 * a)
    tt = [i for i in emitted(k, a, a) if i.opcode_name == "TensorTensor"]
    assert tt[0].engine == bir.Engine.Pool


def test_tensor_scalar_two_ops_and_column_operand(rng):
    a = rng.standard_normal((128, 64)).astype(np.float32)
    col = rng.standard_normal((128, 1)).astype(np.float32)

    def body(d, x, c):
        nisa.tensor_scalar(dst=d, data=x, op0=nl.multiply, operand0=c, op1=nl.subtract,
                           operand1=2.0, reverse1=True)
    close(run(tile_kernel(body), a, col), 2.0 - a * col, atol=1e-6, rtol=1e-6)


def test_nl_abs_and_rsqrt_are_alu_and_activation_operators(rng):
    # tensor_scalar's docs name nl.abs as a unary op0; nl.rsqrt's own docs point to
    # nisa.activation(op=nl.rsqrt). Both were refused as "not an ALU operation" / "activation".
    x = rng.standard_normal((16, 40)).astype(np.float32)
    pos = np.abs(x) + 0.5
    k = tile_kernel(lambda d, t: nisa.tensor_scalar(dst=d, data=t, op0=nl.abs, operand0=0.0))
    np.testing.assert_array_equal(run(k, x), np.abs(x))
    k = tile_kernel(lambda d, t: nisa.tensor_scalar(dst=d, data=t, op0=nl.rsqrt, operand0=0.0,
                                                    engine=nisa.engine.gpsimd))
    close(run(k, pos), 1 / np.sqrt(pos), atol=0, rtol=1e-6)
    k = tile_kernel(lambda d, t: nisa.activation(dst=d, op=nl.rsqrt, data=t))
    close(run(k, pos), 1 / np.sqrt(pos), atol=0, rtol=2e-6)


def test_tensor_scalar_bitvec_needs_integers(rng):
    a = rng.integers(0, 255, (8, 16)).astype(np.int32)
    k = tile_kernel(lambda d, x: nisa.tensor_scalar(dst=d, data=x, op0=nl.bitwise_and,
                                                    operand0=15, op1=nl.left_shift, operand1=2))
    np.testing.assert_array_equal(run(k, a), (a & 15) << 2)
    with pytest.raises(NKIError, match="integer"):
        run(k, a.astype(np.float32))


@pytest.mark.parametrize("func,ref", [(nl.exp, np.exp), (nl.tanh, np.tanh),
                                      (nl.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
                                      (nl.relu, lambda x: np.maximum(x, 0)),
                                      (nl.copy, lambda x: x)])
def test_activation_scale_and_bias(func, ref, rng):
    x = rng.standard_normal((96, 40)).astype(np.float32)
    bias = rng.standard_normal((96, 1)).astype(np.float32)

    def body(d, t, b):
        nisa.activation(dst=d, op=func, data=t, bias=b, scale=0.5)
    close(run(tile_kernel(body), x, bias), ref(x.astype(np.float64) * 0.5 + bias), atol=1e-6,
          rtol=2e-6)


def test_activation_reduces_into_reduce_res(rng):
    x = rng.standard_normal((64, 300)).astype(np.float32)

    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        e = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        s = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=s,
                        reduce_cmd=nisa.reduce_cmd.reset_reduce)
        out = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=s)
        return out

    close(run(k, x), np.exp(x.astype(np.float64)).sum(1, keepdims=True), atol=0, rtol=1e-5)


def test_activation_reduce(rng):
    x = rng.standard_normal((32, 64)).astype(np.float32)

    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        sq = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        s = nl.ndarray((32, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=s)
        out = nl.ndarray((32, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=s)
        return out

    close(run(k, x), (x.astype(np.float64) ** 2).sum(1, keepdims=True), atol=0, rtol=1e-5)


@pytest.mark.parametrize("axis,keepdims", [(2, False), ((2,), True), ([1, 2], False),
                                           ((1, 2), True), (-1, False)])
def test_tensor_reduce_last_axes(axis, keepdims, rng):
    x = rng.standard_normal((16, 6, 10)).astype(np.float32)
    axes = tuple(a % 3 for a in ([axis] if isinstance(axis, int) else axis))
    expected = x.astype(np.float64).max(axis=axes, keepdims=keepdims)
    if expected.ndim == 1:
        expected = expected[:, None]
    k = tile_kernel(lambda d, t: nisa.tensor_reduce(dst=d, op=nl.maximum, data=t, axis=axis,
                                                    keepdims=keepdims),
                    out_shape=expected.shape)
    np.testing.assert_array_equal(run(k, x), expected)


def test_tensor_reduce_refuses_an_inner_axis(rng):
    x = rng.standard_normal((16, 6, 10)).astype(np.float32)
    k = tile_kernel(lambda d, t: nisa.tensor_reduce(dst=d, op=nl.add, data=t, axis=1),
                    out_shape=(16, 10))
    with pytest.raises(NKIError, match="last contiguous free dimension"):
        run(k, x)


def test_tensor_reduce_negate_sum(rng):
    x = rng.integers(-9, 9, (8, 20)).astype(np.float32)
    k = tile_kernel(lambda d, t: nisa.tensor_reduce(dst=d, op=nl.add, data=t, axis=1,
                                                    negate=True), out_shape=(8, 1))
    np.testing.assert_array_equal(run(k, x), -x.sum(1, keepdims=True))


def _matmul_kernel(accumulate):
    @nki.jit
    def mm(lhsT, rhs):
        K, M = lhsT.shape
        N = rhs.shape[1]
        out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
        for k in range(K // 128):
            a = nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.sbuf)
            b = nl.ndarray((128, N), dtype=rhs.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, :])
            nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, :])
            if accumulate == "explicit":
                nisa.nc_matmul(acc, a, b, accumulate=(k > 0))
            else:
                nisa.nc_matmul(dst=acc, stationary=a, moving=b)
        res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        nisa.dma_copy(dst=out, src=res)
        return out
    return mm


@pytest.mark.parametrize("accumulate", ["auto", "explicit"])
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-5), (ml_dtypes.bfloat16, 1e-5)])
def test_nc_matmul_accumulates_over_k(accumulate, dtype, rtol, rng):
    lhsT = rng.standard_normal((384, 96)).astype(dtype)
    rhs = rng.standard_normal((384, 200)).astype(dtype)
    expected = lhsT.astype(np.float64).T @ rhs.astype(np.float64)
    mm = _matmul_kernel(accumulate)
    close(run(mm, lhsT, rhs), expected, atol=1e-3, rtol=rtol)
    groups = [(i.start_tensor_calc, i.stop_tensor_calc) for i in emitted(mm, lhsT, rhs)
              if i.opcode_name == "Matmult"]
    assert groups == [(True, False), (False, False), (False, True)]


def test_nc_matmul_accumulate_true_needs_an_open_group(rng):
    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        p = nl.ndarray((a.shape[1], a.shape[1]), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=p, stationary=t, moving=t, accumulate=True)
        out = nl.ndarray(p.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        r = nl.ndarray(p.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=p)
        nisa.dma_copy(dst=out, src=r)
        return out

    with pytest.raises(NKIError, match="nc_matmul.*accumulat"):
        run(k, rng.standard_normal((8, 8)).astype(np.float32))


def test_nc_matmul_onto_zeros_accumulates(rng):
    x = rng.standard_normal((64, 32)).astype(np.float32)

    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        p = nl.zeros((32, 32), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=p, stationary=t, moving=t)
        nisa.nc_matmul(dst=p, stationary=t, moving=t)
        r = nl.ndarray(p.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=p)
        out = nl.ndarray(p.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out

    close(run(k, x), 2 * x.astype(np.float64).T @ x, atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("shape,engine", [((128, 96), bir.Engine.PE), ((24, 16), bir.Engine.DVE)])
def test_nc_transpose(shape, engine, rng):
    a = rng.standard_normal(shape).astype(np.float32)
    buffer = nl.psum if engine == bir.Engine.PE else nl.sbuf

    @nki.jit
    def k(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        tt = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=buffer)
        nisa.nc_transpose(dst=tt, data=t)
        r = nl.ndarray(tt.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=tt)
        out = nl.ndarray(tt.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out

    np.testing.assert_array_equal(run(k, a), a.T)
    engines = [i.engine for i in emitted(k, a) if i.opcode_name in ("Matmult", "StreamTranspose")]
    assert engines == [engine]


def test_memset_iota_and_affine_select():
    @nki.jit
    def k(x):
        ramp = nl.ndarray((64, 48), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(ramp, [[1, 48]], offset=3, channel_multiplier=100)
        ones = nl.ndarray((64, 48), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=ones, value=1.0)
        causal = nl.ndarray((64, 48), dtype=nl.float32, buffer=nl.sbuf)
        # keep (p, f) where p - f >= 0
        nisa.affine_select(dst=causal, pattern=[[-1, 48]], channel_multiplier=1,
                           on_true_tile=ones, on_false_value=-5.0, cmp_op=nl.greater_equal)
        o1 = nl.ndarray(ramp.shape, dtype=nl.int32, buffer=nl.shared_hbm)
        o2 = nl.ndarray(causal.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o1, src=ramp)
        nisa.dma_copy(dst=o2, src=causal)
        return o1, o2

    ramp, causal = run(k, np.zeros((1, 1), np.float32))
    p, f = np.mgrid[0:64, 0:48]
    np.testing.assert_array_equal(ramp, 3 + 100 * p + f)
    np.testing.assert_array_equal(causal, np.where(p - f >= 0, 1.0, -5.0))


def test_memset_value_must_match_an_integer_dtype():
    @nki.jit
    def k(x):
        t = nl.ndarray((4, 4), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=t, value=2.5)
        out = nl.ndarray((4, 4), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    with pytest.raises(NKIError, match="pass an integer"):
        run(k, np.zeros((1, 1), np.float32))


def test_tensor_tensor_scan_and_cumulative(rng):
    a = rng.random((16, 50)).astype(np.float32)
    b = rng.random((16, 50)).astype(np.float32)

    def scan(d, x, y):
        nisa.tensor_tensor_scan(dst=d, data0=x, data1=y, initial=0.5, op0=nl.multiply,
                                op1=nl.add)
    r = np.empty_like(a, dtype=np.float64)
    state = np.full(16, 0.5)
    for i in range(50):
        state = state * a[:, i] + b[:, i]
        r[:, i] = state
    close(run(tile_kernel(scan), a, b), r, atol=1e-5, rtol=1e-5)

    def cumulative(d, x):
        nisa.tensor_scalar_cumulative(dst=d, src=x, op0=nl.multiply, op1=nl.add, imm0=2.0)
    close(run(tile_kernel(cumulative), a), np.cumsum(2.0 * a.astype(np.float64), axis=1),
          atol=1e-5, rtol=1e-5)

    def running_max(d, x):
        nisa.tensor_scalar_cumulative(dst=d, src=x, op0=nl.add, op1=nl.maximum, imm0=0.0)
    np.testing.assert_array_equal(run(tile_kernel(running_max), a),
                                  np.maximum.accumulate(a, axis=1))


def test_scalar_tensor_tensor_and_tensor_scalar_reduce(rng):
    a = rng.standard_normal((32, 24)).astype(np.float32)
    b = rng.standard_normal((32, 24)).astype(np.float32)

    def stt(d, x, y):
        nisa.scalar_tensor_tensor(dst=d, data=x, op0=nl.multiply, operand0=3.0, op1=nl.subtract,
                                  operand1=y, reverse1=True)
    close(run(tile_kernel(stt), a, b), b - 3.0 * a, atol=1e-6, rtol=1e-6)

    @nki.jit
    def tsr(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        d = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        r = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(dst=d, data=t, op0=nl.add, operand0=1.0, reduce_op=nl.maximum,
                                  reduce_res=r, reduce_res_negate=True)
        o1 = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        o2 = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o1, src=d)
        nisa.dma_copy(dst=o2, src=r)
        return o1, o2

    d, r = run(tsr, a)
    np.testing.assert_array_equal(d, a + 1)
    np.testing.assert_array_equal(r, -(a + 1).max(1, keepdims=True))


def test_select_reduce_and_copy_predicated(rng):
    on_true = rng.standard_normal((32, 40)).astype(np.float32)
    pred = (rng.random((32, 40)) > 0.5).astype(np.uint8)

    @nki.jit
    def k(t, p):
        ts = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
        ps = nl.ndarray(p.shape, dtype=p.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=ts, src=t)
        nisa.dma_copy(dst=ps, src=p)
        sel = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.sbuf)
        mx = nl.ndarray((32, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.select_reduce(dst=sel, predicate=ps, on_true=ts, on_false=-7.0, reduce_res=mx,
                           reduce_cmd=nisa.reduce_cmd.reset_reduce, reverse_pred=True)
        cp = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=cp, value=9.0)
        nisa.tensor_copy_predicated(dst=cp, src=ts, predicate=ps)
        o = [nl.ndarray(s, dtype=nl.float32, buffer=nl.shared_hbm)
             for s in (t.shape, (32, 1), t.shape)]
        for out, src in zip(o, (sel, mx, cp)):
            nisa.dma_copy(dst=out, src=src)
        return tuple(o)

    sel, mx, cp = run(k, on_true, pred)
    expected = np.where(pred == 0, on_true, -7.0)
    np.testing.assert_array_equal(sel, expected)
    np.testing.assert_array_equal(mx, expected.max(1, keepdims=True))
    np.testing.assert_array_equal(cp, np.where(pred != 0, on_true, 9.0))


def test_range_select_is_trn2_only(rng, monkeypatch):
    data = rng.standard_normal((16, 32)).astype(np.float32)
    lo = np.full((16, 1), 4, np.float32)
    hi = np.arange(16, dtype=np.float32)[:, None] + 8

    @nki.jit
    def k(x, b0, b1):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        c0 = nl.ndarray(b0.shape, dtype=b0.dtype, buffer=nl.sbuf)
        c1 = nl.ndarray(b1.shape, dtype=b1.dtype, buffer=nl.sbuf)
        for s, d in ((x, t), (b0, c0), (b1, c1)):
            nisa.dma_copy(dst=d, src=s)
        r = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        m = nl.ndarray((16, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.range_select(dst=r, on_true_tile=t, comp_op0=nl.greater_equal, comp_op1=nl.less,
                          bound0=c0, bound1=c1, reduce_res=m)
        o1 = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        o2 = nl.ndarray((16, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o1, src=r)
        nisa.dma_copy(dst=o2, src=m)
        return o1, o2

    r, m = run(k, data, lo, hi, arch="trn2")
    j = np.arange(32)[None, :]
    fmin = np.float32(-3.4028235e38)
    expected = np.where((j >= lo) & (j < hi), data, fmin)
    np.testing.assert_array_equal(r, expected)
    np.testing.assert_array_equal(m, expected.max(1, keepdims=True))
    with pytest.raises(NKIError, match="NeuronCore-v3.*trn1"):
        run(k, data, lo, hi, arch="trn1")


def test_reciprocal_bn_stats_and_aggr(rng):
    x = rng.standard_normal((64, 400)).astype(np.float32) * 3 + 1

    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        stats = nl.ndarray((64, 12), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_stats(dst=stats[:, 0:6], data=t[:, 0:200])
        nisa.bn_stats(dst=stats[:, 6:12], data=t[:, 200:400])
        mv = nl.ndarray((64, 2), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_aggr(dst=mv, data=stats)
        rec = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=rec, data=t)
        o1 = nl.ndarray((64, 2), dtype=nl.float32, buffer=nl.shared_hbm)
        o2 = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o1, src=mv)
        nisa.dma_copy(dst=o2, src=rec)
        return o1, o2

    mv, rec = run(k, x)
    x64 = x.astype(np.float64)
    close(mv[:, 0], x64.mean(1), atol=1e-5, rtol=1e-5)
    close(mv[:, 1], x64.var(1), atol=1e-4, rtol=1e-4)
    close(rec, 1 / x64, atol=0, rtol=1e-6)


def test_max8_find_index8_match_replace8(rng):
    x = rng.permutation(16 * 64).reshape(16, 64).astype(np.float32)

    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        top = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.max8(dst=top, src=t)
        idx = nl.ndarray((16, 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.nc_find_index8(dst=idx, data=t, vals=top)
        rep = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.nc_match_replace8(dst=rep, data=t, vals=top, imm=-1.0)
        outs = (nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm),
                nl.ndarray((16, 8), dtype=nl.uint32, buffer=nl.shared_hbm),
                nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm))
        for o, s in zip(outs, (top, idx, rep)):
            nisa.dma_copy(dst=o, src=s)
        return outs

    top, idx, rep = run(k, x)
    expected_top = -np.sort(-x, axis=1)[:, :8]
    np.testing.assert_array_equal(top, expected_top)
    np.testing.assert_array_equal(np.take_along_axis(x, idx.astype(np.int64), 1), expected_top)
    expected_rep = x.copy()
    np.put_along_axis(expected_rep, idx.astype(np.int64), -1.0, 1)
    np.testing.assert_array_equal(rep, expected_rep)


def test_nc_stream_shuffle(rng):
    x = rng.standard_normal((64, 8)).astype(np.float32)
    mask = list(reversed(range(32)))
    k = tile_kernel(lambda d, t: nisa.nc_stream_shuffle(dst=d, src=t, shuffle_mask=mask))
    q = x.reshape(2, 32, 8)[:, ::-1, :].reshape(64, 8)
    np.testing.assert_array_equal(run(k, x), q)


@pytest.mark.parametrize("prob", [0.0, 1.0])
def test_dropout_extremes(prob, rng):
    x = rng.standard_normal((8, 16)).astype(np.float32)
    k = tile_kernel(lambda d, t: nisa.dropout(dst=d, data=t, prob=prob))
    np.testing.assert_array_equal(run(k, x), x if prob == 0.0 else np.zeros_like(x))


def test_dma_transpose_and_dma_compute(rng):
    a = rng.standard_normal((48, 80)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((48, 80)).astype(np.float32)

    @nki.jit
    def k(x, y):
        t = nl.ndarray((80, 48), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_transpose(dst=t, src=x)
        acc = nl.ndarray(y.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=acc, src=y)
        nisa.dma_compute(dst=acc, srcs=[acc, y], reduce_op=nl.add)
        o1 = nl.ndarray((80, 48), dtype=x.dtype, buffer=nl.shared_hbm)
        o2 = nl.ndarray(y.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o1, src=t)
        nisa.dma_copy(dst=o2, src=acc)
        return o1, o2

    t, s = run(k, a, b)
    np.testing.assert_array_equal(t.astype(np.float32), a.astype(np.float32).T)
    np.testing.assert_array_equal(s, 2 * b)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
@pytest.mark.parametrize("n", [1, 2, 3, 16])
def test_dma_compute_sums_in_fp32_and_casts_once(dtype, n, rng):
    # Sources of mixed dtypes into a dst of `dtype`; the reference sums in fp32 and rounds once.
    # (Summed by transfers that each round into a bf16 dst, 1 + 15 small addends stayed 1.)
    srcs = [rng.standard_normal((32, 48)).astype(np.float32) * 2.0 ** -8 for _ in range(n)]
    srcs[0] = (1 + srcs[0]).astype(ml_dtypes.bfloat16 if n > 1 else np.float32)

    @nki.jit
    def k(*arrays):
        tiles = []
        for a in arrays:
            t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a)
            tiles.append(t)
        d = nl.ndarray((32, 48), dtype=dtype, buffer=nl.sbuf)
        nisa.dma_compute(dst=d, srcs=tiles, reduce_op=nl.add)
        out = nl.ndarray((32, 48), dtype=dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=d)
        return out

    expected = np.sum([a.astype(np.float32) for a in srcs], axis=0, dtype=np.float32)
    np.testing.assert_array_equal(run(k, *srcs).astype(np.float32),
                                  expected.astype(dtype).astype(np.float32))


def test_dma_compute_reads_a_source_that_is_dst_under_another_view(rng):
    a = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal((8, 16)).astype(np.float32)

    @nki.jit
    def k(x, y):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        u = nl.ndarray(y.shape, dtype=y.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=u, src=y)
        # t as [8, 8, 2]: the same bytes, not the same view (a copy of u into t first read u twice)
        nisa.dma_compute(dst=t, srcs=[u, t.reshape((8, 8, 2))], reduce_op=nl.add)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    np.testing.assert_array_equal(run(k, a, b), a + b)


@pytest.mark.parametrize("form", ["ap", "vector_select"])
def test_dma_gathers_rows_by_vector_offset(form, rng):
    data = rng.standard_normal((50, 24)).astype(np.float32)
    rows = rng.integers(0, 50, (32, 1)).astype(np.int32)

    @nki.jit
    def gather(d, idx):
        i = nl.ndarray(idx.shape, dtype=idx.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=i, src=idx)
        g = nl.ndarray((32, 24), dtype=d.dtype, buffer=nl.sbuf)
        if form == "ap":
            src = d.ap(pattern=[[24, 32], [1, 24]], vector_offset=i, indirect_dim=0)
        else:
            src = d.vector_select(0, i)
        assert src.is_indirect()
        nisa.dma_copy(dst=g, src=src)
        out = nl.ndarray((32, 24), dtype=d.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=g)
        return out

    np.testing.assert_array_equal(run(gather, data, rows), data[rows[:, 0]])


def test_dma_copy_hwdge_needs_trn2_and_equal_dtypes(rng):
    x = rng.standard_normal((8, 8)).astype(np.float32)

    def kernel(dtype):
        @nki.jit
        def k(a):
            t = nl.ndarray(a.shape, dtype=dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge)
            out = nl.ndarray(a.shape, dtype=dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=t)
            return out
        return k

    np.testing.assert_array_equal(run(kernel(nl.float32), x, arch="trn2"), x)
    assert bir.DgeType.HWDGE in [i.dge_type for i in emitted(kernel(nl.float32), x, arch="trn2")]
    with pytest.raises(NKIError, match="NeuronCore-v3"):
        run(kernel(nl.float32), x, arch="trn1")
    with pytest.raises(NKIError, match="raw bytes"):
        run(kernel(nl.bfloat16), x, arch="trn2")


def test_register_loops_unroll_with_known_values(rng):
    x = rng.standard_normal((4, 16)).astype(np.float32)

    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        n = nisa.register_alloc(0)
        nisa.register_move(n, 4)

        def body(i):
            t = nl.ndarray((1, 16), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a.ap([[16, 1], [1, 16]], scalar_offset=i, indirect_dim=0))
            nisa.dma_copy(dst=out.ap([[16, 1], [1, 16]], scalar_offset=i, indirect_dim=0), src=t)
        nl.fori_loop(0, n, body)
        return out

    np.testing.assert_array_equal(run(k, x), x)


def test_register_load_bound_is_refused_naming_the_load_line():
    @nki.jit
    def k(a):
        t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        n = nisa.register_alloc()
        nisa.register_load(n, t)
        nl.fori_loop(0, n, lambda i: None)
        return a

    with pytest.raises(NKIError, match=r"register_load at test_isa\.py:\d+"):
        run(k, np.ones((1, 1), np.int32))


@pytest.mark.parametrize("call", [
    lambda d, t: nisa.activate2(d, nl.exp, t, 1.0, 0.0, nl.multiply, nl.add),
    lambda d, t: nisa.exponential(d, t),
    lambda d, t: nisa.nc_matmul_mx(d, t, t, t, t),
    lambda d, t: nisa.quantize_mx(d, t, t),
    lambda d, t: nisa.rand2(d, 0.0, 1.0),
])
def test_neuroncore_v4_instructions_are_refused_naming_the_generation(call, rng):
    k = tile_kernel(call)
    for arch, core in (("trn1", "NeuronCore-v2"), ("trn2", "NeuronCore-v3")):
        with pytest.raises(NKIError, match=f"NeuronCore-v4 \\(trn3\\).*{arch} \\({core}\\)"):
            run(k, rng.standard_normal((8, 8)).astype(np.float32), arch=arch)


def test_instructions_return_their_nki_instruction(rng):
    seen = []

    def body(d, t):
        seen.append(nisa.tensor_copy(dst=d, src=t))
    run(tile_kernel(body), rng.standard_normal((4, 4)).astype(np.float32))
    assert isinstance(seen[0], nisa.NkiInstruction) and len(seen[0].handle) == 1
    assert seen[0].handle[0].opcode == bir.InstructionType.TensorCopy


def test_nc_stream_shuffle_broadcasts_one_partition(rng):
    # Fewer src partitions than dst's (the API page's rule: num_active_partitions is the larger).
    x = rng.standard_normal((1, 8)).astype(np.float32)

    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        d = nl.ndarray((32, 8), dtype=a.dtype, buffer=nl.sbuf)
        nisa.nc_stream_shuffle(dst=d, src=t, shuffle_mask=[0] * 32)
        o = nl.ndarray((32, 8), dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=d)
        return o

    np.testing.assert_array_equal(k(x), np.broadcast_to(x, (32, 8)))


def _paired_ties(data: np.ndarray, vals: np.ndarray, order) -> np.ndarray:
    """Each lane's vals visited in ``order``, each taking its first position in data that no
    earlier one took (0xFFFFFFFF if none): the NumPy model of the 2.32 nc_match_replace8 page."""
    idx = np.full(vals.shape, 0xFFFFFFFF, np.int64)
    for p in range(data.shape[0]):
        taken = np.zeros(data.shape[1], bool)
        for k in order:
            free = np.flatnonzero((data[p] == vals[p, k]) & ~taken)
            if free.size:
                idx[p, k] = free[0]
                taken[free[0]] = True
    return idx


def _find_and_match(data, vals, executor):
    @nki.jit
    def k(a, v):
        P, F = a.shape
        t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        w = nl.ndarray((P, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=w, src=v)
        idx = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.nc_find_index8(dst=idx, data=t, vals=w)
        rep = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
        ridx = nl.ndarray((P, 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.nc_match_replace8(dst=rep, data=t, vals=w, imm=-1.0, dst_idx=ridx)
        return stored(idx, rep, ridx)

    return run(k, data, vals, executor=executor)


@pytest.mark.parametrize("executor", ["simulator", "reference"])
def test_find_index8_and_match_replace8_pair_duplicate_vals_with_distinct_positions(executor, rng):
    # The 2.32 nc_match_replace8 page: "processes vals in reverse order (i = 7, 6, ..., 0)", its
    # example data [1, 2, 3, 4, 8 x 7], vals [3, 8 x 7] gives dst_idx [2, 10, 9, 8, 7, 6, 5, 4];
    # nc_find_index8 "pairs duplicate vals with their matching positions in ascending order".
    data = np.array([[1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    vals = np.array([[3, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    idx, rep, ridx = _find_and_match(data, vals, executor)
    assert idx[0].tolist() == [2, 4, 5, 6, 7, 8, 9, 10]
    assert ridx[0].tolist() == [2, 10, 9, 8, 7, 6, 5, 4]
    assert rep[0].tolist() == [1, 2, -1, 4] + [-1] * 7
    # 128 partitions of 600 values from a small alphabet: many ties, some vals missing or
    # repeated more often than they occur
    data = rng.integers(0, 40, (128, 600)).astype(np.float32)
    vals = rng.integers(0, 44, (128, 8)).astype(np.float32)
    vals[:, 4:] = vals[:, 3:4]
    data[:3, :] = 7.0
    idx, rep, ridx = _find_and_match(data, vals, executor)
    np.testing.assert_array_equal(idx, _paired_ties(data, vals, range(8)))
    want = _paired_ties(data, vals, range(7, -1, -1))
    np.testing.assert_array_equal(ridx, want)
    replaced = data.copy()
    for p, k in zip(*np.nonzero(want != 0xFFFFFFFF)):
        replaced[p, want[p, k]] = -1.0
    np.testing.assert_array_equal(rep, replaced)


def _int32(v):
    """v (int64) wrapped to int32: 32-bit integer math."""
    return ((np.asarray(v, np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


@pytest.mark.parametrize("executor", ["simulator", "reference"])
def test_iota_and_affine_select_wrap_in_32_bit_integer_math(executor):
    # nki.isa.iota: "an int32 offset", "The index values are computed in 32-bit integer math":
    # past 2^31 - 1 the values wrap (they did saturate); affine_select's expression is iota's.
    @nki.jit
    def k(x):
        ramp = nl.ndarray((128, 600), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(ramp, [[1, 600]], offset=2**31 - 300, channel_multiplier=1)
        down = nl.ndarray((128, 600), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(down, [[-1, 600]], offset=-2**31 + 100, channel_multiplier=-1)
        ones = nl.ndarray((128, 600), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=ones, value=1.0)
        sel = nl.ndarray((128, 600), dtype=nl.float32, buffer=nl.sbuf)
        nisa.affine_select(dst=sel, pattern=[[1, 600]], channel_multiplier=1, on_true_tile=ones,
                           on_false_value=-5.0, cmp_op=nl.greater_equal, offset=2**31 - 300)
        return stored(ramp, down, sel)

    ramp, down, sel = run(k, np.zeros((1, 1), np.float32), executor=executor)
    p, f = np.mgrid[0:128, 0:600]
    np.testing.assert_array_equal(ramp, _int32(2**31 - 300 + p + f))
    np.testing.assert_array_equal(down, _int32(-2**31 + 100 - p - f))
    np.testing.assert_array_equal(sel, np.where(_int32(2**31 - 300 + p + f) >= 0, 1.0, -5.0))


@pytest.mark.parametrize("call,name", [
    (lambda d: nisa.iota(d, [[1, 8]], offset=2**40), "offset 1099511627776"),
    (lambda d: nisa.iota(d, [[1, 8]], channel_multiplier=-2**31 - 1), "channel_multiplier -2147483649"),
    (lambda d: nisa.iota(d, [[2**31, 8]]), "pattern step 2147483648"),
    (lambda d: nisa.affine_select(dst=d, pattern=[[1, 8]], channel_multiplier=0, on_true_tile=d,
                                  on_false_value=0.0, offset=2**32), "offset 4294967296")])
def test_iota_and_affine_select_refuse_terms_outside_int32(call, name):
    @nki.jit
    def k(x):
        d = nl.ndarray((4, 8), dtype=nl.int32, buffer=nl.sbuf)
        call(d)
        return x

    with pytest.raises(NKIError, match=f"{name} is outside int32") as e:
        run(k, np.zeros((1, 1), np.float32))
    assert "test_isa.py" in str(e.value)  # at the kernel's line


@pytest.mark.parametrize("partitions", [1, 127, 128])
def test_bf16_and_fp8_scalars_are_numbers(partitions):
    # ml_dtypes' scalars (a bfloat16 from np.finfo-like limits, an fp8 constant) are not
    # np.number instances; they are numbers all the same
    @nki.jit
    def k(x):
        t = nl.ndarray((partitions, 513), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=t, value=ml_dtypes.bfloat16(1.5))
        u = nl.ndarray((partitions, 513), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=ml_dtypes.float8_e4m3fn(2.0))
        out = nl.ndarray(u.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=u)
        return out

    np.testing.assert_array_equal(run(k, np.zeros((1, 1), np.float32)), np.full((partitions, 513), 3.0, np.float32))
