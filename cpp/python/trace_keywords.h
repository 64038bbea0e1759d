// The keyword arguments of a vectorcall (METH_FASTCALL | METH_KEYWORDS), matched against the names
// a C fast path takes: shared by the fast paths that take keywords (trace_lane_fast.cpp,
// trace_matmul.cpp).
#pragma once

#include <Python.h>

#include <cstddef>

namespace nxs::py_bind {

// The keyword arguments of a call, matched against `names` (interned, as the names a call site
// spells are): false when one is not among them (the definition's call: its TypeError, or a case
// the fast path leaves to it); `values[i]` the value of `names[i]`, left as it was when not given.
template <size_t N>
bool keywords(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject* const (&names)[N],
              PyObject* (&values)[N]) {
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, i);
    size_t k = 0;
    while (k < N && key != names[k]) ++k;
    if (k == N) return false;
    values[k] = args[nargs + i];
  }
  return true;
}

}  // namespace nxs::py_bind
