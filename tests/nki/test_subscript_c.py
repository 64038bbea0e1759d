"""The C subscript of 2.2x tensors (cpp/python/trace_subscript.cpp) against the Python one it
shortcuts (neuronxsim.nki.tensor._getitem): the same view for every key, and the same error for
every key the Python subscript refuses."""

import itertools

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
