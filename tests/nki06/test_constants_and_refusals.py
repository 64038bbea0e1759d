"""The rest of the NKI 0.6 names: data types (carried exactly, or refused naming why), enums and
constants, config objects, and every instruction or collective the simulator does not model
(refused, saying so)."""

import ml_dtypes
import numpy as np
import pytest

import neuronxsim.nki06 as nki
import neuronxsim.nki06.collectives as ncc
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from neuronxsim import bir
from neuronxsim.nki.errors import NKIError
from nki06_testing import emitted, run, tile_kernel

CARRIED = [(nl.bool_, np.bool_), (nl.int8, np.int8), (nl.int16, np.int16), (nl.int32, np.int32),
           (nl.uint8, np.uint8), (nl.uint16, np.uint16), (nl.uint32, np.uint32),
           (nl.float16, np.float16), (nl.float32, np.float32), (nl.bfloat16, ml_dtypes.bfloat16),
           (nl.float8_e4m3, ml_dtypes.float8_e4m3), (nl.float8_e5m2, ml_dtypes.float8_e5m2)]


@pytest.mark.parametrize("dtype,numpy_type", CARRIED, ids=[str(d) for d, _ in CARRIED])
def test_data_types_are_carried_bit_exactly(dtype, numpy_type, rng):
    assert dtype == np.dtype(numpy_type)
    bits = rng.integers(0, 256, (8, 64 * dtype.itemsize), dtype=np.uint8)  # NaNs and all
    if numpy_type is np.bool_:
        bits &= 1
    x = bits.view(numpy_type)
    k = tile_kernel(lambda d, t: nisa.tensor_copy(dst=d, src=t))
    np.testing.assert_array_equal(run(k, x).view(np.uint8), x.view(np.uint8))


@pytest.mark.parametrize("dtype,match", [
    (nl.float8_e4m3fn, r"float8_e4m3fn is a NeuronCore-v4 \(trn3\) data type; trn2"),
    (nl.float8_e8m0fnu, r"float8_e8m0fnu is a NeuronCore-v4 \(trn3\) data type"),
    (nl.float8_e5m2_x4, r"float8_e5m2_x4 is a NeuronCore-v4 \(trn3\)"),
    (nl.float8_e4m3fn_x4, r"float8_e4m3fn_x4 is a NeuronCore-v4 \(trn3\)"),
    (nl.float4_e2m1fn_x4, r"float4_e2m1fn_x4 is a NeuronCore-v4 \(trn3\)"),
    (nl.tfloat32, "tfloat32 is not modelled"),
])
def test_data_types_a_generation_lacks_are_refused(dtype, match):
    @nki.jit
    def k(a):
        nl.ndarray((4, 4), dtype=dtype, buffer=nl.sbuf)
        return a

    with pytest.raises(NKIError, match=match):
        run(k, np.zeros((4, 4), np.float32))


def test_engine_constants_place_instructions(rng):
    assert nisa.vector_engine is nisa.engine.vector and nisa.scalar_engine is nisa.engine.scalar
    assert nisa.gpsimd_engine is nisa.engine.gpsimd and nisa.tensor_engine is nisa.engine.tensor
    assert nisa.unknown_engine is nisa.engine.unknown
    x = rng.standard_normal((32, 32)).astype(np.float32)
    for engine, hw in ((nisa.gpsimd_engine, bir.Engine.Pool), (nisa.vector_engine, bir.Engine.DVE),
                       (nisa.scalar_engine, bir.Engine.Activation)):
        k = tile_kernel(lambda d, t, e=engine: nisa.tensor_copy(dst=d, src=t, engine=e))
        np.testing.assert_array_equal(run(k, x, arch="trn2"), x)
        assert [i.engine for i in emitted(k, x, arch="trn2") if i.opcode_name == "TensorCopy"] \
            == [hw]
    k = tile_kernel(lambda d, t: nisa.tensor_copy(dst=d, src=t, engine=nisa.scalar_engine))
    with pytest.raises(NKIError, match="NeuronCore-v2 \\(trn1\\) has no tensor_copy"):
        run(k, x, arch="trn1")
    k = tile_kernel(lambda d, t: nisa.tensor_copy(dst=d, src=t, engine=nisa.tensor_engine))
    with pytest.raises(NKIError, match="engine must be"):
        run(k, x)
    k = tile_kernel(lambda d, t: nisa.tensor_copy(dst=d, src=t, engine=3))
    with pytest.raises(NKIError, match="raw values were removed"):
        run(k, x)


def test_operator_constants(rng):
    a = rng.standard_normal((16, 16)).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(np.float32)
    k = tile_kernel(lambda d, x, y: nisa.tensor_tensor(dst=d, data1=x, data2=y, op=nl.average))
    np.testing.assert_allclose(run(k, a, b), (a + b) / 2, rtol=1e-6)
    k = tile_kernel(lambda d, x: nisa.tensor_scalar(dst=d, data=x, op0=nl.add, operand0=1.0,
                                                    op1=nl.bypass, operand1=0.0))
    np.testing.assert_allclose(run(k, a), a + 1, rtol=1e-6)
    k = tile_kernel(lambda d, x: nisa.activation(dst=d, op=nl.prelu, data=x))
    with pytest.raises(NKIError, match="relu_param"):
        run(k, a)


