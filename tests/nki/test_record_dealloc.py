"""Ops and accesses are freed by the record's own deallocation in C (cpp/python/trace_record.cpp,
use_record_dealloc): it releases what the generic one released (the items, the class), for the
record classes and their subclasses, and takes only classes with nothing more to release."""

import sys
import weakref

import pytest

from neuronxsim.nki.record import Access, Op
from neuronxsim.starfish.lib import _core


class Item:
    """An object whose freeing a weak reference shows."""


@pytest.mark.parametrize("cls", [Op, Access])
def test_freeing_a_record_releases_its_items_and_its_class(cls):
    assert _core.nki.use_record_dealloc(cls) is True  # (record.py made it so; asking again is harmless)
    before = sys.getrefcount(cls)
    items = [Item() for _ in range(4)]
    alive = [weakref.ref(i) for i in items]
    records = [tuple.__new__(cls, (items[k % 4], [items[(k + 1) % 4]], k)) for k in range(100)]
    assert sys.getrefcount(cls) == before + 100
    del items
    assert all(r() is not None for r in alive)
    del records
    assert all(r() is None for r in alive) and sys.getrefcount(cls) == before
    empty = tuple.__new__(cls, ())
    del empty
    assert sys.getrefcount(cls) == before


def test_subclasses_of_the_records_are_freed_whole():
    class Bare(Op):
        __slots__ = ()

    class WithDict(Access):
        pass

    for cls in (Bare, WithDict):
        before = sys.getrefcount(cls)
        item = Item()
        alive = weakref.ref(item)
        r = tuple.__new__(cls, (item, 1))
        extra = None
        if cls is WithDict:
            r.extra = Item()
            extra = weakref.ref(r.extra)
        del item, r
        assert alive() is None and (extra is None or extra() is None)
        assert sys.getrefcount(cls) == before


def test_deeply_nested_records_are_freed_without_exhausting_the_stack():
    r = ()
    for _ in range(200_000):
        r = tuple.__new__(Op, (r, None))
    del r


def test_only_plain_tuple_classes_are_taken():
    class Dict(tuple):
        pass

    class Finalized(tuple):
        __slots__ = ()

        def __del__(self):
            pass

    class NotTuple:
        __slots__ = ()

    class Plain(tuple):
        __slots__ = ()

    class Grandchild(Plain):  # (its base's deallocation is not the tuple's)
        __slots__ = ()

    for cls in (Dict, Finalized, NotTuple, Grandchild, tuple):
        assert _core.nki.use_record_dealloc(cls) is False
    assert _core.nki.use_record_dealloc(Plain) is True
    with pytest.raises(TypeError, match="use_record_dealloc"):
        _core.nki.use_record_dealloc(5)


def test_a_finalizer_added_afterwards_still_runs():
    class Plain(tuple):
        __slots__ = ()

    assert _core.nki.use_record_dealloc(Plain) is True
    ran = []
    Plain.__del__ = lambda self: ran.append(tuple(self))
    p = tuple.__new__(Plain, (1, 2))
    del p
    assert ran == [(1, 2)]
