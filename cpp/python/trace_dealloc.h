// The record's own deallocations (trace_record.cpp recordDealloc for its tuple classes,
// trace_slotted.cpp slotsDealloc for its __slots__ classes): what CPython's generic deallocation
// of a class's instances does for such a class, in one pass. A trace frees a few such objects per
// instruction.
//
// Their nesting: freeing an object frees what it held, which may be another such object, and so
// on. CPython bounds that recursion with its "trashcan" (past some depth, objects are queued and
// freed later from a shallower frame), at two calls and a thread-state read per object: a tenth
// of freeing a trace, whose objects nest a few levels deep. These deallocations count their own
// nesting instead and take the trashcan only past kDirectNesting levels of themselves (each level
// below that also passes through the trashcan of every list, tuple or dict between them), so the
// stack stays bounded as before.
#pragma once

#include <Python.h>

#include "trace_new_object.h"

namespace nxs::py_bind::dealloc_nesting {

inline int depth = 0;  // (the GIL guards it)
constexpr int kDirectNesting = 50;

// Whether instances of `type` hold nothing the generic deallocation would have to find beyond what
// its base lays out: a class made by a class statement, collected by the GC, with no __dict__, no
// weak references and no finalizer (the callers check the base and the layout).
inline bool plainHeapClass(const PyTypeObject* type) {
  return (type->tp_flags & Py_TPFLAGS_HEAPTYPE) != 0 && new_object::plainGc(type) && type->tp_dictoffset == 0 &&
         type->tp_weaklistoffset == 0 && type->tp_finalize == nullptr && type->tp_del == nullptr;
}

// Frees `self`, whose class's deallocation is `Dealloc`: runs a finalizer added to the class since
// (as the generic deallocation runs it), untracks it, then has `releaseContents(type)` release what
// it holds, frees it and releases its class (instances of heap classes hold their class): directly
// while fewer than kDirectNesting of these deallocations are under way, else within the trashcan.
template <void (*Dealloc)(PyObject*), class ReleaseContents>
inline void deallocate(PyObject* self, ReleaseContents releaseContents) {
  PyTypeObject* type = Py_TYPE(self);
  if (type->tp_finalize != nullptr && PyObject_CallFinalizerFromDealloc(self) < 0) return;  // resurrected
  PyObject_GC_UnTrack(self);
  auto releaseIt = [self, type, &releaseContents] {
    releaseContents(type);
    type->tp_free(self);
    Py_DECREF(type);
  };
#ifndef Py_GIL_DISABLED
  if (depth < kDirectNesting) {
    ++depth;
    releaseIt();
    --depth;
    return;
  }
#endif
  Py_TRASHCAN_BEGIN(self, Dealloc)
  releaseIt();
  Py_TRASHCAN_END
}

}  // namespace nxs::py_bind::dealloc_nesting
