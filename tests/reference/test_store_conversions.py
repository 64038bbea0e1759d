"""Store conversions (docs/isa-semantics.md section 2): fp32 engine results written as each
dtype by a TensorCopy, and the bit-exact copy exceptions. Expected values are written out by
hand from the formats' definitions."""

import ml_dtypes
import numpy as np
import pytest

INF, NAN = np.inf, np.nan


def copy_to(run_op, values, dtype):
    x = np.array([values], dtype=np.float32)
    return run_op("TensorCopy", [x], [(x.shape, dtype)])[0][0]


def test_bfloat16_rounds_ties_to_even_and_overflows_to_inf(run_op):
    # bf16 keeps 7 fraction bits: around 1 the step is 2^-7
    values = [1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -(1 + 2**-8), 3.4028235e38, NAN]
    got = copy_to(run_op, values, "bfloat16").astype(np.float64)
    assert got[:4].tolist() == [1.0, 1 + 2**-6, 1 + 2**-7, -1.0]
    assert got[4] == INF and np.isnan(got[5])


def test_float16_rounds_ties_to_even_and_overflows_to_inf(run_op):
    got = copy_to(run_op, [2049.0, 2051.0, 65519.0, 65520.0, -70000.0], "float16").astype(np.float64)
    assert got.tolist() == [2048.0, 2052.0, 65504.0, INF, -INF]


@pytest.mark.parametrize("dtype, largest", [("float8e4", 240.0), ("float8e5", 57344.0), ("float8e3", 15.5)])
def test_fp8_saturates_to_the_largest_finite_value(run_op, dtype, largest):
    got = copy_to(run_op, [largest * 4, INF, -INF, -largest * 1.1, NAN], dtype).astype(np.float64)
    assert got[:4].tolist() == [largest, largest, -largest, -largest]
    assert np.isnan(got[4])


def test_fp8_e4m3_rounds_ties_to_even(run_op):
    # e4m3 keeps 3 fraction bits: around 1 the step is 1/8
    got = copy_to(run_op, [1 + 1 / 16, 1 + 3 / 16, 1 + 1 / 16 + 1 / 64], "float8e4")
    assert got.astype(np.float64).tolist() == [1.0, 1.25, 1.125]
    assert got.dtype == ml_dtypes.float8_e4m3


def test_integers_round_to_even_and_saturate_and_nan_is_zero(run_op):
    got = copy_to(run_op, [2.5, 3.5, -2.5, -3.7, 200.0, -200.0, NAN, INF, -INF], "int8")
    assert got.tolist() == [2, 4, -2, -4, 127, -128, 0, 127, -128]
    got = copy_to(run_op, [-3.0, 255.5, 254.5, NAN], "uint8")
    assert got.tolist() == [0, 255, 254, 0]
    got = copy_to(run_op, [3e9, -3e9, 16777216.0], "int32")
    assert got.tolist() == [2**31 - 1, -(2**31), 16777216]
    assert copy_to(run_op, [-1.0, 5e9], "uint32").tolist() == [0, 2**32 - 1]
    assert copy_to(run_op, [1e19, -1e19], "int64").tolist() == [2**63 - 1, -(2**63)]
    assert copy_to(run_op, [2e19, -1.0], "uint64").tolist() == [2**64 - 1, 0]


def test_reads_convert_integers_to_the_nearest_even_fp32(run_op):
    x = np.array([[16777217, 16777219, -16777217]], dtype=np.int32)
    got = run_op("TensorCopy", [x], [(x.shape, "float32")])[0]
    assert got.tolist() == [[16777216.0, 16777220.0, -16777216.0]]


def test_same_dtype_copies_are_bit_exact(run_op):
    # int32 beyond 2^24 and a NaN payload would not survive a trip through fp32 arithmetic
    ints = np.array([[16777217, -2147483647]], dtype=np.int32)
    assert run_op("TensorCopy", [ints], [(ints.shape, "int32")])[0].tolist() == ints.tolist()
    payload = np.array([[0x7FC01234, 0xFF800001]], dtype=np.uint32).view(np.float32)
    got = run_op("TensorCopy", [payload], [(payload.shape, "float32")])[0]
    assert got.view(np.uint32).tolist() == payload.view(np.uint32).tolist()


def test_arithmetic_results_are_converted_on_store(run_op):
    # 1 + 2^-8 is computed in fp32 (exactly) and rounds to even only when stored as bf16
    x = np.full((2, 3), 1.0, dtype=np.float32)
    got = run_op("TensorScalar", [x], [(x.shape, "bfloat16")], op0="add", const0=2**-8)[0]
    assert got.dtype == ml_dtypes.bfloat16 and np.all(got.astype(np.float32) == 1.0)
