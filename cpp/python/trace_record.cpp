// The tuples of the NKI tracer's record (neuronxsim/nki/record.py), made in C:
//   new_op(cls, opcode, engine, ins, outs, fields, loc, loop, index, out_box=None, zero_fill=False)
//     -> cls((opcode number, engine number, loc.short or "", fields, ins, outs, opcode, engine,
//             loc, loop, index, out_box, zero_fill))
//   new_access(cls, storage, offset, pairs) -> cls((storage.sid, offset, pairs, storage))
// `cls` is the record's tuple subclass (Op, Access). An enum member's number is read once per
// member object (int(member)) and kept: members are singletons, and int() of a bound enum calls
// into its binding.
//
// Why C: every recorded instruction makes one op and a few accesses, and a Python function
// that builds a tuple costs a Python frame and an intermediate tuple.
#include "trace_record.h"

#include "bindings.h"
#include "trace_dealloc.h"
#include "trace_new_object.h"
#include "trace_slotted.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace nxs::py_bind {
namespace {

std::unordered_map<PyObject*, PyObject*> memberNumbers;  // member -> int (both referenced)
PyObject* shortName = nullptr;                           // "short" (interned)
PyObject* sidName = nullptr;                             // "sid" (interned)

PyObject* numberOf(PyObject* member) {
  if (PyLong_CheckExact(member)) return Py_NewRef(member);
  auto known = memberNumbers.find(member);
  if (known != memberNumbers.end()) return Py_NewRef(known->second);
  PyObject* number = PyNumber_Long(member);
  if (number == nullptr) return nullptr;
  memberNumbers.emplace(Py_NewRef(member), Py_NewRef(number));
  return number;
}

// Access pairs by value: one list per distinct value, shared by every access with those pairs.
// A trace makes a few accesses per instruction but only a handful of distinct patterns (matmul
// kernels: about 2 500 pairs lists of 7 values), and each list with its (step, num) tuples and
// their ints is 4-6 objects that stay alive, and are freed one by one, with the record. Records
// are never edited (several accesses already share a layout's full_pairs), so sharing equal
// lists changes no value. The cache holds its own copy of the list, never the caller's, so a
// caller changing its list afterwards cannot change the cached one.
constexpr int kMaxInternedPairs = 6;       // longer patterns are rare: kept as given
constexpr size_t kMaxInternedLists = 4096; // bound on what the cache keeps alive for the process
// (only v's first 2n values are the key, and only they are set: zeroing the rest cost a memset per
// access made; the cache's own copy is zeroed past them before it is stored, see sharedPairs)
struct PairsKey {
  int n = 0;
  long long v[2 * kMaxInternedPairs];
  bool operator==(const PairsKey& o) const {  // (a loop: a few values, where memcmp's call cost more)
    if (n != o.n) return false;
    for (int i = 0; i < 2 * n; ++i)
      if (v[i] != o.v[i]) return false;
    return true;
  }
};
struct PairsKeyHash {
  size_t operator()(const PairsKey& k) const {
    size_t h = static_cast<size_t>(k.n);
    for (int i = 0; i < 2 * k.n; ++i) h = h * 1000003u ^ static_cast<size_t>(k.v[i]);
    return h;
  }
};
std::unordered_map<PairsKey, PyObject*, PairsKeyHash> internedPairs;  // value -> list (referenced)
// The shared lists (those internedPairs holds for good) -> tuple(list), made on first ask (referenced).
std::unordered_map<PyObject*, PyObject*> sharedTuples;

// The shared list equal to `pairs` (a new reference), or a new reference to `pairs` itself when
// it is not a short list of (int, int) tuples (left for whoever reads it to judge) or the cache
// is full. Never fails.
PyObject* sharedPairs(PyObject* pairs) {
  if (!PyList_CheckExact(pairs)) return Py_NewRef(pairs);
  const Py_ssize_t n = PyList_GET_SIZE(pairs);
  if (n > kMaxInternedPairs) return Py_NewRef(pairs);
  PairsKey key;
  key.n = static_cast<int>(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* pair = PyList_GET_ITEM(pairs, i);
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) return Py_NewRef(pairs);
    for (Py_ssize_t j = 0; j < 2; ++j) {
      PyObject* x = PyTuple_GET_ITEM(pair, j);
      // (exact ints only: True and 1 are equal but print differently; an exact int's value
      // cannot fail to read, only overflow)
      if (!PyLong_CheckExact(x)) return Py_NewRef(pairs);
      int overflow = 0;
      key.v[2 * i + j] = PyLong_AsLongLongAndOverflow(x, &overflow);
      if (overflow != 0) return Py_NewRef(pairs);
    }
  }
  auto known = internedPairs.find(key);
  if (known != internedPairs.end()) return Py_NewRef(known->second);
  if (internedPairs.size() >= kMaxInternedLists) return Py_NewRef(pairs);
  PyObject* copy = PyList_GetSlice(pairs, 0, n);  // (its tuples are immutable: shared as they are)
  if (copy == nullptr) {  // (out of memory: the access keeps the caller's list, as before)
    PyErr_Clear();
    return Py_NewRef(pairs);
  }
  std::fill(key.v + 2 * n, key.v + 2 * kMaxInternedPairs, 0LL);
  internedPairs.emplace(key, Py_NewRef(copy));
  sharedTuples.emplace(copy, nullptr);
  return copy;
}

