"""ALU ops (docs/isa-semantics.md section 3) through TensorTensor, TensorScalar and
TensorScalarPtr, against a scalar Python reference of each op written from the contract."""

import math

import numpy as np
import pytest


def i32(x):
    """int32(x): truncate toward zero, saturate, NaN -> 0."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return 2**31 - 1 if x > 0 else -(2**31)
    return max(-(2**31), min(2**31 - 1, math.trunc(x)))


def u32(x):
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return 2**32 - 1 if x > 0 else 0
    return max(0, min(2**32 - 1, math.trunc(x)))


def wrap_i32(v):
    v &= 0xFFFFFFFF
    return v - 2**32 if v >= 2**31 else v


def shift_ok(b):
    return 0 <= i32(b) <= 31


def flag(c):
    return 1.0 if c else 0.0


def div(a, b):
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
    return a / b


REFERENCE = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "mult": lambda a, b: a * b,
    "divide": div,
    "max": lambda a, b: math.nan if math.isnan(a) or math.isnan(b) else max(a, b),
    "min": lambda a, b: math.nan if math.isnan(a) or math.isnan(b) else min(a, b),
    "pow": math.pow,
    "mod": lambda a, b: a % b,
    "average": lambda a, b: (a + b) / 2,
    "abs": lambda a, b: abs(a),
    "rsqrt": lambda a, b: 1 / math.sqrt(a),
    "bypass": lambda a, b: a,
    "is_equal": lambda a, b: flag(a == b),
    "not_equal": lambda a, b: flag(a != b),
    "is_ge": lambda a, b: flag(a >= b),
    "is_gt": lambda a, b: flag(a > b),
    "is_le": lambda a, b: flag(a <= b),
    "is_lt": lambda a, b: flag(a < b),
    "logical_and": lambda a, b: flag(a != 0 and b != 0),
    "logical_or": lambda a, b: flag(a != 0 or b != 0),
    "logical_xor": lambda a, b: flag((a != 0) != (b != 0)),
    "bitwise_and": lambda a, b: i32(a) & i32(b),
    "bitwise_or": lambda a, b: i32(a) | i32(b),
    "bitwise_xor": lambda a, b: i32(a) ^ i32(b),
    "bitwise_not": lambda a, b: ~i32(a),
    "arith_shift_left": lambda a, b: wrap_i32(i32(a) << i32(b)) if shift_ok(b) else 0,
    "arith_shift_right": lambda a, b: i32(a) >> (i32(b) if shift_ok(b) else 31),
    "logical_shift_left": lambda a, b: (u32(a) << i32(b)) & 0xFFFFFFFF if shift_ok(b) else 0,
    "logical_shift_right": lambda a, b: u32(a) >> i32(b) if shift_ok(b) else 0,
}

INTEGER_OPS = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "arith_shift_left",
               "arith_shift_right", "logical_shift_left", "logical_shift_right"}


def operands(op):
    rng = np.random.default_rng(sum(map(ord, op)))
    shape = (4, 32)
    if op in INTEGER_OPS:
        a = rng.integers(-(2**20), 2**20, size=shape).astype(np.float32)
        a[0, :4] = [3e9, -3e9, np.nan, 7.9]  # saturation, NaN -> 0, truncation
        b = rng.integers(-3, 36, size=shape).astype(np.float32) if "shift" in op else \
            rng.integers(-(2**20), 2**20, size=shape).astype(np.float32)
        return a, b
    a = rng.normal(size=shape).astype(np.float32) * 4
    b = rng.normal(size=shape).astype(np.float32) * 4
    if op in ("pow", "rsqrt"):
        a = np.abs(a) + np.float32(0.1)
    if op == "divide":
        a[0, :3], b[0, :3] = [1.0, -1.0, 0.0], [0.0, 0.0, 0.0]
    if op in ("max", "min"):
        a[0, 0] = np.nan
    if op.startswith(("is_", "not_", "logical")):
        b[:, ::3] = a[:, ::3]  # equal pairs
        a[:, ::5] = 0.0
    return a, b


def expected(op, a, b, reverse=False):
    fn = REFERENCE[op]
    out = [fn(y, x) if reverse else fn(x, y) for x, y in zip(a.astype(np.float64).ravel().tolist(),
                                                             np.broadcast_to(b, a.shape).astype(np.float64).ravel().tolist())]
    return np.array(out, dtype=np.float64).astype(np.float32).reshape(a.shape)


@pytest.mark.parametrize("op", sorted(REFERENCE))
def test_tensor_tensor_computes_each_alu_op(run_op, op):
    a, b = operands(op)
    got = run_op("TensorTensor", [a, b], [(a.shape, "float32")], op=op)[0]
    # pow and rsqrt (1/sqrt: two fp32 roundings) may differ from the double-precision value by
    # an ulp or two; everything else is exact in fp32
    rtol = {"pow": 1e-6, "rsqrt": 3e-7}.get(op, 0)
    np.testing.assert_allclose(got, expected(op, a, b), rtol=rtol, atol=0, equal_nan=True)


def test_tensor_scalar_applies_two_ops_with_reversal(run_op):
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(3, 8)
    got = run_op("TensorScalar", [x], [(x.shape, "float32")], op0="subtract", const0=10.0,
                 reverse0=True, op1="divide", const1=4.0, reverse1=True)[0]
    np.testing.assert_array_equal(got, np.float32(4.0) / (np.float32(10.0) - x))
    got = run_op("TensorScalar", [x], [(x.shape, "float32")], op0="max", const0=0.5)[0]
    np.testing.assert_array_equal(got, np.maximum(x, np.float32(0.5)))  # op1 bypass: one op


def test_tensor_scalar_ptr_takes_per_partition_scalars(run_op):
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    s0 = np.array([[2.0], [3.0], [-1.0]], np.float32)
    s1 = np.array([[1.0], [0.5], [100.0]], np.float32)
    got = run_op("TensorScalarPtr", [x, s0, s1], [(x.shape, "float32")], op0="mult", op1="add")[0]
    np.testing.assert_array_equal(got, x * s0 + s1)
    got = run_op("TensorScalarPtr", [x, s0], [(x.shape, "float32")], op0="subtract", reverse0=True,
                 op1="mult", const1=3.0)[0]
    np.testing.assert_array_equal(got, (s0 - x) * np.float32(3.0))


def test_immediates_broadcast_as_operands(run_op):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    got = run_op("TensorTensor", [x, 2.5], [(x.shape, "float32")], op="mult")[0]
    np.testing.assert_array_equal(got, x * np.float32(2.5))
    scalar = run_op("TensorScalarPtr", [x, -1.0], [(x.shape, "float32")], op0="add")[0]
    np.testing.assert_array_equal(scalar, x - 1)


def test_elementwise_operands_may_have_different_free_shapes(program):
    p = program
    a = p.sbuf("a", 2, [2, 3])
    b = p.sbuf("b", 2, 6)
    xa, xb = p.input("xa", [2, 2, 3]), p.input("xb", [2, 6])
    p.load(a, xa)
    p.load(b, xb)
    y = p.sbuf("y", 2, [3, 2])
    p.add("TensorTensor", ins=[a, b], outs=[y], op="add")
    p.store(p.output("out", [2, 3, 2]), y)
    va = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    vb = np.arange(12, dtype=np.float32).reshape(2, 6) * 10
    got = p.run(xa=va, xb=vb)["out"]
    np.testing.assert_array_equal(got.reshape(2, 6), va.reshape(2, 6) + vb)
