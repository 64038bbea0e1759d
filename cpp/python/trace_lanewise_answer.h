// What a builder's lanewise_plain call answered, for the C paths that make that call themselves
// and then, unless it recorded the instruction, go on to the builder's Python general part
// (instructions.tensor_tensor_general, tensor_scalar_general, activation_general, ...).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// For an answer that is neither an error nor the recorded result (a Tensor, which the caller
// returns as it is): the `out` to hand the general part, borrowed from `made`. None when
// lanewise_plain changed nothing (NotImplemented), the result it made but did not record when it
// answered (result,); null with an error set for anything else.
inline PyObject* unrecordedResult(PyObject* made) {
  if (made == Py_NotImplemented) return Py_None;
  if (!PyTuple_Check(made) || PyTuple_GET_SIZE(made) != 1) {
    PyErr_SetString(PyExc_RuntimeError, "lanewise_plain answered other than a result");
    return nullptr;
  }
  return PyTuple_GET_ITEM(made, 0);
}

}  // namespace nxs::py_bind
