"""The C subscript of NKI 0.6 tensors (cpp/python/trace_subscript.cpp) against the Python one it
shortcuts (neuronxsim.nki06.tensor._subscript): the same view for every key it takes, and the
same error for every key the Python subscript refuses."""

import itertools

import pytest

import neuronxsim.nki06.language as nl
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki.indexing import LoopIndex
from neuronxsim.nki.tracer import Tracer
from neuronxsim.nki06.tensor import _subscript


def _fields(t):
    v = t._view
    return (v.storage, v.offset, v.shape, v.strides, v.checks, t._buffer, t._indirect)


def _keys(shape):
    """Keys over ``shape``: ints (negative too), loop indices, slices of both, ``:``, ``...``,
    and some that leave the tensor or that the C path hands back (steps, open ends, floats)."""
    n = shape[0]
    loop = LoopIndex(1) if n > 1 else LoopIndex(0)
    entries = [0, n - 1, -1, n, -n - 1, loop, slice(None), slice(0, n), slice(1, n),
               slice(loop, loop + 1), slice(0, 1, 2), slice(None, 1), slice(1, 1), 1.0, True,
               Ellipsis]
    yield from entries
    for a, b in itertools.product(entries[::2], entries[1::2]):
        yield (a, b)
        yield (b, a)
    yield (0,) * (len(shape) + 1)
    yield (Ellipsis, Ellipsis)
    yield (slice(None),) * len(shape)


@pytest.mark.parametrize("shape,buffer", [((4, 6), nl.sbuf), ((4, 3, 5), nl.sbuf),
                                          ((4, 6), nl.shared_hbm), ((5,), nl.shared_hbm),
                                          ((4, 3, 5), nl.hbm), ((1, 8), nl.psum)])
def test_c_subscript_is_the_python_subscript(shape, buffer):
    dtype = nl.float32
    with Tracer("trn2", 1):
        t = nl.ndarray(shape, dtype=dtype, buffer=buffer)
        for key in _keys(shape):
            try:
                expected = _fields(_subscript(t, key, None))
            except NKIError as e:
                with pytest.raises(NKIError) as got:
                    t[key]  # (the line the error names)
                assert got.value.reason == e.reason, key
                assert got.value.location.path == __file__, key
                assert "t[key]  # (the line the error names)" in str(got.value), key
                continue
            assert _fields(t[key]) == expected, key
