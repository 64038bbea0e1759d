"""The C paths of nl.add / subtract / multiply / divide called as functions, of the tile operators
with a lane-constant operand (``x * rstd``), of nl's activations (nl.exp, nl.rsqrt...) and
reductions (nl.sum, nl.max, nl.min, nl.prod), nisa.bn_stats, bn_aggr and tensor_scalar (FastCalls and
operator methods: cpp/python/trace_accumulate.cpp, cpp/python/trace_lane_fast.cpp): every kernel here
traces to the same module, and refuses what it refuses with the same message, as with the Python
definitions alone."""

import inspect

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import instructions, isa, language, opcodes, tensor
from neuronxsim.nki.opcodes import Act, Alu
from neuronxsim.nki.tensor import Tensor

import tutorial_kernels as tk
from nki_testing import HashRaises, raises_alike, same_outcome, use_definitions

T = nki.typing.tensor

_BINARY = ("add", "subtract", "multiply", "divide")
_ACTIVATIONS = tuple(language._ACTIVATIONS)
_REDUCTIONS = ("sum", "max", "min", "prod")
_OPERATORS = {"__add__": ("add", False), "__radd__": ("add", True),
              "__sub__": ("subtract", False), "__rsub__": ("subtract", True),
              "__mul__": ("multiply", False), "__rmul__": ("multiply", True),
              "__truediv__": ("divide", False), "__rtruediv__": ("divide", True)}


def _python_only(m):
    """Within monkeypatch context ``m``: the functions are their Python definitions, Tensor's
    operator methods too, and the in-place operators find no ALU op for their C shortcut."""
    for name in _BINARY + _ACTIVATIONS + _REDUCTIONS:
        m.setattr(language, name, getattr(language, name).__wrapped__)
    use_definitions(m, isa, ("bn_stats", "bn_aggr", "tensor_scalar", "tensor_tensor",
                            "tensor_tensor_scan"))
    for method, (name, reverse) in _OPERATORS.items():
        m.setattr(Tensor, method, tensor._operator(name, reverse))
    for name in list(language._IN_PLACE_ALU):
        m.delitem(language._IN_PLACE_ALU, name)


def _same(monkeypatch, kernel, *args):
    return same_outcome(monkeypatch, _python_only, kernel, *args)


