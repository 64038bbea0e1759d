"""Integer tiles whose values fp32 cannot hold (beyond 2^24) on the instructions that fill, move
or compute integers exactly, on the simulator and the reference executor alike, against values
written from the documented semantics:

* nisa.memset "Initialize dst by filling it with a compile-time constant value" (every element
  is ``value``), nisa.register_store writes the register's value;
* nisa.tensor_copy_predicated copies elements of src (of dst's dtype: "src and dst must share the
  same data type"), nisa.nc_stream_shuffle moves partitions: both move the bits;
* nisa.tensor_tensor on all-int32 / uint32 tiles runs on GpSimd, "native integer arithmetic. This
  ensures exact results for all 32-bit integer values": divide rounds toward zero
  (nki.isa.scalar_alu: "nl.divide performs integer division rounded toward zero"), mod has the
  divisor's sign (nki.language.mod: "the Python modulus x % y");
* nl.right_shift is the Logical Shift Right ("Supported Math Operators for NKI ISA"; arithmetic
  shift right is "Not supported"): zeros come in at the element's own top bit, int8 and int16 too.
"""

import numpy as np
import pytest

import neuronxsim
import neuronxsim.nki06 as nki
import neuronxsim.nki06.isa as nisa
import neuronxsim.nki06.language as nl
from nki06_testing import run, tile_kernel

EXECUTORS = ["simulator", "reference"]

# Values an fp32 rounds (2^24 + 1, 0x12345679, int32 min + 1, 0xDEADBEEF) and the narrow types'
# extremes, per dtype.
VALUES = {
    np.int32: [2**24 + 1, 0x12345679, -2**31 + 1, np.uint32(0xDEADBEEF).view(np.int32).item(), 7],
    np.uint32: [0xDEADBEEF, 2**24 + 1, 0xFFFFFFFE, 2**31 + 1, 0],
    np.int16: [-2**15 + 1, 2**15 - 1, -2, 0x1234],
    np.int8: [-2**7 + 1, 2**7 - 1, -2, 0x12],
}
DTYPES = list(VALUES)


def patterns(dtype, rng, shape=(128, 40)):
    """A tile of ``dtype`` holding VALUES[dtype] and random full-range values (every bit in use)."""
    info = np.iinfo(dtype)
    v = rng.integers(int(info.min), int(info.max), shape, dtype=np.int64, endpoint=True).astype(dtype)
    v.flat[:len(VALUES[dtype])] = np.array(VALUES[dtype], dtype=np.int64).astype(dtype)
    return v


# ---- fills ----

@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_memset_fills_the_integer_itself(executor, dtype):
    for value in VALUES[dtype]:
        kernel = tile_kernel(lambda d, x: nisa.memset(dst=d, value=value))
        got = run(kernel, np.zeros((128, 40), dtype), executor=executor)
        np.testing.assert_array_equal(got, np.full((128, 40), value, dtype), err_msg=f"value {value:#x}")


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("engine", [nisa.engine.vector, nisa.engine.gpsimd])
def test_memset_uint32_mask_on_either_engine(executor, engine):
    kernel = tile_kernel(lambda d, x: nisa.memset(dst=d, value=0xDEADBEEF, engine=engine))
    got = run(kernel, np.zeros((64, 8), np.uint32), executor=executor)
    assert (got == 0xDEADBEEF).all(), hex(int(got.flat[0]))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("value", [2**24 + 1, 123456789, -2**31 + 1])
def test_register_store_writes_the_registers_value(executor, value):
    @nki.jit
    def kernel(a):
        r = nisa.register_alloc(value)
        t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.register_store(t, r)
        out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    assert int(run(kernel, np.zeros((1, 1), np.float32), executor=executor)[0, 0]) == value


# ---- moves ----

@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_copy_predicated_moves_the_selected_bits(executor, dtype, rng):
    src = patterns(dtype, rng)
    pred = (rng.random(src.shape) < 0.6).astype(np.uint8)
    pred.flat[:len(VALUES[dtype])] = 1

    def body(d, s, p):
        nisa.memset(dst=d, value=0)
        nisa.tensor_copy_predicated(dst=d, src=s, predicate=p)

    got = run(tile_kernel(body), src, pred, executor=executor)
    np.testing.assert_array_equal(got, np.where(pred != 0, src, 0).astype(dtype))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_copy_predicated_of_a_number_is_that_integer(executor, dtype):
    # "the scalar is materialized in dst's dtype" (nki.isa.tensor_copy_predicated)
    value = VALUES[dtype][0]
    pred = np.ones((32, 4), np.uint8)
    pred[::2] = 0

    def body(d, p):
        nisa.memset(dst=d, value=3)
        nisa.tensor_copy_predicated(dst=d, src=value, predicate=p)

    got = run(tile_kernel(body, out_shape=(32, 4), out_dtype=dtype), pred, executor=executor)
    np.testing.assert_array_equal(got, np.where(pred != 0, np.array(value, dtype), np.array(3, dtype)))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_stream_shuffle_moves_the_bits(executor, dtype, rng):
    src = patterns(dtype, rng, (64, 12))
    mask = list(range(31, -1, -1))  # each quadrant reversed
    kernel = tile_kernel(lambda d, s: nisa.nc_stream_shuffle(dst=d, src=s, shuffle_mask=mask))
    want = np.concatenate([src[31::-1], src[63:31:-1]])
    np.testing.assert_array_equal(run(kernel, src, executor=executor), want)


