"""IndexExpr / IndexPredicate made without __init__ (indexing._expr, _predicate: the hot
arithmetic of nl.arange expressions) are the objects the classes' constructors make, and
nl.arange's plain-int path gives what its general path does for other integer types."""

import numpy as np
import pytest

from neuronxsim.nki import indexing as ix
from neuronxsim.nki.errors import NKIError
from neuronxsim.starfish.lib import _core


def _slots(o):
    return tuple(getattr(o, name) for name in type(o).__slots__)


def test_fast_constructors_match_init():
    e = ix._expr((128, 1), 5, (1, 0))
    assert type(e) is ix.IndexExpr and _slots(e) == _slots(ix.IndexExpr((128, 1), 5, (1, 0)))
    p = ix._predicate(e, "<")
    q = ix.IndexPredicate(ix.IndexExpr((128, 1), 5, (1, 0)), "<")
    assert type(p) is ix.IndexPredicate and p.op == q.op and p.box_cache is q.box_cache is None
    assert _slots(p.expr) == _slots(q.expr)


@pytest.mark.parametrize("other", [7, _core.nki.LoopIndex(3)])
def test_arithmetic_and_comparison(other):
    ip = ix.arange(128)[:, None]
    general = ix.IndexExpr(ip.shape, ip.const + int(other), ip.coefs)
    for e in (ip + other, other + ip):
        assert _slots(e) == _slots(general)
    assert _slots(ip - other) == (ip.shape, -int(other), ip.coefs)
    pred = ip + other < 100
    assert pred.op == "<" and _slots(pred.expr) == (ip.shape, int(other) - 100, ip.coefs)
    assert ix.mask_box(pred, (128, 4)) == ((0, 100 - int(other)), (0, 4))


@pytest.mark.parametrize("args", [(24,), (2, 24), (2, 24, 3), (24, 2, -2)])
def test_arange_plain_ints_match_numpy_ints(args):
    plain = ix.arange(*args)
    general = ix.arange(*(np.int64(a) for a in args))
    assert _slots(plain) == _slots(general)
    assert all(type(v) is int for v in (plain.const,) + plain.coefs)


@pytest.mark.parametrize("args, message", [((True,), "boolean"), ((2.0,), "float"),
                                           ((3, 3), "empty"), ((0, 4, 0), "step")])
def test_arange_errors_unchanged(args, message):
    with pytest.raises(NKIError, match=message):
        ix.arange(*args)