@nki.jit
def functions(a, b, c, d):
    """Rows crossing a tile boundary (the last tile partial, masked), tiles of one shape, [P, 1]
    and [P] lane constants on either side, numbers, dtypes, masks, PSUM operands."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + 127) // 128):
        valid = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=valid)
        y = nl.load(b[t * 128 + ip, ic], mask=valid)
        h = nl.load(c[t * 128 + ip, ic], mask=valid)  # bfloat16
        i = nl.load(d[t * 128 + ip, ic], mask=valid)  # int32
        col = nl.sum(x, axis=[1], keepdims=True)  # [P, 1]
        vec = nl.max(y, axis=1)  # [P]
        ivec = nl.sum(i, axis=1, dtype=nl.int32)
        s = nl.add(x, y)
        s = nl.subtract(s, y, mask=valid)
        s = nl.multiply(s, col)
        s = nl.multiply(col, s, mask=valid)
        s = nl.divide(s, vec)
        s = nl.divide(vec, s, mask=valid)
        s = nl.subtract(s, 2.0)
        s = nl.add(1, s, mask=valid)
        s = nl.multiply(s, h)  # (float32 with bfloat16: promote)
        s = nl.multiply(h, vec)
        s = nl.divide(i, i)  # (integers divide to float32: Python's)
        s = nl.divide(i, ivec)
        s = nl.divide(ivec, x)
        s = nl.multiply(x, y, dtype=nl.bfloat16)
        s = nl.add(x, col, dtype=nl.float32)
        s = nl.multiply(i, 3)
        s = nl.multiply(i, 0.5, mask=valid)
        s = x * col + col * y - vec / x + x / vec - col
        s = s * h[:, 0:1] + i[:, 0:1] * x  # (a bfloat16 and an int32 column)
        s = nl.add(x[0:1, :], y)  # (a [1, F] row: broadcast)
        ps = nisa.nc_matmul(x[:, 0:128], y)
        s = nl.multiply(ps, col) + ps * vec + nl.add(ps, y, mask=valid)
        z = nl.exp(s)
        z = nl.rsqrt(nl.square(z), mask=valid)
        z = nl.tanh(z, dtype=nl.bfloat16)
        z = nl.sigmoid(ps)
        r = nl.sum(z, axis=1, keepdims=True, mask=valid)
        r = nl.max(z, [1]) + nl.min(z, axis=[1], keepdims=False) + nl.prod(z, axis=1)
        r = nl.sum(i, axis=1, mask=valid)
        nl.store(out[t * 128 + ip, ic], value=s + z + col * r, mask=valid)
    return out


@nki.jit
def bn_stats_kernel(a, cols_fb):
    """bn_stats over chunks with a mask on the last (odd sizes), dtypes given in several ways."""
    rows, cols = a.shape
    out = nl.ndarray((rows, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    i_fb = nl.arange(cols_fb)[None, :]
    i6 = nl.arange(6)[None, :]
    chunks = (cols + cols_fb - 1) // cols_fb
    for t in nl.affine_range((rows + 127) // 128):
        valid = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=valid)
        stats = nl.ndarray((128, 6 * chunks), dtype=np.float32)
        for j in nl.affine_range(chunks):
            stats[ip, j * 6 + i6] = nisa.bn_stats(x[ip, j * cols_fb + i_fb],
                                                  mask=(j * cols_fb + i_fb < cols),
                                                  dtype=np.float32)
        b16 = nisa.bn_stats(x[:, 0:64], dtype=nl.bfloat16)
        plain = nisa.bn_stats(x[:, 0:64])
        named = nisa.bn_stats(x[:, 0:64], dtype="float32", mask=valid)
        mv = nisa.bn_aggr(stats)
        nl.store(out[t * 128 + ip, nl.arange(2)[None, :]],
                 value=mv + nisa.bn_aggr(b16) + nisa.bn_aggr(plain) + nisa.bn_aggr(named),
                 mask=valid)
    return out


@nki.jit
def refusals(a, b, which):
    x = nl.load(a)
    y = nl.load(b)
    col = nl.sum(x, axis=1, keepdims=True)
    if which == "hbm":
        nl.multiply(x, b)
    elif which == "hbm-column":
        nl.multiply(a, col)
    elif which == "partitions":
        nl.add(x[0:64, :], col)
    elif which == "shapes":
        nl.subtract(x, y[:, 0:128], mask=nl.arange(128)[:, None] < 64)
    elif which == "no-tile":
        nl.add(1.0, 2.0)
    elif which == "string":
        nl.multiply(x, "two", mask=nl.arange(128)[:, None] < 64)
    elif which == "bad-mask":
        nl.add(x, col, mask=3)
    elif which == "too-many":
        nl.add(x, y, col)
    elif which == "keyword":
        nl.add(x, y, bogus=1)
    elif which == "exp-hbm":
        nl.exp(a)
    elif which == "exp-keyword":
        nl.exp(x, bogus=1)
    elif which == "exp-bad-mask":
        nl.exp(x, mask="m")
    elif which == "sum-no-axis":
        nl.sum(x)
    elif which == "sum-axis-twice":
        nl.sum(x, 1, axis=1)
    elif which == "sum-bad-axis":
        nl.sum(x, axis=5)
    elif which == "sum-partition-axis":
        nl.max(x, axis=0)
    elif which == "sum-hbm":
        nl.sum(a, axis=1)
    elif which == "bn-hbm":
        nisa.bn_stats(a)
    elif which == "bn-dtype":
        nisa.bn_stats(x, dtype="nope")
    elif which == "bn-unhashable":
        nisa.bn_stats(x, dtype=[1])
    elif which == "bn-too-big":
        nisa.bn_stats(x)  # (512 elements per partition at most)
    elif which == "bn-keyword":
        nisa.bn_stats(x, bogus=1)
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=x)
    return out


@pytest.mark.parametrize("rows, cols", [(128, 128), (260, 128), (200, 300)])
def test_the_c_paths_trace_as_the_python_definitions(monkeypatch, rows, cols):
    args = (T[[rows, cols], nl.float32], T[[rows, cols], nl.float32],
            T[[rows, cols], nl.bfloat16], T[[rows, cols], nl.int32])
    assert not _same(monkeypatch, functions, *args).startswith(("NKIError", "TypeError"))


@pytest.mark.parametrize("rows, cols, fb", [(128, 512, 512), (300, 700, 512), (129, 100, 48)])
def test_bn_stats_traces_as_the_python_definition(monkeypatch, rows, cols, fb):
    assert not _same(monkeypatch, bn_stats_kernel, T[[rows, cols], nl.float32],
                     fb).startswith(("NKIError", "TypeError"))


@pytest.mark.parametrize("which", [
    "hbm", "hbm-column", "partitions", "shapes", "no-tile", "string", "bad-mask", "too-many",
    "keyword", "exp-hbm", "exp-keyword", "exp-bad-mask", "sum-no-axis", "sum-axis-twice",
    "sum-bad-axis", "sum-partition-axis", "sum-hbm", "bn-hbm", "bn-dtype", "bn-unhashable",
    "bn-too-big", "bn-keyword"])
def test_the_c_paths_refuse_as_the_python_definitions(monkeypatch, which):
    outcome = _same(monkeypatch, refusals, T[[128, 1024], nl.float32],
                    T[[128, 1024], nl.float32], which)
    assert outcome.startswith(("NKI", "TypeError")), outcome


def test_when_lanewise_plain_declines(monkeypatch):
    """A lanewise_plain that takes nothing: the builders' general paths, as from Python."""
    monkeypatch.setattr(instructions, "lanewise_plain", lambda *args: NotImplemented)
    _same(monkeypatch, functions, T[[200, 128], nl.float32], T[[200, 128], nl.float32],
          T[[200, 128], nl.bfloat16], T[[200, 128], nl.int32])
    _same(monkeypatch, bn_stats_kernel, T[[300, 700], nl.float32], 512)