void recordDealloc(PyObject* self);

// An instance of the tuple subclass `cls` holding `items` (references stolen; null items are
// errors already set): made filled, then tracked, when it holds only its items (trace_new_object.h;
// the record's classes, which use_record_dealloc took, are known to), else through tp_alloc.
PyObject* tupleOf(PyObject* cls, PyObject** items, Py_ssize_t n) {
  PyObject* t = nullptr;
  bool ok = true;
  for (Py_ssize_t i = 0; i < n; ++i) ok &= items[i] != nullptr;  // (no branch per item)
  auto* type = reinterpret_cast<PyTypeObject*>(cls);
  if (!PyType_Check(cls) || !PyType_FastSubclass(type, Py_TPFLAGS_TUPLE_SUBCLASS)) {
    if (ok) PyErr_SetString(PyExc_TypeError, "the record's class must be a tuple subclass");
    ok = false;
  }
  const bool filled =
      ok && new_object::kKnownLayout &&
      ((type->tp_dealloc == recordDealloc && type->tp_alloc == PyType_GenericAlloc) || new_object::itemsOnlyTuple(type));
  if (ok) t = filled ? new_object::newUntracked(type, n) : type->tp_alloc(type, n);
  if (t == nullptr) {
    for (Py_ssize_t i = 0; i < n; ++i) Py_XDECREF(items[i]);
    return nullptr;
  }
  std::memcpy(&PyTuple_GET_ITEM(t, 0), items, static_cast<size_t>(n) * sizeof(PyObject*));  // (the references)
  if (filled) PyObject_GC_Track(t);
  return t;
}

// The deallocation of a record tuple (an instance of a class use_record_dealloc took): what
// CPython's generic one for classes (subtype_dealloc) and the tuple's (tupledealloc) do for such a
// class, in one pass: untrack, release the items, free, release the class. The generic one first
// looks for the nearest base with another deallocation, finalizers, weak references, slots and a
// __dict__, none of which these classes have (use_record_dealloc checks), then untracks and enters
// the trashcan again in the tuple's. A trace frees one op and a few accesses per instruction.
void recordDealloc(PyObject* self) {
  dealloc_nesting::deallocate<recordDealloc>(self, [self](PyTypeObject*) {
    for (Py_ssize_t i = Py_SIZE(self); --i >= 0;) Py_XDECREF(PyTuple_GET_ITEM(self, i));
  });
}

