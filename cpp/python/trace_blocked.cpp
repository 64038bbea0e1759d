// Subscripts and stores of the 2.2x tracer's tensors in C: `BlockedTensor.__getitem__`,
// `BlockedTensor.__setitem__` and `Tensor.__setitem__` (neuronxsim.nki.tensor), installed on the
// classes as method descriptors (`blocked_methods()`, `tensor_store_method()`) once
// `configure_blocked(...)` has given them the classes and functions they call.
//
// `t[key]` of a BlockedTensor: a key (a tuple, or one entry) of at least `nb` entries (nb: t's
// block dims) whose first `nb` are ints or loop indices inside their block dim (negative: from
// the end) names a block: its view is t.blocks[index] (index: those entries as ints; made on
// first use by t.make_block(index), as t.block(index) does), the rest of the key applied to it by the Tensor subscript (`...`
// alone, or nothing: the block's view itself); t.last_subscript becomes (key as a tuple, view).
// Anything else (fewer entries than block dims, another kind of block index, one outside its
// dim, an instance of a subclass) is the Python subscript's (`fallback(t, key)`,
// tensor._blocked_getitem), which also raises every error.
// `t[key] = value` (either class): the view of `key` (on a Tensor, `...` is the tensor itself;
// the last subscript's view when `key` is that subscript's key object, as in `t[key] op= x`;
// else `t[key]`); unless `value` is that view, `assign_redirect(tr, view, value)` or else
// `_assign_general(tr, view, value)` of neuronxsim.nki.language writes it (tr: `current()`).
//
// Why C: kernels that keep tiles in block dims index them for nearly every instruction operand
// (`acc[i, j] += nisa.nc_matmul(a[t, :, i * 128:(i + 1) * 128], ...)`); in Python each such
// subscript cost a frame and a dozen bytecodes per block dim, and each store another frame.
#include "trace_int_tuples.h"
#include "trace_known_hash.h"
#include "trace_method_site.h"
#include "trace_ref.h"
#include "trace_slotted.h"
#include "trace_subscript.h"

#include "bindings.h"

#include <vector>

namespace nxs::py_bind {
namespace {
namespace blocked {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

PyTypeObject* blockedClass = nullptr;
PyTypeObject* tensorClass = nullptr;
PyTypeObject* loopIndexClass = nullptr;
PyObject* fallback = nullptr;        // tensor._blocked_getitem(t, key)
PyObject* current = nullptr;   // _core.nki.current
PyObject* language = nullptr;  // neuronxsim.nki.language: its assign_redirect and _assign_general
// Byte offsets of BlockedTensor's slots (read directly: the class is exact, see blockedView).
Py_ssize_t blockShapeAt = -1, blocksAt = -1, makeBlockAt = -1, lastAt = -1;
PyObject *lastName, *assignRedirectName, *assignGeneralName;

using Owned = nxs::py_bind::OwnedRef;

PyObject*& slotOf(PyObject* o, Py_ssize_t at) { return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + at); }

// The block index `k` of a block dim of `sizeObj` blocks, as the value of the int the blocks dict
// is keyed by (into `out`): an int or a loop index inside the dim, negative from its end.
bool blockIndex(PyObject* k, PyObject* sizeObj, long long& out) {
  if ((!PyLong_CheckExact(k) && Py_TYPE(k) != loopIndexClass) || !PyLong_CheckExact(sizeObj)) return false;
  int over = 0, sizeOver = 0;
  const long long i = PyLong_AsLongLongAndOverflow(k, &over);
  const long long size = PyLong_AsLongLongAndOverflow(sizeObj, &sizeOver);
  if (over || sizeOver || !(-size <= i && i < size)) return false;  // (the Python subscript's error)
  out = i < 0 ? i + size : i;
  return true;
}

PyObject* fallBack(PyObject* t, PyObject* key) {
  PyObject* const args[2] = {t, key};
  return PyObject_Vectorcall(fallback, args, 2, nullptr);
}

// t[key] of a BlockedTensor (see the file's comment): a new reference, null with an error set.
PyObject* blockedView(PyObject* t, PyObject* key) {
  if (blockedClass == nullptr || tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the blocked tensors' subscripts are not configured");
    return nullptr;
  }
  if (Py_TYPE(t) != blockedClass) return fallBack(t, key);
  PyObject* blockShape = slotOf(t, blockShapeAt);
  PyObject* blocks = slotOf(t, blocksAt);
  if (blockShape == nullptr || !PyTuple_CheckExact(blockShape) || blocks == nullptr || !PyDict_CheckExact(blocks))
    return fallBack(t, key);
  PyObject* const* items;
  Py_ssize_t count;
  if (!subscriptItems(key, items, count)) return fallBack(t, key);
  const bool isTuple = PyTuple_CheckExact(key);
  const Py_ssize_t nb = PyTuple_GET_SIZE(blockShape);
  if (nb == 0 || count < nb) return fallBack(t, key);  // (t[i] of blocks [I, J]: a BlockedTensor)
  // (the index: the tuple held for its values, the blocks dict's own key once a C subscript made
  // the block; built for more block dims than the held tuples have)
  std::vector<long long> many(nb > int_tuples::kMaxSize ? static_cast<size_t>(nb) : 0);
  long long local[int_tuples::kMaxSize];
  long long* values = nb > int_tuples::kMaxSize ? many.data() : local;
  for (Py_ssize_t a = 0; a < nb; ++a)
    if (!blockIndex(items[a], PyTuple_GET_ITEM(blockShape, a), values[a])) return fallBack(t, key);
  Py_hash_t hash;
  Owned index(int_tuples::get(values, static_cast<int>(nb), hash));
  if (index.get() == nullptr) return nullptr;
  Owned view(Py_XNewRef(dictGetKnownHash(blocks, index.get(), hash)));
  if (view.get() == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    PyObject* make = slotOf(t, makeBlockAt);  // (made on first use: BlockedTensor.block's steps)
    if (make == nullptr) return fallBack(t, key);
    view.p = PyObject_CallOneArg(make, index.get());
    if (view.get() == nullptr || dictSetKnownHash(blocks, index.get(), view.get(), hash) < 0) return nullptr;
  }
  if (count > nb && !(count == nb + 1 && items[nb] == Py_Ellipsis)) {  // (view[key[nb:]])
    PyObject* sub = nullptr;
    if (Py_TYPE(view.get()) == tensorClass) {
      sub = tensorSubscriptItems22(view.get(), items + nb, count - nb);
    } else {
      Owned rest(PyTuple_GetSlice(key, nb, count));
      sub = rest.get() != nullptr ? PyObject_GetItem(view.get(), rest.get()) : nullptr;
    }
    Py_SETREF(view.p, sub);
    if (view.get() == nullptr) return nullptr;
  }
  Owned last(isTuple ? PyTuple_Pack(2, key, view.get()) : nullptr);
  if (!isTuple) {
    Owned wrapped(PyTuple_Pack(1, key));  // (the Python subscript's key: a tuple)
    if (wrapped.get() == nullptr) return nullptr;
    last.p = PyTuple_Pack(2, wrapped.get(), view.get());
  }
  if (last.get() == nullptr) return nullptr;
  Py_XSETREF(slotOf(t, lastAt), last.release());
  return view.release();
}

PyObject* blockedGetitem(PyObject* t, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "__getitem__(key)");
    return nullptr;
  }
  return blockedView(t, args[0]);
}

