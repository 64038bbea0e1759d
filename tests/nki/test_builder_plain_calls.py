"""The builders' lanewise_plain calls made in C (cpp/python/trace_lane_fast.cpp for nl's
activations and reductions and nisa.bn_stats' per_lane, cpp/python/trace_accumulate.cpp for the operators' tensor_scalar and
nl.<op>(x, y, mask=m) of a mask that keeps the whole tile) and the C paths of mask_box and
keeps_all (cpp/python/trace_mask_box.cpp): every kernel here, over rows and columns that leave a
partial last tile (masked), traces to the same module, and refuses with the same message, as with
the Python definitions alone; and also when lanewise_plain declines or makes a result it leaves to
the builders' general parts."""

import re

import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.language as nl
from neuronxsim.nki import indexing, instructions, isa, language, tensor
from neuronxsim.nki.indexing import IndexPredicate, Mask, full_box
from neuronxsim.nki.tensor import Tensor

import tutorial_kernels as tk
from nki_testing import raises_alike, same_outcome, use_definitions

T = nki.typing.tensor

_BINARY = ("add", "subtract", "multiply", "divide")
_OPERATORS = {"__add__": ("add", False), "__radd__": ("add", True),
              "__sub__": ("subtract", False), "__rsub__": ("subtract", True),
              "__mul__": ("multiply", False), "__rmul__": ("multiply", True),
              "__truediv__": ("divide", False), "__rtruediv__": ("divide", True)}


_MASK_BOX, _KEEPS_ALL = indexing.mask_box.__wrapped__, instructions.keeps_all.__wrapped__


def _python_only(m):
    """Within monkeypatch context ``m``: nl's functions, Tensor's operators, mask_box and
    keeps_all are their Python definitions (the builders then make their own lanewise_plain
    calls)."""
    for name in _BINARY + tuple(language._ACTIVATIONS) + ("sum", "max", "min", "prod"):
        m.setattr(language, name, getattr(language, name).__wrapped__)
    use_definitions(m, isa, ("bn_stats", "bn_aggr", "tensor_scalar", "tensor_tensor",
                            "tensor_tensor_scan"))
    for method, (name, reverse) in _OPERATORS.items():
        m.setattr(Tensor, method, tensor._operator(name, reverse))
    for name in list(language._IN_PLACE_ALU):
        m.delitem(language._IN_PLACE_ALU, name)
    m.setattr(indexing, "mask_box", _MASK_BOX)
    m.setattr(instructions, "mask_box", _MASK_BOX)
    m.setattr(instructions, "keeps_all", _KEEPS_ALL)


def _same(monkeypatch, kernel, *args):
    return same_outcome(monkeypatch, _python_only, kernel, *args)


