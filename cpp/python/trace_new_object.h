// The allocation of the record's own objects: the tuples of trace_record.cpp and
// trace_pass_facts.cpp and the __slots__ objects of trace_slotted.cpp, whose makers set every
// field of a new object themselves; and the reuse of their memory once the record's own
// deallocations (trace_dealloc.h) free them.
//
// Why not tp_alloc: a class statement's classes allocate through PyType_GenericAlloc, which zeroes
// the whole object (a memset call) and tracks it at once, so that a half-made object is safe to
// show the GC; these makers fill an object before anything can see it, and a trace makes a dozen
// such objects per traced instruction (PyType_GenericAlloc cost some 150 machine instructions per
// object, its memset call and generic checks about 25 of them).
// Why the reuse: a trace frees its record's objects when it ends and the next trace makes as many
// again; taking a freed one of the same size back spares the allocator and the GC's bookkeeping
// of both (as CPython's own free list of tuples does: an object on the list is not counted as
// allocated for the GC's collection thresholds).
#pragma once

#include <Python.h>

#include <cstring>

namespace nxs::py_bind::new_object {

// The CPython versions whose object layouts the filled allocation and the free lists below are
// written for: 3.10 to 3.13 with the GIL. Elsewhere every object is made by its class's tp_alloc
// and freed by tp_free, as before (3.14's tuples cache their hash in a field tp_alloc sets; the
// free-threaded build's objects carry more header, and its lists would need a lock).
#if PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
inline constexpr bool kKnownLayout = true;
#else
inline constexpr bool kKnownLayout = false;
#endif

// Whether instances of `type` are laid out as the GC's plain objects (a GC header before them,
// nothing else) and freed by PyObject_GC_Del: newUntracked makes them, and release may keep
// their memory for objects of any such class of the same size.
inline bool plainGc(const PyTypeObject* type) {
  bool plain = (type->tp_flags & Py_TPFLAGS_HAVE_GC) != 0 && type->tp_free == PyObject_GC_Del;
#ifdef Py_TPFLAGS_MANAGED_DICT
  if ((type->tp_flags & Py_TPFLAGS_MANAGED_DICT) != 0) plain = false;
#endif
#ifdef Py_TPFLAGS_MANAGED_WEAKREF
  if ((type->tp_flags & Py_TPFLAGS_MANAGED_WEAKREF) != 0) plain = false;
#endif
  return plain;
}

// Whether newUntracked may make instances of `type` (else its tp_alloc must): a plain GC class
// that allocates the generic way, on a CPython whose layouts this file knows.
inline bool generic(const PyTypeObject* type) {
  return kKnownLayout && type->tp_alloc == PyType_GenericAlloc && plainGc(type);
}

// Whether instances of `type`, a tuple subclass, hold nothing but their items (as a class
// statement's `class C(tuple): __slots__ = ()` makes them), made by newUntracked.
inline bool itemsOnlyTuple(const PyTypeObject* type) {
  return generic(type) && type->tp_basicsize == PyTuple_Type.tp_basicsize &&
         type->tp_itemsize == PyTuple_Type.tp_itemsize && type->tp_dictoffset == 0 && type->tp_weaklistoffset == 0;
}

// The freed objects kept for reuse, by size in words (up to kWords), each list linked through its
// objects' first word; at most kKeptWords words of them in all (8 MB: what a large trace's
// record frees; the memory kept stays bounded).
constexpr size_t kWords = 32;
constexpr size_t kKeptWords = size_t{1} << 20;
inline PyObject* freeLists[kWords + 1];
inline size_t keptWords = 0;

// The size of an instance of `type` with `items` items, in words (as _PyObject_VAR_SIZE).
inline size_t wordsOf(const PyTypeObject* type, Py_ssize_t items) {
  return (static_cast<size_t>(type->tp_basicsize + items * type->tp_itemsize) + sizeof(void*) - 1) / sizeof(void*);
}

// A new instance of `type` (generic(type)) of `items` items (its tp_itemsize 0: none), as
// tp_alloc makes it (header, size, a reference to a heap class) but with its fields unset and
// not yet tracked by the GC: the caller sets every field the class lays out, then calls
// PyObject_GC_Track. Null with an error set.
inline PyObject* newUntracked(PyTypeObject* type, Py_ssize_t items) {
#ifndef Py_GIL_DISABLED  // (callers use this only where kKnownLayout holds)
  const size_t words = wordsOf(type, items);
  if (words <= kWords && freeLists[words] != nullptr) {
    PyObject* o = freeLists[words];
    std::memcpy(&freeLists[words], o, sizeof(PyObject*));
    keptWords -= words;
    if (type->tp_itemsize == 0) return PyObject_Init(o, type);
    return reinterpret_cast<PyObject*>(PyObject_InitVar(reinterpret_cast<PyVarObject*>(o), type, items));
  }
#endif
  if (type->tp_itemsize == 0) return _PyObject_GC_New(type);
  return reinterpret_cast<PyObject*>(_PyObject_GC_NewVar(type, items));
}

// Frees `self`, an untracked instance of the plain GC class `type` (plainGc) that holds nothing
// any more (the record's deallocations, trace_dealloc.h): kept for newUntracked unless its class
// has a finalizer (its object may be marked finalized) or the lists are full, else tp_free.
inline void release(PyObject* self, PyTypeObject* type) {
#ifndef Py_GIL_DISABLED
  if (kKnownLayout && type->tp_finalize == nullptr) {
    const size_t words = wordsOf(type, type->tp_itemsize != 0 ? Py_SIZE(self) : 0);
    if (words <= kWords && keptWords + words <= kKeptWords) {
      std::memcpy(self, &freeLists[words], sizeof(PyObject*));
      freeLists[words] = self;
      keptWords += words;
      return;
    }
  }
#endif
  type->tp_free(self);
}

}  // namespace nxs::py_bind::new_object
