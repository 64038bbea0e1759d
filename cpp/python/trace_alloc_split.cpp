// The allocation pass's split of the storages (neuronxsim/nki/allocator.py, _used_on_chip, the
// definition this follows):
//   used_on_chip(storages, first_use, storage_class, sbuf, psum) -> (sbuf tiles, psum tiles) or None
// the storages that are on chip and used (first_use[sid] >= 0), in storage order, split by kind.
// Only storages of exactly `storage_class` (a __slots__ class with slots sid, kind and on_chip)
// whose on_chip is a bool, sid an int indexing first_use, first use an int and kind `sbuf` or
// `psum` (the object, or an equal str) are taken here; anything else returns None before
// anything is changed (nothing is), for the Python definition to split them all and raise what it
// raises.
//
// Why C: a trace makes about one storage per instruction, and the Python loop reading three slots
// and a list item of each was half of the allocation pass of a sweep kernel.
#include "bindings.h"
#include "trace_equal.h"
#include "trace_slotted.h"

#include <array>
#include <cstring>

namespace nxs::py_bind {
namespace {

enum SplitSlot { kSplitSid, kSplitKind, kSplitOnChip, kSplitSlots };
const std::array<const char*, kSplitSlots> kSplitSlotNames = {"sid", "kind", "on_chip"};

// kind is `name`: the same object, or an exact str of the same code units (as str == compares two
// exact strs).
bool allocKindIs(PyObject* kind, PyObject* name) {
  if (kind == name) return true;
  if (!PyUnicode_CheckExact(kind) || !PyUnicode_CheckExact(name) || !PyUnicode_IS_READY(kind) ||
      !PyUnicode_IS_READY(name))
    return false;
  return PyUnicode_KIND(kind) == PyUnicode_KIND(name) && PyUnicode_GET_LENGTH(kind) == PyUnicode_GET_LENGTH(name) &&
         std::memcmp(PyUnicode_DATA(kind), PyUnicode_DATA(name),
                     static_cast<size_t>(PyUnicode_GET_LENGTH(kind)) * PyUnicode_KIND(kind)) == 0;
}

enum class SplitRead { kDone, kPythonCase, kError };

// Appends the used on-chip storages of `storages` to `sbuf` and `psum`.
SplitRead splitUsed(PyObject* storages, PyObject* firstUse, PyTypeObject* cls, PyObject* sbufKind, PyObject* psumKind,
            PyObject* sbuf, PyObject* psum) {
  static NamedSlots<kSplitSlots> slots("used_on_chip", kSplitSlotNames);
  // (a class that gets or sets attributes its own way may not mean its slots)
  if (cls->tp_getattro != PyObject_GenericGetAttr) return SplitRead::kPythonCase;
  const auto* at = slots.of(cls);
  if (at == nullptr) {
    PyErr_Clear();
    return SplitRead::kPythonCase;
  }
  const Py_ssize_t uses = PyList_GET_SIZE(firstUse);
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(storages); ++i) {
    PyObject* st = PyList_GET_ITEM(storages, i);
    if (Py_TYPE(st) != cls) return SplitRead::kPythonCase;
    PyObject* onChip = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(st) + (*at)[kSplitOnChip]);
    if (onChip == Py_False) continue;
    if (onChip != Py_True) return SplitRead::kPythonCase;  // (unset, or another truth)
    PyObject* sid = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(st) + (*at)[kSplitSid]);
    long long s = 0, first = 0;
    if (sid == nullptr || !exactIntValue(sid, s) || s < 0 || s >= uses ||
        !exactIntValue(PyList_GET_ITEM(firstUse, static_cast<Py_ssize_t>(s)), first)) {
      return SplitRead::kPythonCase;
    }
    if (first < 0) continue;
    PyObject* kind = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(st) + (*at)[kSplitKind]);
    if (kind == nullptr) return SplitRead::kPythonCase;
    PyObject* to = allocKindIs(kind, sbufKind) ? sbuf : allocKindIs(kind, psumKind) ? psum : nullptr;
    if (to == nullptr) return SplitRead::kPythonCase;
    if (PyList_Append(to, st) < 0) return SplitRead::kError;
  }
  return SplitRead::kDone;
}

PyObject* usedOnChip(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5 || !PyList_Check(args[0]) || !PyList_Check(args[1]) || !PyType_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "used_on_chip(storages: list, first_use: list, storage_class: type, sbuf, psum)");
    return nullptr;
  }
  PyObject* sbuf = PyList_New(0);
  PyObject* psum = PyList_New(0);
  SplitRead done = sbuf != nullptr && psum != nullptr
                   ? splitUsed(args[0], args[1], reinterpret_cast<PyTypeObject*>(args[2]), args[3], args[4], sbuf, psum)
                   : SplitRead::kError;
  PyObject* result = done == SplitRead::kDone ? PyTuple_Pack(2, sbuf, psum) : nullptr;
  Py_XDECREF(sbuf);
  Py_XDECREF(psum);
  if (done == SplitRead::kPythonCase) Py_RETURN_NONE;
  return result;
}

PyMethodDef usedOnChipDef = {
    "used_on_chip", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(usedOnChip)), METH_FASTCALL,
    "used_on_chip(storages, first_use, storage_class, sbuf, psum): (the SBUF storages, the PSUM storages) that are "
    "on chip and used, in order, or None for the Python definition (see neuronxsim.nki.allocator._used_on_chip)."};

void bindAllocSplit(py::module_& m) {
  m.attr(usedOnChipDef.ml_name) =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&usedOnChipDef, nullptr, nullptr));
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindAllocSplit);

}  // namespace
}  // namespace nxs::py_bind
