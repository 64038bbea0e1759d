// The tracer's subscripts, in C for the commonest keys, installed on the tensor classes as
// method descriptors (`subscript_method(cls)` for each dialect's tensor class).
//
// `t[key]` of a 2.2x tensor (neuronxsim.nki.tensor.Tensor.__getitem__):
//   `...`: the tensor itself;
//   on a 2-D tensor without bound checks, `[a:b, c:d]` of ints or loop indices (no steps; `:`
//   for a whole dim), inside the tensor: the view of the same storage from offset
//   `offset + a * strides[0] + c * strides[1]`, of shape (b - a, d - c), sharing the tensor's
//   strides tuple, with no checks;
//   anything else: the Python subscript (`fallback22(t, key)`), which handles the other keys and
//   raises the errors.
//
// `t[key]` of an NKI 0.6 tensor (neuronxsim.nki06.tensor.NkiTensor.__getitem__):
//
//   a key of ints, loop indices, `a:b` slices of them (no step) and `:` (with at most one `...`),
//   no more than the tensor has dimensions, on a direct (not vector-selected) tensor, every index
//   and slice inside its dimension:
//       the view of the tensor's view sliced (a:b, :) and indexed (ints: the dim is dropped, except
//       on the partition dim of an on-chip tensor, which stays at size 1; when that leaves fewer
//       than 2 dims on chip, or none in HBM, a last dim of size 1 is added, of step 1 on chip or
//       when nothing is left, else the last dim's step), wrapped as an NkiTensor of the same
//       buffer;
//   anything else: the Python subscript (`fallback(t, key, None)`), which states the same rules,
//   handles the other keys and raises the errors, with their wording.
//
// The view arithmetic is bir::View's (a strided view of the storage's elements: slice, at).
//
// `configure_subscripts(tensor_class, loop_index_class, fallback)` (2.2x, whose Tensor NKI 0.6's
// views wrap), then `configure_nki06_subscript(nki_tensor_class, fallback)`.
//
// Why C: kernels subscript a tensor for nearly every instruction operand (dst=a[:, k, :],
// src=x[r * 128:(r + 1) * 128, :]); in Python each costs a frame or several and dozens of bytecodes.
#include "trace_ref.h"
#include "trace_slotted.h"

#include "bindings.h"
#include "bir/Error.h"
#include "bir/View.h"

namespace nxs::py_bind {
namespace {
namespace subscripts {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

PyObject* nkiTensorClass = nullptr;
PyObject* tensorClass = nullptr;
PyTypeObject* loopIndexClass = nullptr;
PyObject* fallback = nullptr;    // NKI 0.6's Python subscript
PyObject* fallback22 = nullptr;  // 2.2x's
PyObject* checksName = nullptr;
PyObject *viewName, *bufferName, *indirectName, *storageName, *onChipName, *offsetName, *shapeName, *stridesName;

using Held = nxs::py_bind::OwnedRef;

// An index the fast path takes: an int or a loop index, exactly (not a bool, not a numpy int).
bool plainIndex(PyObject* k, long long& v) {
  if (!PyLong_CheckExact(k) && Py_TYPE(k) != loopIndexClass) return false;
  v = PyLong_AsLongLong(k);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();  // (too large: the Python subscript says so)
    return false;
  }
  return true;
}

// Integers of a tuple of ints (false if one is not an int that fits).
bool intsOf(PyObject* tuple, std::vector<int64_t>& out) {
  if (!PyTuple_Check(tuple)) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(tuple);
  out.resize(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyTuple_GET_ITEM(tuple, i);
    if (!PyLong_Check(v)) return false;
    out[static_cast<size_t>(i)] = PyLong_AsLongLong(v);
    if (out[static_cast<size_t>(i)] == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
  }
  return true;
}

PyObject* fallBack(PyObject* t, PyObject* key) {
  PyObject* const args[3] = {t, key, Py_None};
  return PyObject_Vectorcall(fallback, args, 3, nullptr);
}

PyObject* tupleOfInts(const std::vector<int64_t>& values) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(values.size()));
  if (t == nullptr) return nullptr;
  for (size_t i = 0; i < values.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(values[i]);
    if (v == nullptr) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), v);
  }
  return t;
}

