"""The C paths of nl.matmul(x, y, transpose_x=True) and nl.copy (FastCalls:
cpp/python/trace_matmul.cpp's nl_matmul_fast, cpp/python/trace_lane_fast.cpp's copy_fast): every
kernel here traces to the same module, and refuses what it refuses with the same message, as with
the Python definitions alone."""

import inspect

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import language
from neuronxsim.nki.opcodes import Act

import tutorial_kernels as tk
from nki_testing import same_outcome, use_definitions

T = nki.typing.tensor


def _python_only(m):
    use_definitions(m, language, ("matmul", "copy"))


def _same(monkeypatch, kernel, *args):
    return same_outcome(monkeypatch, _python_only, kernel, *args)


@nki.jit
def matmuls(a, b):
    """Whole and partial tiles, sub-views, explicit mask=None, PSUM and transposing operands, a
    truthy non-bool transpose_x, masks, copies of every dtype form."""
    K, M = a.shape
    _, N = b.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    acc += nl.matmul(x, y, transpose_x=True)
    acc += nl.matmul(x[...], y[...], mask=None, transpose_x=True)
    acc += nl.matmul(x[0:K // 2, :], y[0:K // 2, :], transpose_x=True)
    pp = nl.matmul(x, x, transpose_x=True)  # ([M, M] in PSUM: the definition copies it to SBUF)
    q = nl.matmul(pp, pp, transpose_x=True)
    r = nl.matmul(x, x, transpose_x=1)  # (truthy, not the bool: the definition)
    s = nl.matmul(nl.transpose(x), y)  # (transpose_x=False: a PE transpose first)
    t = nl.matmul(x, y, mask=None, transpose_x=True)
    c = nl.copy(acc)
    c = nl.copy(acc, dtype=nl.bfloat16)
    c = nl.copy(c, dtype="float32")
    c = nl.copy(c, dtype=np.float32)
    c = nl.copy(c, dtype=nl.float32, mask=nl.arange(M)[:, None] < 100)
    c = nl.copy(c, mask=None)
    d = nl.copy(q)[:, 0:1] + nl.copy(r)[:, 0:1] + nl.copy(t)[:, 0:1]
    e = nl.copy(s[:, 0:N])
    nl.store(out, value=c + e)
    nl.store(out[0:M, 0:1], value=d)
    return out


@pytest.mark.parametrize("k, m, n", [(128, 128, 512), (128, 64, 100), (64, 128, 128), (96, 32, 48)])
def test_matmul_and_copy_trace_as_the_python_definitions(monkeypatch, k, m, n):
    assert not _same(monkeypatch, matmuls, T[[k, m], nl.float32],
                     T[[k, n], nl.float32]).startswith(("NKIError", "TypeError"))


@pytest.mark.parametrize("kernel, args", [
    (tk.matmul_tiled, (T[[256, 256], nl.bfloat16], T[[256, 1024], nl.bfloat16])),
    (tk.matmul_tiled, (T[[128, 128], nl.float32], T[[128, 512], nl.float32])),
    (tk.matmul_hoisted, (T[[256, 256], nl.bfloat16], T[[256, 1024], nl.bfloat16])),
])
def test_tutorial_matmuls_trace_as_with_the_python_definitions(monkeypatch, kernel, args):
    assert not _same(monkeypatch, kernel, *args).startswith(("NKIError", "TypeError"))


@nki.jit
def refusals(a, b, which):
    x = nl.load(a)
    y = nl.load(b)
    if which == "mm-hbm":
        nl.matmul(a, y, transpose_x=True)
    elif which == "mm-number":
        nl.matmul(x, 2.0, transpose_x=True)
    elif which == "mm-keyword":
        nl.matmul(x, y, transpose_x=True, bogus=1)
    elif which == "mm-positional":
        nl.matmul(x, y, True)
    elif which == "mm-bad-mask":
        nl.matmul(x, y, transpose_x=True, mask="m")
    elif which == "mm-k-mismatch":  # (the legality rules refuse it: matmul_plain declines)
        nl.matmul(x, y[0:64, :], transpose_x=True)
    elif which == "mm-unwritten":
        fresh = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nl.matmul(fresh, y, transpose_x=True)
    elif which == "mm-int":
        nl.matmul(nl.copy(x, dtype=nl.int32), y, transpose_x=True)
    elif which == "copy-hbm":
        nl.copy(a)
    elif which == "copy-number":
        nl.copy(1.0)
    elif which == "copy-dtype":
        nl.copy(x, dtype="nope")
    elif which == "copy-unhashable":
        nl.copy(x, dtype=[1])
    elif which == "copy-keyword":
        nl.copy(x, bogus=1)
    elif which == "copy-positional":
        nl.copy(x, None)
    elif which == "copy-bad-mask":
        nl.copy(x, mask="m")
    elif which == "copy-unwritten":
        nl.copy(nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf))
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=x)
    return out


@pytest.mark.parametrize("which", [
    "mm-hbm", "mm-number", "mm-keyword", "mm-positional", "mm-bad-mask", "mm-k-mismatch",
    "mm-unwritten", "mm-int", "copy-hbm", "copy-number", "copy-dtype", "copy-unhashable",
    "copy-keyword", "copy-positional", "copy-bad-mask", "copy-unwritten"])
def test_the_c_paths_refuse_as_the_python_definitions(monkeypatch, which):
    outcome = _same(monkeypatch, refusals, T[[128, 128], nl.float32], T[[128, 128], nl.float32],
                    which)
    assert outcome.startswith(("NKI", "TypeError")), outcome


def test_outside_a_trace_they_refuse_as_the_definitions(monkeypatch):
    """No tracer: the definitions' errors (the C paths decline)."""
    def outcome(fn, *args, **kwargs):
        try:
            fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 (the comparison is the point)
            return type(e).__name__, str(e)
        return None
    with pytest.raises(Exception):
        nl.copy(1.0)
    for fn, args, kwargs in ((nl.copy, (1.0,), {}), (nl.matmul, (1.0, 2.0), {"transpose_x": True})):
        fast = outcome(fn, *args, **kwargs)
        assert fast == outcome(fn.__wrapped__, *args, **kwargs) and fast is not None


def test_the_functions_stay_the_definitions():
    for fn in (nl.matmul, nl.copy):
        assert fn.__name__ == fn.__wrapped__.__name__
        assert fn.__doc__ == fn.__wrapped__.__doc__
        assert inspect.signature(fn) == inspect.signature(fn.__wrapped__)
    assert nl.copy.act_func is Act.Copy


@nki.jit
def copy_as_activation(a):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out, value=nisa.activation(op=nl.copy, data=x))
    return out


def test_copy_is_the_copy_activation(monkeypatch):
    assert not _same(monkeypatch, copy_as_activation, T[[128, 64], nl.float32]).startswith("NKI")


def test_which_calls_take_the_c_path(monkeypatch):
    """matmul(transpose_x=True) of SBUF tiles and copy skip the definitions (each of which starts
    with caller_location)."""
    calls = []
    where = language.caller_location
    monkeypatch.setattr(language, "caller_location", lambda: (calls.append(1), where())[1])
    nki.trace_kernel(tk.matmul_tiled, T[[256, 256], nl.bfloat16], T[[256, 1024], nl.bfloat16])
    fast = len(calls)
    use_definitions(monkeypatch, language, ("matmul", "copy"))
    nki.trace_kernel(tk.matmul_tiled, T[[256, 256], nl.bfloat16], T[[256, 1024], nl.bfloat16])
    assert len(calls) - fast == fast + 2 * 2 * 2 + 2 * 2  # (one per m, n, k matmul and m, n copy)
