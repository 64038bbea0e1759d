"""tiled_pf_transpose / tiled_dve_transpose_10: 2-D transposes over two logical NeuronCores."""

import ml_dtypes
import numpy as np
import pytest

import kernel_refs as refs
import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim.errors import KernelError
from neuronxsim.private_nkl.transpose import tiled_dve_transpose_10, tiled_pf_transpose

KERNELS = [tiled_pf_transpose, tiled_dve_transpose_10]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("shape, dtype", [((300, 200), np.float32), ((128, 256), ml_dtypes.bfloat16),
                                          ((45, 70), np.float16), ((1, 5), np.float32), ((257, 1), np.float32)])
def test_two_cores_transpose_exactly(rng, kernel, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    (out,), traced = refs.run_on_reference(kernel[nl.nc(2)], x)
    assert traced.num_cores == 2 and len(traced.module.functions) == 2
    np.testing.assert_array_equal(out, x.T)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
def test_the_cores_split_the_output_rows(kernel):
    traced = nki.trace_kernel(kernel[nl.nc(2)], np.zeros((64, 300), np.float32))
    rows = []
    for regions in traced.written_regions:
        written = set()
        for offset, pairs in regions["out"]:
            idx = np.asarray(offset)
            for step, num in pairs:
                idx = idx[..., None] + np.arange(num) * step
            written |= set((idx.reshape(-1) // 64).tolist())
        rows.append(written)
    assert rows == [set(range(0, 150)), set(range(150, 300))]


def test_without_a_grid_one_core_does_everything(rng):
    x = rng.standard_normal((130, 140)).astype(np.float32)
    for kernel in KERNELS:
        (out,), traced = refs.run_on_reference(kernel, x)
        assert traced.num_cores == 1
        np.testing.assert_array_equal(out, x.T)


def test_the_dve_transpose_moves_integers():
    x = np.arange(40 * 33, dtype=np.int32).reshape(40, 33)
    (out,), _ = refs.run_on_reference(tiled_dve_transpose_10[nl.nc(2)], x)
    np.testing.assert_array_equal(out, x.T)


def test_the_pe_transpose_refuses_integers():
    with pytest.raises(KernelError, match="tiled_pf_transpose: x is int32; the Tensor Engine transposes float32"):
        nki.trace_kernel(tiled_pf_transpose[nl.nc(2)], np.zeros((4, 4), np.int32))


def test_a_non_2d_input_is_refused():
    with pytest.raises(KernelError, match=r"tiled_dve_transpose_10: x has shape \[2, 3, 4\]; expected 2 dims"):
        nki.trace_kernel(tiled_dve_transpose_10, np.zeros((2, 3, 4), np.float32))


@pytest.mark.parametrize("run", [refs.run_on_simulator, refs.run_on_reference], ids=["simulator", "reference"])
def test_the_dve_transpose_moves_int32_values_beyond_fp32_exactly(rng, run):
    """Its StreamTransposes copy int32 elements (docs/isa-semantics.md §2): values above 2^24 and at
    the int32 limits are not rounded through fp32, over a shape of several 32 x 32 blocks."""
    x = rng.integers(-2**31, 2**31, size=(70, 45), dtype=np.int64).astype(np.int32)
    x[0, :5] = [2**24 + 1, 2**31 - 1, -2**31, 33554435, -123456789]
    (out,), _ = run(tiled_dve_transpose_10[nl.nc(2)], x)
    np.testing.assert_array_equal(out, x.T)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
def test_with_fewer_output_rows_than_cores_the_cores_split_the_columns(rng, kernel):
    """One output row on two cores: each writes its half of the columns, no element twice (two
    cores writing the same bytes are refused: nothing orders them)."""
    x = rng.standard_normal((129, 1)).astype(np.float32)
    (out,), traced = refs.run_on_simulator(kernel[nl.nc(2)], x)
    np.testing.assert_array_equal(out, x.T)
    with pytest.raises(KernelError, match=kernel.__name__ + ": a 1 x 1 transpose leaves NeuronCore 0 of 2 nothing to write"):
        refs.run_on_simulator(kernel[nl.nc(2)], x[:1])