PyObject* subscript(PyObject* t, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "__getitem__(key)");
    return nullptr;
  }
  if (nkiTensorClass == nullptr || tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the tracer's subscripts are not configured");
    return nullptr;
  }
  PyObject* key = args[0];
  Held indirect(PyObject_GetAttr(t, indirectName));
  Held view(PyObject_GetAttr(t, viewName));
  if (indirect.get() == nullptr || view.get() == nullptr) return nullptr;
  if (indirect.get() != Py_None) return fallBack(t, key);
  Held storage(PyObject_GetAttr(view.get(), storageName));
  Held offsetObj(PyObject_GetAttr(view.get(), offsetName));
  Held shapeObj(PyObject_GetAttr(view.get(), shapeName));
  Held stridesObj(PyObject_GetAttr(view.get(), stridesName));
  if (!storage.get() || !offsetObj.get() || !shapeObj.get() || !stridesObj.get()) return nullptr;
  Held onChipObj(PyObject_GetAttr(storage.get(), onChipName));
  if (onChipObj.get() == nullptr) return nullptr;
  const int onChip = PyObject_IsTrue(onChipObj.get());
  if (onChip < 0) return nullptr;
  std::vector<int64_t> shape, strides;
  const long long offset = PyLong_AsLongLong(offsetObj.get());
  if ((offset == -1 && PyErr_Occurred()) || !intsOf(shapeObj.get(), shape) || !intsOf(stridesObj.get(), strides) ||
      shape.size() != strides.size()) {
    PyErr_Clear();
    return fallBack(t, key);
  }
  const size_t ndim = shape.size();
  // the key's entries, `...` expanded to `:`s (nullptr stands for `:`)
  std::vector<PyObject*> entries;
  PyObject* const* items = &key;
  Py_ssize_t count = 1;
  if (PyTuple_Check(key)) {
    items = &PyTuple_GET_ITEM(key, 0);
    count = PyTuple_GET_SIZE(key);
  }
  bool ellipsis = false;
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (items[i] != Py_Ellipsis) continue;
    if (ellipsis) return fallBack(t, key);  // (two: the Python subscript refuses them)
    ellipsis = true;
  }
  const size_t given = static_cast<size_t>(count) - (ellipsis ? 1 : 0);
  if (given > ndim) return fallBack(t, key);
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (items[i] == Py_Ellipsis)
      entries.insert(entries.end(), ndim - given, nullptr);
    else
      entries.push_back(items[i]);
  }
  entries.resize(ndim, nullptr);
  std::vector<bir::APPair> dims(ndim);
  for (size_t d = 0; d < ndim; ++d) dims[d] = {strides[d], shape[d]};
  bir::View v(nullptr, bir::DType::float32, offset, std::move(dims));
  size_t d = 0;  // v's dim for the key's next entry
  bool dropped = false;
  try {
    for (size_t axis = 0; axis < ndim; ++axis) {
      PyObject* k = entries[axis];
      const int64_t n = shape[axis];
      long long start = 0, stop = 0;
      if (k == nullptr) {
        ++d;
      } else if (PySlice_Check(k)) {
        auto* s = reinterpret_cast<PySliceObject*>(k);
        if (s->step != Py_None) return fallBack(t, key);
        if (s->start == Py_None && s->stop == Py_None) {
          ++d;
          continue;
        }
        if (!plainIndex(s->start, start) || !plainIndex(s->stop, stop) || !(0 <= start && start < stop && stop <= n))
          return fallBack(t, key);
        v = v.slice(d++, start, stop - start);
      } else if (plainIndex(k, start)) {
        if (start < 0) start += n;
        if (!(0 <= start && start < n)) return fallBack(t, key);
        if (onChip && axis == 0) {
          v = v.slice(d++, start, 1);  // (the partition dim stays, at size 1)
        } else {
          v = v.at(d, start);
          dropped = true;
        }
      } else {
        return fallBack(t, key);
      }
    }
  } catch (const bir::BIRError&) {  // (not expected: the checks above keep every slice inside)
    return fallBack(t, key);
  }
  std::vector<int64_t> outShape, outStrides;
  for (const bir::APPair& p : v.dims()) {
    outShape.push_back(p.num);
    outStrides.push_back(p.step);
  }
  if (dropped && outShape.size() < (onChip ? 2u : 1u)) {  // the last dim stays at size 1
    outStrides.push_back(outStrides.empty() || onChip ? 1 : outStrides.back());
    outShape.push_back(1);
  }
  Held newOffset(PyLong_FromLongLong(v.offset()));
  Held newShape(tupleOfInts(outShape));
  Held newStrides(tupleOfInts(outStrides));
  Held noChecks(PyTuple_New(0));
  if (!newOffset.get() || !newShape.get() || !newStrides.get() || !noChecks.get()) return nullptr;
  PyObject* const slots[5] = {storage.get(), newOffset.get(), newShape.get(), newStrides.get(), noChecks.get()};
  Held derived(newSlottedObject(tensorClass, slots, 5));
  if (derived.get() == nullptr) return nullptr;
  Held buffer(PyObject_GetAttr(t, bufferName));
  if (buffer.get() == nullptr) return nullptr;
  auto* cls = reinterpret_cast<PyTypeObject*>(nkiTensorClass);
  PyObject* out = cls->tp_alloc(cls, 0);
  if (out == nullptr) return nullptr;
  if (PyObject_SetAttr(out, viewName, derived.get()) < 0 || PyObject_SetAttr(out, bufferName, buffer.get()) < 0 ||
      PyObject_SetAttr(out, indirectName, Py_None) < 0) {
    Py_DECREF(out);
    return nullptr;
  }
  return out;
}

