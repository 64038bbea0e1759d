// An item of a record tuple the trace_*.cpp passes read (an op, an access, an operand), checked:
// the passes take their records from Python, where a malformed one must be a TypeError naming it,
// not a read past the tuple.
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// Item `at` of the tuple `t` (borrowed), or null with a TypeError "<prefix><what> must be a tuple
// of more than <at> items" set (`prefix` names the pass whose messages carry it, or is "").
inline PyObject* tupleItem(PyObject* t, Py_ssize_t at, const char* prefix, const char* what) {
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) <= at) {
    PyErr_Format(PyExc_TypeError, "%s%s must be a tuple of more than %zd items", prefix, what, at);
    return nullptr;
  }
  return PyTuple_GET_ITEM(t, at);
}

}  // namespace nxs::py_bind
