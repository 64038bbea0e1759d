// Tests of a builder's arguments (neuronxsim.nki.instructions) that the elementwise C paths of
// both dialects make before they take a call (trace_lane_fast.cpp for NKI 2.2x,
// trace_nki06_lanewise.cpp for NKI 0.6): one definition, so the two dialects decline alike.
#pragma once

#include <Python.h>

#include "trace_ref.h"

namespace nxs::py_bind {

// 1 when `op`'s id is in the set `ids` (REDUCE_IDS, BITVEC_IDS: the builders test id(op) in them),
// 0 if not, -1 with an error set.
inline int idIn(PyObject* ids, PyObject* op) {
  OwnedRef id(PyLong_FromVoidPtr(op));
  return id.get() == nullptr ? -1 : PySet_Contains(ids, id.get());
}

// Whether `axis` is what the reductions' axis normalization turns into [1] for a [P, F] tile
// without a conversion of its own: an exact int 1 or -1, or a list or tuple holding one such.
inline bool lastAxisOfTwo(PyObject* axis) {
  if ((PyList_CheckExact(axis) || PyTuple_CheckExact(axis)) && PySequence_Fast_GET_SIZE(axis) == 1)
    axis = PySequence_Fast_GET_ITEM(axis, 0);
  if (!PyLong_CheckExact(axis)) return false;
  int overflow = 0;
  const long a = PyLong_AsLongAndOverflow(axis, &overflow);
  return overflow == 0 && (a == 1 || a == -1);
}

}  // namespace nxs::py_bind
