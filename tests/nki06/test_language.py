"""nki.language (NKI 0.6) against NumPy. Tolerances as in test_isa: exact for copies, min/max,
comparisons and integer ops; 1e-6 relative for one fp32 operation; 2e-6 for activation
functions; composed operations (nl.sin's range reduction, nl.var, nl.rms_norm) state theirs."""

import contextlib

import ml_dtypes
import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki06.kernel import trace_kernel
from nki06_testing import addresses, close, opcodes, run


def unary(fn, **kw):
    @nki.jit
    def k(a):
        r = fn(nl.load(a), **kw)
        out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=r)
        return out
    return k


def binary(fn):
    @nki.jit
    def k(a, b):
        r = fn(nl.load(a), nl.load(b))
        out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=r)
        return out
    return k


def test_load_add_store_as_in_the_simulator_guide(rng):
    a = rng.random((128, 512)).astype(np.float32)
    b = rng.random((128, 512)).astype(np.float32)

    @nki.jit
    def add_kernel(a_ptr, b_ptr):
        result = nl.add(nl.load(a_ptr), nl.load(b_ptr))
        out = nl.ndarray(a_ptr.shape, dtype=a_ptr.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=result)
        return out

    np.testing.assert_array_equal(nki.simulate(add_kernel)(a, b), a + b)
    assert opcodes(add_kernel, a, b) == ["Load", "Load", "TensorTensor", "Save"]


@pytest.mark.parametrize("fn,ref", [
    (nl.add, np.add), (nl.subtract, np.subtract), (nl.multiply, np.multiply),
    (nl.maximum, np.maximum), (nl.minimum, np.minimum),
    (nl.equal, lambda a, b: (a == b).astype(np.float32)),
    (nl.not_equal, lambda a, b: (a != b).astype(np.float32)),
    (nl.less, lambda a, b: (a < b).astype(np.float32)),
    (nl.less_equal, lambda a, b: (a <= b).astype(np.float32)),
    (nl.greater, lambda a, b: (a > b).astype(np.float32)),
    (nl.greater_equal, lambda a, b: (a >= b).astype(np.float32)),
    (nl.logical_and, lambda a, b: np.logical_and(a, b).astype(np.float32)),
    (nl.logical_or, lambda a, b: np.logical_or(a, b).astype(np.float32)),
    (nl.logical_xor, lambda a, b: np.logical_xor(a, b).astype(np.float32)),
    (nl.mod, np.mod),
])
def test_binary_float(fn, ref, rng):
    a = rng.integers(-6, 6, (32, 48)).astype(np.float32)
    b = rng.integers(1, 5, (32, 48)).astype(np.float32)
    np.testing.assert_array_equal(run(binary(fn), a, b), ref(a, b))


def test_divide_power_and_scalars(rng):
    a = rng.random((16, 24)).astype(np.float32) + 0.5
    b = rng.random((16, 24)).astype(np.float32) + 0.5
    close(run(binary(nl.divide), a, b), a.astype(np.float64) / b, atol=0, rtol=1e-6)
    close(run(binary(nl.power), a, b), a.astype(np.float64) ** b, atol=0, rtol=1e-5)
    close(run(unary(lambda t: nl.multiply(t, 3.0)), a), 3.0 * a, atol=0, rtol=1e-6)
    close(run(unary(lambda t: nl.subtract(2.0, t)), a), 2.0 - a, atol=0, rtol=1e-6)
    col = rng.random((16, 1)).astype(np.float32)
    close(run(binary(nl.multiply), a, col), a * col, atol=0, rtol=1e-6)


@pytest.mark.parametrize("fn,ref", [
    (nl.bitwise_and, np.bitwise_and), (nl.bitwise_or, np.bitwise_or),
    (nl.bitwise_xor, np.bitwise_xor), (nl.left_shift, np.left_shift),
    (nl.right_shift, np.right_shift),
])
def test_bitwise(fn, ref, rng):
    a = rng.integers(0, 1 << 20, (8, 32)).astype(np.int32)
    b = rng.integers(0, 8, (8, 32)).astype(np.int32)
    np.testing.assert_array_equal(run(binary(fn), a, b), ref(a, b))


def test_invert_negative_logical_not(rng):
    a = rng.integers(0, 1000, (8, 16)).astype(np.int32)
    np.testing.assert_array_equal(run(unary(nl.invert), a), np.invert(a))
    f = rng.standard_normal((8, 16)).astype(np.float32)
    np.testing.assert_array_equal(run(unary(nl.negative), f), -f)
    z = rng.integers(0, 2, (8, 16)).astype(np.float32)
    np.testing.assert_array_equal(run(unary(nl.logical_not), z), 1 - z)


