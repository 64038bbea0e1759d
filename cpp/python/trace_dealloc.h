// The nesting of the record's own deallocations (trace_record.cpp recordDealloc, trace_slotted.cpp
// slotsDealloc): freeing an object frees what it held, which may be another such object, and so
// on. CPython bounds that recursion with its "trashcan" (past some depth, objects are queued and
// freed later from a shallower frame), at two calls and a thread-state read per object: a tenth
// of freeing a trace, whose objects nest a few levels deep. These deallocations count their own
// nesting instead and take the trashcan only past kDirectNesting levels of themselves (each level
// below that also passes through the trashcan of every list, tuple or dict between them), so the
// stack stays bounded as before.
#pragma once

#include <Python.h>

namespace nxs::py_bind::dealloc_nesting {

inline int depth = 0;  // (the GIL guards it)
constexpr int kDirectNesting = 50;

// Runs `release` (which releases what `self` holds and frees it; `self` already untracked), directly
// while fewer than kDirectNesting of these deallocations are under way, else within the trashcan
// of `Dealloc` (self's tp_dealloc).
template <void (*Dealloc)(PyObject*), class Release>
inline void release(PyObject* self, Release releaseIt) {
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
