"""Tracer.iterate in C (cpp/python/trace_loop_iterate.cpp): the loop iteration the tracer is in
while a traced loop's body runs, the index values, and the iteration restored when a loop ends,
is left by `break` or by an exception, as the Python generator it replaces did."""

import sys

import pytest

import neuronxsim.nki.language as nl
import neuronxsim.nki.compiler as ncc
from neuronxsim.nki.indexing import LoopIndex
from neuronxsim.nki.tracer import Tracer


def _where(tr):
    it = tr.loop
    return None if it is None else (it.loop.kind, it.loop.trips, it.iteration)


def test_iterations_and_indices():
    with Tracer("trn2", 1) as tr:
        seen = []
        for i in nl.affine_range(3):
            for j in nl.static_range(1, 5, 2):
                outer = tr.loop.loop.outer
                seen.append((i.__class__, int(i), j.__class__, j, _where(tr), (outer.loop.kind, outer.iteration)))
        assert seen == [(LoopIndex, i, int, j, ("static", 2, n), ("affine", i))
                        for i in range(3) for n, j in enumerate((1, 3))]
        assert tr.loop is None
        line = sys._getframe().f_lineno + 1
        for k in nl.sequential_range(2, 8, 3, directives=ncc.no_reorder()):
            assert k.__class__ is LoopIndex and _where(tr)[:2] == ("sequential", 2)
            assert [d.kind for d in tr.loop.loop.directives] == ["no_reorder"]
            assert tr.loop.loop.loc.line == line  # (the loop's line)
        assert tr.loop is None


def test_the_outer_iteration_comes_back_however_a_loop_ends():
    with Tracer("trn2", 1) as tr:
        for i in nl.affine_range(2):
            here = tr.loop
            for m in nl.affine_range(3):
                if m == 1:
                    break
            assert tr.loop is here  # (the broken loop's iterator is dropped)
            with pytest.raises(ValueError):
                for m in nl.affine_range(4):
                    raise ValueError
            assert tr.loop is here
            for m in nl.affine_range(0):
                pass
            assert tr.loop is here
        assert tr.loop is None


def test_a_loop_starts_where_it_is_first_iterated():
    with Tracer("trn2", 1) as tr:
        later = nl.affine_range(2)  # (made outside, iterated inside: its outer is where it runs)
        assert tr.loop is None
        for i in nl.sequential_range(3):
            if i == 1:
                kept = nl.affine_range(5)
                for y in later:
                    assert tr.loop.loop.outer.loop.kind == "sequential" and tr.loop.loop.outer.iteration == 1
                for z in kept:
                    break  # (kept alive by its name: the generator's finally had not run either)
                assert _where(tr) == ("affine", 5, 0)
                del kept
                assert _where(tr) == ("sequential", 3, 1)
        assert tr.loop is None
