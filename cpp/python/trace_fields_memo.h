// The fields dict of a fast path's instruction when its values are a function of one object (an
// activation's function, a reduction's op; the other values the fast path's constants): built
// once per object and handed out as copies (each op owns its dict: later steps replace or extend
// an op's fields, never a dict another op holds).
//
// Why: building the dict item by item (its first insertion allocates the table, each one hashes
// and probes) costs some 900 instructions of the machine for an activation's four fields; copying
// a built one, which copies its table whole, about a fifth of that.
#pragma once

#include <Python.h>

#include <array>
#include <cstdint>

namespace nxs::py_bind {

class FieldsMemo {
 public:
  // A new dict equal to (same items, same order) the one `make()` builds for `key` (a new
  // reference; null with an error set). `make` returns a new reference or null with an error set.
  template <class Make>
  PyObject* fieldsFor(PyObject* key, Make make) {
    Entry& e = entries_[(reinterpret_cast<uintptr_t>(key) >> 4) % entries_.size()];
    if (e.key != key) {
      PyObject* fields = make();
      if (fields == nullptr) return nullptr;
      Entry old = e;
      e = {Py_NewRef(key), fields};  // (the key held: its address cannot come back as another's)
      Py_XDECREF(old.key);
      Py_XDECREF(old.fields);
    }
    return PyDict_Copy(e.fields);
  }

  // Forgets every dict (the constants they hold changed).
  void clear() {
    for (Entry& e : entries_) {
      Entry old = e;
      e = Entry{};
      Py_XDECREF(old.key);
      Py_XDECREF(old.fields);
    }
  }

 private:
  struct Entry {
    PyObject* key = nullptr;
    PyObject* fields = nullptr;
  };
  std::array<Entry, 32> entries_{};
};

}  // namespace nxs::py_bind
