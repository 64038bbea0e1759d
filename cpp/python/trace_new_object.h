// The allocation of the record's own objects: the tuples of trace_record.cpp and
// trace_pass_facts.cpp and the __slots__ objects of trace_slotted.cpp, whose makers set every
// field of a new object themselves.
//
// Why not tp_alloc: a class statement's classes allocate through PyType_GenericAlloc, which zeroes
// the whole object (a memset call) and tracks it at once, so that a half-made object is safe to
// show the GC; these makers fill an object before anything can see it, and a trace makes a dozen
// such objects per traced instruction (PyType_GenericAlloc cost some 150 machine instructions per
// object, its memset call and generic checks about 25 of them).
#pragma once

#include <Python.h>

namespace nxs::py_bind::new_object {

// The CPython versions whose object layouts the filled allocation below is written for: 3.10 to
// 3.13 with the GIL. Elsewhere every object is made by its class's tp_alloc, as before (3.14's
// tuples cache their hash in a field tp_alloc sets; the free-threaded build's objects carry more
// header).
#if PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
inline constexpr bool kKnownLayout = true;
#else
inline constexpr bool kKnownLayout = false;
#endif

// Whether instances of `type` are laid out as the GC's plain objects (a GC header before them,
// nothing else) and freed by PyObject_GC_Del.
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

// A new instance of `type` (generic(type)) of `items` items (its tp_itemsize 0: none), as
// tp_alloc makes it (header, size, a reference to a heap class) but with its fields unset and
// not yet tracked by the GC: the caller sets every field the class lays out, then calls
// PyObject_GC_Track. Null with an error set.
inline PyObject* newUntracked(PyTypeObject* type, Py_ssize_t items) {
  if (type->tp_itemsize == 0) return _PyObject_GC_New(type);
  return reinterpret_cast<PyObject*>(_PyObject_GC_NewVar(type, items));
}

}  // namespace nxs::py_bind::new_object
