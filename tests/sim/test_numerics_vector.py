"""Numerics of the ACT / DVE / Pool instructions against NumPy (docs/isa-semantics.md §2-§5).

Tolerances: IEEE basic operations (add, multiply, divide, sqrt, comparisons, casts) must match
NumPy float32 exactly; transcendental functions come from the C library on one side and NumPy on
the other, so they are compared with rtol 2e-6 / atol 1e-6 (a few float32 ulps).
"""

import math

import ml_dtypes
import numpy as np
import pytest

from neuronxsim.bir import AccumCmd, ActivationFunc, AluOp, DType, Engine, MemsetMode

from simkit import f32, to_dtype

P, N = 128, 64
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


ALPHA = 0.125
ACT_REF = {
    "Abs": np.abs,
    "Abs_reciprocal_sqrt": lambda x: 1 / np.sqrt(np.abs(x)),
    "Arctan": np.arctan,
    "Copy": lambda x: x,
    "Identity": lambda x: x,
    "Derivative_Erf": lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x),
    "Derivative_Gelu": lambda x: 0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi),
    "Derivative_silu": lambda x: _sigmoid(x) + x * _sigmoid(x) * (1 - _sigmoid(x)),
    "Dsqrt": lambda x: 0.5 / np.sqrt(x),
    "Erf": _erf,
    "Exp": np.exp,
    "Gelu": lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
    "Gelu_apprx_sigmoid": lambda x: x * _sigmoid(1.702 * x),
    "Gelu_apprx_tanh": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
    "Is_finite": lambda x: np.isfinite(x).astype(np.float64),
    "Ln": np.log,
    "Ln_prime": lambda x: 1 / x,
    "Lrelu": lambda x: np.where(x > 0, x, ALPHA * x),
    "Prelu": lambda x: np.where(x > 0, x, ALPHA * x),
    "MemsetZero": np.zeros_like,
    "Mish": lambda x: x * np.tanh(_softplus(x)),
    "Reciprocal": lambda x: 1 / x,
    "Relu": lambda x: np.maximum(x, 0),
    "Rsqrt": lambda x: 1 / np.sqrt(x),
    "Sigmoid": _sigmoid,
    "Sign": np.sign,
    "Silu": lambda x: x * _sigmoid(x),
    "Sin": np.sin,
    "Softplus": _softplus,
    "Sqrt": np.sqrt,
    "Square": np.square,
    "Tanh": np.tanh,
}
POSITIVE_ONLY = {"Dsqrt", "Ln", "Ln_prime", "Rsqrt", "Sqrt", "Reciprocal"}


def test_every_activation_function_has_a_reference():
    assert set(ACT_REF) == {f for f in ActivationFunc.__members__ if f != "Unknown"}


@pytest.mark.parametrize("func", sorted(ACT_REF))
def test_activation(kit, rng, func):
    x = rng.uniform(0.1, 3.0, (P, N)) if func in POSITIVE_ONLY else rng.uniform(-3.0, 3.0, (P, N))
    bias = rng.uniform(-0.2, 0.2, (P, 1))
    if func in POSITIVE_ONLY:
        bias = np.abs(bias)
    x, bias = f32(x), f32(bias)
    scale = 0.75
    src, b = kit.load(x), kit.load(bias)
    out = kit.sbuf(P, N)
    kit.add("Activation", [kit.tile(src), kit.tile(b)], [kit.tile(out)], func=getattr(ActivationFunc, func),
            scale=scale, alpha=ALPHA, has_bias=True)
    got = kit.fetch(out)
    v = (x * np.float32(scale)) + bias  # two fp32 roundings, as the engine does
    ref = ACT_REF[func](v.astype(np.float64))
    np.testing.assert_allclose(got, ref.astype(np.float32), rtol=2e-6, atol=1e-6)


