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


RANGES = [(5,), (0,), (-3,), (2, 9), (9, 2), (2, 9, 3), (2, 10, 3), (9, 2, -2), (9, 2, -7), (0, 1, 10),
          (-(2 ** 63), 2 ** 63 - 1, 2 ** 62), (2 ** 63 - 2, -(2 ** 63), -(2 ** 63) + 5),
          (2 ** 64, 2 ** 64 + 3), (-(2 ** 70), -(2 ** 70) + 5, 2)]  # (the last two: beyond a machine word)


@pytest.mark.parametrize("bounds", RANGES, ids=str)
@pytest.mark.parametrize("make", [nl.affine_range, nl.sequential_range, nl.static_range],
                         ids=lambda f: f.__name__)
def test_the_values_and_iterations_are_those_of_range(make, bounds):
    want = list(range(*bounds))
    with Tracer("trn2", 1) as tr:
        got = []
        for v in make(*bounds):
            got.append((v.__class__, v, tr.loop.loop.trips, tr.loop.iteration))
        kind = LoopIndex if make is not nl.static_range else int
        assert got == [(kind, v, len(want), n) for n, v in enumerate(want)]
        assert tr.loop is None


def test_a_replaced_tracer_iterate_is_what_the_range_functions_call(monkeypatch):
    calls = []
    real = Tracer.iterate

    def counting(self, kind, values, loc, *rest):
        calls.append((kind, values))
        return real(self, kind, values, loc, *rest)

    monkeypatch.setattr(Tracer, "iterate", counting)
    with Tracer("trn2", 1):
        assert [int(i) for i in nl.affine_range(1, 7, 2)] == [1, 3, 5]
    assert calls == [("affine", range(1, 7, 2))]
