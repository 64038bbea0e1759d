// Slotted object creation, for the other trace_*.cpp files (see trace_slotted.cpp).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// An instance of the __slots__ class `cls` (a type deriving from object directly; no __init__
// run), its first `n` slots in __slots__ order set to `values` and the rest to None (a new
// reference; null with an error set).
PyObject* newSlottedObject(PyObject* cls, PyObject* const* values, Py_ssize_t n);

}  // namespace nxs::py_bind