_erfc = np.vectorize(math.erfc, otypes=[np.float64])
# The composite functions in forms without cancellation (1 + tanh(u) = 2 sigmoid(2u), 1 + erf(x) =
# erfc(-x), 1 - sigmoid(x) = sigmoid(-x)), in float64: accurate far beyond fp32 in the tails too.
STABLE_COMPOSITES = {
    "Derivative_Erf": lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x),
    "Derivative_Gelu": lambda x: 0.5 * _erfc(-x / math.sqrt(2)) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi),
    "Derivative_silu": lambda x: _sigmoid(x) * (1 + x * _sigmoid(-x)),
    "Gelu_apprx_sigmoid": lambda x: x * _sigmoid(1.702 * x),
    "Gelu_apprx_tanh": lambda x: x * _sigmoid(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)),
}


@pytest.mark.parametrize("func", sorted(STABLE_COMPOSITES))
def test_composite_activations_are_rounded_once_in_the_tails(kit, func):
    """Within one fp32 ulp over [-12, 12], where these fp32 formulas used to be off by up to
    millions of ulps (1 + tanh(u) cancels to 0 long before the function's value underflows)."""
    x = f32(np.linspace(-12, 12, P * N)).reshape(P, N)
    src, out = kit.load(x), kit.sbuf(P, N)
    kit.add("Activation", [kit.tile(src)], [kit.tile(out)], func=getattr(ActivationFunc, func))
    got = kit.fetch(out).astype(np.float64)
    ref = STABLE_COMPOSITES[func](x.astype(np.float64))
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    worst = np.argmax(np.abs(got - ref) / ulp)
    assert np.abs(got - ref).flat[worst] <= ulp.flat[worst], (x.flat[worst], got.flat[worst], ref.flat[worst])


def test_activation_scale_tensor_and_bf16_output(kit, rng):
    x = f32(rng.normal(size=(P, N)))
    s = f32(rng.uniform(0.5, 2, (P, 1)))
    src, sc = kit.load(x), kit.load(s)
    out = kit.sbuf(P, N, DType.bfloat16)
    kit.add("Activation", [kit.tile(src), kit.tile(sc)], [kit.tile(out)], func=ActivationFunc.Exp,
            has_scale_tensor=True)
    got = kit.fetch(out)
    ref = to_dtype(np.exp((x * s).astype(np.float64)), DType.bfloat16)
    np.testing.assert_allclose(f32(got), f32(ref), rtol=2 ** -8)


def test_activation_accumulators(kit2, rng):
    """ZeroAccumulate, Accumulate, Zero and ReadActivationAccumulator (trn2: any fold op)."""
    kit = kit2
    x1, x2 = f32(rng.normal(size=(P, N))), f32(rng.normal(size=(P, N)))
    a, b = kit.load(x1), kit.load(x2)
    y = kit.sbuf(P, N)
    acc_sum, acc_max, acc_zero = kit.sbuf(P, 1), kit.sbuf(P, 1), kit.sbuf(P, 1)
    ident = ActivationFunc.Identity
    kit.add("Activation", [kit.tile(a)], [kit.tile(y)], func=ident, acc=AccumCmd.ZeroAccumulate, acc_op=AluOp.add)
    kit.add("Activation", [kit.tile(b)], [kit.tile(y)], func=ident, acc=AccumCmd.Accumulate, acc_op=AluOp.add)
    kit.add("ReadActivationAccumulator", [], [kit.tile(acc_sum)])
    kit.add("Activation", [kit.tile(a)], [kit.tile(y)], func=ident, acc=AccumCmd.ZeroAccumulate, acc_op=AluOp.max)
    kit.add("ReadActivationAccumulator", [], [kit.tile(acc_max)])
    kit.add("Activation", [kit.tile(a)], [kit.tile(y)], func=ident, acc=AccumCmd.Zero)
    kit.add("ReadActivationAccumulator", [], [kit.tile(acc_zero)])
    names = [kit.store(t) for t in (acc_sum, acc_max, acc_zero)]
    out = kit.run()
    np.testing.assert_allclose(out[names[0]][:, 0], x1.sum(1) + x2.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[names[1]][:, 0], x1.max(1))
    np.testing.assert_array_equal(out[names[2]][:, 0], 0)


