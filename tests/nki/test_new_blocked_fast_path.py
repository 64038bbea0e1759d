"""The C path of ``nl.ndarray`` and ``nl.zeros`` with block dimensions (``(2, nl.par_dim(128),
512)``: cpp/python/trace_new_blocked.cpp, through ndarray_fast / zeros_fast): every kernel here
traces to the same module, and refuses what it refuses with the same message, as with the Python
definitions alone (``language.ndarray`` / ``language.zeros`` unwrapped)."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import language
from neuronxsim.nki.tensor import BlockedTensor

from nki_testing import same_outcome, trace_outcome

T = nki.typing.tensor


def _python_only(m):
    """Within monkeypatch context ``m``: nl.ndarray and nl.zeros are their Python definitions."""
    for name in ("ndarray", "zeros"):
        m.setattr(language, name, getattr(language, name).__wrapped__)


def _same(monkeypatch, kernel, *args):
    return same_outcome(monkeypatch, _python_only, kernel, *args)


@nki.jit
def blocked_matmul(lhsT, rhs):
    """Two by two blocks of PSUM tiles accumulating a contraction of two blocks of 128 rows."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in nl.affine_range(M // 256):
        acc = nl.zeros((2, 2, nl.par_dim(128), N // 2), dtype=nl.float32, buffer=nl.psum)
        for kb in nl.sequential_range(K // 256):
            a = nl.ndarray((2, nl.par_dim(128), 256), dtype=lhsT.dtype, buffer=nl.sbuf)
            b = nl.ndarray((2, nl.par_dim(128), N), dtype=rhs.dtype)
            for t in nl.affine_range(2):
                k0 = (kb * 2 + t) * 128
                a[t] = nl.load(lhsT[k0:k0 + 128, mb * 256:(mb + 1) * 256])
                b[t] = nl.load(rhs[k0:k0 + 128, :])
            for i in nl.affine_range(2):
                for j in nl.affine_range(2):
                    for t in nl.affine_range(2):
                        acc[i, j] += nisa.nc_matmul(a[t, :, i * 128:(i + 1) * 128],
                                                    b[t, :, j * (N // 2):(j + 1) * (N // 2)])
        for i in nl.affine_range(2):
            for j in nl.affine_range(2):
                m0, n0 = mb * 256 + i * 128, j * (N // 2)
                nl.store(result[m0:m0 + 128, n0:n0 + N // 2],
                         value=nl.copy(acc[i, j], dtype=result.dtype))
    return result


@pytest.mark.parametrize("dtype", [nl.bfloat16, nl.float32])
def test_blocked_matmul(monkeypatch, dtype):
    out = _same(monkeypatch, blocked_matmul, T[[512, 512], dtype], T[[512, 1024], dtype])
    assert out.startswith("{")


@nki.jit
def odd_blocks(x):
    """Odd block counts and tile sizes, three block dims, blocks read as zeros (their memsets
    kept), negative block indices, SBUF and PSUM, the same shape at two lines."""
    out = nl.ndarray((64, 21), dtype=nl.float32, buffer=nl.shared_hbm)
    for r in nl.affine_range(2):
        z = nl.zeros((3, 1, 2, nl.par_dim(64), 7), dtype=nl.float32, buffer=nl.sbuf)
        w = nl.zeros((3, 1, 2, nl.par_dim(64), 7), dtype=nl.float32)
        p = nl.zeros((3, nl.par_dim(64), 7), dtype=np.float32, buffer=nl.psum)
        s = nl.ndarray((3, nl.par_dim(64), 7), dtype="float32")
        for c in nl.affine_range(3):
            s[c] = nl.load(x[0:64, c * 7:(c + 1) * 7])
            s[c] += z[c, 0, 1]
            s[c - 3] += w[c, 0, 0, :, 0:7]
            s[c] += w[-1, -1, -2]
            s[c] += p[c]
            nl.store(out[0:64, c * 7:(c + 1) * 7], value=s[c])
    return out


def test_odd_blocks(monkeypatch):
    assert _same(monkeypatch, odd_blocks, T[[64, 21], nl.float32]).startswith("{")


@nki.jit
def int_blocks(x):
    """int32 and bfloat16 blocks of one-row tiles, keyword dtype, a named tensor (the definition's)."""
    out = nl.ndarray((1, 8), dtype=nl.int32, buffer=nl.shared_hbm)
    for r in nl.affine_range(3):
        t = nl.ndarray((4, nl.par_dim(1), 8), dtype=nl.int32, buffer=nl.sbuf)
        u = nl.zeros((4, nl.par_dim(1), 8), dtype=nl.bfloat16, name="u")
        for c in nl.affine_range(4):
            t[c] = nl.load(x)
            t[c] += u[c]
        nl.store(out, value=t[3])
    return out


def test_int_blocks(monkeypatch):
    assert _same(monkeypatch, int_blocks, T[[1, 8], nl.int32]).startswith("{")


def _out_of_range(n):
    @nki.jit
    def kernel(x):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        for r in nl.affine_range(2):
            t = nl.ndarray((2, 2, nl.par_dim(128), 8), dtype=nl.float32)
            t[0, 1] = nl.load(x)
            nl.store(out, value=t[n, 1])
        return out
    return kernel


@pytest.mark.parametrize("n", [2, -3, 1.0])
def test_out_of_range_block_index(monkeypatch, n):
    out = _same(monkeypatch, _out_of_range(n), T[[128, 8], nl.float32])
    assert out.startswith(("NKIError", "TypeError")), out


def _refused(shape, **kw):
    @nki.jit
    def kernel(x):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        for r in nl.affine_range(2):
            t = nl.ndarray((2, nl.par_dim(128), 8), dtype=nl.float32)  # (a known spec first)
            t[0] = nl.load(x)
            u = nl.zeros(shape, **kw)
            nl.store(out, value=t[0])
        return u
    return kernel


@pytest.mark.parametrize("shape, kw", [
    ((2, nl.par_dim(128), nl.par_dim(8)), {"dtype": nl.float32}),
    ((2, nl.par_dim(0), 8), {"dtype": nl.float32}),
    ((2, nl.par_dim(256), 8), {"dtype": nl.float32}),
    ((2, nl.par_dim(128), 1024), {"dtype": nl.float32, "buffer": nl.psum}),
    ((2, nl.par_dim(128), 8), {"dtype": "no such dtype"}),
    ((2, nl.par_dim(128), 8), {"dtype": nl.float32, "buffer": "dram"}),
    ((2, nl.par_dim(128), 8), {"dtype": nl.float32, "lazy_initialization": 1}),
    ((2, nl.par_dim(128), 8), {"dtype": nl.float32, "buffer": nl.shared_hbm}),
    ((0, nl.par_dim(128), 8), {"dtype": nl.float32}),
])
def test_refused_shapes(monkeypatch, shape, kw):
    _same(monkeypatch, _refused(shape, **kw), T[[128, 8], nl.float32])


def test_c_path_taken():
    """A shape checked once is made in C the next time: the same BlockedTensor, its make_block the
    C one, its blocks made by it."""
    trace_outcome(blocked_matmul, T[[512, 512], nl.float32], T[[512, 1024], nl.float32])
    made = []

    @nki.jit
    def kernel(x):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.zeros((2, 2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
        made.append(t)
        nl.store(out, value=nl.copy(t[1, 1]))
        return out

    trace_outcome(kernel, T[[128, 512], nl.float32])
    t = made[0]
    assert type(t) is BlockedTensor and t.block_shape == (2, 2) and t.tile_shape == (128, 512)
    assert t.hint == "zeros" and sorted(t.blocks) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert type(t.make_block).__name__ == "builtin_function_or_method"
