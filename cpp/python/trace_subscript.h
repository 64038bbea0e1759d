// The 2.2x tensor subscript of trace_subscript.cpp, for the other trace_*.cpp fast paths.
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// `t[key]` of a neuronxsim.nki.tensor.Tensor, as its C __getitem__ (the keys that method hands
// on included): a new reference, null with an error set.
PyObject* tensorSubscript22(PyObject* t, PyObject* key);

}  // namespace nxs::py_bind
