// `_core.nki.new_slotted(cls, *values)`: an instance of `cls`, a class of `__slots__` deriving
// from object directly (no `__init__` run), its slots set in `__slots__` order to `values` and
// the slots after them to None. The NKI tracer makes its views (neuronxsim.nki.tensor.new_view)
// and storage states (tracer.new_state) with it.
//
// Why C: a trace makes a few such objects per recorded instruction; a Python function that
// assigns each slot costs a frame and an attribute store per slot.
#include "trace_slotted.h"

#include "bindings.h"
#include "trace_dealloc.h"
#include "trace_new_object.h"

#include <structmember.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace nxs::py_bind {
namespace {

// The byte offsets of a class's slots, in `__slots__` order, and whether they are all its
// instances hold past the object header (then newSlottedObject makes them filled, see
// trace_new_object.h).
struct SlotLayout {
  std::vector<Py_ssize_t> offsets;
  bool whole = false;
};
std::unordered_map<PyTypeObject*, SlotLayout> slotLayouts;  // (the classes are referenced)

const SlotLayout* layoutOf(PyTypeObject* cls) {
  auto known = slotLayouts.find(cls);
  if (known == slotLayouts.end()) {
    if (cls->tp_base != &PyBaseObject_Type || cls->tp_dictoffset != 0) {
      PyErr_Format(PyExc_TypeError, "new_slotted: %s must derive from object and have __slots__ only",
                   cls->tp_name);
      return nullptr;
    }
    PyObject* names = PyDict_GetItemString(cls->tp_dict, "__slots__");  // (borrowed)
    if (names == nullptr || !PyTuple_Check(names)) {
      PyErr_Format(PyExc_TypeError, "new_slotted: %s has no __slots__ tuple", cls->tp_name);
      return nullptr;
    }
    SlotLayout layout;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i) {
      const Py_ssize_t offset = objectSlotOffset(PyDict_GetItem(cls->tp_dict, PyTuple_GET_ITEM(names, i)));
      if (offset < 0) {
        PyErr_Format(PyExc_TypeError, "new_slotted: slot %R of %s is not an object slot",
                     PyTuple_GET_ITEM(names, i), cls->tp_name);
        return nullptr;
      }
      layout.offsets.push_back(offset);
    }
    // A name twice in __slots__ lays out two words but names only the last: a value given for it
    // would be overwritten (and leaked), a word left unnamed.
    std::vector<Py_ssize_t> sorted = layout.offsets;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      PyErr_Format(PyExc_TypeError, "new_slotted: %s names a slot twice in __slots__ %R", cls->tp_name, names);
      return nullptr;
    }
    // (distinct object slots filling the body exactly: every word past the header is set)
    layout.whole = new_object::generic(cls) && cls->tp_itemsize == 0 && cls->tp_weaklistoffset == 0 &&
                   cls->tp_basicsize == static_cast<Py_ssize_t>(sizeof(PyObject) +
                                                                layout.offsets.size() * sizeof(PyObject*));
    Py_INCREF(cls);
    known = slotLayouts.emplace(cls, std::move(layout)).first;
  }
  return &known->second;
}

PyObject* newSlotted(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || !PyType_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "new_slotted(cls, *values): cls must be a class");
    return nullptr;
  }
  return newSlottedObject(args[0], args + 1, nargs - 1);
}

// The deallocation of an instance of a class use_slots_dealloc took (or of a subclass, whose own
// additions CPython's generic deallocation has released before calling this, its base's): what
// the generic one (subtype_dealloc, then object's) does for such a class, in one pass: untrack,
// release the slots, free, release the class. The generic one first looks for the nearest base
// with another deallocation, finalizers, weak references and a __dict__, none of which these
// classes have, then walks the class's member list for the slots. A trace frees a storage and a
// loop iteration or so per instruction.
void slotsDealloc(PyObject* self) {
  dealloc_nesting::deallocate<slotsDealloc>(self, [self](PyTypeObject* type) {
    // The slots are the words past the object's header up to the size of the class that took
    // this deallocation (a subclass's are past that, released already).
    PyTypeObject* owner = type;
    while (owner->tp_dealloc != slotsDealloc) owner = owner->tp_base;
    auto** slots = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + sizeof(PyObject));
    const Py_ssize_t n = (owner->tp_basicsize - static_cast<Py_ssize_t>(sizeof(PyObject))) /
                         static_cast<Py_ssize_t>(sizeof(PyObject*));
    for (Py_ssize_t i = n; --i >= 0;) Py_CLEAR(slots[i]);
  });
}

// use_slots_dealloc(cls): instances of `cls` are freed by slotsDealloc from now on, if `cls` is
// a class made by a class statement deriving from object directly whose instances hold nothing
// but its __slots__ (a tuple of names; no __dict__, no weak references) and that has no
// finalizer; returns whether it took the class (a class it does not take keeps the generic
// deallocation).
PyObject* useSlotsDealloc(PyObject*, PyObject* cls) {
  if (!PyType_Check(cls)) {
    PyErr_SetString(PyExc_TypeError, "use_slots_dealloc(cls: type)");
    return nullptr;
  }
  auto* type = reinterpret_cast<PyTypeObject*>(cls);
  PyObject* names = type->tp_dict != nullptr ? PyDict_GetItemString(type->tp_dict, "__slots__") : nullptr;
  const bool plain = names != nullptr && PyTuple_Check(names) && dealloc_nesting::plainHeapClass(type) &&
                     type->tp_base == &PyBaseObject_Type && type->tp_itemsize == 0 &&
                     type->tp_basicsize ==
                         static_cast<Py_ssize_t>(sizeof(PyObject) + PyTuple_GET_SIZE(names) * sizeof(PyObject*));
  if (plain) type->tp_dealloc = slotsDealloc;
  return Py_NewRef(plain ? Py_True : Py_False);
}