def test_config_objects_memory_regions_and_typing():
    class Config(nl.NKIObject):
        pass

    c = Config(tile=128, scale=0.5)
    assert (c.tile, c.scale) == (128, 0.5)
    assert {r.value for r in nl.MemoryRegion} == {"sbuf", "psum", "private_hbm", "shared_hbm"}
    assert nki.collectives is ncc and nki.typing.tensor[128, 512].shape == (128, 512)
    assert issubclass(nisa.NkiValidationError, Exception)
    assert nisa.VirtualRegister(5).value == 5 and nisa.VirtualRegister().value is None


def test_register_store_and_nc_versions(rng):
    seen = []

    @nki.jit
    def k(a):
        seen.append((nisa.get_nc_version(), nisa.get_nc_sub_version()))
        r = nisa.register_alloc(7)
        t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.register_store(t, r)
        out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    assert run(k, np.zeros((1, 1), np.int32))[0, 0] == 7
    assert seen == [(nisa.nc_version.gen3, 0)]


def test_loops_over_registers(rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)

    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        rows = nisa.register_alloc(4)
        for i in nl.dynamic_range(rows):
            nl.store(out.ap([[8, 1], [1, 8]], scalar_offset=i, indirect_dim=0),
                     value=nl.load(a.ap([[8, 1], [1, 8]], scalar_offset=i, indirect_dim=0)))
        count = nisa.register_alloc(3)

        def body(r):
            nisa.register_move(r, r.value - 1)
            return r
        nl.while_loop(count, body)
        assert count.value == 3  # the body got a copy: the loop's register is its own
        for i in nl.affine_range(2):
            pass
        return out

    with pytest.warns(DeprecationWarning, match="dynamic_range is deprecated"):
        np.testing.assert_array_equal(run(k, x), x)


def test_oob_mode_skip_leaves_out_of_range_rows_alone(rng):
    data = rng.standard_normal((10, 8)).astype(np.float32)
    idx = np.array([[3], [12], [0], [9]], np.int32)

    def kernel(mode):
        @nki.jit
        def k(d, i):
            ix = nl.ndarray(i.shape, dtype=i.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=ix, src=i)
            g = nl.ndarray((4, 8), dtype=d.dtype, buffer=nl.sbuf)
            nisa.memset(dst=g, value=-1.0)
            nisa.dma_copy(dst=g, src=d.vector_select(0, ix), oob_mode=mode)
            out = nl.ndarray((4, 8), dtype=d.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=g)
            return out
        return k

    got = run(kernel(nisa.oob_mode.skip), data, idx)
    np.testing.assert_array_equal(got[[0, 2, 3]], data[[3, 0, 9]])
    np.testing.assert_array_equal(got[1], -1.0)
    with pytest.raises(Exception, match="index 12 .*outside"):
        run(kernel(nisa.oob_mode.error), data, idx)

    plain = tile_kernel(lambda dst, t: nisa.dma_copy(dst=dst, src=t, oob_mode=nisa.oob_mode.skip))
    with pytest.raises(NKIError, match="indirect"):
        run(plain, data)


def test_double_row_matmuls_are_refused(rng):
    x = rng.standard_normal((32, 32)).astype(ml_dtypes.float8_e4m3)

    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        p = nl.ndarray((32, 32), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(p, t, t, perf_mode=nisa.matmul_perf_mode.double_row)
        return a

    with pytest.raises(NKIError, match="nc_matmul: Matmult: perf_mode DoubleRow needs NeuronCore-v3"):
        run(k, x, arch="trn1")
    with pytest.raises(NKIError, match="double_row is not modelled"):
        run(k, x, arch="trn2")


@pytest.mark.parametrize("call,match", [
    (lambda d, t: nisa.topk(d, d, t, 8), "topk is not modelled"),
    (lambda d, t: nisa.core_barrier(t, (0, 1)), "LNC=2 launch are not modelled"),
    (lambda d, t: nisa.sendrecv(t, d, 1, 1, 0, dma_engine=nisa.dma_engine.gpsimd_dma),
     "LNC=2 launch are not modelled"),
    (lambda d, t: nisa.tensor_copy(d, t).depends_on(), "depends_on"),
])
def test_unmodelled_instructions_are_refused(call, match, rng):
    with pytest.raises(NKIError, match=match):
        run(tile_kernel(call), rng.standard_normal((16, 16)).astype(np.float32))


@pytest.mark.parametrize("call", [
    lambda t: ncc.all_reduce([t], [t], ncc.ReplicaGroup(), nl.add),
    lambda t: ncc.all_gather([t], [t], ncc.ReplicaGroup(), 0),
    lambda t: ncc.all_gather_v([t], [t], ncc.ReplicaGroup(), t),
    lambda t: ncc.reduce_scatter([t], [t], ncc.ReplicaGroup(), 0, nl.add),
    lambda t: ncc.all_to_all([t], [t], ncc.ReplicaGroup(), 0),
    lambda t: ncc.all_to_all_v([t], [t], ncc.ReplicaGroup(), t),
    lambda t: ncc.collective_permute([t], [t], [(0, 1)]),
    lambda t: ncc.collective_permute_implicit([[t]], [[t]], ncc.ReplicaGroup()),
    lambda t: ncc.collective_permute_implicit_reduce([[t]], [[t]], [[t]], ncc.ReplicaGroup(),
                                                     nl.add),
    lambda t: ncc.collective_permute_implicit_current_processing_rank_id(0, ncc.ReplicaGroup()),
    lambda t: ncc.rank_id(),
])
def test_collectives_are_refused(call):
    @nki.jit
    def k(a):
        call(a)
        return a

    with pytest.raises(NKIError, match="collective communication between ranks is not modelled"):
        run(k, np.zeros((4, 4), np.float32))
