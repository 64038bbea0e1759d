"""Ops and accesses are freed by the record's own deallocation in C (cpp/python/trace_record.cpp,
use_record_dealloc): it releases what the generic one released (the items, the class), for the
record classes and their subclasses, and takes only classes with nothing more to release."""

import gc
import sys
import weakref

import pytest

from neuronxsim.nki.record import Access, Op
from neuronxsim.starfish.lib import _core


class Item:
    """An object whose freeing a weak reference shows."""


@pytest.fixture
def no_collection():
    """The class's reference count moves only by this test's own records: garbage that earlier
    tests left (records in reference cycles) collected first, and no collection while counting
    (allocating the records could start one, freeing other records of the class)."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


@pytest.mark.parametrize("cls", [Op, Access])
def test_freeing_a_record_releases_its_items_and_its_class(cls, no_collection):
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


# Storages, their states, loops and loop iterations: use_slots_dealloc (cpp/python/trace_slotted.cpp).

def _slotted_classes():
    from neuronxsim.nki.record import Loop, LoopIteration
    from neuronxsim.nki.tensor import Storage
    from neuronxsim.nki.tracer import StorageState
    return [Storage, Loop, LoopIteration, StorageState]


@pytest.mark.parametrize("cls", _slotted_classes(), ids=lambda c: c.__name__)
def test_freeing_a_slotted_object_releases_its_slots_and_its_class(cls):
    assert _core.nki.use_slots_dealloc(cls) is True
    before = sys.getrefcount(cls)
    items = [Item() for _ in cls.__slots__]
    alive = [weakref.ref(i) for i in items]
    objects = []
    for k in range(50):
        o = object.__new__(cls)
        for name, item in zip(cls.__slots__, items):
            if (k + len(name)) % 3:  # (some slots left unset)
                setattr(o, name, item)
        objects.append(o)
    del items, o, item
    assert all(r() is not None for r in alive)
    assert sys.getrefcount(cls) == before + 50
    del objects
    assert all(r() is None for r in alive) and sys.getrefcount(cls) == before


def test_subclasses_of_slotted_classes_are_freed_whole():
    from neuronxsim.nki.tensor import Storage

    class More(Storage):
        __slots__ = ("extra",)

    class WithDict(Storage):
        pass

    for cls in (More, WithDict):
        before = sys.getrefcount(cls)
        a, b = Item(), Item()
        alive = [weakref.ref(a), weakref.ref(b)]
        o = object.__new__(cls)
        o.state, o.extra = a, b
        del a, b, o
        assert all(r() is None for r in alive) and sys.getrefcount(cls) == before


def test_new_slotted_refuses_a_class_naming_a_slot_twice():
    """A name twice in __slots__ lays out two words but names only the last: new_slotted would
    overwrite (and leak) the value given for the first and leave a word unnamed. It refuses the
    class, naming it, and makes nothing."""
    class Twice:
        __slots__ = ("a", "b", "a")

    assert Twice.__basicsize__ == object.__basicsize__ + 3 * 8  # (three words, two names)
    item = Item()
    alive = weakref.ref(item)
    with pytest.raises(TypeError, match=r"new_slotted: .*Twice names a slot twice in __slots__"):
        _core.nki.new_slotted(Twice, item, item)
    del item
    gc.collect()
    assert alive() is None


def test_deeply_nested_slotted_objects_are_freed_without_exhausting_the_stack():
    from neuronxsim.nki.record import Loop, LoopIteration
    outer = None
    for _ in range(100_000):
        outer = LoopIteration(Loop("affine", 2, None, outer), 0)
    del outer


def test_only_classes_of_slots_only_are_taken():
    class Slots:
        __slots__ = ("a", "b")

    class Dict:
        pass

    class Weak:
        __slots__ = ("a", "__weakref__")

    class Finalized:
        __slots__ = ("a",)

        def __del__(self):
            pass

    class Child(Slots):
        __slots__ = ("c",)

    class ListSlots:
        __slots__ = ["a"]

    for cls in (Dict, Weak, Finalized, Child, ListSlots, object, tuple):
        assert _core.nki.use_slots_dealloc(cls) is False
    assert _core.nki.use_slots_dealloc(Slots) is True
    with pytest.raises(TypeError, match="use_slots_dealloc"):
        _core.nki.use_slots_dealloc(5)
    ran = []
    Slots.__del__ = lambda self: ran.append(self.a)
    s = Slots()
    s.a = 1
    del s
    assert ran == [1]