@pytest.mark.parametrize("kernel, args", [
    (tk.layernorm_v2, (T[[300, 1100], nl.float32], 1e-5, T[[1100], nl.float32],
                       T[[1100], nl.float32])),
    (tk.layernorm_v1, (T[[300, 200], nl.float32], 1e-5, T[[200], nl.float32],
                       T[[200], nl.float32])),
    (tk.rmsnorm_kernel, (T[[300, 200], nl.float32], T[[200], nl.float32])),
    (tk.rmsnorm_kernel, (T[[256, 64], nl.bfloat16], T[[64], nl.bfloat16])),
    (tk.softmax_kernel, (T[[200, 300], nl.float32],)),
])
def test_tutorial_kernels_trace_as_with_the_python_definitions(monkeypatch, kernel, args):
    assert not _same(monkeypatch, kernel, *args).startswith(("NKIError", "TypeError"))


def test_the_functions_stay_the_definitions():
    """Name, docs, signature and ALU / activation identity are the definitions'."""
    for name in _BINARY + _ACTIVATIONS + _REDUCTIONS:
        fn = getattr(nl, name)
        assert fn.__name__ == fn.__wrapped__.__name__ == name
        assert fn.__doc__ == fn.__wrapped__.__doc__
        assert inspect.signature(fn) == inspect.signature(fn.__wrapped__)
    assert nl.multiply.alu_op is Alu.mult and nl.add.alu_op is Alu.add
    assert nl.sum.alu_op is Alu.add and nl.max.alu_op is Alu.max
    assert nl.rsqrt.act_func is Act.Rsqrt
    assert all(inspect.signature(fn) == inspect.signature(fn.__wrapped__) and fn.__name__ ==
               fn.__wrapped__.__name__ for fn in (isa.bn_stats, isa.bn_aggr, isa.tensor_scalar,
                                                  isa.tensor_tensor, isa.tensor_tensor_scan))


