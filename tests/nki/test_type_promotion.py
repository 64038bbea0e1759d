"""The 2.2x dialect's result dtypes of arithmetic without ``dtype=``, as NKI publishes them ("NKI
Type Promotion" and "Weakly Typed Scalar Type Inference", nki.api.shared, Neuron 2.26): every
example of those sections that names dtypes this package has (nl.tfloat32 it has not), traced
and run on both executors."""

import ml_dtypes
import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim.nki import dtypes
from nki_testing import close, run_on

bf16 = np.dtype(ml_dtypes.bfloat16)
e4m3 = np.dtype(ml_dtypes.float8_e4m3)
e5m2 = np.dtype(ml_dtypes.float8_e5m2)
f16, f32 = np.dtype(np.float16), np.dtype(np.float32)
EXECUTORS = ["simulator", "reference"]

# (a, b, the documented result), in the docs' order
DOCUMENTED_PAIRS = [
    # (float, integer): "Pick the float type"
    (np.int32, np.float16, np.float16),
    # (float, float): "Pick the wider float type or a new widened type that fits the values range"
    (np.float32, bf16, np.float32),
    (np.float16, bf16, np.float32),
    (e4m3, np.float16, np.float16),
    (e4m3, bf16, bf16),
    (e4m3, e5m2, bf16),
    # (int, int): "Pick the wider type or a new widened type that fits the values range"
    (np.int16, np.int32, np.int32),
    (np.uint8, np.uint16, np.uint16),
    (np.uint16, np.int32, np.int32),
    (np.int8, np.uint8, np.int16),
    (np.int8, np.uint16, np.int32),
    (np.int32, np.uint32, np.float32),
]


@pytest.mark.parametrize("a, b, want", DOCUMENTED_PAIRS)
def test_promote_gives_the_documented_pairs_either_way(a, b, want):
    a, b, want = np.dtype(a), np.dtype(b), np.dtype(want)
    assert dtypes.promote(a, b) == want
    assert dtypes.promote(b, a) == want


def _values(rng, dtype, shape=(16, 32)):
    """Small whole numbers every dtype here holds exactly (fp8 e4m3 and e5m2 included)."""
    low = 0 if np.dtype(dtype).kind == "u" else -4
    return rng.integers(low, 5, shape).astype(dtype)


@nki.jit
def add_tiles(a, b):
    s = nl.add(nl.load(a), nl.load(b))
    out = nl.ndarray(a.shape, dtype=s.dtype, buffer=nl.shared_hbm)
    nl.store(out, s)
    return out


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("a, b, want", [p for p in DOCUMENTED_PAIRS if p[1] is not np.uint32])
def test_nl_add_of_two_tiles_takes_the_promoted_dtype(executor, a, b, want, rng):
    """nl.add's result (stored as it is) has the documented dtype and the exact sums. ((int32,
    uint32) is test_language.py's test_int32_plus_uint32_promotes_to_fp32.)"""
    x, y = _values(rng, a), _values(rng, b)
    got = run_on(executor, add_tiles, x, y)
    assert got.dtype == np.dtype(want)
    close(got, x.astype(np.float64) + y.astype(np.float64), atol=0)


@nki.jit
def int32_times_fp16(a, b):
    s = nl.load(a) * nl.load(b)  # (the operator: its C path)
    assert s.dtype == nl.float16  # "(np.int32, np.float16) -> np.float16"
    out = nl.ndarray(a.shape, dtype=s.dtype, buffer=nl.shared_hbm)
    nl.store(out, s)
    return out


@pytest.mark.parametrize("executor", EXECUTORS)
def test_an_integer_tile_with_a_float_tile_gives_the_float(executor, rng):
    x, y = _values(rng, np.int32), _values(rng, np.float16)
    got = run_on(executor, int32_times_fp16, x, y)
    assert got.dtype == np.float16
    close(got, x * y.astype(np.float64), atol=0)


@nki.jit
def documented_casts(a, b):
    """The section's two code examples: fp8 e4m3 + fp16 "calculation done in FP32, output cast to
    np.float16"; bf16 + fp16 with dtype=bf16 ("without explicit dtype, z.dtype would have been
    np.float32")."""
    x, y = nl.load(a), nl.load(b)
    z = nl.add(nl.copy(x, dtype=nl.float8_e4m3), y)
    assert z.dtype == nl.float16
    w = nl.add(nl.copy(x, dtype=nl.bfloat16), y, dtype=nl.bfloat16)
    assert w.dtype == nl.bfloat16
    out = nl.ndarray((2,) + a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out[0], z)
    nl.store(out[1], w)
    return out