SQRT2PI = np.sqrt(2 / np.pi)


@pytest.mark.parametrize("fn,ref", [
    (nl.exp, np.exp), (nl.tanh, np.tanh), (nl.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    (nl.relu, lambda x: np.maximum(x, 0)), (nl.silu, lambda x: x / (1 + np.exp(-x))),
    (nl.softplus, lambda x: np.log1p(np.exp(x))), (nl.square, np.square),
    (nl.abs, np.abs), (nl.sign, np.sign), (nl.arctan, np.arctan),
    (nl.gelu_apprx_tanh, lambda x: 0.5 * x * (1 + np.tanh(SQRT2PI * (x + 0.044715 * x ** 3)))),
    (nl.gelu_apprx_sigmoid, lambda x: x / (1 + np.exp(-1.702 * x))),
    (nl.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nl.silu_dx, lambda x: (s := 1 / (1 + np.exp(-x))) + x * s * (1 - s)),
    (nl.erf_dx, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x)),
])
def test_activations(fn, ref, rng):
    x = rng.uniform(-3, 3, (64, 40)).astype(np.float32)
    close(run(unary(fn), x), ref(x.astype(np.float64)), atol=1e-6, rtol=2e-6)


def test_erf_gelu_and_derivatives(rng):
    from math import erf
    x = rng.uniform(-3, 3, (16, 32)).astype(np.float32)
    x64 = x.astype(np.float64)
    erf_v = np.vectorize(erf)(x64)
    phi = np.exp(-x64 * x64 / 2) / np.sqrt(2 * np.pi)
    close(run(unary(nl.erf), x), erf_v, atol=1e-6, rtol=2e-6)
    close(run(unary(nl.gelu), x), 0.5 * x64 * (1 + np.vectorize(erf)(x64 / np.sqrt(2))),
          atol=1e-6, rtol=2e-6)
    close(run(unary(nl.gelu_dx), x), 0.5 * (1 + np.vectorize(erf)(x64 / np.sqrt(2))) + x64 * phi,
          atol=1e-6, rtol=2e-6)
    s = 1 / (1 + np.exp(-1.702 * x64))
    close(run(unary(nl.gelu_apprx_sigmoid_dx), x), s + 1.702 * x64 * s * (1 - s), atol=1e-5,
          rtol=1e-5)


def test_log_sqrt_rsqrt_reciprocal(rng):
    x = rng.uniform(0.1, 40, (32, 32)).astype(np.float32)
    x64 = x.astype(np.float64)
    close(run(unary(nl.log), x), np.log(x64), atol=1e-6, rtol=2e-6)
    close(run(unary(nl.sqrt), x), np.sqrt(x64), atol=0, rtol=2e-6)
    close(run(unary(nl.rsqrt), x), 1 / np.sqrt(x64), atol=0, rtol=2e-6)
    close(run(unary(nl.reciprocal), x), 1 / x64, atol=0, rtol=2e-6)


def test_trigonometry_over_the_whole_range(rng):
    """nl.sin/cos reduce the angle first: fp32 range reduction keeps |error| within
    |x| * 2^-23 + 1e-6 of NumPy for |x| up to 100."""
    x = rng.uniform(-100, 100, (32, 64)).astype(np.float32)
    x64 = x.astype(np.float64)
    tol = 100 * 2.0 ** -23 * 4 + 1e-6
    close(run(unary(nl.sin), x), np.sin(x64), atol=tol)
    close(run(unary(nl.cos), x), np.cos(x64), atol=tol)
    y = rng.uniform(-1.2, 1.2, (32, 64)).astype(np.float32)
    close(run(unary(nl.tan), y), np.tan(y.astype(np.float64)), atol=1e-5, rtol=1e-5)


def test_rounding(rng):
    x = (rng.uniform(-50, 50, (16, 64)) * 7).astype(np.float32)
    x[0, :4] = [-0.5, 0.5, -3.0, 2.0]
    for fn, ref in ((nl.floor, np.floor), (nl.ceil, np.ceil), (nl.trunc, np.trunc)):
        np.testing.assert_array_equal(run(unary(fn), x), ref(x), err_msg=fn.__name__)


def test_fmod_and_mod(rng):
    x = rng.uniform(-20, 20, (16, 32)).astype(np.float32)
    y = rng.uniform(1, 5, (16, 32)).astype(np.float32)
    close(run(binary(nl.fmod), x, y), np.fmod(x, y), atol=1e-5)
    close(run(unary(lambda t: nl.fmod(t, 3.0)), x), np.fmod(x, 3.0), atol=1e-5)
    close(run(binary(nl.mod), x, y), np.mod(x, y), atol=1e-5)