@nki.jit
def as_operations(a):
    """The functions passed as ALU ops and activation functions."""
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nisa.tensor_tensor(x, x, op=nl.multiply)
    y = nisa.tensor_scalar(y, op0=nl.subtract, operand0=1.0, op1=nl.divide, operand1=2.0)
    y = nisa.activation(op=nl.exp, data=y)
    y = nisa.tensor_reduce(nl.add, y, axis=1, keepdims=True)
    nl.store(out, value=nl.add(x, y))
    return out


def test_the_functions_are_the_ops(monkeypatch):
    assert not _same(monkeypatch, as_operations, T[[128, 64], nl.float32]).startswith("NKIError")


def test_which_calls_take_the_c_path(monkeypatch):
    """The common calls skip the definitions (and _binary): counted with them replaced."""
    calls = []

    def counting(name, fn):
        def counted(*args, **kwargs):
            calls.append(name)
            return fn(*args, **kwargs)
        return counted

    monkeypatch.setattr(language, "_binary", counting("_binary", language._binary))

    @nki.jit
    def kernel(a):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)
        col = nl.sum(x, axis=[1])
        y = nl.multiply(x, nl.rsqrt(col))
        y = nl.add(y, x, mask=nl.arange(128)[:, None] < 200)
        y = x * nl.sum(x, axis=1, keepdims=True) - col
        y = nl.divide(y, 3.0)
        nl.store(out, value=y)
        return out

    nki.trace_kernel(kernel, T[[128, 64], nl.float32])
    assert calls == []  # (a dtype makes the definition run)

    @nki.jit
    def with_dtype(a):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)
        nl.store(out, value=nl.add(x, x, dtype=nl.float32))
        return out

    nki.trace_kernel(with_dtype, T[[128, 64], nl.float32])
    assert calls == ["_binary"]


@nki.jit
def mixed_dtypes(a, b):
    """Operators of tiles of one dtype (promote not called: its first rule) and of two (promote's
    answer), tile-by-tile and tile-by-column, as the kernel's Python runs them."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + 127) // 128):
        valid = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=valid)
        y = nl.load(b[t * 128 + ip, ic], mask=valid)
        col = nl.sum(y, axis=1, keepdims=True)
        s = x * y + y * y + x * x - y / x
        s = s * col + col * x - y * col + x / col
        nl.store(out[t * 128 + ip, ic], value=s, mask=valid)
    return out


@pytest.mark.parametrize("da, db", [(nl.float32, nl.bfloat16), (nl.bfloat16, nl.bfloat16),
                                    (nl.float16, nl.bfloat16), (nl.float32, nl.float32)])
def test_operators_of_mixed_dtypes_trace_as_the_python_definitions(monkeypatch, da, db):
    assert not _same(monkeypatch, mixed_dtypes, T[[200, 64], da],
                     T[[200, 64], db]).startswith(("NKIError", "TypeError"))


@nki.jit
def tensor_scalar_kernel(a, b):
    """nisa.tensor_scalar's calls: tile and number operands ([P, 1] and [P] tiles, ints, floats),
    one or two operators (numpy's, nl's, Alu members), reverse flags, positional and keyword
    arguments, dtypes, masks, engines, PSUM data, over a partial last tile (masked)."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + 127) // 128):
        valid = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=valid)
        y = nl.load(b[t * 128 + ip, ic], mask=valid)
        col = nl.sum(x, axis=1, keepdims=True)
        flat = nl.max(y, axis=1)
        s = nisa.tensor_scalar(data=x, op0=np.subtract, operand0=col, op1=np.multiply,
                               operand1=flat)
        s = nisa.tensor_scalar(s, np.add, 2, reverse0=True)
        s = nisa.tensor_scalar(s, nl.multiply, 0.5, False, np.subtract, 3, True)
        s = nisa.tensor_scalar(s, np.multiply, col, op1=np.add, operand1=1.5)
        s = nisa.tensor_scalar(s, np.add, 1.0, op1=np.multiply, operand1=col)
        s = nisa.tensor_scalar(s, Alu.add, 1.0)
        s = nisa.tensor_scalar(s, np.maximum, 0.0, dtype=nl.bfloat16)
        s = nisa.tensor_scalar(s, np.minimum, col, mask=valid)
        s = nisa.tensor_scalar(s, np.add, 1.0, engine=nisa.vector_engine)
        s = nisa.tensor_scalar(s, np.add, 1.0, engine=nisa.unknown_engine, op1=None,
                               operand1=None)
        s = nisa.tensor_scalar(s, np.multiply, np.float32(2.0))
        s = nisa.tensor_scalar(s, np.multiply, True)
        s = nisa.tensor_scalar(s, np.add, 1.0, reverse0=1)
        h = nisa.tensor_scalar(s[0:64, :], np.add, col[0:64, :])
        p = nl.matmul(x[:, 0:128], y[:, 0:128], transpose_x=True)
        q = nisa.tensor_scalar(p, np.multiply, 2.0)
        nl.store(out[t * 128 + ip, ic], value=s + q[:, 0:1] + h[0:1, 0:1], mask=valid)
    return out


