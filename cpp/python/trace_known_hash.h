// Dict operations by a key's hash the caller already has, for the trace_*.cpp fast paths that
// keep their keys' hashes with the keys (the accumulation groups' regions, trace_assign.cpp; the
// held int tuples of trace_int_tuples.h).
//
// Why: CPython does not cache a tuple's hash, so each PyDict_GetItemWithError / PyDict_SetItem
// of a tuple key hashes every item again (a nested region key: some 400 machine instructions).
// The _KnownHash entry points are exported through CPython 3.12; elsewhere these are the plain
// calls (which hash again: the same results).
#pragma once

#include <Python.h>

namespace nxs::py_bind {

// dict[key] (borrowed), or null: none (no error set) or an error; `hash` is hash(key).
inline PyObject* dictGetKnownHash(PyObject* dict, PyObject* key, Py_hash_t hash) {
#if PY_VERSION_HEX < 0x030D0000
  return _PyDict_GetItem_KnownHash(dict, key, hash);
#else
  (void)hash;
  return PyDict_GetItemWithError(dict, key);
#endif
}

// dict[key] = value (0, or -1 with an error set); `hash` is hash(key).
inline int dictSetKnownHash(PyObject* dict, PyObject* key, PyObject* value, Py_hash_t hash) {
#if PY_VERSION_HEX < 0x030D0000
  return _PyDict_SetItem_KnownHash(dict, key, value, hash);
#else
  (void)hash;
  return PyDict_SetItem(dict, key, value);
#endif
}

}  // namespace nxs::py_bind