def test_where_and_copy_with_dtype(rng):
    c = (rng.random((16, 8)) > 0.5).astype(np.float32)
    a = rng.standard_normal((16, 8)).astype(np.float32)

    @nki.jit
    def k(cond, x):
        w = nl.where(nl.load(cond), nl.load(x), -1.0)
        b = nl.copy(w, dtype=nl.bfloat16)
        out = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=b)
        return out

    expected = np.where(c != 0, a, -1.0).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(run(k, c, a), expected)


@pytest.mark.parametrize("fn,ref", [(nl.sum, np.sum), (nl.max, np.max), (nl.min, np.min),
                                    (nl.prod, np.prod), (nl.mean, np.mean)])
def test_reductions(fn, ref, rng):
    x = rng.uniform(0.5, 1.5, (32, 4, 16)).astype(np.float32)
    close(run(unary(lambda t: fn(t, axis=(1, 2), keepdims=True)), x)[:, 0, 0],
          ref(x.astype(np.float64), axis=(1, 2)), atol=1e-5, rtol=1e-5)


def test_all_var_softmax_rms_norm(rng):
    b = (rng.random((16, 32)) > 0.1).astype(np.float32)
    close(run(unary(lambda t: nl.all(t, axis=1)), b)[:, 0], b.all(1).astype(np.float32), atol=0)
    x = rng.standard_normal((64, 100)).astype(np.float32)
    x64 = x.astype(np.float64)
    close(run(unary(lambda t: nl.var(t, axis=1)), x)[:, 0], x64.var(1), atol=1e-5, rtol=1e-5)
    e = np.exp(x64 - x64.max(1, keepdims=True))
    close(run(unary(lambda t: nl.softmax(t, axis=1)), x), e / e.sum(1, keepdims=True), atol=1e-6,
          rtol=1e-5)
    w = rng.standard_normal((64, 100)).astype(np.float32)
    rms = np.sqrt((x64 ** 2).sum(1, keepdims=True) / 100 + 1e-6)
    close(run(binary(lambda a, ww: nl.rms_norm(a, ww, axis=1, n=100)), x, w), x64 / rms * w,
          atol=1e-5, rtol=1e-5)


def test_matmul_transpose_and_identity(rng):
    x = rng.standard_normal((64, 96)).astype(np.float32)
    y = rng.standard_normal((96, 200)).astype(np.float32)

    @nki.jit
    def k(a, b):
        p = nl.matmul(nl.load(a), nl.load(b))
        t = nl.transpose(nl.load(a))
        ident = nl.shared_identity_matrix(n=64, dtype=nl.float32)
        o1 = nl.ndarray(p.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        o2 = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        o3 = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(o1, value=nl.copy(p))
        nl.store(o2, value=nl.copy(t))
        nl.store(o3, value=ident)
        return o1, o2, o3

    p, t, ident = run(k, x, y)
    close(p, x.astype(np.float64) @ y, atol=1e-4, rtol=1e-5)
    np.testing.assert_array_equal(t, x.T)
    np.testing.assert_array_equal(ident, np.eye(64, dtype=np.float32))


def test_matmul_transpose_x(rng):
    xt = rng.standard_normal((96, 64)).astype(np.float32)
    y = rng.standard_normal((96, 128)).astype(np.float32)
    k = binary(lambda a, b: nl.copy(nl.matmul(a, b, transpose_x=True)))
    close(run(k, xt, y), xt.astype(np.float64).T @ y, atol=1e-4, rtol=1e-5)


def test_broadcast_to_and_load_transpose2d(rng):
    row = rng.standard_normal((1, 300)).astype(np.float32)
    col = rng.standard_normal((64, 1)).astype(np.float32)

    @nki.jit
    def k(r, c):
        rb = nl.broadcast_to(nl.load(r), (96, 300))
        cb = nl.broadcast_to(nl.load(c), (64, 20))
        tt = nl.load_transpose2d(r[:, 0:100])
        outs = [nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm) for t in (rb, cb, tt)]
        for o, t in zip(outs, (rb, cb, tt)):
            nl.store(o, value=t)
        return tuple(outs)

    rb, cb, tt = run(k, row, col)
    np.testing.assert_array_equal(rb, np.broadcast_to(row, (96, 300)))
    np.testing.assert_array_equal(cb, np.broadcast_to(col, (64, 20)))
    np.testing.assert_array_equal(tt, row[:, :100].T)


