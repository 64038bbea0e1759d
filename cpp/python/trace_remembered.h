// Reading the tracer's memo dicts of pure functions of a kernel's values (opcodes'
// _ALU_BY_FUNCTION and _ACT_BY_FUNCTION, dtypes' _LOOKUPS) from the fast paths, as their Python
// definitions read them.
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// What `table` holds for `key` (borrowed), or null: with no error set when it holds nothing or
// `key` is unhashable (the definitions' own lookups, `except (KeyError, TypeError)`, then take
// their slow paths: the fast path declines), with the error set for anything else the lookup
// raised (a key's __hash__ or __eq__), which the definitions would raise too.
inline PyObject* rememberedIn(PyObject* table, PyObject* key) {
  PyObject* found = PyDict_GetItemWithError(table, key);
  if (found == nullptr && PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_TypeError)) PyErr_Clear();
  return found;
}

}  // namespace nxs::py_bind
