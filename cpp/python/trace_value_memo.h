// A small memo in front of a Python dict the tracer keeps of a pure function (indexing's
// _PREDICATE_BOXES, instructions' _SIZE_VERDICTS), keyed by the values of the dict's key tuple:
// some objects by identity (op strings, opcodes, kinds, dtypes, arch names: the few a trace uses,
// each one object) and exact ints and tuples of exact ints by value (a tuple's length, then its
// items). The fast paths fill a Key from the objects they would pack into the dict's key, look
// it up here first and remember what the dict answered; the dict stays the one home of what is
// computed (this only remembers its hits), and an answer stays right after the dict is cleared
// because it is a function of the key's values. Two keys equal here are equal as the dict
// compares them (identical objects; exact ints of equal value); keys equal there but not here
// (an equal object that is another one, np.int64, a long tuple) just miss, and go to the dict.
//
// Why: the dict's key is a new tuple (with tuples inside) per lookup, and making, hashing and
// comparing it with the stored key costs about a thousand instructions of the machine; filling a
// Key and comparing words, about a tenth. Direct-mapped and bounded: an entry holds references to
// its key's objects and its answer (so no address is reused while it is there).
#pragma once

#include <Python.h>

#include "trace_equal.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace nxs::py_bind {

template <int kObjects, int kMaxInts, int kBits>
class ValueMemo {
 public:
  struct Key {
    PyObject* objects[kObjects] = {};  // (borrowed from the caller; an entry's are referenced)
    int n = 0;                         // ints used
    long long ints[kMaxInts] = {};

    // false (the key is then of no use) when `o` is not an exact int fitting a long long
    bool addInt(PyObject* o) { return n < kMaxInts && exactIntValue(o, ints[n++]); }

    // false when `t` is not an exact tuple of such ints, or the key has no room for it
    bool addTuple(PyObject* t) {
      if (!PyTuple_CheckExact(t) || n + 1 + PyTuple_GET_SIZE(t) > kMaxInts) return false;
      ints[n++] = PyTuple_GET_SIZE(t);
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); ++i)
        if (!exactIntValue(PyTuple_GET_ITEM(t, i), ints[n++])) return false;
      return true;
    }

    bool operator==(const Key& o) const {
      return std::memcmp(objects, o.objects, sizeof objects) == 0 && n == o.n &&
             std::memcmp(ints, o.ints, sizeof(long long) * n) == 0;
    }

    size_t slot() const {
      uint64_t h = static_cast<uint64_t>(n);
      for (PyObject* o : objects) h = (h ^ reinterpret_cast<uintptr_t>(o)) * 0x9E3779B97F4A7C15ull;
      for (int i = 0; i < n; ++i) h = (h ^ static_cast<uint64_t>(ints[i])) * 0xC2B2AE3D27D4EB4Full;
      return static_cast<size_t>(h >> (64 - kBits));
    }
  };

  // The answer remembered for `key` (borrowed), or null.
  PyObject* find(const Key& key) const {
    const Entry& e = entries_[key.slot()];
    return e.answer != nullptr && e.key == key ? e.answer : nullptr;
  }

  // The answer for the dict key tuple of `items` (borrowed): the one remembered for `key` when
  // `memoable` (the key filled in full), else the dict's, then remembered. Null, with no error set,
  // when the dict has none or an item is unhashable (the TypeError cleared: the definition raises
  // it); null with an error set for any other error.
  PyObject* lookUp(const Key& key, bool memoable, PyObject* dict, std::initializer_list<PyObject*> items) {
    if (PyObject* known = memoable ? find(key) : nullptr) return known;
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(items.size()));
    if (tuple == nullptr) return nullptr;
    Py_ssize_t i = 0;
    for (PyObject* o : items) PyTuple_SET_ITEM(tuple, i++, Py_NewRef(o));
    PyObject* answer = PyDict_GetItemWithError(dict, tuple);  // (borrowed: the dict holds it)
    Py_DECREF(tuple);
    if (answer == nullptr) {
      if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_TypeError)) PyErr_Clear();
      return nullptr;
    }
    if (memoable) remember(key, answer);
    return answer;
  }

  // Forgets every answer (releasing the entries' references).
  void clear() {
    for (Entry& e : entries_) {
      Entry old = e;
      e = Entry{};
      for (PyObject* o : old.key.objects) Py_XDECREF(o);
      Py_XDECREF(old.answer);
    }
  }

  void remember(const Key& key, PyObject* answer) {
    Entry& e = entries_[key.slot()];
    Entry old = e;
    e.key = key;
    for (PyObject* o : e.key.objects) Py_XINCREF(o);
    e.answer = Py_NewRef(answer);
    for (PyObject* o : old.key.objects) Py_XDECREF(o);  // (after: an answer may be its own key's object)
    Py_XDECREF(old.answer);
  }

 private:
  struct Entry {
    Key key;
    PyObject* answer = nullptr;
  };
  Entry entries_[size_t{1} << kBits];
};

}  // namespace nxs::py_bind
