"""The 2.2x dialect's integer fills and moves keep values fp32 cannot hold: nl.full fills every
element with ``fill_value`` (a Memset), nisa.tensor_copy_predicated copies src's elements (of
dst's dtype) where the predicate is true; and nl.right_shift, NKI's Logical Shift Right, brings
zeros in at an int8 / int16 element's own top bit. On both executors, against values written from
those definitions."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from nki_testing import run_on

EXECUTORS = ["simulator", "reference"]
FILLS = [(np.int32, 2**24 + 1), (np.int32, -2**31 + 1), (np.int32, 0x12345679), (np.uint32, 0xDEADBEEF),
         (np.uint32, 0xFFFFFFFE), (np.int16, -2**15 + 1), (np.int8, -2**7 + 1)]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype,value", FILLS)
def test_full_fills_the_integer_itself(executor, dtype, value):
    @nki.jit
    def kernel(a):
        out = nl.ndarray((128, 6), dtype=dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.full((128, 6), value, dtype=dtype))
        return out

    got = run_on(executor, kernel, np.zeros((1, 1), np.float32))
    np.testing.assert_array_equal(got, np.full((128, 6), value, dtype))


@nki.jit
def predicated(a, p):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    d = nl.full(a.shape, 5, dtype=a.dtype)
    nisa.tensor_copy_predicated(src=nl.load(a), dst=d, predicate=nl.load(p))
    nl.store(out, d)
    return out


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_copy_predicated_moves_the_selected_bits(executor, dtype, rng):
    info = np.iinfo(dtype)
    a = rng.integers(int(info.min), int(info.max), (128, 20), dtype=np.int64, endpoint=True).astype(dtype)
    a.flat[:3] = np.array([2**24 + 1, 0x12345679, 0xDEADBEEF], np.int64).astype(dtype)
    p = (rng.random(a.shape) < 0.5).astype(np.uint8)
    p.flat[:3] = 1
    got = run_on(executor, predicated, a, p)
    np.testing.assert_array_equal(got, np.where(p != 0, a, np.array(5, dtype)))


@nki.jit
def shifts(a):
    out = nl.ndarray((2,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out[0], nl.right_shift(x, 1))
    nl.store(out[1], nisa.tensor_scalar(x, nl.right_shift, 3, dtype=a.dtype))
    return out


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_right_shift_is_logical_at_the_elements_width(executor, dtype, rng):
    info = np.iinfo(dtype)
    a = rng.integers(int(info.min), int(info.max), (32, 16), dtype=np.int64, endpoint=True).astype(dtype)
    a.flat[:3] = [info.min, -1, -2]
    got = run_on(executor, shifts, a)
    u = a.astype(np.int64) & int(np.iinfo(np.dtype(dtype).str.replace("i", "u")).max)
    np.testing.assert_array_equal(got, np.stack([u >> 1, u >> 3]).astype(dtype))
    assert got[0].flat[0] == -(int(info.min) // 2)  # min >> 1: 64 / 16384, not min / 2
