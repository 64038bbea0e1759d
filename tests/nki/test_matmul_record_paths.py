"""The C steps of a matmul kernel's record (cpp/python/trace_matmul.cpp, trace_method_site.h,
trace_slotted.h's slotSet, trace_record.cpp's shared pairs): every kernel here traces to the same
module, and refuses what it refuses with the same message, as with the Python definitions alone
(isa.nc_matmul's Python definition, matmul's general path, Tracer._place_matmul_general); the
tracer's C methods, called directly by the C paths, give way to replacements of them on the class;
a slot store gives way to a class's __setattr__."""

import numpy as np
import pytest

import neuronxsim.nki as nki
import neuronxsim.nki.isa as nisa
import neuronxsim.nki.language as nl
from neuronxsim.nki import instructions, isa
from neuronxsim.nki.tracer import StorageState, Tracer

from nki_testing import same_outcome, trace_outcome

T = nki.typing.tensor


def _python_only(m):
    """Within monkeypatch context ``m``: nc_matmul is its Python definition, matmul takes its
    general path (matmul_plain declines), place_matmul is ``_place_matmul_general``."""
    m.setattr(isa, "nc_matmul", isa.nc_matmul.__wrapped__)
    m.setattr(instructions, "matmul_plain", lambda *args: NotImplemented)
    m.setattr(Tracer, "place_matmul", Tracer._place_matmul_general)


@nki.jit
def two_shapes(lhsT, rhs):
    """Matmuls of two shapes in turn (the known-legal keys: more than one), accumulated in
    blocks of PSUM tiles, the same operand views read twice."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    small = nl.zeros((nl.par_dim(64), 256), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a = nl.load(lhsT[k * 128:(k + 1) * 128, 0:128])
        b = nl.load(rhs[k * 128:(k + 1) * 128, 0:N])
        for j in nl.affine_range(2):
            acc[j] += nisa.nc_matmul(a, b[:, j * 512:(j + 1) * 512])
            small += nisa.nc_matmul(a[:, 0:64], b[:, 0:256])
    for j in nl.affine_range(2):
        nl.store(out[0:128, j * 512:(j + 1) * 512], value=nl.copy(acc[j], dtype=nl.float32))
    nl.store(out[0:64, 0:256], value=nl.copy(small, dtype=nl.float32))
    return out


@nki.jit
def legal_then_illegal(lhsT, rhs):
    """Legal matmuls (their key known), then one whose moving tile is too wide for a PSUM bank."""
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(lhsT[0:128, 0:128])
    b = nl.load(rhs[0:128, 0:1024])
    for i in nl.affine_range(2):
        p = nisa.nc_matmul(a, b[:, 0:512])
        nl.store(out[0:128, 0:512], value=nl.copy(p, dtype=nl.float32))
    wide = nisa.nc_matmul(a, b)
    nl.store(out[0:128, 0:1024], value=nl.copy(wide, dtype=nl.float32))
    return out


ARGS = (T[[256, 128], nl.bfloat16], T[[256, 1024], nl.bfloat16])


def test_matmuls_of_two_shapes_trace_as_in_python(monkeypatch):
    assert same_outcome(monkeypatch, _python_only, two_shapes, *ARGS).startswith("{")


def test_an_illegal_matmul_after_legal_ones_is_refused_as_in_python(monkeypatch):
    outcome = same_outcome(monkeypatch, _python_only, legal_then_illegal, *ARGS)
    assert not outcome.startswith("{"), outcome


@pytest.mark.parametrize("name", ["new_result", "write_fresh", "record", "fresh_result", "place_matmul"])
def test_the_c_paths_call_a_replaced_tracer_method(monkeypatch, name):
    """A method the C paths call directly while it is the tracer's C method, replaced on the
    class by a Python one: the C paths call the replacement (and the trace is the same)."""
    expected = trace_outcome(two_shapes, *ARGS)
    original = getattr(Tracer, name)
    calls = []

    def replacement(self, *args):
        calls.append(name)
        return original(self, *args)

    with monkeypatch.context() as m:
        m.setattr(Tracer, name, replacement)
        assert trace_outcome(two_shapes, *ARGS) == expected
    assert calls
    calls.clear()
    assert trace_outcome(two_shapes, *ARGS) == expected  # (the C method again)
    assert not calls


def test_a_slot_store_gives_way_to_a_classs_setattr(monkeypatch):
    """StorageState given a __setattr__: the C paths' slot stores go through it."""
    expected = trace_outcome(two_shapes, *ARGS)
    stored = []

    def setattr_(self, name, value):
        stored.append(name)
        object.__setattr__(self, name, value)

    with monkeypatch.context() as m:
        m.setattr(StorageState, "__setattr__", setattr_, raising=False)
        assert trace_outcome(two_shapes, *ARGS) == expected
    assert {"write_count", "written_partitions", "full_access"} <= set(stored)
    stored.clear()
    assert trace_outcome(two_shapes, *ARGS) == expected
    assert not stored