@pytest.mark.parametrize("rows", [128, 200, 300])
def test_tensor_scalar_traces_as_the_python_definition(monkeypatch, rows):
    assert not _same(monkeypatch, tensor_scalar_kernel, T[[rows, 128], nl.float32],
                     T[[rows, 128], nl.float32]).startswith(("NKIError", "TypeError"))


@nki.jit
def tensor_scalar_refusals(a, which):
    x = nl.load(a)
    col = nl.sum(x, axis=1, keepdims=True)
    nisa.tensor_scalar(x, np.add, 1.0)  # (np.add remembered: the C path's from here)
    if which == "op1-without-operand1":
        nisa.tensor_scalar(x, np.add, 1.0, op1=np.multiply)
    elif which == "operand1-without-op1":
        nisa.tensor_scalar(x, np.add, 1.0, operand1=2.0)
    elif which == "not-alu":
        nisa.tensor_scalar(x, len, 1.0)
    elif which == "hbm-data":
        nisa.tensor_scalar(a, np.add, 1.0)
    elif which == "hbm-operand":
        nisa.tensor_scalar(x, np.add, a)
    elif which == "bitvec-float":
        nisa.tensor_scalar(x, np.bitwise_and, 1)
    elif which == "partitions":
        nisa.tensor_scalar(x, np.add, col[0:64, :])
    elif which == "wide-operand":
        nisa.tensor_scalar(x, np.add, x)
    elif which == "string":
        nisa.tensor_scalar(x, np.add, "two")
    elif which == "huge-int":
        nisa.tensor_scalar(x, np.add, 10 ** 400)
    elif which == "keyword":
        nisa.tensor_scalar(x, np.add, 1.0, bogus=1)
    elif which == "positional":
        nisa.tensor_scalar(x, np.add, 1.0, False, None, None, False, None)
    elif which == "twice":
        nisa.tensor_scalar(x, np.add, 1.0, op0=np.add)
    elif which == "missing":
        nisa.tensor_scalar(x, np.add)
    elif which == "engine":
        nisa.tensor_scalar(x, np.add, 1.0, engine=nisa.tensor_engine)
    elif which == "bad-mask":
        nisa.tensor_scalar(x, np.add, 1.0, mask="m")
    elif which == "bad-dtype":
        nisa.tensor_scalar(x, np.add, 1.0, dtype="nope")
    elif which == "hash-raises":
        nisa.tensor_scalar(x, HashRaises(), 1.0)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=x)
    return out


@pytest.mark.parametrize("which", [
    "op1-without-operand1", "operand1-without-op1", "not-alu", "hbm-data", "hbm-operand",
    "bitvec-float", "partitions", "wide-operand", "string", "keyword", "positional", "twice",
    "missing", "engine", "bad-mask", "bad-dtype", "hash-raises"])
def test_tensor_scalar_refuses_as_the_python_definition(monkeypatch, which):
    _same(monkeypatch, tensor_scalar_refusals, T[[128, 512], nl.float32], which)


def test_tensor_scalar_huge_int_raises_as_from_python(monkeypatch):
    """(An OverflowError, which trace_outcome does not compare: raised by both, the builder's.)"""
    raises_alike(monkeypatch, _python_only, OverflowError, tensor_scalar_refusals, T[[128, 512], nl.float32], "huge-int")


