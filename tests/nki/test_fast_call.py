"""The API functions whose plain calls take a C path first (``FastCall``,
cpp/python/trace_fast_call.cpp): ``nisa.nc_matmul`` of two SBUF tiles (trace_matmul.cpp's
``nc_matmul_fast``) and ``nl.affine_range`` / ``sequential_range`` / ``static_range`` of plain
ints (trace_loop_iterate.cpp's ``range_fast``). Every kernel here traces to the same module with
the C paths as with the Python definitions alone (the FastCalls replaced by what they wrap), and
refuses what they refuse with the same message; the FastCall stands for its definition (name,
signature, pickling, the API's keyword errors)."""

import copy
import inspect
import pickle

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import arguments
from neuronxsim.nki.errors import NKIError
from neuronxsim.starfish.lib import _core

from nki_testing import close, run_on, same_outcome

T = nki.typing.tensor
FAST = [(nisa, "nc_matmul"), (nl, "affine_range"), (nl, "sequential_range"), (nl, "ndarray"), (nl, "load"),
        (nl, "zeros"), (nl, "store"),
        (nl, "static_range")]


def _python_only(monkeypatch):
    """Replaces every FastCall by the Python definition it wraps."""
    for module, name in FAST:
        monkeypatch.setattr(module, name, getattr(module, name).__wrapped__)


def _python_only_checked(m):
    _python_only(m)
    assert not isinstance(nisa.nc_matmul, _core.nki.FastCall)


def _same_with_and_without(monkeypatch, kernel, *args) -> str:
    return same_outcome(monkeypatch, _python_only_checked, kernel, *args)