// One bound of a slice of a dim of size n: `lo`/`hi` from the slice's start and stop (None and
// None: the whole dim). False when the fast path does not take it.
bool sliceBounds(PyObject* k, int64_t n, long long& lo, long long& hi) {
  if (!PySlice_Check(k)) return false;
  auto* s = reinterpret_cast<PySliceObject*>(k);
  if (s->step != Py_None) return false;
  if (s->start == Py_None && s->stop == Py_None) {
    lo = 0;
    hi = n;
    return true;
  }
  return plainIndex(s->start, lo) && plainIndex(s->stop, hi) && 0 <= lo && lo < hi && hi <= n;
}

PyObject* subscript22(PyObject* t, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "__getitem__(key)");
    return nullptr;
  }
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the tracer's subscripts are not configured");
    return nullptr;
  }
  PyObject* key = args[0];
  if (key == Py_Ellipsis) return Py_NewRef(t);
  if (!PyTuple_CheckExact(key) || PyTuple_GET_SIZE(key) != 2) return PyObject_CallFunctionObjArgs(fallback22, t, key, nullptr);
  Held checks(PyObject_GetAttr(t, checksName));
  Held shapeObj(PyObject_GetAttr(t, shapeName));
  Held stridesObj(PyObject_GetAttr(t, stridesName));
  if (!checks.get() || !shapeObj.get() || !stridesObj.get()) return nullptr;
  const int checked = PyObject_IsTrue(checks.get());
  if (checked < 0) return nullptr;
  std::vector<int64_t> shape, strides;
  long long r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  if (checked || !intsOf(shapeObj.get(), shape) || shape.size() != 2 || !intsOf(stridesObj.get(), strides) ||
      strides.size() != 2 || !sliceBounds(PyTuple_GET_ITEM(key, 0), shape[0], r0, r1) ||
      !sliceBounds(PyTuple_GET_ITEM(key, 1), shape[1], c0, c1))
    return PyObject_CallFunctionObjArgs(fallback22, t, key, nullptr);
  Held storage(PyObject_GetAttr(t, storageName));
  Held offsetObj(PyObject_GetAttr(t, offsetName));
  if (!storage.get() || !offsetObj.get()) return nullptr;
  const long long offset = PyLong_AsLongLong(offsetObj.get());
  if (offset == -1 && PyErr_Occurred()) return nullptr;
  bir::View v(nullptr, bir::DType::float32, offset, {{strides[0], shape[0]}, {strides[1], shape[1]}});
  try {
    v = v.slice(0, r0, r1 - r0).slice(1, c0, c1 - c0);
  } catch (const bir::BIRError&) {  // (not expected: sliceBounds keeps both slices inside)
    return PyObject_CallFunctionObjArgs(fallback22, t, key, nullptr);
  }
  Held newOffset(PyLong_FromLongLong(v.offset()));
  Held newShape(tupleOfInts({v.dims()[0].num, v.dims()[1].num}));
  Held noChecks(PyTuple_New(0));
  if (!newOffset.get() || !newShape.get() || !noChecks.get()) return nullptr;
  PyObject* const slots[5] = {storage.get(), newOffset.get(), newShape.get(), stridesObj.get(), noChecks.get()};
  return newSlottedObject(tensorClass, slots, 5);
}

