// The C paths (through FastCalls, trace_fast_call.cpp) of neuronxsim.nki.indexing.mask_box and
// neuronxsim.nki.instructions.keeps_all for the boxes a mask remembers:
//
// - `mask_box_fast()`: `mask_box(mask, shape)` (two positional arguments) of an exact
//   IndexPredicate or Mask whose `box_cache` holds a box for `shape` (the one mask of a loop body
//   applied to its load, compute and store): that box; or of a one-predicate mask (exact classes
//   again, the Mask's predicates an exact tuple) whose box `_PREDICATE_BOXES` remembers by
//   `(op, expr.const, expr.coefs, expr.shape, shape)` (a loop's new mask of every iteration,
//   `mask=(j * 512 + i_f < n)`): that box, remembered in the mask's box_cache as mask_box does;
// - `keeps_all_fast()`: `keeps_all(mask, shape)`: True for no mask; for a mask whose box
//   mask_box_fast knows, whether it is the full box of `shape` (`_FULL_BOXES.get(shape)`).
//
// Anything else returns NotImplemented having changed nothing (a key lookup that raises is
// declined too): the Python definitions, the home of every rule and error, answer it.
//
// The boxes _PREDICATE_BOXES answered are also remembered by value (predicateMemo below), in front
// of that dict.
//
// `configure_mask_box(index_predicate, mask, full_boxes, predicate_boxes)` gives them the two
// classes and indexing's _FULL_BOXES and _PREDICATE_BOXES.
//
// Why C: both are called for nearly every masked instruction of a normalisation kernel (a
// partial last tile), from Python builders and from C paths alike, and their frames were most
// of what they cost.
#include "trace_equal.h"
#include "trace_mask_box.h"

#include "trace_ref.h"
#include "trace_slotted.h"
#include "trace_value_memo.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace mask_box {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

using Owned = nxs::py_bind::OwnedRef;

PyTypeObject *predicateClass = nullptr, *maskClass = nullptr;
PyObject *fullBoxes = nullptr, *predicateBoxes = nullptr;
PyObject *boxCacheName, *predicatesName, *exprName, *opName, *constName, *coefsName, *shapeName;

// What _PREDICATE_BOXES answered, by the values of its key (op, expr.const, expr.coefs,
// expr.shape, shape) (trace_value_memo.h), the op by identity (the C `<` of
// trace_index_expr_ops.cpp and the Python one each use one op string). A loop body's
// mask is new on every iteration (`mask=(j * 512 + i_f < n)`: every bn_stats chunk of
// layernorm_v2), so its box is looked up by key for each. 256 entries: a kernel's loops bring a
// few dozen distinct masks.
using PredicateMemo = ValueMemo<1, 1 + 3 * 5, 8>;
PredicateMemo predicateMemo;

// What _FULL_BOXES answered, by the shape's values (trace_value_memo.h): the full box of a shape is
// made once and never replaced (indexing.full_box only adds to the dict), and its identity is the
// answer (`box is _FULL_BOXES.get(shape)`), so the object found once for a shape's values is what
// the dict answers for them from then on. Why: every masked instruction of a normalisation kernel
// asks (keeps_all, bn_stats's plain path), and the shape tuple's hash and comparison cost some 400
// instructions of the machine.
using FullBoxMemo = ValueMemo<1, 4, 5>;
FullBoxMemo fullBoxMemo;

// _FULL_BOXES.get(shape) (borrowed), or null: none, or an error set (an unhashable shape's).
PyObject* fullBox(PyObject* shape) {
  FullBoxMemo::Key byValue;
  const bool memoable = byValue.addTuple(shape);
  if (PyObject* known = memoable ? fullBoxMemo.find(byValue) : nullptr) return known;
  PyObject* full = PyDict_GetItemWithError(fullBoxes, shape);  // (borrowed; the dict holds it)
  if (full != nullptr && memoable) fullBoxMemo.remember(byValue, full);
  return full;
}

// The box of `mask` over `shape` as mask_box answers it from what is remembered: 1 with `box` set
// (a new reference), 0 when the definition must compute it (nothing changed), -1 with an error.
int knownBox(PyObject* mask, PyObject* shape, Owned& box) {
  if (predicateBoxes == nullptr) return 0;
  PyTypeObject* c = Py_TYPE(mask);
  if (c != predicateClass && c != maskClass) return 0;
  Owned cached(slotAttr(mask, boxCacheName));
  if (cached.get() == nullptr) return -1;
  if (PyTuple_CheckExact(cached.get()) && PyTuple_GET_SIZE(cached.get()) == 2) {
    PyObject* cachedShape = PyTuple_GET_ITEM(cached.get(), 0);
    const int t = cachedShape == shape ? 1 : equalTo(cachedShape, shape);
    if (t < 0) return -1;
    if (t == 1) {
      box.p = Py_NewRef(PyTuple_GET_ITEM(cached.get(), 1));
      return 1;
    }
  } else if (cached.get() != Py_None) {
    return 0;  // (something else set it: the definition's)
  }
  Owned predicate(nullptr);
  if (c == predicateClass) {
    predicate.p = Py_NewRef(mask);
  } else {
    Owned predicates(slotAttr(mask, predicatesName));
    if (predicates.get() == nullptr) return -1;
    if (!PyTuple_CheckExact(predicates.get()) || PyTuple_GET_SIZE(predicates.get()) != 1) return 0;
    predicate.p = Py_NewRef(PyTuple_GET_ITEM(predicates.get(), 0));
    if (Py_TYPE(predicate.get()) != predicateClass) return 0;
  }
  Owned expr(slotAttr(predicate.get(), exprName));
  Owned op(slotAttr(predicate.get(), opName));
  if (expr.get() == nullptr || op.get() == nullptr) return -1;
  Owned constant(slotAttr(expr.get(), constName));
  Owned coefs(slotAttr(expr.get(), coefsName));
  Owned exprShape(slotAttr(expr.get(), shapeName));
  if (constant.get() == nullptr || coefs.get() == nullptr || exprShape.get() == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    return 0;
  }
  PredicateMemo::Key byValue;
  byValue.objects[0] = op.get();
  const bool memoable = byValue.addInt(constant.get()) &&
                        byValue.addTuple(coefs.get()) && byValue.addTuple(exprShape.get()) && byValue.addTuple(shape);
  PyObject* found = predicateMemo.lookUp(byValue, memoable, predicateBoxes,
                                         {op.get(), constant.get(), coefs.get(), exprShape.get(), shape});  // (borrowed)
  if (found == nullptr) return PyErr_Occurred() ? -1 : 0;
  box.p = Py_NewRef(found);
  Owned remembered(PyTuple_Pack(2, shape, found));
  if (remembered.get() == nullptr || slotSet(mask, boxCacheName, remembered.get()) < 0) return -1;
  return 1;
}