PyMethodDef useSlotsDeallocDef = {
    "use_slots_dealloc", useSlotsDealloc, METH_O,
    "use_slots_dealloc(cls): frees instances of cls, a class of __slots__ only deriving from object, in one "
    "pass (see neuronxsim.nki.tensor.Storage); whether it took the class."};

PyMethodDef newSlottedDef = {
    "new_slotted", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(newSlotted)), METH_FASTCALL,
    "new_slotted(cls, *values): an instance of the __slots__ class cls (no __init__ run), its slots "
    "set in __slots__ order to values and the rest to None."};

void bindSlotted(py::module_& m) {
  m.attr("new_slotted") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&newSlottedDef, nullptr, nullptr));
  m.attr("use_slots_dealloc") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&useSlotsDeallocDef, nullptr, nullptr));
}

NXS_REGISTER_SUBMODULE(nki, 44, "the NKI tracer's hot paths", bindSlotted);

}  // namespace

namespace slot_lookup {
std::array<std::array<Entry, 2>, size_t{1} << kSetBits> sets;
}  // namespace slot_lookup

namespace {

// What the slot cache knows of Py_TYPE(o) and `name`: the matching way of their set, else the
// pair learned into the set's first way (the other way keeps the previous first).
const slot_lookup::Entry* knownSlot(PyObject* o, PyObject* name) {
  PyTypeObject* type = Py_TYPE(o);
  auto& set = slot_lookup::setOf(type, name);
  const slot_lookup::Entry* known = &set[0];  // (matched when slotAttr fell back for its unset slot)
  if (!known->matches(type, name)) known = &set[1];
  if (!known->matches(type, name)) {
    PyObject* descr = _PyType_Lookup(type, name);  // (borrowed; assigns the class a version tag)
    const bool generic = type->tp_getattro == PyObject_GenericGetAttr;
    set[1] = set[0];
    const Py_ssize_t offset = generic ? objectSlotOffset(descr) : -1;
    // (an object slot's member descriptor stores unless READONLY; __slots__ members never are)
    const bool writable =
        offset >= 0 && !(reinterpret_cast<PyMemberDescrObject*>(descr)->d_member->flags & READONLY);
    set[0] = {type, PyType_HasFeature(type, Py_TPFLAGS_VALID_VERSION_TAG) ? type->tp_version_tag : 0u, name,
              offset, writable};
    known = &set[0];
  }
  return known;
}

}  // namespace

int slotSetLearn(PyObject* o, PyObject* name, PyObject* v) {
  const slot_lookup::Entry* known = knownSlot(o, name);
  if (known->writable && known->version != 0 && Py_TYPE(o)->tp_setattro == PyObject_GenericSetAttr) {
    PyObject** at = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + known->offset);
    PyObject* old = *at;
    *at = Py_NewRef(v);
    Py_XDECREF(old);
    return 0;
  }
  return PyObject_SetAttr(o, name, v);
}

PyObject* slotAttrLearn(PyObject* o, PyObject* name) {
  const slot_lookup::Entry* known = knownSlot(o, name);
  if (known->offset >= 0 && known->version != 0) {
    PyObject* v = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + known->offset);
    if (v != nullptr) return Py_NewRef(v);
  }
  return PyObject_GetAttr(o, name);
}

Py_ssize_t objectSlotOffset(PyObject* descr) {
  if (descr == nullptr || Py_TYPE(descr) != &PyMemberDescr_Type) return -1;
  const PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descr)->d_member;
  return member->type == T_OBJECT_EX ? member->offset : -1;
}

PyObject* newSlottedObject(PyObject* clsObject, PyObject* const* values, Py_ssize_t n) {
  auto* cls = reinterpret_cast<PyTypeObject*>(clsObject);
  const SlotLayout* layout = layoutOf(cls);
  if (layout == nullptr) return nullptr;
  const std::vector<Py_ssize_t>& offsets = layout->offsets;
  if (static_cast<size_t>(n) > offsets.size()) {
    PyErr_Format(PyExc_TypeError, "new_slotted: %s has %zu slots, not %zd", cls->tp_name, offsets.size(), n);
    return nullptr;
  }
  PyObject* o = layout->whole ? new_object::newUntracked(cls, 0) : cls->tp_alloc(cls, 0);
  if (o == nullptr) return nullptr;
  char* base = reinterpret_cast<char*>(o);
  auto slot = [base, &offsets](size_t i) -> PyObject*& { return *reinterpret_cast<PyObject**>(base + offsets[i]); };
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) slot(i) = Py_NewRef(values[i]);
  for (size_t i = static_cast<size_t>(n); i < offsets.size(); ++i) slot(i) = Py_NewRef(Py_None);
  if (layout->whole) PyObject_GC_Track(o);
  return o;
}
}  // namespace nxs::py_bind