def test_memset_const_and_random(kit):
    a, b = kit.sbuf(P, N, DType.bfloat16), kit.sbuf(P, N)
    kit.add("Memset", [], [kit.tile(a)], constant=1.0 / 3.0)
    kit.add("Memset", [], [kit.tile(b)], mode=MemsetMode.Random)
    na, nb = kit.store(a), kit.store(b)
    out = kit.run()
    np.testing.assert_array_equal(out[na], to_dtype(np.full((P, N), 1 / 3), DType.bfloat16))
    r = out[nb]
    assert r.min() >= 0 and r.max() < 1 and r.std() > 0.2
    assert np.array_equal(kit.run()[nb], r), "Random memset is seeded by the instruction's position"


SPECIAL = np.array([0.0, -0.0, 1.0, -1.5, 1e-3, 65504.0, 65520.0, 3.4e38, -3.4e38, np.inf, -np.inf, np.nan,
                    240.0, 248.0, 250.0, 15.5, 15.75, 16.0, 57344.0, 61440.0, 2.5, 3.5, -2.5, 127.5, 128.0,
                    -128.5, 255.5, 256.0, 1e-8, 5.9e-8, 2 ** -133, 1.00390625, 1.01171875, 0.1, 1e20, -1e20],
                   dtype=np.float32)


@pytest.mark.parametrize("dtype", [d for d in DType.__members__.values() if d not in (DType.float32,)],
                         ids=lambda d: d.name)
def test_copy_cast_store_rules(kit, rng, dtype):
    x = np.concatenate([SPECIAL, f32(rng.normal(scale=50, size=128 - SPECIAL.size))])
    x = np.tile(x, (P, 1))[:, :N * 2]
    src = kit.load(x)
    out = kit.sbuf(P, x.shape[1], dtype)
    kit.add("TensorCopy", [kit.tile(src)], [kit.tile(out)])
    got = kit.fetch(out)
    ref = to_dtype(x, dtype)
    if np.issubdtype(ref.dtype, np.integer):
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_array_equal(f32(got), f32(ref))  # NaN == NaN in assert_array_equal


def _raw_tile(kit, x, dtype):
    """An SBUF tile holding ``x``'s bits (loaded as ``dtype``, with no conversion)."""
    name = f"raw{len(kit.inputs)}"
    kit.inputs[name] = x
    dram = kit.b.input(name, list(x.shape), dtype)
    tile = kit.sbuf(P, x.shape[1], dtype)
    kit.b.dma(kit.tile(tile), kit.b.full(dram))
    return tile


def test_same_dtype_copy_is_bit_exact(kit):
    bits = np.array([0x7FC1, 0xFF81, 0x7F80, 0x0001, 0x8000, 0x3F80], dtype=np.uint16)  # NaN payloads
    x = np.tile(bits, (P, 8)).view(ml_dtypes.bfloat16)
    a = _raw_tile(kit, x, DType.bfloat16)
    b = kit.sbuf(P, x.shape[1], DType.bfloat16)
    kit.add("TensorCopy", [kit.tile(a)], [kit.tile(b)])
    got = kit.fetch(b)
    np.testing.assert_array_equal(got.view(np.uint16), x.view(np.uint16))


def test_reciprocal(kit, rng):
    x = f32(rng.uniform(-4, 4, (P, N)))
    src, out = kit.load(x), kit.sbuf(P, N)
    kit.add("Reciprocal", [kit.tile(src)], [kit.tile(out)])
    np.testing.assert_array_equal(kit.fetch(out), np.float32(1) / x)


# ---- ALU ops ----