// `view = value` of a store once the view is known (see the file's comment); null with an error set.
PyObject* store(PyObject* view, PyObject* value) {
  if (value == view) Py_RETURN_NONE;  // (`t[key] op= x` stores back the view the operation updated)
  Owned tr(PyObject_CallNoArgs(current));
  if (tr.get() == nullptr) return nullptr;
  PyObject* const args[3] = {tr.get(), view, value};
  // (the language module's functions as they are now, as the Python store named them)
  Owned redirect(moduleAttr(language, assignRedirectName));
  if (redirect.get() == nullptr) return nullptr;
  Owned done(callFast(redirect.get(), args, 3));
  if (done.get() == nullptr) return nullptr;
  const int redirected = PyObject_IsTrue(done.get());
  if (redirected < 0) return nullptr;
  if (!redirected) {
    Owned assignGeneral(moduleAttr(language, assignGeneralName));
    if (assignGeneral.get() == nullptr) return nullptr;
    Owned general(PyObject_Vectorcall(assignGeneral.get(), args, 3, nullptr));
    if (general.get() == nullptr) return nullptr;
  }
  Py_RETURN_NONE;
}

// The view of the last subscript of `t` when its key is `key` (a new reference), else null (no
// error, or an error set: check PyErr_Occurred).
PyObject* lastView(PyObject* last, PyObject* key) {
  if (last != nullptr && PyTuple_CheckExact(last) && PyTuple_GET_SIZE(last) == 2 && PyTuple_GET_ITEM(last, 0) == key)
    return Py_NewRef(PyTuple_GET_ITEM(last, 1));
  return nullptr;
}

bool storeArgs(Py_ssize_t nargs) {
  if (nargs == 2) return true;
  PyErr_SetString(PyExc_TypeError, "__setitem__(key, value)");
  return false;
}

PyObject* blockedSetitem(PyObject* t, PyObject* const* args, Py_ssize_t nargs) {
  if (!storeArgs(nargs)) return nullptr;
  PyObject* key = args[0];
  Owned view(nullptr);
  if (blockedClass != nullptr && Py_TYPE(t) == blockedClass) {
    view.p = lastView(slotOf(t, lastAt), key);
  } else {
    Owned last(PyObject_GetAttr(t, lastName));
    if (last.get() == nullptr) return nullptr;
    view.p = lastView(last.get(), key);
  }
  if (view.get() == nullptr) view.p = blockedView(t, key);
  if (view.get() == nullptr) return nullptr;
  return store(view.get(), args[1]);
}

