// The record's tuples, for the other trace_*.cpp files (see trace_record.cpp).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// cls((storage.sid, offset, pairs, storage)): an Access of the tracer's record (a new
// reference; null with an error set).
PyObject* newAccessRecord(PyObject* cls, PyObject* storage, PyObject* offset, PyObject* pairs);

// new_op's arguments (cls, opcode, engine, ins, outs, fields, loc, loop, index, out_box=None,
// zero_fill=False) -> an Op of the tracer's record (a new reference; null with an error set).
PyObject* newOpRecord(PyObject* const* args, Py_ssize_t nargs);

}  // namespace nxs::py_bind