bool twoPositional(Py_ssize_t nargs, PyObject* kwnames) {
  return nargs == 2 && (kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0);
}

PyObject* maskBoxFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (!twoPositional(nargs, kwnames)) Py_RETURN_NOTIMPLEMENTED;
  Owned box(nullptr);
  const int t = knownBox(args[0], args[1], box);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  return box.release();
}

PyObject* keepsAllFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (!twoPositional(nargs, kwnames)) Py_RETURN_NOTIMPLEMENTED;
  if (args[0] == Py_None) Py_RETURN_TRUE;
  Owned box(nullptr);
  const int t = knownBox(args[0], args[1], box);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* full = fullBox(args[1]);  // (borrowed)
  if (full == nullptr && PyErr_Occurred()) return nullptr;
  return Py_NewRef(box.get() == full ? Py_True : Py_False);
}

PyMethodDef maskBoxFastDef = {"mask_box_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(maskBoxFast)),
                              METH_FASTCALL | METH_KEYWORDS,
                              "mask_box(mask, shape)'s C path: a remembered box, or NotImplemented."};
PyMethodDef keepsAllFastDef = {"keeps_all_fast",
                               reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(keepsAllFast)),
                               METH_FASTCALL | METH_KEYWORDS,
                               "keeps_all(mask, shape)'s C path: True or False from a remembered box, or "
                               "NotImplemented."};

void bindMaskBox(py::module_& m) {
  for (auto [slot, text] : {std::pair{&boxCacheName, "box_cache"}, {&predicatesName, "predicates"},
                            {&exprName, "expr"}, {&opName, "op"}, {&constName, "const"}, {&coefsName, "coefs"},
                            {&shapeName, "shape"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  m.def(
      "configure_mask_box",
      [](py::type indexPredicate, py::type maskType, py::dict full, py::dict predicate) {
        Py_XDECREF(reinterpret_cast<PyObject*>(predicateClass));
        Py_XDECREF(reinterpret_cast<PyObject*>(maskClass));
        Py_XDECREF(fullBoxes);
        Py_XDECREF(predicateBoxes);
        fullBoxMemo.clear();  // (another dict's answers)
        predicateClass = reinterpret_cast<PyTypeObject*>(indexPredicate.inc_ref().ptr());
        maskClass = reinterpret_cast<PyTypeObject*>(maskType.inc_ref().ptr());
        fullBoxes = full.inc_ref().ptr();
        predicateBoxes = predicate.inc_ref().ptr();
      },
      py::arg("index_predicate"), py::arg("mask"), py::arg("full_boxes"), py::arg("predicate_boxes"),
      "Gives mask_box_fast and keeps_all_fast the IndexPredicate and Mask classes and indexing's _FULL_BOXES and "
      "_PREDICATE_BOXES.");
  m.def(
      "mask_box_fast",
      []() {
        PyObject* f = PyCFunction_NewEx(&maskBoxFastDef, nullptr, nullptr);
        if (f == nullptr) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(f);
      },
      "The C path of indexing.mask_box(mask, shape): a remembered box, or NotImplemented for the definition (use "
      "in a FastCall).");
  m.def(
      "keeps_all_fast",
      []() {
        PyObject* f = PyCFunction_NewEx(&keepsAllFastDef, nullptr, nullptr);
        if (f == nullptr) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(f);
      },
      "The C path of instructions.keeps_all(mask, shape): its answer from a remembered box, or NotImplemented for "
      "the definition (use in a FastCall).");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindMaskBox);

}  // namespace mask_box
}  // namespace

int rememberedKeepsAll(PyObject* mask, PyObject* shape) {
  mask_box::Owned box(nullptr);
  const int t = mask_box::knownBox(mask, shape, box);
  if (t != 1) return t;
  PyObject* full = mask_box::fullBox(shape);  // (borrowed)
  if (full == nullptr && PyErr_Occurred()) return -1;
  return box.get() == full ? 1 : 0;
}
}  // namespace nxs::py_bind
