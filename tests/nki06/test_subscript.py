"""NKI 0.6 subscripts (NkiTensor.__getitem__, cpp/python/trace_subscript.cpp) swept over keys and
compared with NumPy's indexing of an array of the same shape: NumPy says which elements a key
addresses; the tensor must address exactly those, in the same order, or refuse the key (with an
NKIError naming the kernel's line) where NumPy would refuse it, clamp a slice, take a
non-positive step or give nothing."""

import itertools
import math

import numpy as np
import pytest

import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki.indexing import LoopIndex
from neuronxsim.nki.tracer import Tracer


def addressed(t) -> np.ndarray:
    """The storage elements the view ``t`` addresses, in row-major order of its dims."""
    v = t._view
    index = np.full((), v.offset, np.int64)
    for n, s in zip(v.shape, v.strides):
        index = index[..., None] + s * np.arange(n, dtype=np.int64)
    return index.ravel()


def entries(n: int) -> list:
    """One dim's key entries over a dim of ``n``: ints (negative, outside), loop indices, NumPy
    integers, slices with steps (negative and zero too), open ends, bounds outside, bad types."""
    return [0, n - 1, -1, -n, n, -n - 1, LoopIndex(n - 1), np.int64(-1), True, 1.0, None,
            slice(None), slice(1, n), slice(0, n, 2), slice(None, None, 3), slice(-2, None),
            slice(LoopIndex(0), LoopIndex(1)), slice(None, None, -1), slice(0, 0), slice(0, n + 1),
            slice(-n - 1, 1), slice(0, 2, 0), slice(1.0, 2), Ellipsis]


def clamps_or_refused_by_numpy(key, shape) -> bool:
    """True when NumPy refuses ``key``, gives nothing, or clamps one of its slices (or walks one
    backwards): the keys NKI 0.6 refuses."""
    items = key if isinstance(key, tuple) else (key,)
    try:
        got = np.zeros(shape)[tuple(int(k) if k.__class__ is LoopIndex else k for k in items)]
    except (IndexError, TypeError, ValueError):
        return True
    if got.size == 0 or any(k is None or k.__class__ in (bool, float) for k in items):
        return True
    if sum(k is Ellipsis for k in items) > 1:
        return True
    ndim = len(shape)
    at = next((i for i, k in enumerate(items) if k is Ellipsis), None)
    dims = list(range(ndim))
    if at is not None:
        dims = dims[:at] + dims[ndim - (len(items) - at - 1):]
        items = items[:at] + items[at + 1:]
    for k, d in zip(items, dims):
        if isinstance(k, slice):
            start, stop, step = k.indices(shape[d])
            if step < 1:
                return True
            wanted = (0 if k.start is None else k.start, shape[d] if k.stop is None else k.stop)
            wanted = tuple(x + shape[d] if x < 0 else x for x in wanted)
            if wanted != (start, stop) or not isinstance(k.start or 0, int):
                return True
    return False


def expected_shape(key, shape, on_chip: bool) -> tuple:
    """NKI 0.6's shape of ``t[key]``: NumPy's, except that an int on the partition dim of an
    on-chip tensor keeps it at size 1 and a result with a dim dropped stays >= 2-D on chip (>= 1-D
    in HBM) through a last dim of size 1."""
    items = key if isinstance(key, tuple) else (key,)
    items = tuple(int(k) if k.__class__ is LoopIndex else k for k in items)
    if on_chip and items and items[0] is not Ellipsis and not isinstance(items[0], slice):
        np_shape = (1,) + np.zeros(shape[1:])[items[1:]].shape
    else:
        np_shape = np.zeros(shape)[items].shape
    dropped = len(np_shape) < len(shape) or (on_chip and np_shape[:1] == (1,) and
                                             not isinstance(items[0], slice) and items[0] is not Ellipsis)
    if dropped and len(np_shape) < (2 if on_chip else 1):
        np_shape += (1,)
    return np_shape


def keys(shape):
    rows = entries(shape[0])
    cols = entries(shape[-1])
    yield from rows
    yield from itertools.product(rows, cols)
    if len(shape) == 3:
        few = [0, -1, slice(None), slice(None, None, 2), slice(1, None), Ellipsis]
        yield from itertools.product(few, few, few)
    yield (0,) * (len(shape) + 1)


@pytest.mark.parametrize("shape,buffer", [((4, 6), nl.sbuf), ((4, 3, 5), nl.sbuf), ((1, 8), nl.psum),
                                          ((4, 6), nl.shared_hbm), ((5,), nl.shared_hbm),
                                          ((4, 3, 5), nl.hbm)])
def test_subscripts_address_what_numpy_does(shape, buffer):
    reference = np.arange(math.prod(shape)).reshape(shape)
    with Tracer("trn2", 1):
        t = nl.ndarray(shape, dtype=nl.float32, buffer=buffer)
        on_chip = t._on_chip
        taken = refused = 0
        for key in keys(shape):
            refuse = clamps_or_refused_by_numpy(key, shape)
            if refuse:
                with pytest.raises(NKIError) as e:
                    t[key]  # (the line the error names)
                assert "t[key]  # (the line the error names)" in str(e.value), key
                refused += 1
                continue
            view = t[key]
            items = key if isinstance(key, tuple) else (key,)
            want = reference[tuple(int(k) if k.__class__ is LoopIndex else k for k in items)]
            assert list(addressed(view)) == list(np.ravel(want)), key
            assert view.shape == expected_shape(key, shape, on_chip), key
            taken += 1
        assert taken > 20 and refused > 20


@pytest.mark.parametrize("key,reason", [
    (4, "index 4 is outside dimension 0 (size 4)"),
    ((0, -7), "index -7 is outside dimension 1 (size 6)"),
    ((slice(0, 5),), "slice 0:5 of dimension 0 (size 4) is empty or reaches outside it"),
    ((0, slice(3, 3)), "slice 3:3 of dimension 1 (size 6) is empty or reaches outside it"),
    ((0, slice(None, None, -1)), "slice step -1: steps must be positive"),
    ((0, slice(0, 2, 1.5)), "a slice step: expected an integer, got float"),
    ((True,), "an index: expected an integer, got a bool"),
    ((None,), "an index: expected an integer, got NoneType"),
    ((0, 0, 0), "3 indices for a 2-dimensional tensor"),
    ((Ellipsis, 0, Ellipsis), "a subscript takes one '...'"),
])
def test_refusals_say_why(key, reason):
    with Tracer("trn2", 1):
        t = nl.ndarray((4, 6), dtype=nl.float32, buffer=nl.sbuf)
        with pytest.raises(NKIError) as e:
            t[key]
        assert e.value.reason == reason


def test_runtime_indices_are_refused():
    with Tracer("trn2", 1):
        t = nl.ndarray((4, 6), dtype=nl.float32, buffer=nl.sbuf)
        idx = nl.ndarray((4, 1), dtype=nl.int32, buffer=nl.sbuf)
        with pytest.raises(NKIError, match="a subscript with a runtime index"):
            t[idx]