@nki.jit
def matmuls(a, b, c):
    """Plain matmuls (the C path) beside those it declines: a PSUM operand, keywords, a
    transpose, a fp32 hint, loops with a start, a step, a loop-index bound, directives."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    x = nl.load(a)
    y = nl.load(b)
    for k in nl.affine_range(2):
        acc += nisa.nc_matmul(x, y)
    for k in nl.sequential_range(1, 5, 2):
        acc += nisa.nc_matmul(stationary=x, moving=y)
    for k in nl.static_range(0, 2):
        for j in nl.affine_range(k + 1):  # (a loop index bound: the Python definition)
            acc += nisa.nc_matmul(x, y, is_stationary_onezero=False)
    side = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2, directives=nki.compiler.no_reorder()):
        p = nisa.nc_matmul(x[:, 0:128], y[:, 0:128])
        t = nisa.nc_matmul(p, nl.load(c))  # (a PSUM stationary: copied to SBUF first)
        side += t
    nl.store(out, value=nl.copy(acc))
    nl.store(out, value=acc)  # (from PSUM: copied to SBUF first, by the definition)
    nl.store(out[:, 0:128], value=nl.add(nl.copy(acc[:, 0:128]), side))
    return out


@nki.jit
def tiles(a):
    """Tiles made again (the C path) beside those it declines: a first tile, a name, nl.par_dim,
    positional and keyword dtypes, loads with a mask or a dtype, a 1-D source."""
    out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.ndarray((128, 512), a.dtype)
        u = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        v = nl.ndarray((2, nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
        w = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf, name=f"w{i}")
        z = nl.zeros((128, 512), a.dtype)  # (made before: the C path, reading the zeros)
        y = nl.zeros((128, 512), dtype=a.dtype, buffer=nl.sbuf, lazy_initialization=True)
        x = nl.zeros((128, 256), dtype=nl.float32, buffer=nl.sbuf)  # (a first tile of its kind)
        z2 = nl.zeros_like(z)
        t[...] = nl.add(nl.add(z, y), nl.add(z2, z2))
        t[...] = nl.load(a[i * 128:(i + 1) * 128, :])
        u[...] = nl.load(a[i * 128:(i + 1) * 128, :], dtype=nl.float32)
        v[0] = nl.load(a[i * 128:(i + 1) * 128, :], mask=None)
        w[...] = nl.add(t, u)
        x[...] = nl.add(x, w[:, 0:256])
        r = nl.load(a[i * 128:(i + 1) * 128, 0])  # (a 1-D source)
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(w, v[0]))
        nl.store(out[i * 128:(i + 1) * 128, 0:256], value=x)
        nl.store(out[i * 128:(i + 1) * 128, 256:512], x)  # (value by position)
        nl.store(out[i * 128:(i + 1) * 128, 0:512], value=w, mask=None)  # (a mask: the definition)
        nl.store(out[i * 128:(i + 1) * 128, 0], value=r)
    return out


def test_tiles_and_loads_trace_as_the_python_definitions(monkeypatch):
    assert _same_with_and_without(monkeypatch, tiles, T[[256, 512], nl.float32]).startswith("{")


def test_matmuls_and_loops_trace_as_the_python_definitions(monkeypatch):
    args = (T[[128, 128], nl.bfloat16], T[[128, 512], nl.bfloat16], T[[128, 128], nl.float32])
    assert _same_with_and_without(monkeypatch, matmuls, *args).startswith("{")


def test_results_are_numpys():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 512)).astype(np.float32)
    c = rng.standard_normal((128, 128)).astype(np.float32)
    got = run_on("simulator", matmuls, a, b, c)
    want = 7 * (a.T @ b)  # (the 2 + 2 + 1 + 2 plain matmuls)
    p = a.T @ b[:, 0:128]
    want[:, 0:128] += 2 * (p.T @ c)
    close(got, want, rtol=1e-4, atol=1e-2)


@nki.jit
def taken(a, b):
    """The C paths answer the plain calls themselves (rather than declining them all)."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    r = _core.nki.nc_matmul_fast(x, y)
    assert r is not NotImplemented
    assert _core.nki.nc_matmul_fast(x, y, y) is NotImplemented
    loop = _core.nki.range_fast("affine")(0, 2, 1)
    assert loop is not NotImplemented
    assert _core.nki.range_fast("affine")(True) is NotImplemented  # (a bool: the definition's)
    x2 = _core.nki.load_fast(a)
    assert x2 is not NotImplemented
    s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    s2 = _core.nki.ndarray_fast((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    z = _core.nki.zeros_fast((128, 512), nl.float32, buffer=nl.sbuf)
    assert s2 is not NotImplemented and z is not NotImplemented
    s[...] = nl.copy(r)
    for i in loop:
        assert _core.nki.store_fast(out, value=nl.add(s, z)) is None
    return out


def test_the_c_paths_take_plain_calls():
    nki.trace_kernel(taken, T[[128, 128], nl.bfloat16], T[[128, 512], nl.bfloat16])


@nki.jit
def dram_operand(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    y = nl.load(b)
    nl.store(out, value=nisa.nc_matmul(a, y))  # (an HBM stationary: refused by the definition)
    return out


@nki.jit
def wrong_shapes(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out, value=nisa.nc_matmul(x, x))  # (K 64 against K 128: the general path refuses)
    return out


@nki.jit
def bad_loops(a, kind):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    if kind == "zero step":
        for i in nl.affine_range(0, 4, 0):
            pass
    elif kind == "float":
        for i in nl.sequential_range(2.0):
            pass
    elif kind == "keyword":
        for i in nl.static_range(2, colour=1):
            pass
    elif kind == "matmul keyword":
        x = nl.load(a)
        nisa.nc_matmul(x, x, colour=1)
    elif kind == "load of a tile":
        x = nl.load(a)
        nl.load(x)
    elif kind == "load of too many rows":
        nl.load(a.reshape((256, 64)))
    elif kind == "ndarray dtype":
        nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nl.ndarray((128, 128), dtype="float99", buffer=nl.sbuf)
    elif kind == "ndarray keyword":
        nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nl.ndarray((128, 128), dtype=nl.float32, bufer=nl.sbuf)
    elif kind == "ndarray unhashable":
        nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nl.ndarray((128, 128), dtype=nl.float32, buffer=[nl.sbuf])
    elif kind == "zeros in HBM":
        nl.zeros((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    elif kind == "zeros flag":
        nl.zeros((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nl.zeros((128, 128), dtype=nl.float32, buffer=nl.sbuf, lazy_initialization=1)
    elif kind == "store to a tile":
        x = nl.load(a)
        nl.store(x, value=x)
    elif kind == "store of HBM":
        nl.store(a, value=a)
    elif kind == "store keyword":
        x = nl.load(a)
        nl.store(a, vaule=x)
    elif kind == "matmul arity":
        x = nl.load(a)
        nisa.nc_matmul(x)
    return out


@pytest.mark.parametrize("kernel,args", [
    (dram_operand, (T[[128, 128], nl.bfloat16], T[[128, 512], nl.bfloat16])),
    (wrong_shapes, (T[[64, 128], nl.bfloat16], T[[128, 512], nl.bfloat16])),
] + [(bad_loops, (T[[128, 128], nl.bfloat16], kind))
     for kind in ("zero step", "float", "keyword", "matmul keyword", "matmul arity",
                  "load of a tile", "load of too many rows", "ndarray dtype", "ndarray keyword",
                  "ndarray unhashable", "zeros in HBM", "zeros flag", "store to a tile", "store of HBM",
                  "store keyword")])
def test_refusals_are_the_python_definitions(monkeypatch, kernel, args):
    message = _same_with_and_without(monkeypatch, kernel, *args)
    assert not message.startswith("{"), message


def test_outside_a_trace_the_definition_answers():
    with pytest.raises(NKIError) as fast:
        nl.affine_range(4)
    with pytest.raises(NKIError) as python:
        nl.affine_range.__wrapped__(4)
    assert fast.value.reason == python.value.reason
    assert fast.value.location.path == python.value.location.path == __file__


@pytest.mark.parametrize("module,name", FAST)
def test_a_fast_call_stands_for_its_definition(module, name):
    fn = getattr(module, name)
    definition = fn.__wrapped__
    assert isinstance(fn, _core.nki.FastCall) and inspect.isfunction(definition)
    assert (fn.__name__, fn.__qualname__, fn.__module__, fn.__doc__) == (
        definition.__name__, definition.__qualname__, definition.__module__, definition.__doc__)
    assert inspect.signature(fn) == inspect.signature(definition)
    assert fn.__defaults__ == definition.__defaults__
    assert pickle.loads(pickle.dumps(fn)) is fn
    assert copy.deepcopy(fn) is fn
    assert arguments.definition(fn) is definition
    assert arguments._spelling(fn) == ("nisa." if module is nisa else "nl.") + name
