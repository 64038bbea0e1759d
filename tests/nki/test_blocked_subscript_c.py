"""The C subscript and stores of tensors with block dimensions (cpp/python/trace_blocked.cpp) and
the C in-place operators (trace_accumulate.cpp): the view each key names (the block its indices
name, the rest of the key applied), what the Python subscript (neuronxsim.nki.tensor.
_blocked_getitem) gives for the keys the C one hands on, its errors word for word, and
matmuls accumulated into blocks computing the right values."""

import itertools

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki.errors import NKIError
from neuronxsim.nki.indexing import LoopIndex
from neuronxsim.nki.tensor import BlockedTensor, Tensor, _blocked_getitem
from neuronxsim.nki.tracer import Tracer
from nki_testing import close, run_on_reference as run


def _fields(t):
    return (t.storage, t.offset, t.shape, t.strides, [(c.const, c.coefs, c.size) for c in t.checks])


def _expected(t: BlockedTensor, key):
    """What ``t[key]`` must be, worked out without either subscript: the block of the key's
    block indices (negative from the end), the rest of the key applied by Tensor's subscript;
    None for a key that must raise (a block index that is no integer or outside its dim)."""
    key = key if isinstance(key, tuple) else (key,)
    nb = len(t.block_shape)
    index = []
    for k, size in zip(key[:nb], t.block_shape):
        if not isinstance(k, (int, np.integer)):  # (bool included: an int)
            return None
        k = int(k)
        if not -size <= k < size:
            return None
        index.append(k % size)
    if len(index) < nb:
        return "partial", tuple(index)
    view = t.block(tuple(index))
    rest = key[nb:]
    return view if not rest or rest == (Ellipsis,) else view[rest]


_INDICES = [0, 1, 2, -1, -3, 3, -4, LoopIndex(2), LoopIndex(-1), LoopIndex(5), np.int64(-2), True,
            slice(None), slice(0, 2), Ellipsis, None, 1.0, 2 ** 70]
_RESTS = [(), (Ellipsis,), (slice(None),), (slice(None), slice(1, 5)), (1,), (LoopIndex(1), slice(0, 6, 2)),
          (slice(0, 2), LoopIndex(3)), (slice(0, 9),), (slice(None), 7), (0, 0, 0)]


@pytest.mark.parametrize("block_shape", [(3,), (3, 2)])
def test_every_block_subscript_names_its_block(block_shape):
    taken = refused = partial = 0
    with Tracer("trn2", 1):
        t = nl.ndarray(block_shape + (nl.par_dim(4), 6), dtype=nl.float32, buffer=nl.sbuf)
        assert t.__class__ is BlockedTensor
        keys = [i for i in _INDICES]
        for head in itertools.product(_INDICES, repeat=len(block_shape)):
            keys += [head + rest for rest in _RESTS]
        for key in keys:
            try:
                want = _expected(t, key)
            except NKIError as e:  # (the rest of the key is refused by Tensor's subscript)
                want = e
            if want is None or isinstance(want, NKIError):
                with pytest.raises(NKIError) as got:
                    t[key]  # (the line the error names)
                with pytest.raises(NKIError) as python:
                    _blocked_getitem(t, key)
                assert got.value.reason == python.value.reason, key
                assert "t[key]  # (the line the error names)" in str(got.value), key
                if want is not None:
                    assert got.value.reason == want.reason, key
                refused += 1
                continue
            view = t[key]
            if isinstance(want, tuple):  # t[i] of blocks [I, J]: the blocks of row i
                assert view.__class__ is BlockedTensor and view.block_shape == block_shape[len(want[1]):]
                assert view[(0,) * len(view.block_shape)] is t.block(want[1] + (0,) * len(view.block_shape))
                partial += 1
                continue
            assert view.__class__ is Tensor
            assert _fields(view) == _fields(want), key
            rest = (key if isinstance(key, tuple) else (key,))[len(block_shape):]
            if not rest or rest == (Ellipsis,):
                assert view is want, key  # (a block's own view, kept)
            wrapped = key if isinstance(key, tuple) else (key,)
            assert t.last_subscript[0] == wrapped and t.last_subscript[1] is view, key
            taken += 1
    assert taken > 50 and refused > 50
    assert partial > 0 or len(block_shape) == 1


def test_the_error_texts_of_block_subscripts():
    with Tracer("trn2", 1):
        t = nl.ndarray((3, 2, nl.par_dim(4), 6), dtype=nl.float32, buffer=nl.sbuf, name="acc")
        for key, text in [((3, 0), "block index 3 is out of range for block dimension 0 of size 3 of acc"),
                          ((0, -3), "block index -3 is out of range for block dimension 1 of size 2 of acc"),
                          ((LoopIndex(2), LoopIndex(2)),
                           "block index 2 is out of range for block dimension 1 of size 2 of acc"),
                          ((slice(None), 0), "acc has block dimensions [3, 2]: index each one with an integer "
                                             "(t[i, ...]) to get a tile; instructions work on one block at a "
                                             "time, not on slice over blocks")]:
            with pytest.raises(NKIError) as got:
                t[key]
            assert got.value.reason == text


