// The NKI tracer's loop index (trace_loop_index.cpp), for the other trace_*.cpp fast paths.
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// A LoopIndex of the integer `value` (int.__new__(LoopIndex, value) of an int): a new reference,
// null with an error set.
PyObject* newLoopIndex(PyObject* value);

// A LoopIndex of `value` (shared for small values, as ints are): a new reference, null with an
// error set.
PyObject* loopIndexOfValue(long long value);

}  // namespace nxs::py_bind
