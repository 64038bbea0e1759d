// Short tuples of ints kept by value for the trace_*.cpp fast paths: a fast path that needs a
// tuple of a few ints (a result's shape, a subscript's shape, a block index) takes the one held
// for those values instead of building it.
//
// Why: the same few shapes and block indices are made instruction after instruction, and each
// is a tuple and its ints allocated, hashed and compared as a dict key (the tracer's layouts by
// shape, a blocked tensor's blocks by index), then freed. A held tuple costs nothing to make and
// a dict whose key is that very tuple finds it by identity. Tuples and ints are immutable, so
// handing out one tuple where equal ones were made changes no value; nothing of the tracer asks
// whether two such tuples are the same object.
#pragma once

#include <Python.h>

#include <cstdint>

namespace nxs::py_bind::int_tuples {

constexpr int kMaxSize = 4;  // longer tuples are built as asked
constexpr int kBits = 8;     // 256 tuples at most: the bound on what the table keeps alive

struct Entry {
  int n = -1;
  long long v[kMaxSize] = {};
  PyObject* tuple = nullptr;  // (referenced)
  Py_hash_t hash = -1;        // (tuple's: dicts keyed by it look it up by its hash, trace_known_hash.h)
};
inline Entry table[size_t{1} << kBits];

inline size_t slotOf(const long long* v, int n) {
  uint64_t h = static_cast<uint64_t>(n) * 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < n; ++i) h = (h ^ static_cast<uint64_t>(v[i])) * 0xC2B2AE3D27D4EB4Full;
  return static_cast<size_t>(h >> (64 - kBits));
}

// A new reference to a fresh tuple of the ints v[0..n), or null with an error set.
inline PyObject* build(const long long* v, Py_ssize_t n) {
  PyObject* t = PyTuple_New(n);
  for (Py_ssize_t i = 0; t != nullptr && i < n; ++i) {
    PyObject* x = PyLong_FromLongLong(v[i]);
    if (x == nullptr) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

// A new reference to a tuple of the ints v[0..n) (the held one when it is in the table; made and
// held otherwise, replacing the table's entry of the same slot; made and not held when n is over
// kMaxSize), and its hash into `hash`; or null with an error set.
inline PyObject* get(const long long* v, int n, Py_hash_t& hash) {
  if (n < 0 || n > kMaxSize) {
    PyObject* t = build(v, n);
    hash = t != nullptr ? PyObject_Hash(t) : -1;
    if (hash == -1) Py_CLEAR(t);
    return t;
  }
  Entry& e = table[slotOf(v, n)];
  bool same = e.n == n;
  for (int i = 0; same && i < n; ++i) same = e.v[i] == v[i];
  if (!same) {
    PyObject* t = build(v, n);
    if (t == nullptr) return nullptr;
    const Py_hash_t h = PyObject_Hash(t);  // (a tuple of ints: never fails)
    PyObject* old = e.tuple;
    e.n = n;
    for (int i = 0; i < n; ++i) e.v[i] = v[i];
    e.tuple = t;
    e.hash = h;
    Py_XDECREF(old);
  }
  hash = e.hash;
  return Py_NewRef(e.tuple);
}

// get(v, n) without the hash.
inline PyObject* get(const long long* v, int n) {
  Py_hash_t hash;
  return get(v, n, hash);
}

// The values of the exact ints items[0..n) into v (n <= kMaxSize); false if one is not an exact
// int or does not fit a long long (the caller then builds its tuple as it did).
inline bool valuesOf(PyObject* const* items, int n, long long* v) {
  if (n > kMaxSize) return false;
  for (int i = 0; i < n; ++i) {
    if (!PyLong_CheckExact(items[i])) return false;
    int over = 0;
    v[i] = PyLong_AsLongLongAndOverflow(items[i], &over);
    if (over != 0) return false;
  }
  return true;
}

}  // namespace nxs::py_bind::int_tuples
