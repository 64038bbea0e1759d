"""select_and_scatter_kernel: max-pool backward, 3x3 / stride 2 / pad 1, first maximum."""

import ml_dtypes
import numpy as np
import pytest

import kernel_refs as refs
from neuronxsim.errors import KernelError
from neuronxsim.private_nkl.select_and_scatter import pooled_size, select_and_scatter_kernel, tap_range


@pytest.mark.parametrize("shape, dtype, ties", [
    ((2, 64, 28, 28), np.float32, False),  # the public case's layout at a quarter of its size
    ((2, 3, 9, 8), np.float32, True),  # odd and even sizes; many equal values: first maximum wins
    ((1, 130, 6, 7), np.float32, True),  # N*C not a multiple of 128
    ((2, 64, 14, 14), ml_dtypes.bfloat16, False),
])
def test_matches_the_reference(rng, shape, dtype, ties):
    n, c, h, w = shape
    operand = (rng.integers(0, 3, shape) if ties else rng.standard_normal(shape)).astype(dtype)
    source = rng.standard_normal((n, c, pooled_size(h), pooled_size(w))).astype(dtype)
    (out,), _ = refs.run_on_reference(select_and_scatter_kernel, operand, source)
    assert out.dtype == operand.dtype and out.shape == shape
    refs.all_close(out, refs.select_and_scatter(operand, source), refs.SELECT_AND_SCATTER_TOL,
                   refs.SELECT_AND_SCATTER_TOL)


def test_each_window_sends_its_value_to_exactly_one_position(rng):
    """With distinct maxima the scattered total is the source total, per image."""
    operand = rng.permutation(2 * 5 * 7 * 9).reshape(2, 5, 7, 9).astype(np.float32)
    source = rng.random((2, 5, 4, 5)).astype(np.float32)
    (out,), _ = refs.run_on_reference(select_and_scatter_kernel, operand, source)
    np.testing.assert_allclose(out.sum(axis=(2, 3)), source.sum(axis=(2, 3)), rtol=1e-5)


def test_the_padding_is_never_selected():
    operand = np.full((1, 1, 3, 3), -np.inf, np.float32)  # every window's maximum ties with the padding
    source = np.ones((1, 1, 2, 2), np.float32)
    (out,), _ = refs.run_on_reference(select_and_scatter_kernel, operand, source)
    np.testing.assert_array_equal(out, refs.select_and_scatter(operand, source))
    assert out.sum() == 4


def test_tap_ranges():
    # size 7 -> 4 windows; tap 0 reads row 2*o - 1: inside from window 1; tap 2 reads 2*o + 1 <= 6.
    assert (tap_range(0, 7, 4), tap_range(1, 7, 4), tap_range(2, 7, 4)) == ((1, 4), (0, 4), (0, 3))
    assert (tap_range(0, 8, 4), tap_range(2, 8, 4)) == ((1, 4), (0, 4))


def test_a_source_of_the_wrong_shape_is_refused():
    with pytest.raises(KernelError, match=r"select_and_scatter_kernel: source has shape \[1, 2, 4, 4\]; expected "
                                          r"\[1, 2, 5, 4\] \(the 3x3, stride 2, pad 1 windows of operand"):
        refs.run_on_reference(select_and_scatter_kernel, np.zeros((1, 2, 9, 8), np.float32),
                              np.zeros((1, 2, 4, 4), np.float32))
