"""The C path of a tile broadcast (cpp/python/trace_broadcast.cpp: ``language._broadcast_row``
and Tensor.broadcast_to's C method): every kernel here traces to the same module, and refuses
what it refuses with the same message, as with the Python definitions alone
(``language._broadcast_tile`` and ``_partition_broadcast``, the Python method of tensor.py)."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import instructions, language
from neuronxsim.nki.tensor import Tensor
from neuronxsim.nki.tracer import Tracer

import tutorial_kernels as tk
from nki_testing import close, run_on, same_outcome

T = nki.typing.tensor


def _python_only(m):
    """Within monkeypatch context ``m``: the broadcast's C path declines everything and
    Tensor.broadcast_to is its Python method."""
    m.setattr(language, "_broadcast_row", lambda tr, x, shape, loc: NotImplemented)
    m.setattr(Tensor, "broadcast_to", language._tensor_broadcast_to)


def _same(monkeypatch, kernel, *args):
    return same_outcome(monkeypatch, _python_only, kernel, *args)


@nki.jit
def rows(a, h, i, a3, width, parts):
    """[1, F] rows of ``width`` columns broadcast to ``parts`` partitions in every way a kernel
    writes it: the method, nl.broadcast_to, an operator's one-partition operand; offset rows,
    strided rows, a [P] and a [P, 1] column, a 3-D tile, the same shape."""
    out = nl.ndarray((parts, width), dtype=nl.float32, buffer=nl.shared_hbm)
    out3 = nl.ndarray((parts, 2, 4), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a[0:parts, 0:width])  # float32
    b = nl.load(h[0:parts, 0:width])  # bfloat16
    n = nl.load(i[0:parts, 0:width])  # int32 (not a PE dtype: a cast first)
    s = x[0:1, :].broadcast_to((parts, width))
    s = s + nl.broadcast_to(x[0:1, :], shape=(parts, width))
    s = s + b[0:1, :].broadcast_to((parts, width))
    s = s + n[0:1, :].broadcast_to((parts, width))
    s = s + x * b[0:1, :]  # (an operator's one-partition operand)
    s = s + x[0:1, :].broadcast_to([parts, width])  # (a list)
    s = s + x[0:1, :].broadcast_to((np.int64(parts), width))  # (not exact ints)
    s = s + x[0:1, :].broadcast_to(shape=(parts, width))  # (a keyword)
    if parts > 64:
        s = s + x[64:65, :].broadcast_to((parts, width))  # (offset by partitions)
    if width > 3:
        half = width // 2
        s[:, 0:half] = s[:, 0:half] + x[0:1, 1:half + 1].broadcast_to((parts, half))  # (offset)
        s[:, 0:half] = s[:, 0:half] + x[0:1, 0:2 * half:2].broadcast_to((parts, half))  # (strided)
    for j in nl.affine_range(2 if parts > 32 else 1):  # (a row picked by a loop index)
        s = s + x[32 * j:32 * j + 1, :].broadcast_to((parts, width))
    col = nl.sum(x, axis=1, keepdims=True)
    s = s + col.broadcast_to((parts, width))  # ([P, 1]: a copy along the free dimension)
    s = s + nl.sum(x, axis=1).broadcast_to((parts, width))  # ([P])
    s = s + x[0:1, 0:1].broadcast_to((parts, width))  # ([1, 1]: a copy, then the partitions)
    s = s + x.broadcast_to((parts, width))  # (the same shape: the tile itself)
    t3 = nl.load(a3).broadcast_to((parts, 2, 4))  # (3-D: Python's)
    nl.store(out3, value=t3)
    nl.store(out, value=s)
    return out, out3


def _args(width, parts):
    return (T[[parts, max(width, 4)], nl.float32], T[[parts, max(width, 4)], nl.bfloat16],
            T[[parts, max(width, 4)], nl.int32], T[[1, 2, 4], nl.float32], width, parts)


@pytest.mark.parametrize("width", [1, 7, 512, 513, 1100])
@pytest.mark.parametrize("parts", [3, 128])
def test_rows_trace_as_with_the_python_definitions(monkeypatch, width, parts):
    assert not _same(monkeypatch, rows, *_args(width, parts)).startswith(("NKIError", "TypeError"))


@nki.jit
def refusals(a, which):
    x = nl.load(a)
    if which == "partitions":
        x[0:1, :].broadcast_to((129, 512))
    elif which == "shape":
        x[0:1, :].broadcast_to((128, 256))
    elif which == "rank":
        x[0:1, :].broadcast_to((128, 1, 512))
    elif which == "rows":
        x[0:2, :].broadcast_to((128, 512))
    elif which == "hbm":
        a[0:1, :].broadcast_to((128, 512))
    elif which == "function-hbm":
        nl.broadcast_to(a[0:1, :], shape=(128, 512))
    elif which == "not-a-shape":
        x[0:1, :].broadcast_to(128)
    elif which == "arguments":
        x[0:1, :].broadcast_to((128, 512), 1)
    elif which == "no-shape":
        x[0:1, :].broadcast_to()
    elif which == "keyword":
        x[0:1, :].broadcast_to(size=(128, 512))
    elif which == "zero-width":
        x[0:1, 0:0].broadcast_to((128, 0))
    elif which == "moving-partition":  # (the PE reads one partition from 0, 32, 64 or 96)
        x[2:3, :].broadcast_to((128, 512))
    elif which == "psum":  # (the PE reads SBUF)
        ps = nisa.nc_matmul(nl.full((1, 1), 1.0, dtype=nl.float32), x[0:1, :])
        ps.broadcast_to((128, 512))
    elif which == "out-of-range":  # (a slice past the tile: its bound check)
        x[0:1, 0:520].broadcast_to((128, 520))
    elif which == "unwritten":
        u = nl.ndarray((1, 512), dtype=nl.float32)
        u.broadcast_to((128, 512))


@pytest.mark.parametrize("which", ["partitions", "shape", "rank", "rows", "hbm", "function-hbm",
                                   "not-a-shape", "arguments", "no-shape", "keyword",
                                   "zero-width", "moving-partition", "psum", "out-of-range",
                                   "unwritten"])
def test_refusals_as_with_the_python_definitions(monkeypatch, which):
    outcome = _same(monkeypatch, refusals, T[[128, 512], nl.float32], which)
    assert outcome.startswith(("NKIError", "TypeError")), outcome
    if outcome.startswith("NKIError"):
        assert "test_broadcast_fast_path.py" in outcome, outcome  # (at the kernel's line)
    if which == "out-of-range":
        assert "out-of-range access" in outcome, outcome


def test_tutorial_kernels_trace_as_with_the_python_definitions(monkeypatch):
    _same(monkeypatch, tk.mamba_v1, T[[1, 256, 128], nl.float32], T[[1, 256, 128], nl.float32],
          T[[256, 4], nl.float32], T[[1, 4, 128], nl.float32], T[[1, 4, 128], nl.float32])


def test_when_the_builders_decline(monkeypatch):
    """matmul_plain, lanewise_plain and write_plain taking nothing: the C path goes on with
    matmul, tensor_copy and memset, as the Python definitions do."""
    monkeypatch.setattr(instructions, "matmul_plain", lambda *args: NotImplemented)
    monkeypatch.setattr(instructions, "lanewise_plain", lambda *args: NotImplemented)
    monkeypatch.setattr(Tracer, "write_plain", staticmethod(lambda *args: None))
    _same(monkeypatch, rows, *_args(513, 128))


def test_the_common_case_takes_the_c_path(monkeypatch):
    """A contiguous [1, F] row of a PE dtype to [P, F], by the method, nl.broadcast_to or an
    operator, never reaches _partition_broadcast; a [P, 1] column and an int32 row do."""
    calls = []

    def counted(tr, x, shape, loc):
        calls.append((x.shape, x.dtype, shape))
        return partition(tr, x, shape, loc)

    partition = language._partition_broadcast
    monkeypatch.setattr(language, "_partition_broadcast", counted)

    @nki.jit
    def kernel(a, i):
        x = nl.load(a)
        n = nl.load(i)
        s = x[0:1, :].broadcast_to((128, 1024))
        s = s + nl.broadcast_to(x[32:33, :], shape=(128, 1024))
        s = s + x * x[64:65, :]
        s = s + n[0:1, :].broadcast_to((128, 1024))  # (int32: Python)
        s = s + nl.sum(x, axis=1, keepdims=True).broadcast_to((128, 1024))  # (a column)
        out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=s)
        return out

    nki.trace_kernel(kernel, T[[128, 1024], nl.float32], T[[128, 1024], nl.int32])
    assert calls == [((1, 1024), nl.int32, (128, 1024))]  # (the int32 row: cast there)
    calls.clear()
    with pytest.raises(nki.errors.NKIError):  # (a row with a deferred bound check: Python's)
        nki.trace_kernel(refusals, T[[128, 512], nl.float32], "out-of-range")
    assert calls == [((1, 520), nl.float32, (128, 520))]


def test_broadcast_rows_simulate():
    """The C path's records run on the simulator to NumPy's broadcast."""
    @nki.jit
    def kernel(a):
        x = nl.load(a)
        s = x[32:33, :].broadcast_to((128, 600)) + x * x[0:1, :]
        out = nl.ndarray((128, 600), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=s)
        return out

    a = np.random.default_rng(7).standard_normal((128, 600)).astype(np.float32)
    close(run_on("simulator", kernel, a), a[32:33, :] + a * a[0:1, :], atol=1e-5, rtol=1e-5)