def test_creation_functions(rng):
    x = rng.standard_normal((8, 16)).astype(np.float32)
    const = rng.standard_normal((8, 16)).astype(np.float32)

    @nki.jit
    def k(a):
        z = nl.zeros_like(nl.load(a))
        o = nl.ones((8, 16), dtype=nl.float32)
        f = nl.full((8, 16), 2.5, dtype=nl.float32)
        e = nl.empty_like(o)
        nisa.tensor_tensor(dst=e, data1=o, data2=f, op=nl.add)
        s = nl.load(nl.shared_constant(const))
        r = nl.rand((8, 16), dtype=nl.float32)
        results = (z, e, s, r)
        outs = [nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.shared_hbm) for t in results]
        for out, t in zip(outs, results):
            nl.store(out, value=t)
        return tuple(outs)

    z, e, s, r = run(k, x)
    np.testing.assert_array_equal(z, np.zeros_like(x))
    np.testing.assert_array_equal(e, np.full_like(x, 3.5))
    np.testing.assert_array_equal(s, const)
    assert ((r >= 0) & (r < 1)).all() and len(np.unique(r)) > 64


def test_dropout_language_and_device_print(rng, capsys):
    x = rng.standard_normal((4, 8)).astype(np.float32)

    @nki.jit
    def k(a):
        t = nl.load(a)
        nl.device_print("tile", t)
        d = nl.dropout(t, rate=0.0)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=d)
        return out

    np.testing.assert_array_equal(run(k, x), x)
    assert "tile" in capsys.readouterr().out


def test_expand_dims_and_tile_size():
    @nki.jit
    def k(a):
        t = nl.load(a)
        assert nl.expand_dims(t, 1).shape == (4, 1, 8)
        assert nl.tile_size.pmax == 128 and nl.tile_size.psum_bank_fmax == 512
        assert nl.tile_size.gemm_moving_fmax == 512 and nl.tile_size.psum_num_banks == 8
        assert nl.tile_size.sbuf_fmax_bytes == 224 * 1024  # trn2 (the default target)
        assert nl.tile_size.sbuf_size_bytes == 128 * 224 * 1024
        assert nl.tile_size.psum_fmax == 512
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=t)
        return out

    run(k, np.zeros((4, 8), np.float32))
    with pytest.raises(NKIError, match="not published"):
        nl.tile_size.sbuf_min_align


def test_buffers_and_their_predicates():
    assert nl.hbm is nl.private_hbm
    assert nl.is_hbm(nl.shared_hbm) and nl.is_hbm(nl.hbm) and not nl.is_hbm(nl.sbuf)
    assert nl.is_on_chip(nl.psum) and nl.is_psum(nl.psum) and nl.is_sbuf(nl.sbuf)
    with pytest.raises(NKIError, match="removed in NKI 0.3: use nl.sbuf"):
        nl.is_sbuf("sbuf")


def test_programs_loops_and_no_reorder(rng):
    x = rng.standard_normal((3, 4, 8)).astype(np.float32)

    @nki.jit
    def k(a):
        assert (nl.program_id(0), nl.num_programs(), nl.program_ndim()) == (0, 1, 0)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        with nl.no_reorder():
            for i in nl.sequential_range(3):
                for j in nl.static_range(1):
                    nl.store(out[i], value=nl.load(a[i]))
        return out

    np.testing.assert_array_equal(run(k, x), x)


