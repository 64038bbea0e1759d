"""The 2.2x dialect's bit-vector operators on full-range 32-bit integers: the Vector Engine
treats integer tiles as bit patterns (NKI's "Supported Math Operators for NKI ISA"), so no bit is
lost to an fp32 conversion; nl.right_shift is the Logical Shift Right of that table (Neuron 2.26)
and nl.invert its Bitwise Not, which nisa instructions take as an op."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from nki_testing import run_on


@nki.jit
def bit_mix(a, b):
    out = nl.ndarray((5,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x, y = nl.load(a), nl.load(b)
    nl.store(out[0], x & y)
    nl.store(out[1], nl.bitwise_xor(x, y))
    nl.store(out[2], nl.right_shift(x, 7))  # the logical shift: zeros come in at the top
    nl.store(out[3], nl.left_shift(x, 3))
    nl.store(out[4], nisa.tensor_scalar(x, np.bitwise_and, 0x7FFFFF01, op1=nl.invert, operand1=0))
    return out


@pytest.mark.parametrize("executor", ["simulator", "reference"])
def test_bitwise_ops_keep_every_bit_of_int32(executor, rng):
    a = rng.integers(-2**31, 2**31, (128, 48), dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, (128, 48), dtype=np.int64).astype(np.int32)
    out = run_on(executor, bit_mix, a, b)
    bits = a.view(np.uint32)
    np.testing.assert_array_equal(out, np.stack([a & b, a ^ b, (bits >> 7).view(np.int32), (bits << 3).view(np.int32),
                                                 ~(a & 0x7FFFFF01)]))


@nki.jit
def numpy_right_shift(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nisa.tensor_scalar(nl.load(a), np.right_shift, 4))
    return out


@pytest.mark.parametrize("executor", ["simulator", "reference"])
def test_numpy_right_shift_names_nkis_logical_shift(executor, rng):
    # np.right_shift as an op is nl.right_shift's operator: NKI has no arithmetic shift right
    a = rng.integers(-2**31, 0, (32, 16), dtype=np.int64).astype(np.int32)
    np.testing.assert_array_equal(run_on(executor, numpy_right_shift, a), (a.view(np.uint32) >> 4).view(np.int32))