def alu_ref(op: str, a, b):
    bits = op in BITWISE  # (integer tiles, read as patterns: their results are exact integers)
    a = np.asarray(a) if bits else f32(a)
    b = np.asarray(b) if bits else f32(b)

    def i32(v):
        v = np.nan_to_num(v, nan=0.0).astype(np.float64)
        return np.clip(np.trunc(v), -2 ** 31, 2 ** 31 - 1).astype(np.int64)

    def u32(v):  # the bit pattern of int32 v (bit-vector ops read integer tiles as patterns)
        return i32(v) % 2 ** 32

    def wrap(v):  # a pattern as the int32 it stores as
        return (v % 2 ** 32 + 2 ** 31) % 2 ** 32 - 2 ** 31

    def shift_ok(s):
        return (s >= 0) & (s <= 31)

    with np.errstate(all="ignore"):
        r = {
            "add": lambda: a + b, "subtract": lambda: a - b, "mult": lambda: a * b, "divide": lambda: a / b,
            "max": lambda: np.maximum(a, b), "min": lambda: np.minimum(a, b), "pow": lambda: np.power(a, b),
            "mod": lambda: np.mod(a, b), "average": lambda: (a + b) * np.float32(0.5),
            "abs": lambda: np.abs(a), "rsqrt": lambda: np.float32(1) / np.sqrt(a), "bypass": lambda: a,
            "is_equal": lambda: a == b, "not_equal": lambda: a != b, "is_ge": lambda: a >= b,
            "is_gt": lambda: a > b, "is_le": lambda: a <= b, "is_lt": lambda: a < b,
            "logical_and": lambda: (a != 0) & (b != 0), "logical_or": lambda: (a != 0) | (b != 0),
            "logical_xor": lambda: (a != 0) ^ (b != 0),
            "bitwise_and": lambda: i32(a) & i32(b), "bitwise_or": lambda: i32(a) | i32(b),
            "bitwise_xor": lambda: i32(a) ^ i32(b), "bitwise_not": lambda: ~i32(a),
            "arith_shift_left": lambda: np.where(shift_ok(i32(b)), ((i32(a) << np.clip(i32(b), 0, 31)) + 2 ** 31) % 2 ** 32 - 2 ** 31, 0),
            "arith_shift_right": lambda: np.where(shift_ok(i32(b)), i32(a) >> np.clip(i32(b), 0, 31), np.where(i32(a) < 0, -1, 0)),
            "logical_shift_left": lambda: np.where(shift_ok(i32(b)), wrap(u32(a) << np.clip(i32(b), 0, 31)), 0),
            "logical_shift_right": lambda: np.where(shift_ok(i32(b)), wrap(u32(a) >> np.clip(i32(b), 0, 31)), 0),
        }[op]()
    return r if bits else f32(r)


ALU_OPS = sorted(AluOp.__members__)
BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "arith_shift_left", "arith_shift_right",
           "logical_shift_left", "logical_shift_right"}


def _operands(rng, op):
    if op in BITWISE:
        a = f32(rng.integers(-1000, 1000, (P, N)))
        b = f32(rng.integers(-2, 34, (P, N))) if "shift" in op else f32(rng.integers(-1000, 1000, (P, N)))
    else:
        a = f32(rng.uniform(-4, 4, (P, N)))
        b = f32(rng.uniform(-4, 4, (P, N)))
        b[:, ::7] = a[:, ::7]  # equal pairs for the comparisons
        if op in ("pow", "rsqrt"):
            a = np.abs(a) + 0.1
    return a, b


def stored(op, values, dtype: DType) -> np.ndarray:
    """alu_ref's values as the engines store them: a bit-vector op's int32 results exactly."""
    return np.asarray(values).astype(np.int32) if op in BITWISE else to_dtype(values, dtype)


def test_alu_reference_covers_every_op():
    for op in ALU_OPS:
        alu_ref(op, np.ones(2), np.ones(2))


def _tiles(op) -> DType:
    """The dtype of the tiles ``op`` runs on: integers for a bit-vector op (the rule
    alu.bitvec-dtype), which reads them as bit patterns."""
    return DType.int32 if op in BITWISE else DType.float32


