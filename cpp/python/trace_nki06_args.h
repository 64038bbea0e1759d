// The arguments of an NKI 0.6 call, for its C path (trace_nki06_fast.cpp, trace_nki06_lanewise.cpp):
// matched against the Python definition's parameters as a call binds them.
#pragma once

#include <Python.h>

#include <cstddef>

namespace nxs::py_bind {

// Fills `slots` (borrowed) from the call's arguments, `names` the parameters in order (positional
// first, then any by keyword); false, for the definition to answer, if one is given twice, or a
// keyword is not among `names` (keywords are compared by identity: a kernel's are interned).
// Slots not given are left as they were.
template <size_t N>
bool bindNki06Args(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject* const (&names)[N],
                   PyObject* (&slots)[N]) {
  if (nargs > static_cast<Py_ssize_t>(N)) return false;
  for (Py_ssize_t i = 0; i < nargs; ++i) slots[i] = args[i];
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    size_t i = 0;
    while (i < N && names[i] != key) ++i;
    if (i == N || slots[i] != nullptr || static_cast<Py_ssize_t>(i) < nargs) return false;
    slots[i] = args[nargs + k];
  }
  return true;
}

}  // namespace nxs::py_bind