@nki.jit
def lane_kernel(a, b, g):
    """Activations, reductions (every axis spelling, keepdims), tile-and-number and
    tile-and-column operators, and nl.multiply with the loop's mask, over a partial last tile."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    i1 = nl.arange(1)[:, None]
    g_all = nl.load(g.reshape((1, cols))[i1, ic]).broadcast_to((128, cols))
    for t in nl.affine_range((rows + 127) // 128):
        valid = t * 128 + ip < rows
        x = nl.load(a[t * 128 + ip, ic], mask=valid)
        y = nl.load(b[t * 128 + ip, ic], mask=valid)
        sq = nl.square(x)
        e = nl.exp(y)
        m1 = nl.sum(sq, axis=[1]) / cols
        m2 = nl.max(e, axis=1, keepdims=True)
        m3 = nl.min(x, -1) * 2
        m4 = nl.sum(y, axis=(1,), keepdims=True)
        m5 = nl.prod(x, axis=[-1])
        r = nl.rsqrt(m1 + 1e-5)
        s = nl.multiply(x, r)
        s = 2.0 - s / 3 + m2 * s - s * m4
        s = nl.multiply(s, g_all, mask=valid)
        s = nl.add(s, y, mask=valid)
        s = s + m3 + m5 * 0.5
        nl.store(out[t * 128 + ip, ic], value=s, mask=valid)
    return out


@nki.jit
def refusals(a, which):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    ip = nl.arange(128)[:, None]
    ic = nl.arange(cols)[None, :]
    x = nl.load(a[ip, ic])
    if which == "axis-0":
        x = nl.sum(x, axis=0)
    elif which == "axis-2":
        x = nl.sum(x, axis=[2])
    elif which == "axis-bool":
        x = nl.sum(x, axis=True)
    elif which == "keepdims-int":
        x = nl.sum(x, axis=1, keepdims=1)
    elif which == "huge-int":
        x = x * (10 ** 400)
    elif which == "bad-mask":
        x = nl.multiply(x, x, mask=ip + ic)
    elif which == "mask-bool":
        x = nl.multiply(x, x, mask=True)
    elif which == "mask-too-wide":
        x = nl.load(a[ip, ic], mask=(ip + 0 < 64))
        x = nl.multiply(x, x, mask=(ip + 0 < 64))
    nl.store(out[ip, ic], value=x)
    return out


@pytest.mark.parametrize("rows, cols", [(128, 64), (300, 200), (129, 48)])
def test_the_c_calls_trace_as_the_python_builders(monkeypatch, rows, cols):
    outcome = _same(monkeypatch, lane_kernel, T[[rows, cols], nl.float32],
                    T[[rows, cols], nl.float32], T[[cols], nl.float32])
    assert not outcome.startswith(("NKIError", "TypeError")), outcome


@pytest.mark.parametrize("which", ["axis-0", "axis-2", "axis-bool", "keepdims-int", "bad-mask",
                                   "mask-bool", "mask-too-wide"])
def test_the_c_calls_refuse_and_decline_as_the_python_builders(monkeypatch, which):
    _same(monkeypatch, refusals, T[[128, 64], nl.float32], which)


def test_an_int_too_large_for_a_float_raises_as_from_python(monkeypatch):
    """(An OverflowError, which trace_outcome does not compare: raised by both, the builder's.)"""
    raises_alike(monkeypatch, _python_only, OverflowError, refusals, T[[128, 64], nl.float32], "huge-int")


_KERNELS = [
    (lane_kernel, (T[[300, 200], nl.float32], T[[300, 200], nl.float32], T[[200], nl.float32])),
    (tk.layernorm_v2, (T[[300, 1100], nl.float32], 1e-5, T[[1100], nl.float32],
                       T[[1100], nl.float32])),
]


@pytest.mark.parametrize("kernel, args", _KERNELS)
def test_when_lanewise_plain_declines(monkeypatch, kernel, args):
    """A lanewise_plain that takes nothing: the C calls go on with the builders' general parts."""
    monkeypatch.setattr(instructions, "lanewise_plain", lambda *args: NotImplemented)
    _same(monkeypatch, kernel, *args)


@pytest.mark.parametrize("kernel, args", _KERNELS)
def test_when_lanewise_plain_makes_but_does_not_record(monkeypatch, kernel, args):
    """A lanewise_plain that makes the new result but leaves its recording to the general part
    (as when write_plain does not take it): the C calls go on with that result."""
    def made(tr, opcode, engine, shape, tiles, pointers, out, out_shape, dtype, what, fields,
             loc):
        if out is not None:
            return NotImplemented
        return (tr.new_result(language.SBUF, dtype, out_shape, what, loc),)

    monkeypatch.setattr(instructions, "lanewise_plain", made)
    _same(monkeypatch, kernel, *args)


@pytest.mark.parametrize("kernel, args", [
    (tk.rmsnorm_kernel, (T[[300, 200], nl.float32], T[[200], nl.float32])),
    (tk.layernorm_v1, (T[[300, 200], nl.float32], 1e-5, T[[200], nl.float32],
                       T[[200], nl.float32])),
    (tk.layernorm_v2, (T[[300, 1100], nl.float32], 1e-5, T[[1100], nl.float32],
                       T[[1100], nl.float32])),
    (tk.softmax_kernel, (T[[200, 300], nl.float32],)),
])
def test_tutorial_kernels_trace_as_with_the_python_builders(monkeypatch, kernel, args):
    outcome = _same(monkeypatch, kernel, *args)
    assert not outcome.startswith(("NKIError", "TypeError")), outcome


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # (the definitions' errors, compared by type and message)
        return (type(e).__name__, str(e))


def test_mask_box_and_keeps_all_answer_as_the_definitions():
    """Remembered boxes (box_cache, _PREDICATE_BOXES), masks of two predicates, bool masks and
    what is no mask: each C path answers as its definition, and remembers the box it does."""
    ip = indexing.arange(128)[:, None]
    i_f = indexing.arange(64)[None, :]
    box_py, keeps_py = _MASK_BOX, _KEEPS_ALL
    shapes = [(128, 64), (128, 32), (64, 64)]

    def masks():
        return [ip + 0 < 100, ip + 0 < 128, i_f + 0 < 64, i_f + 8 < 64, (ip + 0 < 100) & (i_f + 0 < 30),
                Mask(((ip + 0 < 128),)), True, False, None, 3, ip + i_f < 100, "mask"]

    for shape in shapes:
        for repeat in range(2):  # (the second time from what the first remembered)
            fast_masks, py_masks = masks(), masks()
            for fm, pm in zip(fast_masks, py_masks):
                if fm is not None:
                    assert _outcome(indexing.mask_box, fm, shape) == _outcome(box_py, pm, shape)
                    for m in (fm, pm):
                        if isinstance(m, (IndexPredicate, Mask)):
                            assert m.box_cache is None or m.box_cache[0] == shape
                assert _outcome(instructions.keeps_all, fm, shape) == _outcome(keeps_py, pm, shape)
    assert instructions.keeps_all(ip + 0 < 128, (128, 64)) is True
    mask = ip + 0 < 128
    assert indexing.mask_box(mask, (128, 64)) is full_box((128, 64))
    assert mask.box_cache == ((128, 64), full_box((128, 64)))


def test_mask_box_remembers_predicate_boxes_by_value():
    """A loop's new mask of every iteration finds its box by the values of its predicate
    (_PREDICATE_BOXES, and the C path's copy by value): the definition's box, also once the dict
    is cleared, and for a const that is no exact int (the dict's alone)."""
    import numpy as np
    i_f = indexing.arange(512)[None, :]
    ip = indexing.arange(128)[:, None]
    shape = (128, 512)
    for clear in (False, True, False):
        if clear:
            indexing._PREDICATE_BOXES.clear()
        for j in range(4):
            for fresh in (lambda: j * 512 + i_f < 1800, lambda: i_f + j * 512 < 2048,
                          lambda: ip + j * 40 < 100,
                          lambda: indexing.IndexPredicate(indexing.IndexExpr(
                              (1, 512), np.int64(j * 512 - 1800), (0, 1)), "<")):
                got, want = indexing.mask_box(fresh(), shape), _MASK_BOX(fresh(), shape)
                assert got == want
                assert (got is full_box(shape)) == (want is full_box(shape))
    assert indexing.mask_box(3 * 512 + i_f < 1800, shape) == ((0, 128), (0, 1800 - 3 * 512))


def _expr_outcome(fn, *args):
    """A result's class and slots (an IndexPredicate's expr by its slots too), or the error."""
    try:
        r = fn(*args)
    except Exception as e:  # (the definitions' errors, compared by type and message)
        return (type(e).__name__, re.sub(r"^\S+:\d+: ", "", str(e).split("\n")[0]))  # (no line)
    def slots(o):
        return tuple(slots(v) if isinstance(v, indexing.IndexExpr) else (type(v), v)
                     for v in (getattr(o, n) for n in type(o).__slots__))
    return type(r), slots(r)


def test_index_expr_operators_answer_as_the_definitions():
    """IndexExpr's C `+` (both sides) and `<` against their Python definitions (the C methods'
    own fallbacks), for ints, loop indices and every other operand they hand on."""
    from neuronxsim.starfish.lib import _core
    import numpy as np
    definitions = indexing._OPERATOR_DEFINITIONS
    for name in ("__add__", "__radd__", "__lt__"):
        assert type(indexing.IndexExpr.__dict__[name]).__name__ == "method_descriptor"
    ip = indexing.arange(128)[:, None]
    i_f = indexing.arange(64)[None, :]
    odd = indexing.IndexExpr((128, 1), np.int64(3), (1, 0))  # (a const that is no exact int)
    operands = [0, 7, -300, 10 ** 30, _core.nki.LoopIndex(3), np.int64(5), True, 2.5, i_f, "x",
                None]
    for e in (ip, i_f, ip + 5, odd):
        for k in operands:
            assert _expr_outcome(lambda: e + k) == _expr_outcome(definitions["__add__"], e, k)
            if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                assert _expr_outcome(lambda: k + e) == _expr_outcome(definitions["__add__"], e, k)
            assert _expr_outcome(lambda: e < k) == _expr_outcome(definitions["__lt__"], e, k)
    assert type((ip + _core.nki.LoopIndex(3)).const) is int
    assert type((ip < 100).expr.const) is int and (ip < 100).box_cache is None
