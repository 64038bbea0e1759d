"""Activation (every function, scale, bias, the accumulator) and ReadActivationAccumulator,
against per-element references written with Python's math module."""

import math

import numpy as np
import pytest

from neuronxsim import SimulationError


def sigmoid(x):
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def softplus(x):
    return max(x, 0) + math.log1p(math.exp(-abs(x)))


def phi(x):
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


ALPHA = 0.125

FUNCTIONS = {
    "Abs": abs,
    "Abs_reciprocal_sqrt": lambda x: 1 / math.sqrt(abs(x)),
    "Arctan": math.atan,
    "Copy": lambda x: x,
    "Identity": lambda x: x,
    "Derivative_Erf": lambda x: 2 / math.sqrt(math.pi) * math.exp(-x * x),
    "Derivative_Gelu": lambda x: cdf(x) + x * phi(x),
    "Derivative_silu": lambda x: sigmoid(x) + x * sigmoid(x) * (1 - sigmoid(x)),
    "Dsqrt": lambda x: 0.5 / math.sqrt(x),
    "Erf": math.erf,
    "Exp": math.exp,
    "Gelu": lambda x: 0.5 * x * math.erfc(-x / math.sqrt(2)),  # = 0.5x(1 + erf(x/sqrt 2)), no cancellation
    "Gelu_apprx_sigmoid": lambda x: x * sigmoid(1.702 * x),
    # = 0.5x(1 + tanh(u)) without its cancellation: x sigmoid(2u)
    "Gelu_apprx_tanh": lambda x: x * sigmoid(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)),
    "Is_finite": lambda x: 1.0,
    "Ln": math.log,
    "Ln_prime": lambda x: 1 / x,
    "Lrelu": lambda x: x if x > 0 else ALPHA * x,
    "Prelu": lambda x: x if x > 0 else ALPHA * x,
    "MemsetZero": lambda x: 0.0,
    "Mish": lambda x: x * math.tanh(softplus(x)),
    "Reciprocal": lambda x: 1 / x,
    "Relu": lambda x: max(x, 0.0),
    "Rsqrt": lambda x: 1 / math.sqrt(x),
    "Sigmoid": sigmoid,
    "Sign": lambda x: float((x > 0) - (x < 0)),
    "Silu": lambda x: x * sigmoid(x),
    "Sin": math.sin,
    "Softplus": softplus,
    "Sqrt": math.sqrt,
    "Square": lambda x: x * x,
    "Tanh": math.tanh,
}
POSITIVE_ONLY = {"Dsqrt", "Ln", "Rsqrt", "Sqrt"}


def arguments(func):
    rng = np.random.default_rng(len(func))
    x = (rng.normal(size=(4, 64)) * 3).astype(np.float32)
    x[0, :6] = [0.0, -0.0, 1e-4, -1e-4, 9.0, -9.0]  # around zero and far in both tails
    if func in POSITIVE_ONLY:
        x = np.abs(x) + np.float32(0.01)
    if func in ("Reciprocal", "Ln_prime", "Abs_reciprocal_sqrt"):
        x[x == 0] = 0.5
    return x


@pytest.mark.parametrize("func", sorted(FUNCTIONS))
def test_every_activation_function(run_op, func):
    x = arguments(func)
    got = run_op("Activation", [x], [(x.shape, "float32")], func=func, alpha=ALPHA)[0]
    want = np.array([FUNCTIONS[func](v) for v in x.ravel().tolist()]).reshape(x.shape)
    # the reference is evaluated in double; the engine result is fp32 (a few ulp)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-30)


def test_is_finite_and_sign_on_special_values(run_op):
    x = np.array([[np.inf, -np.inf, np.nan, 0.0, -2.0, 3.0]], np.float32)
    finite = run_op("Activation", [x], [(x.shape, "float32")], func="Is_finite")[0]
    np.testing.assert_array_equal(finite, [[0, 0, 0, 1, 1, 1]])
    sign = run_op("Activation", [x], [(x.shape, "float32")], func="Sign")[0]
    np.testing.assert_array_equal(sign, [[1, -1, np.nan, 0, -1, 1]])


def test_scale_field_scale_tensor_and_bias(run_op):
    x = np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8)
    bias = np.array([[0.5], [-1.0], [2.0], [0.0]], np.float32)
    scale = np.array([[1.0], [2.0], [-3.0], [0.25]], np.float32)
    got = run_op("Activation", [x, bias], [(x.shape, "float32")], func="Identity", scale=3.0, has_bias=True)[0]
    np.testing.assert_array_equal(got, x * np.float32(3.0) + bias)
    got = run_op("Activation", [x, bias, scale], [(x.shape, "float32")], func="Exp",
                 has_bias=True, has_scale_tensor=True)[0]
    np.testing.assert_allclose(got, np.exp(x.astype(np.float64) * scale + bias), rtol=2e-6)
    got = run_op("Activation", [x, scale], [(x.shape, "float32")], func="Square", has_scale_tensor=True)[0]
    np.testing.assert_allclose(got, (x * scale) ** 2, rtol=1e-6)