def test_blocks_are_made_once_and_kept():
    with Tracer("trn2", 1) as tr:
        t = nl.ndarray((2, 3, nl.par_dim(4), 6), dtype=nl.float32, buffer=nl.sbuf)
        before = len(tr.storages)
        first = t[1, LoopIndex(2)]
        assert len(tr.storages) == before + 1 and t.blocks == {(1, 2): first}
        assert t[-1, -1] is first and t[np.int64(1), 2] is first and t[1][2] is first
        assert t[0, 0] is not first and len(tr.storages) == before + 2
        assert first.storage.shape == (4, 6) and first.storage.hint == "ndarray"
        assert all(k.__class__ is int for index in t.blocks for k in index)  # (no loop indices kept)


def test_par_dim_shapes_are_not_the_tiles_of_the_same_ints():
    with Tracer("trn2", 1):
        for first, second in [((2, 128, 4), (2, nl.par_dim(128), 4)), ((2, nl.par_dim(128), 4), (2, 128, 4)),
                              ((2, nl.par_dim(128), 4), (2, 128, nl.par_dim(4)))]:
            for shape in (first, second, first, second):  # (each a second time: what the caches keep)
                t = nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf)
                pidx = next((i for i, n in enumerate(shape) if n.__class__ is nl.par_dim), 0)
                if pidx:
                    assert t.__class__ is BlockedTensor, shape
                    assert (t.block_shape, t.tile_shape) == (shape[:pidx], shape[pidx:]), shape
                    assert all(n.__class__ is int for n in t.block_shape + t.tile_shape)
                else:
                    assert t.__class__ is Tensor and t.shape == shape, shape


def test_a_store_reuses_the_view_of_the_same_key():
    with Tracer("trn2", 1):
        t = nl.ndarray((2, nl.par_dim(4), 6), dtype=nl.float32, buffer=nl.sbuf)
        key = (1, slice(None), slice(0, 3))
        view = t[key]
        t.last_subscript = (key, "the view")  # (what a store of that key object must take)
        t[key] = "the view"  # the value is the view: nothing to assign
        assert t.last_subscript == (key, "the view")
        with pytest.raises(NKIError, match="nl.load it first|HBM"):
            t[(1, slice(None), slice(0, 3))] = nl.ndarray((4, 3), dtype=nl.float32, buffer=nl.shared_hbm)
        assert t.last_subscript[1].storage is view.storage


@nki.jit
def blocked_accumulate(a, b):
    """Matmuls accumulated into the blocks of a [2, 2] PSUM tensor, indexed by loop indices and
    by negative ints, stored through a copy per block."""
    K, M = a.shape
    _, N = b.shape
    out = nl.ndarray((2 * M, 2 * N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((2, 2, nl.par_dim(M), N), dtype=nl.float32, buffer=nl.psum)
    x = nl.ndarray((2, nl.par_dim(K), M), dtype=a.dtype, buffer=nl.sbuf)
    y = nl.ndarray((2, nl.par_dim(K), N), dtype=b.dtype, buffer=nl.sbuf)
    x[0] = nl.load(a)
    x[-1] = nl.load(a)
    y[0] = nl.load(b)
    y[1, :, :] = nl.load(b)
    for i in nl.affine_range(2):
        for j in nl.affine_range(2):
            acc[i, j] += nisa.nc_matmul(x[i, :, :], y[j, :, 0:N])
    acc[-1, -1] += nisa.nc_matmul(x[0], y[0])  # block [1, 1] again: twice a.T @ b
    s = nl.ndarray((nl.par_dim(M), N), dtype=nl.float32, buffer=nl.sbuf)
    s[...] = nl.copy(acc[0, 1])
    s += nl.copy(acc[1, 0])  # (SBUF: an element-wise add, not a matmul group)
    for i in nl.affine_range(2):
        for j in nl.affine_range(2):
            nl.store(out[i * M:(i + 1) * M, j * N:(j + 1) * N], value=nl.copy(acc[i, j]))
    nl.store(out[0:M, N:2 * N], value=s)
    return out


def test_matmuls_accumulate_into_blocks(rng):
    a = rng.random((64, 32)).astype(np.float32)
    b = rng.random((64, 48)).astype(np.float32)
    out = run(blocked_accumulate, a, b)
    p = a.T @ b
    close(out, np.block([[p, 2 * p], [p, 2 * p]]), atol=1e-3, rtol=1e-4)


@nki.jit
def accumulate_into_hbm(a):
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t += nl.load(a)  # (the line the error names)
    return t


def test_an_in_place_operator_on_hbm_names_the_kernel_line():
    with pytest.raises(NKIError) as got:
        nki.trace(accumulate_into_hbm, np.zeros((4, 4), np.float32))
    assert "the target of 'add='" in str(got.value)
    assert "t += nl.load(a)  # (the line the error names)" in str(got.value)
