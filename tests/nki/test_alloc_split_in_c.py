"""The allocation pass's split of the storages in C (cpp/python/trace_alloc_split.cpp,
``_core.nki.used_on_chip``) against its Python definition (allocator._used_on_chip): the same
lists, and the cases it leaves to Python (answered None, then the definition's answer or error)."""

import random

import numpy as np
import pytest

from neuronxsim.nki import allocator
from neuronxsim.nki.allocator import _used_on_chip
from neuronxsim.nki.tensor import HBM, PSUM, SBUF, Storage, new_storage, storage_layout
from neuronxsim.starfish.lib import _core

used_on_chip = _core.nki.used_on_chip


def storage(sid, kind, free=64):
    shape = (128, free) if kind != HBM else (free,)
    return new_storage(sid, kind, np.dtype(np.float32), shape, storage_layout(kind, shape), "t",
                       None, None)


def both(storages, first_use):
    """(C's answer as the pass uses it, the definition's answer)."""
    split = used_on_chip(storages, first_use, Storage, SBUF, PSUM)
    got = None if split is None else {SBUF: split[0], PSUM: split[1]}
    return got, _used_on_chip(storages, first_use)


@pytest.mark.parametrize("seed", range(10))
def test_the_split_is_the_definitions(seed):
    rnd = random.Random(seed)
    n = rnd.randrange(0, 60)
    storages = [storage(sid, rnd.choice([SBUF, PSUM, HBM])) for sid in range(n)]
    rnd.shuffle(storages)  # (split in list order, whatever the sids)
    first_use = [rnd.choice([-1, rnd.randrange(1000)]) for _ in range(n)]
    got, want = both(storages, first_use)
    assert got is not None
    assert list(got) == list(want) == [SBUF, PSUM]
    assert all(a is b for kind in want for a, b in zip(got[kind], want[kind]))
    assert {k: len(v) for k, v in got.items()} == {k: len(v) for k, v in want.items()}


def test_equal_kind_strings_are_the_kind():
    st = storage(0, SBUF)
    st.kind = "".join(["sb", "uf"])  # (an equal str, not the same object)
    assert st.kind == SBUF and st.kind is not SBUF
    got, want = both([st], [3])
    assert got == want == {SBUF: [st], PSUM: []}


def test_what_c_does_not_take_is_left_to_the_definition():
    class Special(Storage):
        __slots__ = ()

    odd_kind = storage(0, SBUF)
    odd_kind.kind = "sram"  # (the definition's KeyError)
    truthy = storage(0, SBUF)
    truthy.on_chip = 1
    negative = storage(-1, SBUF)  # (first_use[-1]: the definition reads the last)
    wide = storage(0, SBUF)
    special = Special()
    for slot in Storage.__slots__:
        setattr(special, slot, getattr(storage(0, SBUF), slot))
    for case, first_use in [(odd_kind, [0]), (truthy, [0]), (negative, [5, 0]), (wide, [1 << 70]),
                            (special, [0]), (storage(3, SBUF), [0])]:
        assert used_on_chip([storage(0, PSUM), case], first_use, Storage, SBUF, PSUM) is None
    assert _used_on_chip([truthy], [0]) == {SBUF: [truthy], PSUM: []}
    assert _used_on_chip([negative], [5, 0]) == {SBUF: [negative], PSUM: []}
    with pytest.raises(KeyError):
        _used_on_chip([odd_kind], [0])
    with pytest.raises(IndexError):
        _used_on_chip([storage(3, SBUF)], [0])
    with pytest.raises(TypeError, match="used_on_chip"):
        used_on_chip((), [], Storage, SBUF, PSUM)


def test_the_pass_falls_back_to_the_definition(monkeypatch):
    # (a kind the C split does not take: the pass raises the definition's error)
    class Program:
        pass

    st = storage(0, SBUF)
    st.kind = "sram"
    program = Program()
    program.storages, program.first_use, program.last_use, program.ops = [st], [0], [0], []
    program.sbuf_bytes = 1 << 20
    calls = []
    monkeypatch.setattr(allocator, "_used_on_chip",
                        lambda *a: calls.append(a) or _used_on_chip(*a))
    with pytest.raises(KeyError):
        allocator.Allocation().run(program)
    assert len(calls) == 1