def nine_psum_tiles_live_at_once(keep_order: bool):
    @nki.jit
    def k(a):
        out = nl.ndarray((a.shape[0], 9), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray(a.shape, dtype=a.dtype)
        nisa.dma_copy(dst=t, src=a)
        u = nl.ndarray((a.shape[0], 9), dtype=nl.float32)
        with nl.no_reorder() if keep_order else contextlib.nullcontext():
            # nine 2 KiB PSUM tiles, all written before any is read: 18 KiB of PSUM's 16 in program order
            ts = [nl.ndarray((a.shape[0], 512), dtype=nl.float32, buffer=nl.psum) for _ in range(9)]
            for i, x in enumerate(ts):
                nisa.tensor_scalar(dst=x, data=t, op0=nl.add, operand0=float(i))
            for i, x in enumerate(ts):
                nisa.tensor_copy(dst=u[:, i:i + 1], src=x[:, 0:1])
        nisa.dma_copy(dst=out, src=u)
        return out
    return k


def test_no_reorder_keeps_tiles_from_being_reordered_to_fit():
    a = np.zeros((64, 512), np.float32)
    traced = trace_kernel(nine_psum_tiles_live_at_once(False), a)
    assert traced.reordered == [2]  # without the block the tracer reorders them to fit
    with pytest.raises(NKIError, match="PSUM overflow"):
        run(nine_psum_tiles_live_at_once(True), a)


def test_abs_max_is_trn3_only(rng):
    a = rng.standard_normal((4, 4)).astype(np.float32)
    with pytest.raises(NKIError, match=r"nl.abs_max is available on NeuronCore-v4 \(trn3\)"):
        run(binary(nl.abs_max), a, a)
    with pytest.raises(NKIError, match=r"nl.abs_min is available on NeuronCore-v4"):
        run(binary(nl.abs_min), a, a)


@pytest.mark.parametrize("call,match", [
    (lambda t: nl.gather_flattened(t, t, axis=1), "axis=1 is not modelled"),
    (lambda t: nl.ndarray((4, 4), nl.float32, address=(32, 0)), "partition offset"),
    (lambda t: nl.ndarray((4, 4), nl.float32, buffer=nl.psum, address=(0, 1024)), "bank"),
    (lambda t: nl.ndarray((4, 4), nl.float32, address=(0, 6)), "aligned"),
    (lambda t: nl.ndarray((4, 4), nl.float32, buffer=nl.shared_hbm, address=(0, 0)), "HBM"),
    (lambda t: nl.ndarray((4, 4), nl.float32, buffer="sbuf"), "removed in NKI 0.3"),
    (lambda t: nl.ndarray((256, 4), nl.float32), "128 partitions"),
    (lambda t: nl.ndarray((4, 4), nl.tfloat32), "tfloat32 is not modelled"),
    (lambda t: nl.ndarray((4, 4), nl.float8_e4m3fn), r"NeuronCore-v4 \(trn3\)"),
    (lambda t: nl.zeros((4, 4), nl.float32, buffer=nl.shared_hbm), "HBM tensors are written"),
    (lambda t: nl.store(t, value=t), "must be an HBM tensor"),
])
def test_refusals_name_the_reason(call, match):
    @nki.jit
    def k(a):
        call(nl.load(a))
        return a

    with pytest.raises(NKIError, match=match):
        run(k, np.zeros((4, 4), np.float32))


def test_manual_allocation_places_tensors_at_their_address(rng):
    x = rng.standard_normal((128, 512)).astype(np.float32)

    @nki.jit
    def k(a):
        first = nl.ndarray((128, 512), nl.float32, name="first", address=(0, 4096))
        nisa.dma_copy(dst=first, src=a)
        free = nl.ndarray((128, 512), nl.float32, name="free")  # placed around the pinned
        nisa.tensor_scalar(dst=free, data=first, op0=nl.multiply, operand0=2.0)
        # reuses first's bytes once first is dead (the allocator example's scopes)
        again = nl.ndarray((128, 512), nl.float32, name="again", address=(0, 4096))
        nisa.tensor_copy(dst=again, src=free)
        acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum, name="acc", address=(0, 6144))
        nisa.tensor_copy(dst=acc, src=again)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        res = nl.ndarray((128, 512), nl.float32, name="res")
        nisa.tensor_copy(dst=res, src=acc)
        nisa.dma_copy(dst=out, src=res)
        return out

    np.testing.assert_array_equal(run(k, x), 2 * x)
    where = addresses(k, x)
    assert where["first"] == ("SB", 4096) and where["again"] == ("SB", 4096)
    assert where["acc"] == ("PSUM", 6144)
    assert not 4096 - 2048 < where["free"][1] < 4096 + 2048  # clear of first, live beside it


def test_a_pinned_tensor_past_the_end_of_sbuf_is_refused():
    @nki.jit
    def k(a):
        t = nl.ndarray((128, 512), nl.float32, address=(0, 224 * 1024 - 1024))
        nisa.dma_copy(dst=t, src=a)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    with pytest.raises(NKIError, match="needs bytes \\[228352, 230400\\) of each partition; SBUF "
                                       "has 229376"):
        run(k, np.zeros((128, 512), np.float32))


def test_fmod_as_an_instructions_op_is_refused():
    # (as in the 2.2x dialect: no ALU operation computes fmod; the ALU's mod takes the divisor's sign)
    @nki.jit
    def kernel(a, b):
        r = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(r, nl.load(a), nl.load(b), op=nl.fmod)
        out = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=r)
        return out

    a = np.linspace(-7, 7, 32, dtype=np.float32).reshape(8, 4)
    with pytest.raises(NKIError, match=r"tensor_tensor: op: fmod is not an ALU operation: .*call nl.fmod\(x, y\)"):
        run(kernel, a, np.full_like(a, 3))
