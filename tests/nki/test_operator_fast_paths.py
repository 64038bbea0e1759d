"""The C paths of ``x + y``, ``x - y``, ``x * y``, ``x / y`` and their reversed forms (Tensor's
operator methods, cpp/python/trace_accumulate.cpp): every kernel here traces to the same module,
and refuses what it refuses with the same message, as with the Python definitions alone
(``tensor._operator``'s methods, calling ``language._apply_operator``)."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import instructions, language, tensor
from neuronxsim.nki.tensor import Tensor

import tutorial_kernels as tk
from nki_testing import same_outcome

T = nki.typing.tensor

_OPERATORS = {"__add__": ("add", False), "__radd__": ("add", True),
              "__sub__": ("subtract", False), "__rsub__": ("subtract", True),
              "__mul__": ("multiply", False), "__rmul__": ("multiply", True),
              "__truediv__": ("divide", False), "__rtruediv__": ("divide", True)}


def _python_only(m):
    """Within monkeypatch context ``m``: Tensor's operator methods are the Python definitions
    (``tensor._operator``), and the in-place operators find no ALU op for their C shortcut."""
    for method, (name, reverse) in _OPERATORS.items():
        m.setattr(Tensor, method, tensor._operator(name, reverse))
    for name in list(language._IN_PLACE_ALU):
        m.delitem(language._IN_PLACE_ALU, name)


def _same_with_and_without(monkeypatch, kernel, args):
    return same_outcome(monkeypatch, _python_only, kernel, *args)


@nki.jit
def operators(a, b, c, d):
    """Operators of tiles of one shape (float32, bfloat16, int32), broadcast rows and columns,
    numbers on either side, PSUM operands, comparisons, and the nl functions with masks and
    dtypes."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    h = nl.load(c)  # bfloat16
    i = nl.load(d)  # int32
    s = x + y
    s = s - y
    s = s * y
    s = s / y
    s = s * h  # (float32 with bfloat16: promote)
    s = h / s
    s = h * h
    f = i + i
    f = f * i
    f = i / i  # (integers divide to float32: Python's)
    g = i / h  # (one float: the C path)
    g = h / i
    r = y[0:1, :] * x  # (a [1, F] row: broadcast)
    r = x - y[0:1, :]
    col = nl.sum(x, axis=1, keepdims=True)
    r = x - col  # ([P, 1] column: tensor_scalar)
    r = col / x
    r = 2.0 - x
    r = 1.0 / x
    r = x * 3
    r = 3 + x
    r = i * 2.5
    r = h * 0.5
    r = 7 / h
    r = i - 1
    ps = nisa.nc_matmul(x[:, 0:128], y)
    r = ps * y
    r = y + ps
    cmp = x < y
    cmp = x == y
    m = nl.multiply(x, y)
    m = nl.multiply(x, y, dtype=nl.bfloat16)
    m = nl.add(x, y, mask=nl.arange(128)[:, None] < 64)
    m = nl.divide(i, i)
    half = x[:, 0:256] * y[:, 256:512]
    nl.store(out, value=s + g + r + m + nl.copy(f) + nl.copy(cmp) + nl.copy(half)[0:1, 0:1])
    return out


@nki.jit
def refusals(a, b, c, d, which):
    x = nl.load(a)
    y = nl.load(b)
    if which == "hbm-right":
        x * b
    elif which == "hbm-left":
        a - y
    elif which == "hbm-both":
        a / b
    elif which == "shapes":
        x + y[:, 0:128]
    elif which == "unwritten":
        u = nl.ndarray((128, 512), dtype=nl.float32)
        u * y
    elif which == "string":
        x * "two"
    elif which == "string-reversed":
        "two" - x
    elif which == "bytes":
        x * b"2"
    elif which == "hbm-number":
        2.0 * a
    elif which == "partitions":
        x + y[0:64, :]
    elif which == "psum-both":
        ps = nisa.nc_matmul(x[:, 0:128], y)
        ps - ps


ARGS = (T[[128, 512], nl.float32], T[[128, 512], nl.float32], T[[128, 512], nl.bfloat16],
        T[[128, 512], nl.int32])


