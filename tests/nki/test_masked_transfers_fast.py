"""Masked ``nl.load`` / ``nl.store`` whose mask keeps the whole transfer take the C paths of the
unmasked ones (``load_fast`` / ``store_fast``, cpp/python/trace_language_fast.cpp), which ask
``instructions.keeps_all`` as the definitions do. Every kernel here traces to the same module, or
fails with the same error, with the C paths as with the Python definitions alone: masks that keep
everything, part (the last partial tile), nothing, masks on the free dimension, conjunctions,
Python bools, and the calls and masks the definitions refuse."""

import math

import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim.nki import language

from nki_testing import same_outcome

T = nki.typing.tensor


def _python_only(m):
    """nl.load and nl.store are their Python definitions."""
    for name in ("load", "store"):
        m.setattr(nl, name, getattr(nl, name).__wrapped__)


def _same_with_and_without(monkeypatch, kernel, *args) -> str:
    return same_outcome(monkeypatch, _python_only, kernel, *args)


@nki.jit
def rows_tiled(a):
    """rmsnorm's transfers: a row mask over tiles of 128 rows, the last one partial."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows, cols = a.shape
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    for t in nl.affine_range(math.ceil(rows / 128)):
        in_rows = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=in_rows)
        y = nl.multiply(x, 2.0, mask=in_rows)
        nl.store(out[t * 128 + ip, ic], value=y, mask=in_rows)
    return out


@nki.jit
def assorted(a):
    """Masks of every kind on loads and stores (by keyword and by position)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(512)[None, :]
    for t in nl.affine_range(2):
        full = t * 128 + ip < 1000  # keeps all of both tiles
        none = t * 128 + ip >= 1000  # keeps nothing
        cols = ic < 256  # cuts the free dimension
        both = (ip >= 0) & (ic < 512)  # a conjunction that keeps all
        part = (ip < 100) & (ic >= 0)  # a conjunction that cuts
        x = nl.load(a[t * 128 + ip, ic], mask=full)
        y = nl.load(a[t * 128 + ip, ic], mask=none)
        z = nl.load(a[t * 128 + ip, ic], mask=cols)
        w = nl.load(a[t * 128 + ip, ic], mask=both)
        v = nl.load(a[t * 128 + ip, ic], mask=part)
        u = nl.load(a[t * 128 + ip, ic], mask=(t < 1))  # a Python bool: all, then nothing
        s = nl.load(a[t * 128 + ip, ic], mask=None)
        nl.store(out[t * 128 + ip, ic], value=nl.add(x, s), mask=full)
        nl.store(out[t * 128 + ip, ic], nl.add(w, s), mask=both)
        nl.store(out[t * 128 + ip, ic], value=u, mask=(t < 1))
        nl.store(out[t * 128 + ip, ic], value=z, mask=cols)
        nl.store(out[t * 128 + ip, ic], value=v, mask=part)
        nl.store(out[t * 128 + ip, ic], value=y, mask=none)
        nl.store(out[t * 128 + ip, ic], value=x, mask=(t > 0))
        nl.store(mask=full, value=x, dst=out[t * 128 + ip, ic])  # (dst by keyword: the definition)
    return out


@nki.jit
def psum_store(a):
    """A masked store of a PSUM tile: the definition copies it first."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
    acc += nl.load(a)
    nl.store(out, value=acc, mask=ip < 128)
    return out


@nki.jit
def load_with_dtype(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    x = nl.load(a, mask=ip < 128, dtype=nl.float32)
    nl.store(out, value=x, mask=ip < 64)
    return out


@nki.jit
def wrong_mask_type(a):
    x = nl.load(a, mask="rows")
    return x


@nki.jit
def wrong_mask_store(a):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a), mask=3)
    return out


@nki.jit
def mask_not_a_box(a):
    ip = nl.arange(128)[:, None]
    ic = nl.arange(512)[None, :]
    x = nl.load(a, mask=ip + ic < 128)  # a triangle: not a box
    return x


@nki.jit
def too_many_rows(a):
    ip = nl.arange(256)[:, None]
    x = nl.load(a, mask=ip < 256)  # (the partition check comes before the mask's)
    return x


@nki.jit
def from_sbuf(a):
    ip = nl.arange(128)[:, None]
    x = nl.load(a)
    y = nl.load(x, mask=ip < 128)  # (not an HBM tensor: refused before the mask is looked at)
    return y


@nki.jit
def store_shapes_differ(a):
    out = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    nl.store(out, value=nl.load(a), mask=ip < 128)
    return out


@nki.jit
def store_into_sbuf(a):
    ip = nl.arange(128)[:, None]
    x = nl.load(a)
    nl.store(x, value=x, mask=ip < 128)
    return x


@nki.jit
def store_wrong_mask_and_value(a):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=a, mask="rows")  # (an HBM value: refused before the mask)
    return out


@pytest.mark.parametrize("rows", [4000, 4096, 100, 128, 129])
def test_row_masks_over_tiles_trace_as_the_definitions(monkeypatch, rows):
    out = _same_with_and_without(monkeypatch, rows_tiled, T[[rows, 512], nl.float32])
    assert out.startswith("{")


def test_assorted_masks_trace_as_the_definitions(monkeypatch):
    assert _same_with_and_without(monkeypatch, assorted, T[[256, 512], nl.float32]).startswith("{")


@pytest.mark.parametrize("kernel", [psum_store, load_with_dtype])
def test_masked_calls_the_c_paths_decline_trace_as_the_definitions(monkeypatch, kernel):
    assert _same_with_and_without(monkeypatch, kernel, T[[128, 512], nl.float32]).startswith("{")


@pytest.mark.parametrize("kernel, args, message", [
    (wrong_mask_type, [[128, 512]], "mask must be a comparison"),
    (wrong_mask_store, [[128, 512]], "mask must be a comparison"),
    (mask_not_a_box, [[128, 512]], ""),
    (too_many_rows, [[256, 512]], "at most 128 partitions"),
    (from_sbuf, [[128, 512]], "HBM"),
    (store_shapes_differ, [[128, 512]], ""),
    (store_into_sbuf, [[128, 512]], "HBM"),
    (store_wrong_mask_and_value, [[128, 512]], ""),
])
def test_refusals_are_the_definitions(monkeypatch, kernel, args, message):
    out = _same_with_and_without(monkeypatch, kernel, *[T[s, nl.float32] for s in args])
    assert out.startswith("NKIError") and message in out


def test_whole_masks_skip_the_definitions(monkeypatch):
    """Transfers of full tiles under a row mask never reach the Python load and store (which
    begin by asking for the current tracer); the last, partial tile does."""
    calls = []
    real = language.current

    def counting():
        calls.append(1)
        return real()

    @nki.jit
    def transfers(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        ip = nl.arange(128)[:, None]
        ic = nl.arange(512)[None, :]
        for t in nl.affine_range(3):
            keep = t * 128 + ip < 300
            nl.store(out[t * 128 + ip, ic], value=nl.load(a[t * 128 + ip, ic], mask=keep),
                     mask=keep)
        return out

    monkeypatch.setattr(language, "current", counting)
    nki.trace_kernel(transfers, T[[300, 512], nl.float32])
    assert len(calls) == 3  # nl.ndarray of the HBM output, then the last tile's load and store
