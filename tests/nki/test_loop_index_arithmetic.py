"""Arithmetic on loop indices (cpp/python/trace_loop_index.cpp): sums, differences and products
of loop indices with ints or loop indices are loop indices of int's value, computed in machine
words where they fit and shared for small values; checked against int's own arithmetic over
values that cross the shared range's ends, the one-digit ints, the machine word and beyond."""

from __future__ import annotations

import operator

import pytest

from neuronxsim.nki.indexing import LoopIndex

VALUES = [-(2 ** 63) - 1, -(2 ** 63), -(2 ** 62), -(2 ** 30), -257, -256, -255, -1, 0, 1, 127, 128,
          2 ** 14 - 1, 2 ** 14, 2 ** 30 - 1, 2 ** 30, 2 ** 31, 2 ** 62, 2 ** 63 - 1, 2 ** 63, 10 ** 30]
OPS = [operator.add, operator.sub, operator.mul]


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.__name__)
@pytest.mark.parametrize("a_is_index,b_is_index", [(True, False), (False, True), (True, True)])
def test_closed_operations_are_loop_indices_of_ints_value(op, a_is_index, b_is_index):
    for a in VALUES:
        for b in VALUES:
            x = LoopIndex(a) if a_is_index else a
            y = LoopIndex(b) if b_is_index else b
            r = op(x, y)
            assert r.__class__ is LoopIndex and int(r) == op(a, b), (op.__name__, a, b)


def test_negation_and_the_other_operand_types():
    for a in VALUES:
        n = -LoopIndex(a)
        assert n.__class__ is LoopIndex and int(n) == -a
    k = LoopIndex(3)
    assert (k * 1.5).__class__ is float and k * 1.5 == 4.5
    assert (True * k).__class__ is int and True * k == 3  # (a bool is not an index's operand)
    assert (k // 2).__class__ is int and (k % 2).__class__ is int  # (only +, - and * are closed)


def test_shared_results_stay_what_they_are():
    small = [LoopIndex(i) * 128 for i in range(4)]  # (shared: the same objects again below)
    assert [int(v) for v in small] == [0, 128, 256, 384]
    again = [LoopIndex(i) * 128 for i in range(4)]
    assert [int(v) for v in again] == [0, 128, 256, 384] and all(v.__class__ is LoopIndex for v in again)
