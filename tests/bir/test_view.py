"""bir.View (cpp/bir/View.h), the one access-pattern algebra, against NumPy: a chain of view
operations over a tensor addresses exactly the elements (in the same order) of the same chain of
NumPy views over ``np.arange``, whose values are the elements' flat indices. Shapes cross the
partition-tile boundary (1, 127, 128, 129 rows)."""

from __future__ import annotations

import numpy as np
import pytest

from neuronxsim import bir
from neuronxsim.errors import BIRError

F32, BF16 = bir.DType.float32, bir.DType.bfloat16
ROWS = [1, 127, 128, 129]


def addressed(ap: bir.AccessPattern) -> np.ndarray:
    """The element indices ``ap`` enumerates, in order."""
    idx = np.array(ap.offset, dtype=np.int64)
    for pair in ap.pattern:
        idx = idx[..., None] + pair.step * np.arange(pair.num, dtype=np.int64)
    return idx.reshape(-1)


def same(view: bir.View, expected: np.ndarray) -> None:
    assert view.shape == list(expected.shape[1:] if view.is_on_chip else expected.shape)
    np.testing.assert_array_equal(addressed(view.ap()), expected.reshape(-1))
    np.testing.assert_array_equal(addressed(view.normalised().ap()), expected.reshape(-1))


@pytest.fixture
def function():
    module = bir.Module()
    yield module.addFunction()


