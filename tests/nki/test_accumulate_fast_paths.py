"""The C paths of ``acc += matmul`` (Tracer.place_matmul, cpp/python/trace_assign.cpp), of
``t op= x`` of two on-chip tiles (the in-place operators, cpp/python/trace_accumulate.cpp) and of
``nl.zeros``' memset (Tracer.zero_fill, cpp/python/trace_tracer_methods.cpp): every kernel here
traces to the same module, and refuses what it refuses with the same message, as with the Python
definitions alone (``_place_matmul_general``; ``language._accumulate_general`` for every in-place
operator place_matmul does not take; ``_zero_fill_general``)."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import language
from neuronxsim.nki.tracer import Tracer

import tutorial_kernels as tk
from nki_testing import same_outcome

T = nki.typing.tensor


def _python_only(m):
    """Within monkeypatch context ``m``: place_matmul is ``_place_matmul_general``, zero_fill
    ``_zero_fill_general``, and the in-place operators find no ALU op for their C shortcut
    (``language._IN_PLACE_ALU``, the table they were configured with, emptied), so
    ``_accumulate_general`` records what they do not."""
    m.setattr(Tracer, "place_matmul", Tracer._place_matmul_general)
    m.setattr(Tracer, "zero_fill", Tracer._zero_fill_general)
    for name in list(language._IN_PLACE_ALU):
        m.delitem(language._IN_PLACE_ALU, name)


def _same_with_and_without(monkeypatch, kernel, args):
    return same_outcome(monkeypatch, _python_only, kernel, *args)


@nki.jit
def zeros_then_assign(a, b):
    """``ps[...] = matmul`` into nl.zeros (whole and part: the rest keeps its zeros), then +=."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    whole = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    whole[...] = nisa.nc_matmul(x, y)
    whole += nisa.nc_matmul(x, y)
    part = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    part[:, 0:128] = nisa.nc_matmul(x, y[:, 0:128])
    part[:, 0:128] += nisa.nc_matmul(x, y[:, 0:128])
    nl.store(out, value=nl.add(nl.copy(whole), nl.copy(part)))
    return out


@nki.jit
def fresh_ndarray_accumulated(a, b):
    """``acc += matmul`` into a fresh nl.ndarray (each region's first matmul starts a group), by
    columns (the zeros are never all replaced) and into zeros by halves."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        acc += nisa.nc_matmul(x, y)
    halves = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    for j in nl.affine_range(2):
        halves[:, j * 256:(j + 1) * 256] += nisa.nc_matmul(x, y[:, j * 256:(j + 1) * 256])
    cols = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    cols[:, 0:128] += nisa.nc_matmul(x, y[:, 0:128])
    nl.store(out, value=nl.add(nl.add(nl.copy(acc), nl.copy(halves)), nl.copy(cols)))
    return out


@nki.jit
def in_place_operators(a, b):
    """Every in-place operator on SBUF tiles: plain, into pending zeros, from PSUM, a broadcast
    row, a number, and a PSUM destination (lane-wise, not a matmul)."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    z = nl.zeros((128, 512), dtype=nl.float32)
    z += y
    z -= y
    z *= y
    z /= y
    z += nisa.nc_matmul(x, y)
    z += y[0:1, :]
    z *= 2.0
    ps = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    ps += nisa.nc_matmul(x, y)
    ps += y
    blocks = nl.ndarray((2, nl.par_dim(128), 512), dtype=nl.float32)
    blocks[0] = nl.copy(y)
    blocks[0] += z
    nl.store(out, value=nl.add(blocks[0], nl.copy(ps)))
    return out


@nki.jit
def in_place_refusals(a, b, which):
    x = nl.load(a)
    y = nl.load(b)
    if which == "shape":
        y[:, 0:128] += y
    elif which == "unwritten":
        u = nl.ndarray((128, 512), dtype=nl.float32)
        u += y
    elif which == "psum-inputs":
        p = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
        p += nisa.nc_matmul(x, y)
        q = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
        q += nisa.nc_matmul(x, y)
        p += q
    elif which == "accumulate-onto-copy":
        p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        p[...] = nl.copy(y)
        p += nisa.nc_matmul(x, y)
    elif which == "sbuf-matmul-into":
        s = nl.ndarray((128, 512), dtype=nl.float32)
        s[...] = nisa.nc_matmul(x, y)
    return a


ARGS = (T[[128, 128], nl.float32], T[[128, 512], nl.float32])


@pytest.mark.parametrize("kernel", [zeros_then_assign, fresh_ndarray_accumulated,
                                    in_place_operators])
def test_the_c_paths_trace_as_the_python_definitions(monkeypatch, kernel):
    assert not _same_with_and_without(monkeypatch, kernel, ARGS).startswith("NKIError")


@pytest.mark.parametrize("which", ["shape", "unwritten", "psum-inputs", "accumulate-onto-copy",
                                   "sbuf-matmul-into"])
def test_the_c_paths_refuse_as_the_python_definitions(monkeypatch, which):
    assert _same_with_and_without(monkeypatch, in_place_refusals, ARGS + (which,)).startswith(
        "NKIError")


@pytest.mark.parametrize("kernel, args", [
    (tk.matmul_tiled, (T[[256, 256], nl.bfloat16], T[[256, 1024], nl.bfloat16])),
    (tk.matmul_hoisted, (T[[256, 256], nl.bfloat16], T[[256, 1024], nl.bfloat16])),
    (tk.matmul_blocked, (T[[512, 512], nl.bfloat16], T[[512, 2048], nl.bfloat16])),
    (tk.mamba_v1, (T[[1, 256, 128], nl.float32], T[[1, 256, 128], nl.float32],
                   T[[256, 4], nl.float32], T[[1, 4, 128], nl.float32],
                   T[[1, 4, 128], nl.float32])),
])
def test_tutorial_kernels_trace_as_with_the_python_definitions(monkeypatch, kernel, args):
    _same_with_and_without(monkeypatch, kernel, args)


def test_the_python_definitions_are_what_the_comparison_runs(monkeypatch):
    """The comparison's other side takes no C path of these operators: none of them calls
    place_matmul in C, and _accumulate_general records every lane-wise accumulation."""
    calls = []
    general = language._accumulate_general

    def counted(*args):
        calls.append(args[3])
        return general(*args)

    with monkeypatch.context() as m:
        _python_only(m)
        m.setattr(language, "_accumulate_general", counted)
        nki.trace_kernel(in_place_operators, *ARGS)
    assert calls.count("add") == 5 and {"subtract", "multiply", "divide"} <= set(calls)
    calls.clear()
    with monkeypatch.context() as m:
        m.setattr(language, "_accumulate_general", counted)
        nki.trace_kernel(in_place_operators, *ARGS)
    # (in C: all but the broadcast row, the number and the one into PSUM with a matmul group
    # open, which lanewise_plain leaves to the general path; the one into pending nl.zeros zeros
    # marks them needed and stays in C)
    assert calls == ["add", "multiply", "add"], calls


def test_simulated_values_of_the_accumulations():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 512)).astype(np.float32)
    got = nki.simulate_kernel(fresh_ndarray_accumulated, a, b)
    mm = a.T @ b
    want = 2 * mm + mm
    want[:, 0:128] += mm[:, 0:128]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