@pytest.mark.parametrize("executor", EXECUTORS)
def test_the_documented_code_examples(executor, rng):
    x, y = _values(rng, np.float16), _values(rng, np.float16)
    got = run_on(executor, documented_casts, x, y)
    close(got, [x + y.astype(np.float32)] * 2, atol=0)


# ---- weakly typed scalars: bool --> uint8, integer --> int32, floating --> float32 ----

def _scalar_kernel(form, scalar, **kw):
    """A kernel storing `tile <op> scalar` (form: how the kernel writes it) with the result's
    dtype."""
    @nki.jit
    def kernel(a):
        x = nl.load(a)
        if form == "nl.add":
            s = nl.add(x, scalar, **kw)
        elif form == "nl.multiply reversed":
            s = nl.multiply(scalar, x, **kw)
        elif form == "+":
            s = x + scalar
        elif form == "* reversed":
            s = scalar * x
        out = nl.ndarray(a.shape, dtype=s.dtype, buffer=nl.shared_hbm)
        nl.store(out, s)
        return out
    return kernel


FORMS = ["nl.add", "nl.multiply reversed", "+", "* reversed"]
# (tile dtype, scalar, kwargs, the result's dtype)
SCALAR_CASES = [
    (np.int8, 2, {}, np.int32),  # "(np.int8, 2) -> np.int32"
    (np.float16, 1.25, {}, np.float32),  # "(np.float16, 1.2) -> np.float32"
    (bf16, 1.25, {}, np.float32),  # (bf16 with float32: the wider)
    (bf16, 2, {}, bf16),  # (int32 with a float: the float)
    (np.float16, np.float16(2), {}, np.float16),  # "Explicitly set the datatype of the scalar"
    (np.int8, np.int8(2), {}, np.int8),  # ("like np.int8(2)")
    (np.int16, 2, {"dtype": nl.bfloat16}, bf16),  # "Explicitly set the output dtype"
    (np.float32, 2, {}, np.float32),
    (np.int32, 1.25, {}, np.float32),
]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("form, tile, scalar, kw, want", [
    (form,) + case for case in SCALAR_CASES for form in FORMS
    if not (case[2] and form in ("+", "* reversed"))])  # (an operator takes no dtype)
def test_a_python_number_is_weakly_typed(executor, form, tile, scalar, kw, want, rng):
    x = _values(rng, tile)
    got = run_on(executor, _scalar_kernel(form, scalar, **kw), x)
    assert got.dtype == np.dtype(want)
    wide = x.astype(np.float64)
    close(got, wide + float(scalar) if "add" in form or form == "+" else wide * float(scalar),
          atol=0)


def test_scalar_dtype_of_each_kind():
    assert dtypes.scalar_dtype(True) == np.uint8  # "bool --> uint8"
    assert dtypes.scalar_dtype(7) == np.int32  # "integer --> int32"
    assert dtypes.scalar_dtype(0.5) == np.float32  # "floating --> float32"
    assert dtypes.scalar_dtype(np.float16(0.5)) == np.float16  # (explicitly typed)
    assert dtypes.scalar_dtype(np.uint16(3)) == np.uint16
    # NumPy scalars of no NKI dtype are taken by kind, as Python's numbers are
    assert dtypes.scalar_dtype(np.float64(0.5)) == np.float32
    assert dtypes.scalar_dtype(np.int64(3)) == np.int32


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("tile, want", [(np.int8, np.int16), (np.uint8, np.uint8), (np.int32, np.int32),
                                        (np.float16, np.float16), (bf16, bf16), (np.float32, np.float32)])
def test_a_python_bool_is_weakly_typed_as_uint8(executor, form, tile, want, rng):
    # "bool --> uint8": a bool combines with a tile as a uint8 would (an int8 tile widens to
    # int16, a float tile keeps its dtype), its value 1 or 0.
    x = _values(rng, tile)
    got = run_on(executor, _scalar_kernel(form, True), x)
    assert got.dtype == np.dtype(want)
    close(got, x.astype(np.float64) + 1 if "add" in form or form == "+" else x.astype(np.float64), atol=0)
    assert dtypes.promote_scalar(np.dtype(tile), False) == np.dtype(want)
