// The record's tuples, for the other trace_*.cpp files (see trace_record.cpp).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// cls((storage.sid, offset, pairs, storage)): an Access of the tracer's record (a new
// reference; null with an error set).
PyObject* newAccessRecord(PyObject* cls, PyObject* storage, PyObject* offset, PyObject* pairs);

}  // namespace nxs::py_bind
