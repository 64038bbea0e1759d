"""resize_nearest_fixed_dma_kernel: NHWC nearest-neighbour resize, by DMA alone."""

import ml_dtypes
import numpy as np
import pytest

import kernel_refs as refs
import neuronxsim.nki as nki
from neuronxsim.errors import KernelError
from neuronxsim.private_nkl.resize import nearest_groups, resize_nearest_fixed_dma_kernel


@pytest.mark.parametrize("size, out_size", [(30, 59), (20, 38), (4, 8), (8, 4), (7, 7), (5, 13), (13, 5), (1, 6),
                                            (6, 1), (100, 33)])
def test_the_dma_groups_cover_the_nearest_map(size, out_size):
    source = np.full(out_size, -1)
    for src0, step, count, out0, run in nearest_groups(size, out_size):
        for k in range(count):
            assert (source[out0 + k * run:out0 + (k + 1) * run] == -1).all()
            source[out0 + k * run:out0 + (k + 1) * run] = src0 + k * step
    np.testing.assert_array_equal(source, np.arange(out_size) * size // out_size)


def test_an_integer_scale_is_one_dma_per_axis():
    assert len(nearest_groups(16, 48)) == 1 and len(nearest_groups(48, 16)) == 1


@pytest.mark.parametrize("shape, out_shape, dtype", [
    ((2, 30, 20, 40), (2, 59, 38, 40), np.float32),  # the public case's H/W ratios
    ((1, 30, 20, 24), (1, 59, 38, 24), np.float16),
    ((1, 30, 20, 24), (1, 59, 38, 24), ml_dtypes.bfloat16),
    ((3, 9, 7, 5), (3, 4, 11, 5), np.float32),  # down rows, up columns
    ((2, 6, 6, 3), (2, 6, 13, 3), np.int32),  # one axis only
    ((1, 5, 5, 2), (1, 5, 5, 2), np.float32),  # identity: one copy
])
def test_matches_the_reference_exactly(rng, shape, out_shape, dtype):
    data = (rng.standard_normal(shape) * 100).astype(dtype)
    (out,), traced = refs.run_on_reference(resize_nearest_fixed_dma_kernel, data, out_shape=out_shape)
    assert out.dtype == data.dtype
    np.testing.assert_array_equal(out, refs.resize_nearest(data, out_shape))  # bytes are moved, not computed


def test_the_public_ratio_takes_few_dmas(rng):
    data = rng.standard_normal((10, 30, 20, 8)).astype(np.float32)
    traced = nki.trace_kernel(resize_nearest_fixed_dma_kernel, data, out_shape=(10, 59, 38, 8))
    assert traced.instruction_count == len(nearest_groups(30, 59)) + len(nearest_groups(20, 38))


@pytest.mark.parametrize("out_shape, message", [
    ((2, 8, 8), r"out_shape is \(2, 8, 8\); expected a shape of 4 positive ints"),
    ((2, 8, 0, 3), r"out_shape is \(2, 8, 0, 3\); expected a shape of 4 positive ints"),
    ((3, 8, 8, 3), r"out_shape is \[3, 8, 8, 3\]; expected batch 2 and channels 3 of data_tensor \[2, 4, 4, 3\]"),
    ("big", r"out_shape is 'big'"),
])
def test_bad_out_shapes_are_refused(out_shape, message):
    data = np.zeros((2, 4, 4, 3), np.float32)
    with pytest.raises(KernelError, match="resize_nearest_fixed_dma_kernel: " + message):
        refs.run_on_reference(resize_nearest_fixed_dma_kernel, data, out_shape=out_shape)


def test_a_non_nhwc_input_is_refused():
    with pytest.raises(KernelError, match=r"data_tensor has shape \[4, 4, 3\]; expected 4 dims \(NHWC\)"):
        refs.run_on_reference(resize_nearest_fixed_dma_kernel, np.zeros((4, 4, 3), np.float32), out_shape=(1, 2, 2, 3))
