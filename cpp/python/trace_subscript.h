// The 2.2x tensor subscript of trace_subscript.cpp, for the other trace_*.cpp fast paths.
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// `t[key]` of a neuronxsim.nki.tensor.Tensor, as its C __getitem__ (the keys that method hands
// on included): a new reference, null with an error set.
PyObject* tensorSubscript22(PyObject* t, PyObject* key);

// tensorSubscript22(t, tuple(items[0..count))), the tuple made only if the Python subscript needs
// it (a blocked tensor's subscript hands on the entries past its block index this way).
PyObject* tensorSubscriptItems22(PyObject* t, PyObject* const* items, Py_ssize_t count);

// A subscript's items: a plain tuple's own, any other key as one item. False for a tuple subclass
// (a named tuple, say), which the fast paths leave to the Python code.
inline bool subscriptItems(PyObject* const& key, PyObject* const*& items, Py_ssize_t& count) {
  if (PyTuple_CheckExact(key)) {
    items = &PyTuple_GET_ITEM(key, 0);
    count = PyTuple_GET_SIZE(key);
    return true;
  }
  items = &key;
  count = 1;
  return !PyTuple_Check(key);
}

}  // namespace nxs::py_bind
