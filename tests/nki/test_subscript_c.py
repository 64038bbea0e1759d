"""The C subscript of 2.2x tensors (cpp/python/trace_subscript.cpp) against the Python one it
shortcuts (neuronxsim.nki.tensor._getitem): the same view for every key, and the same error for
every key the Python subscript refuses."""

import itertools

import numpy as np
import pytest

import neuronxsim.nki.language as nl
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki.indexing import LoopIndex
from neuronxsim.nki.tensor import _getitem
from neuronxsim.nki.tracer import Tracer


def _fields(t):
    checks = [(c.const, c.coefs, c.size, c.axis) for c in t.checks]
    return (t.storage, t.offset, t.shape, t.strides, checks)


def _keys(n):
    """2-D keys: slices of ints and loop indices inside and outside the dim, ``:``, open ends,
    steps, ints, and ``...``."""
    loop = LoopIndex(1)
    entries = [slice(None), slice(0, n), slice(1, n), slice(loop, loop + 1), slice(0, n + 1),
               slice(2, 1), slice(-1, n), slice(None, 2), slice(0, 2, 1), slice(0, 4, 2), 0, loop,
               slice(True, 2), slice(1.0, 2)]
    for a, b in itertools.product(entries, repeat=2):
        yield (a, b)
    yield Ellipsis
    yield (slice(0, 2),)
    yield (slice(0, 2), slice(0, 2), 0)


@pytest.mark.parametrize("buffer", [nl.sbuf, nl.shared_hbm])
def test_c_subscript_is_the_python_subscript(buffer):
    with Tracer("trn2", 1):
        t = nl.ndarray((4, 6), dtype=nl.float32, buffer=buffer)
        views = [t, t[1:3, 0:4], t[:, 1:5]]
        for view, key in itertools.product(views, _keys(4)):
            try:
                expected = _fields(_getitem(view, key))
            except NKIError as e:
                with pytest.raises(NKIError) as got:
                    view[key]  # (the line the error names)
                assert got.value.reason == e.reason, key
                assert "view[key]  # (the line the error names)" in str(got.value), key
                continue
            assert _fields(view[key]) == expected, key
    assert t[1:3, 0:4].strides is t.strides  # (views share their strides, as the Python path)


def _addressed(t) -> np.ndarray:
    """The storage elements the view ``t`` addresses, in row-major order of its dims."""
    index = np.full((), t.offset, np.int64)
    for n, s in zip(t.shape, t.strides):
        index = index[..., None] + s * np.arange(n, dtype=np.int64)
    return index.ravel()


def _entries(n):
    """One dim's key entries: ints (negative, outside), loop indices, NumPy integers, slices with
    steps (negative, zero), open ends and bounds outside the dim, ``...`` and bad types."""
    return [0, n - 1, -1, -n, n, -n - 1, LoopIndex(1), np.int64(-2), slice(None), slice(1, n),
            slice(0, n, 2), slice(None, None, -1), slice(n - 1, 0, -2), slice(-2, None),
            slice(LoopIndex(0), LoopIndex(2)), slice(0, n + 1), slice(-n - 1, 1), slice(0, 0),
            slice(0, 2, 0), None, 1.0, Ellipsis]


def _numpy_key(key, on_chip):
    """``key`` for NumPy: a loop index past a tuple key's first entry on chip keeps its dim (NKI's
    symbolic loop variable), elsewhere it is its integer."""
    if not isinstance(key, tuple):
        return int(key) if key.__class__ is LoopIndex else key
    return tuple((slice(int(k), int(k) + 1) if on_chip and i else int(k))
                 if k.__class__ is LoopIndex else k for i, k in enumerate(key))


@pytest.mark.parametrize("shape,buffer", [((4, 6), nl.sbuf), ((4, 3, 5), nl.sbuf), ((4, 6), nl.psum),
                                          ((4, 6), nl.shared_hbm), ((5,), nl.shared_hbm),
                                          ((4, 3, 5), nl.hbm)])
def test_subscripts_address_what_numpy_does(shape, buffer):
    """Every key the tracer takes without deferred bound checks addresses NumPy's elements of an
    array of the same shape, in NumPy's order and shape; a view with deferred checks comes from a
    slice NumPy clamps (other elements) and reports its violation; every refused key is one NumPy
    refuses, gives nothing for or adds an axis with, refused on the kernel's line."""
    reference = np.arange(int(np.prod(shape))).reshape(shape)
    on_chip = buffer in (nl.sbuf, nl.psum)
    rows, cols = _entries(shape[0]), _entries(shape[-1])
    keys = rows + list(itertools.product(rows, cols))
    if len(shape) == 3:
        few = [0, -1, LoopIndex(1), slice(None), slice(None, None, 2), slice(None, None, -1), Ellipsis]
        keys += list(itertools.product(few, few, few))
    taken = deferred = refused = 0
    with Tracer("trn2", 1):
        t = nl.ndarray(shape, dtype=nl.float32, buffer=buffer)
        for key in keys:
            try:
                want = reference[_numpy_key(key, on_chip)]
            except (IndexError, TypeError, ValueError):
                want = None
            try:
                view = t[key]  # (the line the error names)
            except NKIError as e:
                assert want is None or want.size == 0 or None in (key if isinstance(key, tuple) else (key,)), key
                assert "view = t[key]  # (the line the error names)" in str(e), key
                refused += 1
                continue
            assert want is not None, key
            if view.checks:  # NumPy clamps a slice: other elements
                assert view.bound_violation() is not None, key
                assert view.shape != want.shape or list(_addressed(view)) != list(want.ravel()), key
                deferred += 1
                continue
            assert list(_addressed(view)) == list(want.ravel()) and view.shape == want.shape, key
            taken += 1
    assert taken > 20 and deferred > 5 and refused > 20
