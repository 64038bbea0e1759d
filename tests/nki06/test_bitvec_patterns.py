"""The bit-vector operators (bitwise and/or/xor/not, the shifts) treat integer tiles as bit
patterns, "without any data type casting" (NKI 0.6 nki.isa.tensor_tensor / tensor_scalar /
tensor_reduce, and "Supported Math Operators for NKI ISA": nl.right_shift is the logical shift
right). Exact: 32-bit values beyond 2^24, negative values and uint32 values beyond 2^31 keep
every bit, on the simulator and on the reference executor alike."""

import numpy as np
import pytest

import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from nki06_testing import run, tile_kernel

EXECUTORS = ["simulator", "reference"]


def patterns(rng, dtype, shape=(128, 40)):
    """Full-range integers of ``dtype`` (every bit in use), with the extremes."""
    info = np.iinfo(dtype)
    v = rng.integers(int(info.min), int(info.max), shape, dtype=np.int64, endpoint=True).astype(dtype)
    v.flat[:4] = [info.min, info.max, 0, info.max - 1]
    return v


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("op,ref", [(nl.bitwise_and, np.bitwise_and), (nl.bitwise_or, np.bitwise_or),
                                    (nl.bitwise_xor, np.bitwise_xor)])
def test_tensor_tensor_bitwise_keeps_all_32_bits(executor, dtype, op, ref, rng):
    a, b = patterns(rng, dtype), patterns(rng, dtype)
    kernel = tile_kernel(lambda d, x, y: nisa.tensor_tensor(d, x, y, op))
    np.testing.assert_array_equal(run(kernel, a, b, executor=executor), ref(a, b))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_shifts_move_the_bits_of_negative_values(executor, rng):
    a = patterns(rng, np.int32)
    s = rng.integers(0, 32, a.shape).astype(np.int32)
    bits, count = a.view(np.uint32), s.astype(np.uint32)
    right = tile_kernel(lambda d, x, y: nisa.tensor_tensor(d, x, y, nl.right_shift))
    left = tile_kernel(lambda d, x, y: nisa.tensor_tensor(d, x, y, nl.left_shift))
    # nl.right_shift is the logical shift right: zeros come in at the top of the 32-bit pattern
    np.testing.assert_array_equal(run(right, a, s, executor=executor), (bits >> count).view(np.int32))
    np.testing.assert_array_equal(run(left, a, s, executor=executor), (bits << count).view(np.int32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_tensor_scalar_masks_and_columns(executor, rng):
    a = patterns(rng, np.uint32)
    col = patterns(rng, np.uint32, (128, 1))
    masks = tile_kernel(lambda d, x: nisa.tensor_scalar(d, x, nl.bitwise_and, 0xFFFF0001,
                                                        op1=nl.bitwise_xor, operand1=0x80000000))
    np.testing.assert_array_equal(run(masks, a, executor=executor), (a & 0xFFFF0001) ^ 0x80000000)
    by_column = tile_kernel(lambda d, x, c: nisa.tensor_scalar(d, x, nl.bitwise_or, c))
    np.testing.assert_array_equal(run(by_column, a, col, executor=executor), a | col)
    flips = tile_kernel(lambda d, x: nisa.tensor_scalar(d, x, nl.invert, None))
    np.testing.assert_array_equal(run(flips, a, executor=executor), ~a)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_tensor_reduce_bitwise_or(executor, rng):
    a = patterns(rng, np.int32, (128, 8, 16))
    kernel = tile_kernel(lambda d, x: nisa.tensor_reduce(d, nl.bitwise_or, x, axis=2), out_shape=(128, 8))
    np.testing.assert_array_equal(run(kernel, a, executor=executor), np.bitwise_or.reduce(a, axis=2))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_language_bitwise_on_hashes(executor, rng):
    """A kernel author's hash mix: nl.bitwise_xor / nl.right_shift / nl.left_shift of int32."""
    a = patterns(rng, np.int32)

    def mix(d, x):
        h = nl.bitwise_xor(x, nl.right_shift(x, 16))
        nisa.tensor_copy(d, nl.bitwise_xor(h, nl.left_shift(h, 5)))

    bits = a.view(np.uint32)
    h = bits ^ (bits >> 16)
    np.testing.assert_array_equal(run(tile_kernel(mix), a, executor=executor), (h ^ (h << 5)).view(np.int32))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("op,ref", [(nl.add, np.add), (nl.subtract, np.subtract), (nl.multiply, np.multiply),
                                    (nl.maximum, np.maximum), (nl.greater, np.greater)])
def test_int32_tensor_tensor_on_gpsimd_is_exact(executor, op, ref, rng):
    """All-int32 tensor_tensor runs on GpSimd, "which uses native integer arithmetic. This
    ensures exact results for all 32-bit integer values" (NKI 0.6 nki.isa.tensor_tensor)."""
    a = rng.integers(-2**30, 2**30, (128, 40)).astype(np.int32)
    b = rng.integers(-2**30, 2**30, (128, 40)).astype(np.int32)
    if op is nl.multiply:
        a, b = a % 46000, b % 46000  # (products within int32)
    kernel = tile_kernel(lambda d, x, y: nisa.tensor_tensor(d, x, y, op))
    np.testing.assert_array_equal(run(kernel, a, b, executor=executor), ref(a, b).astype(np.int32))
