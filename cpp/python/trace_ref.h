// An owned Python reference for the trace_*.cpp fast paths.
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// A new reference, released at the end of the scope unless release()d.
struct OwnedRef {
  PyObject* p;
  explicit OwnedRef(PyObject* o) : p(o) {}
  OwnedRef(const OwnedRef&) = delete;
  OwnedRef& operator=(const OwnedRef&) = delete;
  ~OwnedRef() { Py_XDECREF(p); }
  PyObject* get() const { return p; }
  PyObject* release() {
    PyObject* o = p;
    p = nullptr;
    return o;
  }
};

}  // namespace nxs::py_bind