def accumulate_program(program, commands, acc_op="add", base_partition=0):
    """Runs one Activation (Identity) per command on the same [4, 8] tile, then reads the
    accumulators into `acc`."""
    p = program
    t = p.sbuf("t", 4, 8, base_partition=base_partition)
    p.load(t, p.input("x", [4, 8]))
    for command in commands:
        p.add("Activation", ins=[t], outs=[t], func="Identity", acc=command, acc_op=acc_op)
    acc = p.sbuf("acc", 4, 1, base_partition=base_partition)
    p.add("ReadActivationAccumulator", outs=[acc])
    p.store(p.output("acc_out", [4, 1]), acc)
    return p


def test_accumulator_commands(new_program):
    x = np.arange(32, dtype=np.float32).reshape(4, 8) - 10
    rows = x.sum(axis=1, keepdims=True)
    cases = {
        ("ZeroAccumulate",): rows,
        ("ZeroAccumulate", "Accumulate", "Accumulate"): 3 * rows,
        ("ZeroAccumulate", "Idle"): rows,
        ("ZeroAccumulate", "Zero"): np.zeros_like(rows),
        ("Zero", "Accumulate"): rows,
    }
    for commands, want in cases.items():
        got = accumulate_program(new_program(), commands).run(x=x)["acc_out"]
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str(commands))


@pytest.mark.parametrize("commands", [("Accumulate",), ("Idle",), ()])
def test_accumulator_no_instruction_set_is_refused(new_program, commands):
    # What a register holds before an instruction sets it is whatever ran before the kernel: an
    # accumulation onto it, or reading it, is refused (as the Vector Engine's registers are).
    x = np.ones((4, 8), dtype=np.float32)
    with pytest.raises(SimulationError, match="accumulation register of partition 0, which no instruction has set"):
        accumulate_program(new_program(), commands).run(x=x)


def test_accumulator_with_max_and_per_absolute_partition(new_program):
    x = np.random.default_rng(3).normal(size=(4, 8)).astype(np.float32)
    got = accumulate_program(new_program(), ["ZeroAccumulate"], acc_op="max").run(x=x)["acc_out"]
    np.testing.assert_array_equal(got, x.max(axis=1, keepdims=True))
    # registers belong to absolute partitions: a tile at partition 32 uses registers 32..35
    p = new_program()
    t = p.sbuf("t", 4, 8, base_partition=32)
    p.load(t, p.input("x", [4, 8]))
    p.add("Activation", ins=[t], outs=[t], func="Identity", acc="ZeroAccumulate")
    high = p.sbuf("high", 4, 1, base_partition=32)
    p.add("ReadActivationAccumulator", outs=[high])
    p.store(p.output("high_out", [4, 1]), high)
    np.testing.assert_allclose(p.run(x=x)["high_out"], x.sum(axis=1, keepdims=True), rtol=1e-6)
    # ... and registers 0..3 are still unset
    p = accumulate_program(new_program(), ["ZeroAccumulate"], base_partition=32)
    low = p.sbuf("low", 4, 1)
    p.add("ReadActivationAccumulator", outs=[low])
    with pytest.raises(SimulationError, match="register of partition 0, which no instruction has set"):
        p.run(x=x)


def test_accumulator_folds_the_fp32_results_not_the_stored_values(program):
    p = program
    t = p.sbuf("t", 1, 2)
    p.load(t, p.input("x", [1, 2]))
    stored = p.sbuf("stored", 1, 2, "bfloat16")
    p.add("Activation", ins=[t], outs=[stored], func="Identity", acc="ZeroAccumulate")
    acc = p.sbuf("acc", 1, 1)
    p.add("ReadActivationAccumulator", outs=[acc])
    p.store(p.output("acc_out", [1, 1]), acc)
    x = np.array([[1 + 2**-9, 1 + 2**-9]], np.float32)  # each rounds to 1.0 in bf16
    assert p.run(x=x)["acc_out"][0, 0] == np.float32(2 + 2**-8)


@pytest.mark.parametrize("fields, message", [
    (dict(func="Unknown"), "activation function Unknown is refused"),
    (dict(acc="AddAccumulate"), "accumulator command AddAccumulate is refused"),
    (dict(acc="LoadAccumulate"), "accumulator command LoadAccumulate is refused"),
    (dict(has_bias=True), "has_bias=True and has_scale_tensor=False need 2 inputs, got 1"),
])
def test_activation_refusals(run_op, fields, message):
    x = np.ones((2, 4), np.float32)
    with pytest.raises(SimulationError, match=r"functions\[0\].blocks\[0\].instructions\[1\] 'op' Activation: " + message):
        run_op("Activation", [x], [(x.shape, "float32")], **fields)


def test_scale_pointer_must_have_one_element_per_partition(run_op):
    x = np.ones((2, 4), np.float32)
    with pytest.raises(SimulationError, match=r"ins\[1\]: has 4 elements per partition, expected 1"):
        run_op("Activation", [x, x], [(x.shape, "float32")], func="Exp", has_scale_tensor=True)