PyMethodDef subscript22Def = {
    "__getitem__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(subscript22)), METH_FASTCALL,
    "t[key]: a view of the tensor (see the NKI indexing rules)."};

PyMethodDef subscriptDef = {
    "__getitem__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(subscript)), METH_FASTCALL,
    "t[key]: ints, slices (nl.ds) and ... (see the language guide's indexing rules)."};

void bindSubscripts(py::module_& m) {
  for (auto [slot, text] : {std::pair{&checksName, "checks"}, {&viewName, "_view"}, {&bufferName, "_buffer"}, {&indirectName, "_indirect"},
                            {&storageName, "storage"}, {&onChipName, "on_chip"}, {&offsetName, "offset"},
                            {&shapeName, "shape"}, {&stridesName, "strides"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  m.def(
      "configure_subscripts",
      [](py::type tensor, py::type loopIndex, py::object python) {
        for (PyObject** slot : {&tensorClass, &fallback22}) Py_XDECREF(*slot);
        Py_XDECREF(reinterpret_cast<PyObject*>(loopIndexClass));
        tensorClass = tensor.inc_ref().ptr();
        loopIndexClass = reinterpret_cast<PyTypeObject*>(loopIndex.inc_ref().ptr());
        fallback22 = python.inc_ref().ptr();
      },
      py::arg("tensor_class"), py::arg("loop_index_class"), py::arg("fallback"),
      "Gives the subscripts the Tensor (2.2x) and LoopIndex classes and the Python subscript fallback(t, key) "
      "of Tensor for the keys the C one does not take.");
  m.def(
      "configure_nki06_subscript",
      [](py::type nkiTensor, py::object python) {
        for (PyObject** slot : {&nkiTensorClass, &fallback}) Py_XDECREF(*slot);
        nkiTensorClass = nkiTensor.inc_ref().ptr();
        fallback = python.inc_ref().ptr();
      },
      py::arg("nki_tensor_class"), py::arg("fallback"),
      "Gives the subscripts the NkiTensor class (NKI 0.6; after configure_subscripts) and its Python "
      "subscript fallback(t, key, loc) for the keys the C one does not take.");
  m.def(
      "subscript_method",
      [](py::type cls) {
        auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
        if (cls.ptr() != tensorClass && cls.ptr() != nkiTensorClass)
          throw py::type_error("subscript_method: configure the subscripts of this class first");
        return py::reinterpret_steal<py::object>(
            PyDescr_NewMethod(type, cls.ptr() == tensorClass ? &subscript22Def : &subscriptDef));
      },
      py::arg("cls"), "The C subscript of the tensor class cls (Tensor or NkiTensor) as its __getitem__ method.");
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindSubscripts);

}  // namespace subscripts
}  // namespace
}  // namespace nxs::py_bind