// use_record_dealloc(cls): instances of `cls` are freed by recordDealloc from now on, if `cls` is
// a class made by a class statement deriving from tuple directly that adds nothing an instance
// must release (__slots__ = (): no slots, no __dict__, no weak references) and has no finalizer;
// returns whether it took the class (a class it does not take keeps the generic deallocation).
PyObject* useRecordDealloc(PyObject*, PyObject* cls) {
  if (!PyType_Check(cls)) {
    PyErr_SetString(PyExc_TypeError, "use_record_dealloc(cls: type)");
    return nullptr;
  }
  auto* type = reinterpret_cast<PyTypeObject*>(cls);
  const bool plain = dealloc_nesting::plainHeapClass(type) && type->tp_base == &PyTuple_Type &&
                     type->tp_basicsize == PyTuple_Type.tp_basicsize &&
                     type->tp_itemsize == PyTuple_Type.tp_itemsize;
  if (plain) type->tp_dealloc = recordDealloc;
  return Py_NewRef(plain ? Py_True : Py_False);
}

PyObject* newOp(PyObject*, PyObject* const* args, Py_ssize_t nargs) { return newOpRecord(args, nargs); }

PyObject* newAccess(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "new_access(cls, storage, offset, pairs)");
    return nullptr;
  }
  return newAccessRecord(args[0], args[1], args[2], args[3]);
}

PyMethodDef newOpDef = {"new_op", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(newOp)),
                        METH_FASTCALL,
                        "new_op(cls, opcode, engine, ins, outs, fields, loc, loop, index, out_box=None, "
                        "zero_fill=False): an op record (see neuronxsim.nki.record.new_op)."};
PyMethodDef newAccessDef = {"new_access",
                            reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(newAccess)),
                            METH_FASTCALL,
                            "new_access(cls, storage, offset, pairs): an access record "
                            "(see neuronxsim.nki.record.new_access)."};

PyMethodDef useRecordDeallocDef = {
    "use_record_dealloc", useRecordDealloc, METH_O,
    "use_record_dealloc(cls): frees instances of cls, a plain tuple subclass (__slots__ = ()), in one pass "
    "(see neuronxsim.nki.record); whether it took the class."};

void bindRecord(py::module_& m) {
  shortName = PyUnicode_InternFromString("short");
  sidName = PyUnicode_InternFromString("sid");
  if (shortName == nullptr || sidName == nullptr) throw py::error_already_set();
  m.attr("new_op") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&newOpDef, nullptr, nullptr));
  m.attr("new_access") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&newAccessDef, nullptr, nullptr));
  m.attr("use_record_dealloc") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&useRecordDeallocDef, nullptr, nullptr));
  py::dict op, access;
  const char* opNames[] = {"opcode_number", "engine_number", "source", "fields", "ins", "outs", "opcode",
                           "engine", "loc", "loop", "index", "out_box", "zero_fill"};
  for (Py_ssize_t i = 0; i < op_pos::size; ++i) op[opNames[i]] = i;
  const char* accessNames[] = {"sid", "offset", "pairs", "storage"};
  for (Py_ssize_t i = 0; i < access_pos::size; ++i) access[accessNames[i]] = i;
  m.attr("RECORD_POSITIONS") = py::dict(py::arg("Op") = op, py::arg("Access") = access);
}

NXS_REGISTER_SUBMODULE(nki, 43, "the NKI tracer's hot paths", bindRecord);

}  // namespace

PyObject* newOpRecord(PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 9 || nargs > 11) {
    PyErr_SetString(PyExc_TypeError,
                    "new_op(cls, opcode, engine, ins, outs, fields, loc, loop, index, out_box=None, "
                    "zero_fill=False)");
    return nullptr;
  }
  PyObject* loc = args[6];
  static_assert(op_pos::size == 13 && access_pos::size == 4, "new_op and new_access fill every position, in order");
  PyObject* items[op_pos::size] = {
      numberOf(args[1]),
      numberOf(args[2]),
      loc == Py_None ? PyUnicode_FromStringAndSize("", 0) : slotAttr(loc, shortName),
      Py_NewRef(args[5]),  // fields
      Py_NewRef(args[3]),  // ins
      Py_NewRef(args[4]),  // outs
      Py_NewRef(args[1]),  // opcode
      Py_NewRef(args[2]),  // engine
      Py_NewRef(loc),
      Py_NewRef(args[7]),   // loop
      Py_NewRef(args[8]),   // index
      Py_NewRef(nargs > 9 ? args[9] : Py_None),    // out_box
      Py_NewRef(nargs > 10 ? args[10] : Py_False),  // zero_fill
  };
  return tupleOf(args[0], items, op_pos::size);
}

