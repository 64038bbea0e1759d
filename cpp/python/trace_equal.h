// `a == b` for the trace_*.cpp fast paths: the truth of PyObject_RichCompareBool(a, b, Py_EQ),
// with its commonest cases answered in place.
//
// Why: the fast paths compare a storage's kind with "psum" or "sbuf" and a view's shape with
// another's several times per traced instruction; the generic compare dispatches through the
// type's tp_richcompare and makes a bool object for each. An exact str equals another exactly
// when their lengths, kinds and code units agree (str's own ==), and two interned ones only when
// they are one object; an exact tuple equals another of
// another length never, and of the same length when each pair of items is the same object or
// equal exact ints (tuple's own ==, which compares items by PyObject_RichCompareBool, identity
// first); exact ints that fit a long long are equal when their values are. Any other pair is
// PyObject_RichCompareBool's.
#pragma once

#include <Python.h>

#include <cstring>

namespace nxs::py_bind {

// The value of `o`, an int or an instance of an int subclass, that fits a long long, into v;
// false otherwise (no error set). An int of one digit (nearly every number of a trace) is read in
// place, without PyLong_AsLongLongAndOverflow's call.
inline bool intObjectValue(PyObject* o, long long& v) {
#if PY_VERSION_HEX >= 0x030C0000
  if (PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(o))) {
    v = PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject*>(o));
    return true;
  }
#else
  if (const Py_ssize_t size = Py_SIZE(o); size >= -1 && size <= 1) {  // (3.10, 3.11: signed digit count)
    v = size * static_cast<long long>(reinterpret_cast<PyLongObject*>(o)->ob_digit[0]);
    return true;
  }
#endif
  int over = 0;  // (of an int: reported here, never raised)
  v = PyLong_AsLongLongAndOverflow(o, &over);
  return over == 0;
}

// The value of an exact int that fits a long long, into v; false otherwise (no error set).
inline bool exactIntValue(PyObject* o, long long& v) { return PyLong_CheckExact(o) && intObjectValue(o, v); }

// The integer value of a new reference `o` (released: null passes an error on), as
// PyLong_AsLongLong converts it; false with an error set.
inline bool intValue(PyObject* o, long long& v) {
  if (o == nullptr) return false;
  const bool exact = exactIntValue(o, v);  // (the common case, read in place)
  if (!exact) v = PyLong_AsLongLong(o);
  Py_DECREF(o);
  return exact || !(v == -1 && PyErr_Occurred());
}

// 1 if a == b, 0 if not, -1 with an error set (as PyObject_RichCompareBool(a, b, Py_EQ)).
inline int equalTo(PyObject* a, PyObject* b) {
  if (a == b) return 1;
  if (PyUnicode_CheckExact(a) && PyUnicode_CheckExact(b)) {
    // (two interned strs are equal only if they are the same object: interning keeps one str per
    // value)
    if (PyUnicode_CHECK_INTERNED(a) && PyUnicode_CHECK_INTERNED(b)) return 0;
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(a) || !PyUnicode_IS_READY(b)) return PyObject_RichCompareBool(a, b, Py_EQ);
#endif
    const Py_ssize_t n = PyUnicode_GET_LENGTH(a);
    if (n != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b)) return 0;
    return std::memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), static_cast<size_t>(n) * PyUnicode_KIND(a)) == 0;
  }
  long long u = 0, w = 0;
  if (exactIntValue(a, u) && exactIntValue(b, w)) return u == w;
  if (PyTuple_CheckExact(a) && PyTuple_CheckExact(b)) {
    const Py_ssize_t n = PyTuple_GET_SIZE(a);
    if (n != PyTuple_GET_SIZE(b)) return 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject *x = PyTuple_GET_ITEM(a, i), *y = PyTuple_GET_ITEM(b, i);
      if (x == y) continue;
      if (!exactIntValue(x, u) || !exactIntValue(y, w)) return PyObject_RichCompareBool(a, b, Py_EQ);
      if (u != w) return 0;
    }
    return 1;
  }
  return PyObject_RichCompareBool(a, b, Py_EQ);
}

}  // namespace nxs::py_bind