@pytest.mark.parametrize("op", ALU_OPS)
def test_tensor_tensor(kit, rng, op):
    a, b = _operands(rng, op)
    dtype = _tiles(op)
    ta, tb, out = kit.load(a, dtype), kit.load(b, dtype), kit.sbuf(P, N, dtype)
    kit.add("TensorTensor", [kit.tile(ta), kit.tile(tb)], [kit.tile(out)], op=getattr(AluOp, op))
    got = kit.fetch(out)
    ref = stored(op, alu_ref(op, a, b), dtype)
    if op == "pow":
        np.testing.assert_allclose(got, ref, rtol=2e-6)
    else:
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("op", ALU_OPS)
@pytest.mark.parametrize("reverse", [False, True])
def test_tensor_scalar(kit, rng, op, reverse):
    a, _ = _operands(rng, op)
    dtype = _tiles(op)
    c0 = 3.0 if op in BITWISE else 1.75
    # op1 of op0's kind (the rule alu.tensor-scalar-op-kinds)
    op1, c1 = (AluOp.bitwise_xor, 5.0) if op in BITWISE else (AluOp.mult, 0.5)
    src, out = kit.load(a, dtype), kit.sbuf(P, N, dtype)
    kit.add("TensorScalar", [kit.tile(src)], [kit.tile(out)], op0=getattr(AluOp, op), const0=c0, reverse0=reverse,
            op1=op1, const1=c1)
    got = kit.fetch(out)
    first = alu_ref(op, np.full_like(a, c0), a) if reverse else alu_ref(op, a, np.full_like(a, c0))
    ref = stored(op, alu_ref(op1.name, first, np.full_like(a, c1)), dtype)
    if op == "pow":
        np.testing.assert_allclose(got, ref, rtol=2e-6)
    else:
        np.testing.assert_array_equal(got, ref)


def test_tensor_scalar_ptr(kit, rng):
    a = f32(rng.normal(size=(P, N)))
    s0, s1 = f32(rng.normal(size=(P, 1))), f32(rng.normal(size=(P, 1)))
    src, p0, p1, out = kit.load(a), kit.load(s0), kit.load(s1), kit.sbuf(P, N)
    kit.add("TensorScalarPtr", [kit.tile(src), kit.tile(p0), kit.tile(p1)], [kit.tile(out)], op0=AluOp.subtract,
            reverse0=True, op1=AluOp.mult)
    got = kit.fetch(out)
    np.testing.assert_array_equal(got, (s0 - a) * s1)


def test_tensor_tensor_scan(kit, rng):
    a, b = f32(rng.uniform(0.5, 1, (P, N))), f32(rng.normal(size=(P, N)))
    init = f32(rng.normal(size=(P, 1)))
    ta, tb, ti, out = kit.load(a), kit.load(b), kit.load(init), kit.sbuf(P, N)
    kit.add("TensorTensorScan", [kit.tile(ta), kit.tile(tb), kit.tile(ti)], [kit.tile(out)], op0=AluOp.mult,
            op1=AluOp.add)
    got = kit.fetch(out)
    ref = np.empty_like(a)
    r = init[:, 0].copy()
    for i in range(N):
        r = a[:, i] * r + b[:, i]
        ref[:, i] = r
    np.testing.assert_array_equal(got, ref)


def test_dropout(kit, rng):
    x = f32(rng.uniform(1, 2, (P, 256)))
    src, out = kit.load(x), kit.sbuf(P, 256)
    kit.add("Dropout", [kit.tile(src)], [kit.tile(out)], prob=0.25)
    got = kit.fetch(out)
    dropped = got == 0
    assert 0.2 < dropped.mean() < 0.3
    np.testing.assert_array_equal(got[~dropped], x[~dropped])  # survivors keep their values
    every = kit.sbuf(P, 256)
    kit.add("Dropout", [kit.tile(src)], [kit.tile(every)], prob=1.0)
    np.testing.assert_array_equal(kit.fetch(every), np.zeros((P, 256), np.float32))