PyObject* newAccessRecord(PyObject* cls, PyObject* storage, PyObject* offset, PyObject* pairs) {
  PyObject* sid = slotAttr(storage, sidName);
  // (sharing only once the sid is read: an error it set stays the one reported)
  PyObject* items[access_pos::size] = {sid, Py_NewRef(offset), sid != nullptr ? sharedPairs(pairs) : Py_NewRef(pairs),
                                      Py_NewRef(storage)};
  return tupleOf(cls, items, access_pos::size);
}

PyObject* pairsTuple(PyObject* pairs) {
  auto known = sharedTuples.find(pairs);
  if (known == sharedTuples.end()) return PySequence_Tuple(pairs);
  if (known->second == nullptr) {
    known->second = PySequence_Tuple(pairs);
    if (known->second == nullptr) return nullptr;
  }
  return Py_NewRef(known->second);
}

namespace {
// (CoreTrace.redirected as a list; an error if not)
bool redirectedIsList(PyObject* redirected) {
  if (PyList_CheckExact(redirected)) return true;
  PyErr_SetString(PyExc_TypeError, "CoreTrace.redirected must be a list");
  return false;
}
}  // namespace

PyObject* redirectedOutput(PyObject* redirected, PyObject* index) {
  if (!redirectedIsList(redirected)) return nullptr;
  const Py_ssize_t i = PyLong_AsSsize_t(index);
  if (i == -1 && PyErr_Occurred()) return nullptr;
  if (i < 0 || i >= PyList_GET_SIZE(redirected)) return nullptr;
  PyObject* acc = PyList_GET_ITEM(redirected, i);
  return acc == Py_None ? nullptr : acc;
}

int setRedirected(PyObject* redirected, PyObject* index, PyObject* acc) {
  if (!redirectedIsList(redirected)) return -1;
  const Py_ssize_t i = PyLong_AsSsize_t(index);
  if (i == -1 && PyErr_Occurred()) return -1;
  if (i < 0) {
    PyErr_SetString(PyExc_ValueError, "a redirected op's index must be its position in the record");
    return -1;
  }
  while (PyList_GET_SIZE(redirected) <= i)
    if (PyList_Append(redirected, Py_None) < 0) return -1;
  PyObject* old = PyList_GET_ITEM(redirected, i);
  PyList_SET_ITEM(redirected, i, Py_NewRef(acc));
  Py_DECREF(old);
  return 0;
}

PyObject* newAccessRecordOfValues(PyObject* cls, PyObject* storage, PyObject* offset, const long long* values,
                                  int n) {
  PyObject* shared = nullptr;  // (borrowed: the cache holds it)
  if (n >= 0 && n <= kMaxInternedPairs) {
    PairsKey key;
    key.n = n;
    std::memcpy(key.v, values, sizeof(long long) * 2 * n);
    auto known = internedPairs.find(key);
    if (known != internedPairs.end()) shared = known->second;
  }
  if (shared == nullptr) {  // (made as the callers made it before, then shared by newAccessRecord)
    PyObject* pairs = PyList_New(n);
    if (pairs == nullptr) return nullptr;
    for (int i = 0; i < n; ++i) {
      PyObject* pair = PyTuple_New(2);
      if (pair == nullptr) {
        Py_DECREF(pairs);
        return nullptr;
      }
      PyList_SET_ITEM(pairs, i, pair);
      for (int j = 0; j < 2; ++j) {
        PyObject* x = PyLong_FromLongLong(values[2 * i + j]);
        if (x == nullptr) {
          Py_DECREF(pairs);
          return nullptr;
        }
        PyTuple_SET_ITEM(pair, j, x);
      }
    }
    PyObject* acc = newAccessRecord(cls, storage, offset, pairs);
    Py_DECREF(pairs);
    return acc;
  }
  PyObject* sid = slotAttr(storage, sidName);
  PyObject* items[access_pos::size] = {sid, Py_NewRef(offset), Py_NewRef(shared), Py_NewRef(storage)};
  return tupleOf(cls, items, access_pos::size);
}

}  // namespace nxs::py_bind