PyObject* tensorSetitem(PyObject* t, PyObject* const* args, Py_ssize_t nargs) {
  if (!storeArgs(nargs)) return nullptr;
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the tensors' stores are not configured");
    return nullptr;
  }
  PyObject* key = args[0];
  Owned view(nullptr);
  if (key == Py_Ellipsis) {  // `t[...] = x`, `t[...] op= x`: the whole view (as __getitem__ has it)
    view.p = Py_NewRef(t);
  } else {
    Owned last(slotAttr(t, lastName));
    if (last.get() == nullptr) return nullptr;
    view.p = lastView(last.get(), key);
    if (view.get() == nullptr)
      view.p = Py_TYPE(t) == tensorClass ? tensorSubscript22(t, key) : PyObject_GetItem(t, key);
    if (view.get() == nullptr) return nullptr;
  }
  return store(view.get(), args[1]);
}

PyMethodDef blockedGetitemDef = {
    "__getitem__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(blockedGetitem)), METH_FASTCALL,
    "t[i, ..., rest]: the view of a block (every block dimension indexed), the rest of the subscript applied."};
PyMethodDef blockedSetitemDef = {
    "__setitem__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(blockedSetitem)), METH_FASTCALL,
    "t[key] = value: value written to the view t[key] (nl.assign)."};
PyMethodDef tensorSetitemDef = {
    "__setitem__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensorSetitem)), METH_FASTCALL,
    "t[key] = value: value written to the view t[key] (nl.assign)."};

// The byte offset of the object slot `name` of `cls` (a TypeError if it has none).
Py_ssize_t slotOffset(PyTypeObject* cls, const char* name) {
  PyObject* descr = PyDict_GetItemString(cls->tp_dict, name);  // (borrowed)
  const Py_ssize_t at = objectSlotOffset(descr);
  if (at < 0) {
    PyErr_Format(PyExc_TypeError, "configure_blocked: %s has no slot %s", cls->tp_name, name);
    throw py::error_already_set();
  }
  return at;
}

void bindBlocked(py::module_& m) {
  for (auto [slot, text] : {std::pair{&lastName, "last_subscript"},
                            {&assignRedirectName, "assign_redirect"},
                            {&assignGeneralName, "_assign_general"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  m.def(
      "configure_blocked",
      [](py::type blockedTensor, py::type tensor, py::type loopIndex, py::object getitem, py::object currentFn,
         py::module_ languageModule) {
        auto* cls = reinterpret_cast<PyTypeObject*>(blockedTensor.ptr());
        const Py_ssize_t shapeAt = slotOffset(cls, "block_shape"), blocksSlot = slotOffset(cls, "blocks"),
                         make = slotOffset(cls, "make_block"), last = slotOffset(cls, "last_subscript");
        for (PyObject** slot : {&fallback, &current, &language}) Py_XDECREF(*slot);
        for (PyTypeObject** slot : {&blockedClass, &tensorClass, &loopIndexClass})
          Py_XDECREF(reinterpret_cast<PyObject*>(*slot));
        blockedClass = reinterpret_cast<PyTypeObject*>(blockedTensor.inc_ref().ptr());
        tensorClass = reinterpret_cast<PyTypeObject*>(tensor.inc_ref().ptr());
        loopIndexClass = reinterpret_cast<PyTypeObject*>(loopIndex.inc_ref().ptr());
        fallback = getitem.inc_ref().ptr();
        current = currentFn.inc_ref().ptr();
        language = languageModule.inc_ref().ptr();
        blockShapeAt = shapeAt;
        blocksAt = blocksSlot;
        makeBlockAt = make;
        lastAt = last;
      },
      py::arg("blocked_tensor_class"), py::arg("tensor_class"), py::arg("loop_index_class"), py::arg("fallback"),
      py::arg("current"), py::arg("language"),
      "Gives the C subscript and stores the BlockedTensor, Tensor and LoopIndex classes, BlockedTensor's Python "
      "subscript fallback(t, key) for the keys the C one does not take, current() and the language module, "
      "whose assign_redirect(tr, dst, value) and then, when that declined, _assign_general(tr, dst, value) a "
      "store calls.");
  m.def(
      "blocked_methods",
      []() {
        if (blockedClass == nullptr) throw py::type_error("blocked_methods: call configure_blocked first");
        auto* cls = blockedClass;
        return py::make_tuple(py::reinterpret_steal<py::object>(PyDescr_NewMethod(cls, &blockedGetitemDef)),
                              py::reinterpret_steal<py::object>(PyDescr_NewMethod(cls, &blockedSetitemDef)));
      },
      "(__getitem__, __setitem__) of BlockedTensor in C.");
  m.def(
      "tensor_store_method",
      []() {
        if (tensorClass == nullptr) throw py::type_error("tensor_store_method: call configure_blocked first");
        return py::reinterpret_steal<py::object>(PyDescr_NewMethod(tensorClass, &tensorSetitemDef));
      },
      "Tensor.__setitem__ in C.");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindBlocked);

}  // namespace blocked
}  // namespace
}  // namespace nxs::py_bind