@nki.jit
def tensor_tensor_kernel(a, b):
    """nisa.tensor_tensor's calls: tiles of one shape and of two (a broadcast row), numpy's, nl's
    and Alu operators, positional and keyword arguments, dtypes, masks, engines, pow (its engine
    by the operands' memories), bitvec ops, PSUM operands; and nisa.tensor_tensor_scan's: number
    and [P, 1] tile initial values, reverse flags, dtypes, masks, a PSUM operand; over a partial
    last tile (masked)."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    row = nl.load(b[0:1, :])
    for t in nl.affine_range((rows + 127) // 128):
        valid = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=valid)
        y = nl.load(b[t * 128 + ip, ic], mask=valid)
        s = nisa.tensor_tensor(x, y, op=nl.multiply)
        s = nisa.tensor_tensor(s, y, np.add)
        s = nisa.tensor_tensor(data1=s, data2=x, op=np.subtract)
        s = nisa.tensor_tensor(s, row.broadcast_to((128, cols)), op=nl.multiply)
        s = nisa.tensor_tensor(s, x, op=Alu.max)
        s = nisa.tensor_tensor(s, y, op=np.maximum, dtype=nl.bfloat16)
        s = nisa.tensor_tensor(s, x, op=np.add, mask=valid)
        s = nisa.tensor_tensor(s, x, op=np.add, engine=nisa.vector_engine)
        s = nisa.tensor_tensor(s, x, op=np.add, engine=nisa.unknown_engine)
        s = nisa.tensor_tensor(s, y, op=np.power)
        s = nisa.tensor_tensor(s[0:64, :], y[0:64, :], op=np.divide)
        xi = nl.copy(x, dtype=nl.int32)
        i = nisa.tensor_tensor(xi, xi, op=np.bitwise_and)
        p = nl.matmul(x[:, 0:128], y[:, 0:128], transpose_x=True)
        q = nisa.tensor_tensor(p, x[:, 0:128], op=np.multiply)
        r = nisa.tensor_tensor(p, x[:, 0:128], op=np.power)
        col = nl.sum(x, axis=1, keepdims=True)
        c = nisa.tensor_tensor_scan(x, y, initial=0, op0=np.multiply, op1=np.add)
        c = nisa.tensor_tensor_scan(c, y, col, nl.multiply, nl.add)
        c = nisa.tensor_tensor_scan(data0=c, data1=x, initial=1.0, op0=Alu.mult, op1=Alu.add,
                                    reverse0=False, reverse1=False)
        c = nisa.tensor_tensor_scan(c, y, 0, np.add, np.multiply, reverse0=True)
        c = nisa.tensor_tensor_scan(c, y, 0, np.multiply, np.add, dtype=nl.bfloat16)
        c = nisa.tensor_tensor_scan(c, x, 0, np.multiply, np.add, mask=valid)
        c = nisa.tensor_tensor_scan(p, x[:, 0:128], 0.0, np.multiply, np.add)
        nl.store(out[t * 128 + ip, ic], value=x + s[0:1, 0:1] + q[:, 0:1] + r[:, 0:1] + i[:, 0:1] +
                 c[:, 0:1], mask=valid)
    return out


@pytest.mark.parametrize("rows", [128, 200, 300])
def test_tensor_tensor_and_scan_trace_as_the_python_definitions(monkeypatch, rows):
    assert not _same(monkeypatch, tensor_tensor_kernel, T[[rows, 128], nl.float32],
                     T[[rows, 128], nl.float32]).startswith(("NKIError", "TypeError"))


@nki.jit
def tensor_tensor_refusals(a, which):
    x = nl.load(a)
    nisa.tensor_tensor(x, x, op=np.add)  # (np.add remembered: the C path's from here)
    if which == "not-alu":
        nisa.tensor_tensor(x, x, op=len)
    elif which == "hbm":
        nisa.tensor_tensor(x, a, op=np.add)
    elif which == "number":
        nisa.tensor_tensor(x, 2.0, op=np.add)
    elif which == "shapes":
        nisa.tensor_tensor(x, x[0:64, :], op=np.add)
    elif which == "keyword":
        nisa.tensor_tensor(x, x, op=np.add, bogus=1)
    elif which == "positional":
        nisa.tensor_tensor(x, x, np.add, None)
    elif which == "twice":
        nisa.tensor_tensor(x, x, np.add, op=np.add)
    elif which == "missing":
        nisa.tensor_tensor(x, x)
    elif which == "engine":
        nisa.tensor_tensor(x, x, op=np.add, engine=nisa.tensor_engine)
    elif which == "bad-mask":
        nisa.tensor_tensor(x, x, op=np.add, mask="m")
    elif which == "bad-dtype":
        nisa.tensor_tensor(x, x, op=np.add, dtype="nope")
    elif which == "bitvec-float":
        nisa.tensor_tensor(x, x, op=np.bitwise_and)
    elif which == "hash-raises":
        nisa.tensor_tensor(x, x, op=HashRaises())
    elif which == "two-psum":
        p = nl.matmul(x[:, 0:128], x[:, 0:128], transpose_x=True)
        nisa.tensor_tensor(p, p, op=np.multiply)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=x)
    return out


@nki.jit
def scan_refusals(a, which):
    x = nl.load(a)
    nisa.tensor_tensor_scan(x, x, 0, np.multiply, np.add)  # (the ops remembered: the C path's)
    if which == "not-alu":
        nisa.tensor_tensor_scan(x, x, 0, len, np.add)
    elif which == "hbm":
        nisa.tensor_tensor_scan(x, a, 0, np.multiply, np.add)
    elif which == "number":
        nisa.tensor_tensor_scan(2.0, x, 0, np.multiply, np.add)
    elif which == "reverse":
        nisa.tensor_tensor_scan(x, x, 0, np.subtract, np.add, reverse0=True)
    elif which == "initial":
        nisa.tensor_tensor_scan(x, x, "zero", np.multiply, np.add)
    elif which == "shapes":
        nisa.tensor_tensor_scan(x, x[0:64, :], 0, np.multiply, np.add)
    elif which == "keyword":
        nisa.tensor_tensor_scan(x, x, 0, np.multiply, np.add, bogus=1)
    elif which == "missing":
        nisa.tensor_tensor_scan(x, x, 0, np.multiply)
    elif which == "bad-dtype":
        nisa.tensor_tensor_scan(x, x, 0, np.multiply, np.add, dtype="nope")
    elif which == "hash-raises":
        nisa.tensor_tensor_scan(x, x, 0, np.multiply, HashRaises())
    elif which == "cut-mask":
        nisa.tensor_tensor_scan(x, x, 0, np.multiply, np.add,
                                mask=nl.arange(512)[None, :] < 100)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=x)
    return out


@pytest.mark.parametrize("which", [
    "not-alu", "hbm", "number", "reverse", "initial", "shapes", "keyword", "missing", "bad-dtype",
    "cut-mask", "hash-raises"])
def test_tensor_tensor_scan_refuses_as_the_python_definition(monkeypatch, which):
    _same(monkeypatch, scan_refusals, T[[128, 512], nl.float32], which)


def test_which_scans_take_the_c_path(monkeypatch):
    """nisa.tensor_tensor_scan's usual call skips its definition (which asks alu_op)."""
    asked = []
    monkeypatch.setattr(isa, "alu_op", lambda *args: asked.append(args[0]) or opcodes.alu_op(*args))

    @nki.jit
    def kernel(a, reverse):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)
        nl.store(out, value=nisa.tensor_tensor_scan(x, x, 0, np.multiply, np.add, reverse1=reverse))
        return out

    nki.trace_kernel(kernel, T[[128, 64], nl.float32], False)  # (alu_op remembers the ops)
    asked.clear()
    nki.trace_kernel(kernel, T[[128, 64], nl.float32], False)
    assert asked == []
    nki.trace_kernel(kernel, T[[128, 64], nl.float32], True)
    assert asked == [np.multiply, np.add]