def dram(function, shape):
    loc = function.createDramTensor(f"t{len(shape)}_{shape[0]}", bir.MemoryType.Input, F32, shape,
                                    bir.TensorKind.Input)
    return bir.View.ofShape(loc, F32, shape), np.arange(int(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("rows", ROWS)
def test_dram_chains_match_numpy(function, rows):
    v, a = dram(function, [rows, 6, 10])
    same(v, a)
    same(v.slice(0, rows // 3, max(1, rows // 2), 1), a[rows // 3:rows // 3 + max(1, rows // 2)])
    same(v.slice(2, 1, 3, 3), a[:, :, 1:10:3])
    same(v.slice(2, 9, 4, -3), a[:, :, 9::-3])  # backwards
    same(v.slice(0, rows - 1, rows, -1), a[::-1])
    same(v.at(1, 4), a[:, 4])
    same(v.split(2, 5), a.reshape(rows, 6, 2, 5))
    same(v.permute([2, 0, 1]), a.transpose(2, 0, 1))
    same(v.broadcast(1, 3), np.broadcast_to(a[:, None], (rows, 3, 6, 10)))
    same(v.merge(1), a.reshape(rows, 60))
    same(v.rows(), a.reshape(rows * 6, 10))
    same(v.flatten(), a.reshape(-1))
    same(v.slice(1, 1, 4).split(2, 2).permute([0, 2, 1, 3]).at(3, 1),
         a[:, 1:5].reshape(rows, 4, 5, 2).transpose(0, 2, 1, 3)[..., 1])
    # bitcast: the same bytes as twice as many bfloat16 elements
    a16 = np.arange(2 * a.size).reshape(rows, 6, 20)
    same(v.slice(1, 2, 3).bitcast(BF16), a16[:, 2:5])
    same(v.bitcast(BF16).slice(2, 4, 8).bitcast(F32), a[:, :, 2:6])


@pytest.mark.parametrize("rows", ROWS)
def test_flatten_dims_and_reshape_match_numpy(function, rows):
    """flattenDims merges a run of dims that nest (unit dims aside); reshape is NumPy's no-copy
    reshape, refused where NumPy would have to copy."""
    v, a = dram(function, [rows, 6, 10])
    same(v.flattenDims(1, 2), a.reshape(rows, 60))
    same(v.flattenDims(0, 1), a.reshape(rows * 6, 10))
    same(v.flattenDims(1, 1), a)
    same(v.slice(2, 2, 1).flattenDims(1, 2), a[:, :, 2:3].reshape(rows, 6))  # a unit dim is skipped
    assert v.slice(1, 3, 1).slice(2, 4, 1).flattenDims(1, 2).dims[1].step == 1  # (all unit: step 1)
    same(v.reshape([rows * 3, 2, 10]), a.reshape(rows * 3, 2, 10))
    same(v.reshape([rows, 1, 60]), a.reshape(rows, 1, 60))
    same(v.reshape([rows * 60]), a.reshape(-1))
    t = v.slice(2, 0, 5)  # rows of 5 of 10: the last dims no longer nest
    same(t.reshape([rows, 3, 2, 5]), a[:, :, :5].reshape(rows, 3, 2, 5))  # a split needs no copy
    same(v.permute([0, 2, 1]).reshape([rows, 10, 2, 3]), a.transpose(0, 2, 1).reshape(rows, 10, 2, 3))
    assert [p.step for p in v.reshape([1, rows, 60, 1]).dims][::3] == [1, 1]  # unit dims: step 1
    with pytest.raises(BIRError, match=r"View::reshape: .* as \[.*, 30\] needs a copy"):
        t.reshape([rows, 30])
    with pytest.raises(BIRError, match="View::reshape: .* 7 elements, not"):
        v.reshape([7])
    with pytest.raises(BIRError, match=r"View::flatten: dims 1\.\.2 of .* do not nest"):
        t.flattenDims(1, 2)


def test_strided_views_round_trip():
    """A tracer's (offset, shape, strides) view in and out in one call each."""
    v = bir.View.ofStrides(7, (4, 3, 5), (15, 5, 1))
    assert v.location is None and [(p.step, p.num) for p in v.dims] == [(15, 4), (5, 3), (1, 5)]
    assert v.slice(2, 1, 2, 2).strided == (8, (4, 3, 2), (15, 5, 2))
    assert v.at(1, 2).strided == (17, (4, 5), (15, 1))
    with pytest.raises(BIRError, match="View::ofStrides: 2 sizes and 1 strides"):
        bir.View.ofStrides(0, (2, 3), (1,))


@pytest.mark.parametrize("rows", ROWS)
def test_kernel_operand_round_trip(function, rows):
    """A sub-tensor made partition-first for createAP reads back as the same logical view."""
    v, a = dram(function, [4, rows, 8])
    sub = v.slice(0, 1, 2).slice(2, 2, 3, 2)
    pairs = sub.partitionFirstPairs(1)
    ap = bir.Instruction.createAP(v.location, sub.offset, pairs, sub.shape, 1, 1)
    np.testing.assert_array_equal(addressed(ap), a[1:3, :, 2:8:2].transpose(1, 0, 2).reshape(-1))
    back = bir.View.ofOperand(ap, "ins[0]")
    assert back.dims == sub.dims and back.offset == sub.offset


@pytest.mark.parametrize("partitions", [1, 127, 128])
def test_on_chip_chains_match_numpy(function, partitions):
    row = 64
    loc = function.createOnChipTensor("sb", bir.MemoryType.SB, F32, 128, 4 * row, 0, 0, [])
    a = np.arange(128 * row).reshape(128, row)
    t = bir.View.onChip(loc, F32, partitions, [4, 16])
    base = a[:partitions, :64].reshape(partitions, 4, 16)
    ap = t.ap()
    assert (ap.pattern[0].step, ap.pattern[0].num) == (row, partitions)  # the partition pair first
    same(t, base)
    p0 = partitions // 2
    n = partitions - p0
    same(t.partitionRange(p0, n), base[p0:])
    same(t.slice(1, 3, 5), base[:, :, 3:8])
    same(t.at(0, 2), base[:, 2])
    same(t.at(0, 2).at(0, 7), base[:, 2, 7:8])  # a tile keeps one free dim
    same(t.split(1, 4), base.reshape(partitions, 4, 4, 4))
    same(t.permute([1, 0]), base.transpose(0, 2, 1))
    same(t.at(0, 1).at(0, 0).broadcast(0, 6), np.broadcast_to(base[:, 1, 0:1], (partitions, 6)))
    same(t.flatten(), base.reshape(partitions, 64))
    a16 = np.arange(2 * a.size).reshape(128, 2 * row)
    same(t.slice(0, 1, 2).bitcast(BF16), a16[:partitions, 32:96])


def test_refusals_name_the_operation(function):
    v, _ = dram(function, [128, 6, 10])
    with pytest.raises(BIRError, match=r"View::slice: \[5, 8\) of dim 1"):
        v.slice(1, 5, 3)
    with pytest.raises(BIRError, match=r"View::slice: 3 elements every -2 from 3 of dim 1"):
        v.slice(1, 3, 3, -2)  # (reaches element -1)
    with pytest.raises(BIRError, match=r"View::slice: 2 elements every 0 from 1 of dim 1"):
        v.slice(1, 1, 2, 0)
    with pytest.raises(BIRError, match="View::merge: dims 1 and 2 of .* do not nest"):
        v.slice(2, 0, 5).merge(1)
    with pytest.raises(BIRError, match="View::split: dim 2 of .* by 3"):
        v.split(2, 3)
    with pytest.raises(BIRError, match="needs a contiguous, aligned innermost dim"):
        v.permute([0, 2, 1]).bitcast(BF16)
    with pytest.raises(BIRError, match="View::rows: a partition range of the DRAM view"):
        v.partitionRange(0, 1)
