"""nki.isa instructions against NumPy (on the reference executor), with their public argument
names, and the engines and fields they are emitted with."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim import bir
from nki_testing import close, run_on, run_on_reference as run


def emitted(kernel, *args):
    return list(nki.trace(kernel, *args, schedule="source").functions[0].blocks[0].instructions)


def single_output(body, out_shape=None, out_dtype=None):
    """A kernel storing body(*loaded inputs) to one output."""
    @nki.jit
    def kernel(*arrays):
        tiles = [nl.load(a) for a in arrays]
        result = body(*tiles)
        out = nl.ndarray(out_shape or result.shape, dtype=out_dtype or result.dtype,
                         buffer=nl.shared_hbm)
        nl.store(out, result)
        return out
    return kernel


def test_nc_matmul_and_its_fields(rng):
    st = rng.standard_normal((64, 96)).astype(np.float32)
    mv = rng.standard_normal((64, 300)).astype(np.float32)
    k = single_output(lambda s, m: nisa.nc_matmul(s, m))
    close(run(k, st, mv), st.astype(np.float64).T @ mv, atol=1e-4, rtol=1e-5)
    mm = [i for i in emitted(k, st, mv) if i.opcode_name == "Matmult"][0]
    assert (mm.engine, mm.start_tensor_calc, mm.stop_tensor_calc) == (bir.Engine.PE, True, True)
    assert mm.outs[0].location.type == bir.MemoryType.PSUM


def test_nc_matmul_tile_position():
    k = single_output(lambda s, m: nisa.nc_matmul(s, m, tile_position=(0, 64), tile_size=(64, 64)))
    a = np.zeros((64, 64), np.float32)
    mm = [i for i in emitted(k, a, a) if i.opcode_name == "Matmult"][0]
    assert (mm.tile_position, mm.tile_size) == ([0, 64], [64, 64])


@pytest.mark.parametrize("shape,engine", [((128, 96), bir.Engine.PE), ((32, 16), bir.Engine.DVE)])
def test_nc_transpose_picks_the_engine_by_size(shape, engine, rng):
    a = rng.standard_normal(shape).astype(np.float32)
    k = single_output(lambda t: nisa.tensor_copy(nisa.nc_transpose(t)))
    np.testing.assert_array_equal(run(k, a), a.T)
    transposes = [i for i in emitted(k, a) if i.opcode_name in ("Matmult", "StreamTranspose")]
    assert [i.engine for i in transposes] == [engine]


def test_activation_with_bias_scale_tile_and_reduction(rng):
    x = rng.standard_normal((64, 40)).astype(np.float32)
    bias = rng.standard_normal((64, 1)).astype(np.float32)
    scale = rng.random((64, 1)).astype(np.float32)

    @nki.jit
    def kernel(a, b, s):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        red = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
        total = nl.ndarray((a.shape[0], 1), dtype=nl.float32)
        y = nisa.activation(op=nl.exp, data=nl.load(a), bias=nl.load(b), scale=nl.load(s),
                            reduce_op=nl.add, reduce_res=total)
        nl.store(out, y)
        nl.store(red, total)
        return out, red

    y, red = run(kernel, x, bias, scale)
    want = np.exp(x * scale + bias)
    close(y, want, atol=1e-6, rtol=1e-5)
    close(red, want.sum(1, keepdims=True), atol=1e-4, rtol=1e-5)
    act = [i for i in emitted(kernel, x, bias, scale) if i.engine == bir.Engine.Activation]
    assert [i.opcode_name for i in act] == ["Activation", "ReadActivationAccumulator"]
    assert (act[0].has_bias, act[0].has_scale_tensor, act[0].acc.name) == (True, True,
                                                                          "ZeroAccumulate")


def test_activation_reduce(rng):
    x = rng.standard_normal((32, 50)).astype(np.float32)

    @nki.jit
    def kernel(a):
        out = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
        total = nl.ndarray((a.shape[0], 1), dtype=nl.float32)
        nisa.activation_reduce(op=np.square, data=nl.load(a), reduce_op=np.add, reduce_res=total,
                               scale=2.0)
        nl.store(out, total)
        return out

    close(run(kernel, x), ((2 * x) ** 2).sum(1, keepdims=True), atol=1e-4, rtol=1e-5)


def test_tensor_tensor_and_engine_choice(rng):
    a = rng.random((16, 32)).astype(np.float32) + 0.5
    b = rng.random((16, 32)).astype(np.float32)
    k = single_output(lambda x, y: nisa.tensor_tensor(x, y, op=np.power))
    close(run(k, a, b), a ** b, atol=0, rtol=1e-6)
    assert emitted(k, a, b)[2].engine == bir.Engine.Pool  # power runs on GpSimd
    k2 = single_output(lambda x, y: nisa.tensor_tensor(data1=x, data2=y, op=nl.subtract))
    np.testing.assert_array_equal(run(k2, a, b), a - b)
    assert emitted(k2, a, b)[2].engine == bir.Engine.DVE


def test_tensor_scalar_two_ops_reversed_and_pointer_operands(rng):
    a = rng.random((64, 20)).astype(np.float32)
    col = rng.random((64, 1)).astype(np.float32) + 1
    k = single_output(lambda x, c: nisa.tensor_scalar(x, np.subtract, 1.5, reverse0=True,
                                                      op1=np.multiply, operand1=c))
    close(run(k, a, col), (1.5 - a) * col, atol=0, rtol=1e-6)
    # operand0 is a number but operand1 a tile: the number becomes a [P, 1] column (memset)
    ops = emitted(k, a, col)
    assert [i.opcode_name for i in ops][2:4] == ["Memset", "TensorScalarPtr"]
    ts = ops[3]
    assert (ts.op0.name, ts.reverse0, ts.op1.name) == ("subtract", True, "mult")
    k2 = single_output(lambda x: nisa.tensor_scalar(x, np.multiply, 3.0, op1=np.add,
                                                    operand1=2.0, engine=nisa.scalar_engine))
    close(run(k2, a), a * 3 + 2, atol=0, rtol=1e-6)
    assert emitted(k2, a)[1].engine == bir.Engine.Activation


def test_tensor_reduce_negate_keepdims_and_split_axes(rng):
    a = rng.standard_normal((32, 3, 4, 5)).astype(np.float32)
    k = single_output(lambda x: nisa.tensor_reduce(np.max, x, axis=(1, 3), negate=True,
                                                   keepdims=True))
    np.testing.assert_array_equal(run(k, a), -a.max((1, 3), keepdims=True))
    red = emitted(k, a)[1]
    assert red.axis.name == "XY" and red.negate


def test_tensor_copy_engines(rng):
    a = rng.random((8, 8)).astype(np.float32)
    for engine, hw in ((nisa.vector_engine, bir.Engine.DVE), (nisa.scalar_engine,
                                                              bir.Engine.Activation),
                       (nisa.gpsimd_engine, bir.Engine.Pool)):
        k = single_output(lambda x, e=engine: nisa.tensor_copy(x, engine=e))
        np.testing.assert_array_equal(run(k, a), a)
        assert emitted(k, a)[1].engine == hw


def test_iota_and_memset():
    @nki.jit
    def kernel():
        out = nl.ndarray((2, 16, 8), dtype=nl.int32, buffer=nl.shared_hbm)
        expr = 100 + 3 * nl.arange(16)[:, None] - nl.arange(8)[None, :]
        nl.store(out[0], nisa.iota(expr, dtype=nl.int32))
        nl.store(out[1], nisa.memset((16, 8), 42, dtype=nl.int32))
        return out

    out = run(kernel)
    np.testing.assert_array_equal(out[0], 100 + 3 * np.arange(16)[:, None] - np.arange(8))
    np.testing.assert_array_equal(out[1], 42)
    iota = emitted(kernel)[0]
    assert (iota.opcode_name, iota.engine, iota.base, iota.channel_multiplier) == (
        "Iota", bir.Engine.Pool, 100, 3)


def test_affine_select_causal_mask(rng):
    s = rng.standard_normal((64, 64)).astype(np.float32)

    def body(t):
        i_q, i_k = nl.mgrid[0:64, 0:64]
        return nisa.affine_select(i_q - i_k >= 0, t, -9984.0)

    out = run(single_output(body), s)
    np.testing.assert_array_equal(out, np.where(np.tri(64, dtype=bool), s, -9984.0))


def test_dma_copy_both_ways_and_accumulating(rng):
    a = rng.random((32, 16)).astype(np.float32)

    @nki.jit
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=out, src=t)
        nisa.dma_copy(dst=out, src=t, dst_rmw_op=np.add)
        return out

    close(run(kernel, a), 2 * a, atol=0, rtol=1e-7)
    ops = emitted(kernel, a)
    assert [i.opcode_name for i in ops] == ["DMACopy"] * 3 and ops[2].dst_rmw_op.name == "add"


def test_max8_find_index8_match_replace8(rng):
    a = rng.permutation(64 * 40).reshape(64, 40).astype(np.float32)

    @nki.jit
    def kernel(x):
        top = nl.ndarray((x.shape[0], 8), dtype=x.dtype, buffer=nl.shared_hbm)
        idx = nl.ndarray((x.shape[0], 8), dtype=nl.uint32, buffer=nl.shared_hbm)
        rep = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        m = nisa.max8(src=t)
        nl.store(top, m)
        nl.store(idx, nisa.nc_find_index8(data=t, vals=m))
        nl.store(rep, nisa.nc_match_replace8(data=t, vals=m, imm=-1.0))
        return top, idx, rep

    top, idx, rep = run(kernel, a)
    order = np.argsort(-a, axis=1)[:, :8]
    np.testing.assert_array_equal(top, np.take_along_axis(a, order, 1))
    np.testing.assert_array_equal(idx, order)
    want = a.copy()
    np.put_along_axis(want, order, -1.0, 1)
    np.testing.assert_array_equal(rep, want)


def test_tensor_tensor_scan(rng):
    d0 = rng.random((16, 50)).astype(np.float32)
    d1 = rng.random((16, 50)).astype(np.float32)
    k = single_output(lambda x, y: nisa.tensor_tensor_scan(x, y, initial=1.0, op0=np.multiply,
                                                           op1=np.add))
    r, want = np.ones(16), np.zeros((16, 50))
    for t in range(50):
        r = d0[:, t] * r + d1[:, t]
        want[:, t] = r
    close(run(k, d0, d1), want, atol=1e-6, rtol=1e-5)


def test_select_reduce_and_range_select(rng):
    x = rng.standard_normal((32, 24)).astype(np.float32)
    pred = (rng.random((32, 24)) > 0.5).astype(np.uint8)
    lo = rng.integers(0, 10, (32, 1)).astype(np.float32)
    hi = lo + 8

    @nki.jit
    def kernel(a, p, b0, b1):
        sel = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        smax = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
        rsel = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        dst = nl.ndarray(a.shape, dtype=a.dtype)
        red = nl.ndarray((a.shape[0], 1), dtype=a.dtype)
        nisa.select_reduce(dst=dst, predicate=nl.load(p), on_true=t, on_false=-5.0,
                           reduce_res=red, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        nl.store(sel, dst)
        nl.store(smax, red)
        nl.store(rsel, nisa.range_select(on_true_tile=t, comp_op0=np.greater_equal,
                                         comp_op1=np.less, bound0=nl.load(b0),
                                         bound1=nl.load(b1), on_false_value=0.0))
        return sel, smax, rsel

    sel, smax, rsel = run(kernel, x, pred, lo, hi, arch="trn2")  # range_select: NeuronCore-v3+
    want = np.where(pred != 0, x, -5.0)
    np.testing.assert_array_equal(sel, want)
    np.testing.assert_array_equal(smax, want.max(1, keepdims=True))
    j = np.arange(24)[None, :]
    np.testing.assert_array_equal(rsel, np.where((j >= lo) & (j < hi), x, 0.0))
    with pytest.raises(nki.NKIError, match="RangeSelect: needs NeuronCore-v3 or later; trn1 is NeuronCore-v2"):
        nki.trace(kernel, x, pred, lo, hi)


def test_select_reduce_dtype_must_be_dsts(rng):
    x = rng.standard_normal((8, 16)).astype(np.float32)

    def kernel_with(dtype):
        @nki.jit
        def kernel(a):
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            t = nl.load(a)
            dst = nl.ndarray(a.shape, dtype=a.dtype)
            nisa.select_reduce(dst=dst, predicate=nl.greater(t, 0.0), on_true=t, on_false=0.0,
                               dtype=dtype)
            nl.store(out, dst)
            return out
        return kernel

    np.testing.assert_array_equal(run(kernel_with(nl.float32), x), np.maximum(x, 0))
    with pytest.raises(nki.NKIError, match="select_reduce: dtype bfloat16 differs from dst's float32"):
        nki.trace(kernel_with(nl.bfloat16), x)


def test_bn_stats_bn_aggr_and_reciprocal(rng):
    x = rng.standard_normal((64, 300)).astype(np.float32) * 3 + 1

    @nki.jit
    def kernel(a):
        mv = nl.ndarray((a.shape[0], 2), dtype=nl.float32, buffer=nl.shared_hbm)
        inv = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.store(mv, nisa.bn_aggr(nisa.bn_stats(t, dtype=nl.float32)))
        nl.store(inv, nisa.reciprocal(t))
        return mv, inv

    mv, inv = run(kernel, x)
    close(mv[:, 0], x.mean(1), atol=1e-5, rtol=1e-5)
    close(mv[:, 1], x.var(1), atol=1e-4, rtol=1e-4)
    close(inv, 1 / x, atol=0, rtol=1e-6)


def test_dma_copy_dge_mode_reaches_the_instruction_and_hwdge_follows_its_rule(rng):
    a = rng.random((32, 16)).astype(np.float32)

    def copy_kernel(mode, dtype=None):
        @nki.jit
        def kernel(x):
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            t = nl.ndarray(x.shape, dtype=dtype or x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x, dge_mode=mode)
            nisa.dma_copy(dst=out, src=t)
            return out
        return kernel

    for mode, want in ((nisa.dge_mode.swdge, "SWDGE"), (nisa.dge_mode.hwdge, "HWDGE")):
        close(run(copy_kernel(mode), a, arch="trn2"), a, atol=0)
        first = nki.trace(copy_kernel(mode), a, arch="trn2", schedule="source")
        assert first.functions[0].blocks[0].instructions[0].dge_type.name == want
    for mode in (nisa.dge_mode.unknown, nisa.dge_mode.none):
        close(run(copy_kernel(mode), a), a, atol=0)
    with pytest.raises(nki.NKIError, match=r"dma_copy: .*(trn1|NeuronCore-v2)"):
        nki.trace(copy_kernel(nisa.dge_mode.hwdge), a, arch="trn1")
    with pytest.raises(nki.NKIError, match="raw bytes"):
        nki.trace(copy_kernel(nisa.dge_mode.hwdge, nl.bfloat16), a, arch="trn2")
    with pytest.raises(nki.NKIError, match="dge_mode must be one of"):
        nki.trace(copy_kernel("fast"), a)


def test_dma_copy_oob_mode_skip_leaves_out_of_range_rows_and_applies_to_gathers_only(rng):
    data = rng.standard_normal((32, 24)).astype(np.float32)
    idx = np.array([[3], [40], [0], [31], [-1], [7], [32], [5]], np.int32)

    def gather(mode):
        @nki.jit
        def kernel(d, i):
            out = nl.ndarray((8, d.shape[1]), dtype=d.dtype, buffer=nl.shared_hbm)
            t = nl.full((8, d.shape[1]), 9.0, dtype=d.dtype)
            rows = nl.load(i)
            i_p = nl.arange(8)[:, None]
            i_f = nl.arange(d.shape[1])[None, :]
            nisa.dma_copy(dst=t, src=d[rows[i_p, 0], i_f], oob_mode=mode)
            nl.store(out, t)
            return out
        return kernel

    want = np.full((8, 24), 9.0, np.float32)
    ok = (idx[:, 0] >= 0) & (idx[:, 0] < 32)
    want[ok] = data[idx[ok, 0]]
    close(run(gather(nisa.oob_mode.skip), data, idx), want, atol=0)
    with pytest.raises(Exception, match="out of range|outside"):
        run(gather(nisa.oob_mode.error), data, idx)

    @nki.jit
    def plain(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x, oob_mode=nisa.oob_mode.skip)
        return t
    with pytest.raises(nki.NKIError, match="oob_mode=skip applies to gathers"):
        nki.trace(plain, data)
    with pytest.raises(nki.NKIError, match="oob_mode must be"):
        nki.trace(gather("wrap"), data, idx)


@pytest.mark.parametrize("body,match", [
    (lambda t: nisa.affine_select(nl.arange(4)[:, None] - nl.arange(8)[None, :] >= 0, t, t),
     "affine_select: on_false_value must be a number, not a tile"),
    (lambda t: nisa.dropout(t, "0.5"), "dropout: the drop probability must be a number, not str"),
    (lambda t: nisa.tensor_scalar(t, np.add, "2"),
     "tensor_scalar: operand0 must be a number or a tile, not str"),
    (lambda t: nisa.nc_match_replace8(data=t, vals=nisa.max8(src=t), imm=t[:, 0:1]),
     "nc_match_replace8: imm must be a number, not a tile"),
    (lambda t: nisa.nc_find_index8(data=t, vals=nisa.max8(src=t), dtype=nl.int32),
     "nc_find_index8: dtype must be uint16 or uint32, not int32"),
])
def test_operands_of_the_wrong_kind_are_refused_saying_what_they_must_be(body, match):
    # (a tile given as on_false_value was "expected a number or a tile, got Tensor"; a string
    # probability was read by float(); imm as a tile failed as "a Python integer"; int32
    # indices were taken where the page allows uint16 or uint32)
    with pytest.raises(nki.NKIError, match=r"test_isa\.py:\d+: " + match):
        nki.trace(single_output(body), np.ones((4, 8), np.float32))


def test_dma_transpose_past_the_partitions_is_refused_at_its_line():
    # (a [7, 129] source made a 129-partition tile, refused only by the BIR verifier)
    @nki.jit
    def kernel(a):
        out = nl.ndarray((128, 7), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nisa.dma_transpose(a)
        nl.store(out, t[0:128, :])
        return out

    with pytest.raises(nki.NKIError, match=r"test_isa\.py:\d+: the result would span 129 "
                                           r"partitions; a tile has at most 128\n +t = nisa"):
        nki.trace(kernel, np.ones((7, 129), np.float32))


def test_find_index8_and_match_replace8_with_ties():
    # max8 of a lane holding one value nine times gives it eight times: nc_find_index8 pairs
    # the copies with its first eight positions ascending, nc_match_replace8 descending
    # (2.32 nc_match_replace8 page, "Behavior with duplicate vals"); both replace those eight.
    a = np.tile(np.array([1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8, 0, 8, 8], np.float32), (3, 1))

    @nki.jit
    def kernel(x):
        idx = nl.ndarray((x.shape[0], 8), dtype=nl.uint32, buffer=nl.shared_hbm)
        rep = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        ridx = nl.ndarray((x.shape[0], 8), dtype=nl.uint32, buffer=nl.shared_hbm)
        t = nl.load(x)
        m = nisa.max8(src=t)
        nl.store(idx, nisa.nc_find_index8(data=t, vals=m))
        di = nl.ndarray((x.shape[0], 8), dtype=nl.uint32, buffer=nl.sbuf)
        nl.store(rep, nisa.nc_match_replace8(data=t, vals=m, imm=-99.0, dst_idx=di))
        nl.store(ridx, di)
        return idx, rep, ridx

    for executor in ("simulator", "reference"):
        idx, rep, ridx = run_on(executor, kernel, a)
        np.testing.assert_array_equal(idx, np.tile([4, 5, 6, 7, 8, 9, 10, 12], (3, 1)))
        np.testing.assert_array_equal(ridx, np.tile([12, 10, 9, 8, 7, 6, 5, 4], (3, 1)))
        np.testing.assert_array_equal(
            rep, np.tile(np.array([1, 2, 3, 4] + [-99] * 7 + [0, -99, 8], np.float32), (3, 1)))


@pytest.mark.parametrize("executor", ["simulator", "reference"])
def test_iota_wraps_in_32_bit_integer_math_and_refuses_terms_outside_int32(executor):
    # nki.isa.iota (2.2x): "The index values are computed in 32-bit integer math."
    @nki.jit
    def kernel():
        out = nl.ndarray((128, 600), dtype=nl.int32, buffer=nl.shared_hbm)
        nl.store(out, nisa.iota(2**31 - 300 + nl.arange(128)[:, None] + nl.arange(600)[None, :],
                                dtype=nl.int32))
        return out

    p, f = np.mgrid[0:128, 0:600]
    want = ((2**31 - 300 + p + f + 2**31) % 2**32 - 2**31).astype(np.int32)
    np.testing.assert_array_equal(run_on(executor, kernel), want)
    with pytest.raises(nki.NKIError, match=r"iota: offset 1099511627776 is outside int32") as e:
        nki.trace(nki.jit(lambda: nisa.iota(2**40 + nl.arange(8)[None, :], dtype=nl.int32)))
    assert "test_isa.py" in str(e.value)


def test_tensor_tensor_scan_refuses_bit_vector_operators():
    # nki.isa.tensor_tensor_scan: "Both op0 and op1 can be any binary arithmetic operator".
    @nki.jit
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.store(out, nisa.tensor_tensor_scan(t, t, 0, np.bitwise_or, np.bitwise_or))
        return out

    with pytest.raises(nki.NKIError, match="op0 bitwise_or is a bit-vector operator") as e:
        nki.trace(kernel, np.zeros((4, 8), np.int32))
    assert "test_isa.py" in str(e.value)
