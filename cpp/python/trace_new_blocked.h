// nl.ndarray / nl.zeros of a block-dimension shape made before, in C (trace_new_blocked.cpp).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// The BlockedTensor of `what` ("ndarray", "zeros") for a tuple `shape` with one nl.par_dim after
// its block dims, when language.py's `_NEW_BLOCKED` knows (shape, partition axis, dtype, buffer);
// `fill`: every block made then zero-filled, as nl.zeros does. 1 with `out` a new reference; 0,
// having changed nothing, when the definition must answer; -1 with an error set. Called straight
// from the kernel's call (the call site is the current Python frame).
int newBlockedTensor(PyObject* tr, PyObject* shape, PyObject* dtype, PyObject* buffer, PyObject* what, bool fill,
                     PyObject*& out);

}  // namespace nxs::py_bind
