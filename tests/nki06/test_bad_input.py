"""Bad input gets one clear error naming the kernel line, never a wrong answer: wrong shapes
and dtypes, out-of-range access, partitions nothing wrote, SBUF/PSUM capacity, and refusals
that only the simulator can make."""

import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from nki06_testing import run, tile_kernel


def test_shapes_that_do_not_pair(rng):
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((16, 9)).astype(np.float32)
    k = tile_kernel(lambda d, x, y: nisa.tensor_tensor(dst=d, data1=x, data2=y, op=nl.add))
    with pytest.raises(NKIError, match=r"test_bad_input\.py:\d+: nisa\.tensor_tensor: data2 has "
                                       r"shape \[16, 9\]"):
        run(k, a, b)


def test_matmul_dtypes_and_limits(rng):
    ints = rng.integers(0, 4, (16, 16)).astype(np.int32)
    k = tile_kernel(lambda d, x: nisa.nc_matmul(d, x, x), out_shape=(16, 16),
                    out_dtype=nl.float32)
    with pytest.raises(NKIError, match="nc_matmul: Matmult: the stationary is int32, which the PE does not take on trn2"):
        run(k, ints)

    @nki.jit
    def wrong_dtype(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        p = nl.ndarray((16, 16), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(p, t, t)
        return a

    with pytest.raises(NKIError, match="Matmult: the stationary is int32"):
        run(wrong_dtype, ints)


def test_reading_partitions_nothing_wrote_names_the_reading_line():
    @nki.jit
    def half(a):
        t = nl.ndarray((128, 64), nl.float32)
        nisa.dma_copy(dst=t[0:64], src=a[0:64])
        u = nl.ndarray((128, 64), nl.float32)
        nisa.tensor_copy(dst=u, src=t)  # reads partitions 64..127
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=u)
        return out

    with pytest.raises(NKIError, match=r"nisa\.tensor_copy: src: reads partitions 64\.\.127 of "
                                       r"'ndarray' \(created at test_bad_input\.py:\d+\), which "
                                       "nothing wrote") as e:
        run(half, np.ones((128, 64), np.float32))
    assert "nisa.tensor_copy(dst=u, src=t)" in str(e.value)


def test_out_of_range_access():
    def check(a):
        t = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t[0:5]

    @nki.jit
    def k(a):
        check(a)
        return a

    with pytest.raises(NKIError, match=r"slice 0:5 of dimension 0 \(size 4\)"):
        run(k, np.zeros((2, 2), np.float32))


def test_tiles_beyond_sbuf_spill_and_one_tile_beyond_it_is_refused_with_its_line():
    @nki.jit
    def many(a):
        tiles = []
        for _ in range(30):  # 30 x 8 KiB live at once: more than 224 KiB per partition
            t = nl.ndarray((128, 2048), nl.float32)
            nisa.dma_copy(dst=t, src=a)
            tiles.append(t)
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        for t in tiles:
            nisa.dma_copy(dst=out, src=t)
        return out

    a = np.arange(128 * 2048, dtype=np.float32).reshape(128, 2048)
    np.testing.assert_array_equal(run(many, a), a)  # the spilled tiles come back exact

    @nki.jit
    def huge(a):
        t = nl.ndarray((128, 60000), nl.float32)  # 240000 bytes per partition
        nisa.dma_copy(dst=t[:, 0:2048], src=a)
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t[:, 0:2048])
        return out

    with pytest.raises(NKIError, match=r"test_bad_input\.py:\d+: ndarray: shape \[128, 60000\] of "
                                       r"float32 needs 240000 bytes per partition; SBUF has"):
        run(huge, a)


def test_the_simulators_refusals_name_the_kernel_line(rng):
    x = rng.standard_normal((128, 128)).astype(np.float32)

    @nki.jit
    def across_banks(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        p = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=p[:, 256:384], stationary=t, moving=t)  # fine: inside bank 0
        nisa.nc_matmul(dst=p[:, 448:576], stationary=t, moving=t)  # crosses into bank 1
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        r = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=p[:, 256:384])
        nisa.dma_copy(dst=out, src=r)
        return out

    # (Refused when traced, at the kernel line, as the NKI compiler refuses it: nki.trace's
    # module would be one the simulator cannot run.)
    with pytest.raises(NKIError, match=r"test_bad_input\.py:\d+: Matmult.*crossing the bank boundary"):
        nki.simulate(across_banks)(x)


