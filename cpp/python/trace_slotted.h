// Slotted objects for the trace_*.cpp fast paths: creating them (trace_slotted.cpp) and reading
// their slots by name (the offsets found once per class through its member descriptors).
#pragma once

#include <Python.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace nxs::py_bind {

// An instance of the __slots__ class `cls` (a type deriving from object directly; no __init__
// run), its first `n` slots in __slots__ order set to `values` and the rest to None (a new
// reference; null with an error set).
PyObject* newSlottedObject(PyObject* cls, PyObject* const* values, Py_ssize_t n);

// The byte offset of the object slot whose member descriptor is `descr` (borrowed, may be null),
// or -1 if `descr` is not an object slot's descriptor.
Py_ssize_t objectSlotOffset(PyObject* descr);

// What slotAttr learned of a class and name: the slot's offset, or -1 (PyObject_GetAttr). Keyed
// by the class's version tag too: it changes when the class (or a base) is changed, and a class
// made at the address of a freed one has another. Two ways per set (the most recently learned
// first), the set picked by a multiplicative hash of the class and name: the fast paths read some
// 60 class/name pairs in turn, and pairs that share a set evict each other (a direct-mapped table
// of this size had a few such pairs per trace). 2048 sets: with 512, three of the pairs sharing a
// set (evicting each other on every read, some 500 instructions of the machine per traced one)
// happened in some processes, as the addresses of the classes and names fell.
namespace slot_lookup {
struct Entry {
  PyTypeObject* type = nullptr;
  unsigned int version = 0;
  PyObject* name = nullptr;
  Py_ssize_t offset = -1;
  bool writable = false;  // (the slot's member descriptor stores: not READONLY; see slotSet)

  bool matches(PyTypeObject* t, PyObject* n) const {
    return type == t && name == n && version == t->tp_version_tag && version != 0;
  }
};
constexpr int kSetBits = 11;
extern std::array<std::array<Entry, 2>, size_t{1} << kSetBits> sets;

inline std::array<Entry, 2>& setOf(PyTypeObject* type, PyObject* name) {
  const uint64_t key = reinterpret_cast<uintptr_t>(type) * 0x9E3779B97F4A7C15ull ^ reinterpret_cast<uintptr_t>(name);
  return sets[(key * 0xC2B2AE3D27D4EB4Full) >> (64 - kSetBits)];
}
}  // namespace slot_lookup

// slotAttr past the two ways of its set: learning the class and name; and every read that is not
// of a set slot.
PyObject* slotAttrLearn(PyObject* o, PyObject* name);

// o.name (a new reference; null with an error set), `name` an interned str the caller keeps for
// good: read straight from o's slot when o's class resolves `name` to an object slot and gets
// attributes the generic way (found once per class version and name, in a small cache), else
// PyObject_GetAttr. The fast paths read a few dozen slots of tiles, views and states per traced
// instruction; PyObject_GetAttr walks the type's attribute lookup and the descriptor every time.
// (Always inlined: the commonest case, the first way's slot, is a few loads, and a call costs a
// third of them; GCC called it at -O1.)
// Both ways of the set are looked at here: two hot pairs sharing a set (about one such pair of
// pairs per process, as the addresses of classes and names fall) keep one of them in the second
// way, and its reads going to slotAttrLearn cost about 1% of a trace in the processes where that
// happened.
[[gnu::always_inline]] inline PyObject* slotAttr(PyObject* o, PyObject* name) {
  PyTypeObject* type = Py_TYPE(o);
  const auto& set = slot_lookup::setOf(type, name);
  const slot_lookup::Entry* known =
      set[0].matches(type, name) ? &set[0] : set[1].matches(type, name) ? &set[1] : nullptr;
  if (known != nullptr && known->offset >= 0) {
    PyObject* v = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + known->offset);
    if (v != nullptr) return Py_NewRef(v);
  }
  return slotAttrLearn(o, name);
}

// slotSet past the two ways of its set: learning the class and name (as slotAttr does); and every
// store that is not into a writable object slot.
int slotSetLearn(PyObject* o, PyObject* name, PyObject* v);

// o.name = v (0, or -1 with an error set), `name` as slotAttr's: stored straight into o's slot
// when o's class sets attributes the generic way (no __setattr__: then PyObject_SetAttr calls
// the member descriptor that `name` resolves to, which does just this store, the new value in and
// the old one released) and resolves `name` to a writable object slot, else PyObject_SetAttr. The
// fast paths update a few slots of states and views per traced instruction; PyObject_SetAttr
// walks the type's attribute lookup and the descriptor every time.
inline int slotSet(PyObject* o, PyObject* name, PyObject* v) {
  PyTypeObject* type = Py_TYPE(o);
  const auto& set = slot_lookup::setOf(type, name);
  const slot_lookup::Entry* known =
      set[0].matches(type, name) ? &set[0] : set[1].matches(type, name) ? &set[1] : nullptr;
  if (known != nullptr && known->writable && type->tp_setattro == PyObject_GenericSetAttr) {
    PyObject** at = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + known->offset);
    PyObject* old = *at;
    *at = Py_NewRef(v);
    Py_XDECREF(old);
    return 0;
  }
  return slotSetLearn(o, name, v);
}

// The slots `names` of the classes whose instances a fast path reads: their byte offsets per
// class, found once (the class is then kept alive while it is a key).
template <size_t N>
class NamedSlots {
 public:
  using Offsets = std::array<Py_ssize_t, N>;

  // `who`: the function named in errors.
  NamedSlots(const char* who, const std::array<const char*, N>& names) : who_(who), names_(names) {}

  // The offsets of the slots in `cls`, or null with a TypeError set if it lacks one.
  const Offsets* of(PyTypeObject* cls) {
    auto known = offsets_.find(cls);
    if (known != offsets_.end()) return &known->second;
    Offsets found{};
    for (size_t i = 0; i < N; ++i) {
      PyObject* descr = PyObject_GetAttrString(reinterpret_cast<PyObject*>(cls), names_[i]);
      found[i] = objectSlotOffset(descr);
      Py_XDECREF(descr);  // (the class holds it)
      if (found[i] < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: %s has no slot %s", who_, cls->tp_name, names_[i]);
        return nullptr;
      }
    }
    Py_INCREF(cls);
    return &offsets_.emplace(cls, found).first->second;
  }

  // Slot `i` of `o` (borrowed; `at` = of(its class)), or null with an AttributeError when it is
  // not set.
  PyObject* get(PyObject* o, const Offsets& at, size_t i) const {
    PyObject* v = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + at[i]);
    if (v == nullptr)
      PyErr_Format(PyExc_AttributeError, "%s: slot %s of a %s is not set", who_, names_[i], Py_TYPE(o)->tp_name);
    return v;
  }

  // o.<slot i> = v, as the slot's member descriptor sets it; false (nothing set) if o's class
  // sets attributes its own way (__setattr__): the caller then sets it by name.
  bool set(PyObject* o, const Offsets& at, size_t i, PyObject* v) const {
    if (Py_TYPE(o)->tp_setattro != PyObject_GenericSetAttr) return false;
    Py_XSETREF(*reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + at[i]), Py_NewRef(v));
    return true;
  }

 private:
  const char* who_;
  std::array<const char*, N> names_;
  std::unordered_map<PyTypeObject*, Offsets> offsets_;
};

}  // namespace nxs::py_bind