def test_which_tensor_tensor_calls_take_the_c_path(monkeypatch):
    """nisa.tensor_tensor's usual call skips its definition (and the builder it calls)."""
    calls = []
    builder = instructions.tensor_tensor

    def counted(*args, **kwargs):
        calls.append(kwargs.get("engine"))
        return builder(*args, **kwargs)

    monkeypatch.setattr(instructions, "tensor_tensor", counted)

    @nki.jit
    def kernel(a, with_dtype):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)
        y = nisa.tensor_tensor(x, x, op=nl.multiply, dtype=nl.float32 if with_dtype else None)
        nl.store(out, value=nisa.tensor_tensor(y, x, np.add))
        return out

    nki.trace_kernel(kernel, T[[128, 64], nl.float32], False)  # (alu_op remembers the ops)
    calls.clear()
    nki.trace_kernel(kernel, T[[128, 64], nl.float32], False)
    assert calls == []
    nki.trace_kernel(kernel, T[[128, 64], nl.float32], True)
    assert len(calls) == 1


@pytest.mark.parametrize("which", [
    "not-alu", "hbm", "number", "shapes", "keyword", "positional", "twice", "missing", "engine",
    "bad-mask", "bad-dtype", "bitvec-float", "two-psum", "hash-raises"])
def test_tensor_tensor_refuses_as_the_python_definition(monkeypatch, which):
    _same(monkeypatch, tensor_tensor_refusals, T[[128, 512], nl.float32], which)