@pytest.mark.parametrize("body,match", [
    (lambda d, t: nisa.iota(dst=d, pattern=[[1, 8]], offset=0.5), r"nisa\.iota: offset: expected an integer, got float"),
    (lambda d, t: nisa.iota(dst=d, pattern=[[1.5, 8]]), r"nisa\.iota: pattern: expected an integer"),
    (lambda d, t: nisa.affine_select(dst=d, pattern=[[1, 8]], channel_multiplier=1, on_true_tile=t,
                                     on_false_value="x"), r"nisa\.affine_select: on_false_value must be a number, not 'x'"),
    (lambda d, t: nisa.tensor_reduce(dst=d[:, 0:1], op=nl.add, data=t, axis="x"),
     r"nisa\.tensor_reduce: axis must be an integer or a tuple of integers, not 'x'"),
    (lambda d, t: nisa.dropout(dst=d, data=t, prob="0.5"), r"nisa\.dropout: prob must be a number"),
])
def test_arguments_of_the_wrong_kind_are_refused_not_converted(body, match):
    # (iota's offset 0.5 was truncated to 0; a string axis escaped as a bare ValueError.)
    with pytest.raises(NKIError, match=r"test_bad_input\.py:\d+: " + match):
        run(tile_kernel(body), np.ones((4, 8), np.float32))


@pytest.mark.parametrize("shape,dtype,mode,match", [
    ((32, 128), "bfloat16", "hwdge", r"a hardware DGE transpose takes a src of 16 rows, a multiple of 128 columns "
                                     r"and a 2-byte dtype; it is \[32, 128\] bfloat16"),
    ((16, 100), "bfloat16", "hwdge", r"it is \[16, 100\] bfloat16"),
    ((16, 128), "float32", "hwdge", r"it is \[16, 128\] float32"),
    ((16, 128), "bfloat16", "swdge", r"a direct transpose takes dge_mode unknown or hwdge, not swdge"),
])
def test_dma_transpose_limits_of_its_dge_modes(shape, dtype, mode, match):
    # (the nisa.dma_transpose page's "DMA Direct Transpose Constraints"; all were taken)
    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        u = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_transpose(dst=u, src=t, dge_mode=getattr(nisa.dge_mode, mode))
        out = nl.ndarray(u.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=u)
        return out

    a = np.ones(shape, dtype=getattr(nl, dtype))
    with pytest.raises(NKIError, match=r"test_bad_input\.py:\d+: nisa\.dma_transpose: .*" + match):
        run(k, a, arch="trn2")


@pytest.mark.parametrize("engine", ["vector", "tensor"])
def test_nc_transpose_keeps_the_dtype(engine):
    # ("The output dst tile must have the same data type as that of data"; a cast was taken)
    k = tile_kernel(lambda d, t: nisa.nc_transpose(dst=d, data=t, engine=getattr(nisa.engine, engine)),
                    out_shape=(8, 4), out_dtype=nl.float32)
    with pytest.raises(NKIError, match=r"nisa\.nc_transpose: dst \(float32\) must have data's dtype \(float16\)"):
        run(k, np.ones((4, 8), np.float16))


@pytest.mark.parametrize("body", [
    lambda a, x: nl.add(x, x, x),  # (nl.add's third parameter is dtype)
    lambda a, x: nl.exp(x, dtype=a),
    lambda a, x: nl.ndarray(x.shape, dtype=x, buffer=nl.sbuf),
])
def test_a_tensor_where_a_dtype_belongs_is_refused(body):
    # (np.dtype takes any object with a .dtype: nl.add(x, y, z) was x + y in z's dtype)
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        body(a, nl.load(a))
        return out

    with pytest.raises(NKIError, match=r"test_bad_input\.py:\d+: .*dtype: <NkiTensor .*> is not "
                                       r"an NKI data type \(nl\.bool_"):
        run(k, np.ones((4, 4), np.float32))