def test_the_c_paths_trace_as_the_python_definitions(monkeypatch):
    assert not _same_with_and_without(monkeypatch, operators, ARGS).startswith("NKIError")


@pytest.mark.parametrize("which", ["hbm-right", "hbm-left", "hbm-both", "shapes", "unwritten",
                                   "string", "string-reversed", "partitions", "bytes", "hbm-number",
                                   "psum-both"])
def test_the_c_paths_refuse_as_the_python_definitions(monkeypatch, which):
    outcome = _same_with_and_without(monkeypatch, refusals, ARGS + (which,))
    assert outcome.startswith("NKIError") and "test_operator_fast_paths.py" in outcome, outcome
    assert "returns" not in outcome, outcome  # (refused at the operator's line)


def test_when_lanewise_plain_declines(monkeypatch):
    """A lanewise_plain that takes nothing: the C path goes on as tensor_tensor does."""
    monkeypatch.setattr(instructions, "lanewise_plain", lambda *args: NotImplemented)
    _same_with_and_without(monkeypatch, operators, ARGS)


def test_when_lanewise_plain_makes_but_does_not_record(monkeypatch):
    """A lanewise_plain that makes the new result but leaves its recording to the general path
    (as when write_plain does not take it): the C path goes on with that result."""
    def made(tr, opcode, engine, shape, tiles, pointers, out, out_shape, dtype, what, fields,
             loc):
        if out is not None:
            return NotImplemented
        return (tr.new_result(language.SBUF, dtype, out_shape, what, loc),)

    monkeypatch.setattr(instructions, "lanewise_plain", made)
    _same_with_and_without(monkeypatch, operators, ARGS)


@pytest.mark.parametrize("kernel, args", [
    (tk.matmul_tiled, (T[[256, 256], nl.bfloat16], T[[256, 1024], nl.bfloat16])),
    (tk.mamba_v1, (T[[1, 256, 128], nl.float32], T[[1, 256, 128], nl.float32],
                   T[[256, 4], nl.float32], T[[1, 4, 128], nl.float32],
                   T[[1, 4, 128], nl.float32])),
])
def test_tutorial_kernels_trace_as_with_the_python_definitions(monkeypatch, kernel, args):
    _same_with_and_without(monkeypatch, kernel, args)


def test_which_operators_take_the_c_path(monkeypatch):
    """Only tiles of one shape, both on chip, with a division of floats, and a float tile with an
    int or a float, skip _apply_operator."""
    calls = []
    apply = language._apply_operator

    def counted(x, y, name, loc):
        calls.append((name, x.shape if isinstance(x, Tensor) else x,
                      y.shape if isinstance(y, Tensor) else y))
        return apply(x, y, name, loc)

    @nki.jit
    def kernel(a, b, d):
        x = nl.load(a)
        y = nl.load(b)
        i = nl.load(d)
        x + y
        y - x
        x * y
        x / y
        i / i
        i / x
        x[0:1, :] * y
        2.0 - x
        x / 3
        i * 2
        i / 2.0
        x * np.float32(2.0)
        x < y
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=x)
        return out

    monkeypatch.setattr(language, "_apply_operator", counted)
    nki.trace_kernel(kernel, ARGS[0], ARGS[1], ARGS[3])
    assert calls == [("divide", (128, 512), (128, 512)), ("multiply", (1, 512), (128, 512)),
                     ("multiply", (128, 512), 2), ("divide", (128, 512), 2.0),
                     ("multiply", (128, 512), np.float32(2.0)), ("less", (128, 512), (128, 512))], calls


@nki.jit
def bool_operands(a, d):
    """A Python bool is a weakly typed scalar, "bool --> uint8" (the C paths take no bool: the
    Python definitions decide)."""
    x = nl.load(a)
    i = nl.load(d)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    r = x * True
    r = False - r
    j = i + True
    k = True / i
    nl.store(out, value=r + nl.copy(j, dtype=nl.float32) + k)
    return out


def test_a_bool_operand_traces_as_with_the_python_definitions(monkeypatch):
    assert not _same_with_and_without(monkeypatch, bool_operands, (ARGS[0], ARGS[3])).startswith("NKIError")