@nki.jit
def bn_aggr_kernel(a):
    """bn_aggr of bn_stats records over a partial last tile (masked): whole tiles, slices, dtypes
    given in several ways, masks that keep the tile and masks that cut it."""
    rows, cols = a.shape
    out = nl.ndarray((rows, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    for t in nl.affine_range((rows + 127) // 128):
        valid = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=valid)
        stats = nl.ndarray((128, 12), dtype=np.float32)
        stats[ip, nl.arange(6)[None, :]] = nisa.bn_stats(x[:, 0:64], mask=valid)
        stats[ip, 6 + nl.arange(6)[None, :]] = nisa.bn_stats(x[:, 64:128])
        b16 = nisa.bn_stats(x[:, 0:64], dtype=nl.bfloat16)
        mv = nisa.bn_aggr(stats) + nisa.bn_aggr(stats[:, 0:6], mask=valid)
        m16 = nisa.bn_aggr(b16, dtype=nl.float32) + nisa.bn_aggr(b16)
        mb = nisa.bn_aggr(stats, dtype="bfloat16") + nisa.bn_aggr(stats, mask=(ip + 0 < 64))
        nl.store(out[t * 128 + ip, nl.arange(2)[None, :]], value=mv + m16 + mb, mask=valid)
    return out


@pytest.mark.parametrize("rows", [128, 200, 300])
def test_bn_aggr_traces_as_the_python_definition(monkeypatch, rows):
    assert not _same(monkeypatch, bn_aggr_kernel,
                     T[[rows, 128], nl.float32]).startswith(("NKIError", "TypeError"))


@nki.jit
def bn_aggr_refusals(a, which):
    x = nl.load(a)
    if which == "hbm":
        nisa.bn_aggr(a)
    elif which == "records":  # (not a whole number of records per partition)
        nisa.bn_aggr(x[:, 0:7])
    elif which == "1d":
        nisa.bn_aggr(nl.sum(x, axis=1))
    elif which == "dtype":
        nisa.bn_aggr(x[:, 0:6], dtype="nope")
    elif which == "unhashable":
        nisa.bn_aggr(x[:, 0:6], dtype=[1])
    elif which == "hash-raises":
        nisa.bn_aggr(x[:, 0:6], dtype=HashRaises())
    elif which == "keyword":
        nisa.bn_aggr(x[:, 0:6], bogus=1)
    elif which == "positional":
        nisa.bn_aggr(x[:, 0:6], None)
    elif which == "bad-mask":
        nisa.bn_aggr(x[:, 0:6], mask="m")
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=x)
    return out


@pytest.mark.parametrize("which", ["hbm", "records", "1d", "dtype", "unhashable", "keyword",
                                   "positional", "bad-mask", "hash-raises"])
def test_bn_aggr_refuses_as_the_python_definition(monkeypatch, which):
    outcome = _same(monkeypatch, bn_aggr_refusals, T[[128, 512], nl.float32], which)
    assert outcome.startswith(("NKI", "TypeError", "ValueError: this object refuses")), outcome