# ---- GpSimd integer divide and mod ----

def divide_toward_zero(a, b):
    a, b = a.astype(np.int64), b.astype(np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def divisors(dtype, shape, rng):
    lo = 1 if dtype == np.uint32 else -1000
    b = rng.integers(lo, 1000, shape, dtype=np.int64)
    b[b == 0] = 3
    b.flat[:4] = [2, 3, 10, 7]
    if dtype == np.int32:
        b.flat[4:6] = [-2, -3]
    return b.astype(dtype)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_gpsimd_integer_divide_rounds_toward_zero(executor, dtype, rng):
    a = patterns(dtype, rng)
    b = divisors(dtype, a.shape, rng)
    kernel = tile_kernel(lambda d, x, y: nisa.tensor_tensor(dst=d, data1=x, data2=y, op=nl.divide))
    got = run(kernel, a, b, executor=executor)
    np.testing.assert_array_equal(got, divide_toward_zero(a, b).astype(dtype))
    if dtype == np.int32:  # scalar_alu's example: -17 / 4 = -4; and 7 / 2 = 3, -7 / 2 = -3
        small = tile_kernel(lambda d, x, y: nisa.tensor_tensor(dst=d, data1=x, data2=y, op=nl.divide))
        x = np.array([[-17, 7, -7, 2**24 + 1]], np.int32)
        y = np.array([[4, 2, 2, 3]], np.int32)
        np.testing.assert_array_equal(run(small, x, y, executor=executor), [[-4, 3, -3, 5592405]])


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_gpsimd_integer_mod_has_the_divisors_sign(executor, dtype, rng):
    a = patterns(dtype, rng)
    b = divisors(dtype, a.shape, rng)
    kernel = tile_kernel(lambda d, x, y: nisa.tensor_tensor(dst=d, data1=x, data2=y, op=nl.mod))
    got = run(kernel, a, b, executor=executor)
    np.testing.assert_array_equal(got, np.mod(a.astype(np.int64), b.astype(np.int64)).astype(dtype))
    if dtype == np.int32:  # Python's %: 7 % -2 = -1, -7 % 2 = 1, (2^24 + 1) % 3 = 2
        x = np.array([[7, -7, 2**24 + 1, -17]], np.int32)
        y = np.array([[-2, 2, 3, 4]], np.int32)
        np.testing.assert_array_equal(run(kernel, x, y, executor=executor), [[-1, 1, 2, 3]])


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("op", [nl.divide, nl.mod])
def test_gpsimd_integer_division_by_zero_is_refused(executor, op):
    # the docs do not say what an integer division by zero gives
    x = np.array([[7, 8, 9]], np.int32)
    y = np.array([[1, 0, 2]], np.int32)
    kernel = tile_kernel(lambda d, a, b: nisa.tensor_tensor(dst=d, data1=a, data2=b, op=op))
    with pytest.raises(neuronxsim.SimulationError, match="by zero"):
        run(kernel, x, y, executor=executor)


# ---- logical shift right at the element's width ----

def logical_right(x, count):
    bits = 8 * x.dtype.itemsize
    u = x.astype(np.int64) & ((1 << bits) - 1)
    return (u >> np.asarray(count, dtype=np.int64)).astype(x.dtype)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32])
def test_right_shift_brings_zeros_in_at_the_elements_width(executor, dtype, rng):
    x = patterns(dtype, rng, (32, 24))
    x.flat[:3] = [np.iinfo(dtype).min, -1, -2]
    by_constant = tile_kernel(lambda d, a: nisa.tensor_scalar(dst=d, data=a, op0=nl.right_shift, operand0=1))
    got = run(by_constant, x, executor=executor)
    np.testing.assert_array_equal(got, logical_right(x, 1))
    assert got.flat[0] == 2 ** (8 * np.dtype(dtype).itemsize - 2)  # min >> 1: 64, 16384, 2^30

    count = rng.integers(0, 8 * np.dtype(dtype).itemsize, x.shape).astype(dtype)
    by_tile = tile_kernel(lambda d, a, c: nisa.tensor_tensor(dst=d, data1=a, data2=c, op=nl.right_shift))
    np.testing.assert_array_equal(run(by_tile, x, count, executor=executor), logical_right(x, count))

    language = tile_kernel(lambda d, a: nisa.tensor_copy(dst=d, src=nl.right_shift(a, 3)))
    np.testing.assert_array_equal(run(language, x, executor=executor), logical_right(x, 3))