def test_select_select_reduce_and_copy_predicated(kit, rng):
    pred = f32(rng.integers(0, 2, (P, N)))
    t, f = f32(rng.normal(size=(P, N))), f32(rng.normal(size=(P, N)))
    dst0 = f32(rng.normal(size=(P, N)))
    tp, tt, tf, td = kit.load(pred), kit.load(t), kit.load(f), kit.load(dst0)
    sel, sr, red = kit.sbuf(P, N), kit.sbuf(P, N), kit.sbuf(P, 1)
    kit.add("Select", [kit.tile(tp), kit.tile(tt), kit.tile(tf)], [kit.tile(sel)])
    kit.add("SelectReduce", [kit.tile(tp), kit.tile(tt)], [kit.tile(sr), kit.tile(red)], on_false_value=-5.0,
            reduce_op=AluOp.add)
    kit.add("CopyPredicated", [kit.tile(tt), kit.tile(tp)], [kit.tile(td)])
    names = [kit.store(x) for x in (sel, sr, red, td)]
    out = kit.run()
    np.testing.assert_array_equal(out[names[0]], np.where(pred != 0, t, f))
    sr_ref = np.where(pred != 0, t, np.float32(-5))
    np.testing.assert_array_equal(out[names[1]], sr_ref)
    np.testing.assert_allclose(out[names[2]][:, 0], sr_ref.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out[names[3]], np.where(pred != 0, t, dst0))


def test_engines_act_and_pool_compute_the_same(kit, rng):
    a = f32(rng.normal(size=(P, N)))
    src, o_act, o_pool, o_dve = kit.load(a), kit.sbuf(P, N), kit.sbuf(P, N), kit.sbuf(P, N)
    for out, eng in ((o_act, Engine.Activation), (o_pool, Engine.Pool), (o_dve, Engine.DVE)):
        kit.add("TensorScalar", [kit.tile(src)], [kit.tile(out)], engine=eng, op0=AluOp.mult, const0=3.0,
                op1=AluOp.add, const1=-1.0)
    names = [kit.store(x) for x in (o_act, o_pool, o_dve)]
    out = kit.run()
    for n in names:
        np.testing.assert_array_equal(out[n], a * np.float32(3) - np.float32(1))
    assert {r["engine"] for r in kit.result.instructions if r["opcode"] == "TensorScalar"} == {"ACT", "Pool", "DVE"}


def test_immediate_operand_broadcasts(kit, rng):
    from neuronxsim import bir
    a = f32(rng.normal(size=(P, N)))
    src, out = kit.load(a), kit.sbuf(P, N)
    kit.add("TensorTensor", [kit.tile(src), bir.AccessPattern.immediate(2.5)], [kit.tile(out)], op=AluOp.mult)
    np.testing.assert_array_equal(kit.fetch(out), a * np.float32(2.5))


def test_strided_and_multi_dim_patterns(kit, rng):
    """Elementwise pairing follows enumeration order, whatever the free shapes."""
    a = f32(rng.normal(size=(P, 4 * 16)))
    src = kit.load(a)
    out = kit.sbuf(P, 64)
    # read columns transposed ([16 step 1] inside [4 step 16] -> [4 step 1] inside [16 step 4])
    kit.add("TensorCopy", [kit.tile(src, free=[(1, 4), (4, 16)])], [kit.tile(out, free=[(16, 4), (1, 16)])])
    got = kit.fetch(out)
    ref = a.reshape(P, 16, 4).transpose(0, 2, 1).reshape(P, 64)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("arch, engine, exact", [("trn1", Engine.Activation, False), ("trn2", Engine.Activation, True),
                                                 ("trn1", Engine.DVE, True)])
def test_same_dtype_int32_copy_goes_through_fp32_only_on_the_v2_scalar_engine(arch, engine, exact):
    # "Scalar Engine on NeuronCore-v2 performs copy by first casting the input tile to FP32"
    # (NKI 2.2x nki.isa.tensor_copy); v3's Scalar Engine and every Vector Engine copy the bits.
    from simkit import Kit
    kit = Kit(arch)
    x = np.tile(np.array([2**24 + 1, -(2**24 + 3), 2**31 - 1, 7, -5, 0], dtype=np.int32), (P, 4))
    a = _raw_tile(kit, x, DType.int32)
    b = kit.sbuf(P, x.shape[1], DType.int32)
    kit.add("TensorCopy", [kit.tile(a)], [kit.tile(b)], engine=engine)
    got = kit.fetch(b)
    ref = x if exact else np.clip(x.astype(np.float32).astype(np.float64), -2**31, 2**31 - 1).astype(np.int32)
    np.testing.assert_array_equal(got, ref)
    assert exact == np.array_equal(got, x)
