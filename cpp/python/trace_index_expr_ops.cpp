// IndexExpr's `+` (both sides) and `<` (neuronxsim.nki.indexing) for an int or loop index operand
// in C, installed on the class as method descriptors by `index_expr_methods()` once
// `configure_index_expr_ops(index_expr, index_predicate, loop_index, add, lt)` has given them the
// two classes, the LoopIndex class and the Python definitions of `__add__` and `__lt__`:
//
// - `e + k`, `k + e` (`t * 128 + ip`, `j * 512 + i_f`), k an exact int or loop index and e's const
//   an exact int: `_expr(e.shape, e.const + int(k), e.coefs)`, as __add__ makes it;
// - `e < k` (`... < rows`), k an exact int and e's const an exact int:
//   `_predicate(_expr(e.shape, e.const - k, e.coefs), "<")`, as __lt__ makes it.
//
// Anything else is the Python definition's, called with the same arguments (the one home of the
// other cases and of every error).
//
// Why C: a normalisation kernel's loop body makes a few of these per traced instruction (its
// masks and subscripts), and each operator's Python frame was most of its cost.
#include "trace_ref.h"
#include "trace_slotted.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace index_expr_ops {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

using Owned = nxs::py_bind::OwnedRef;

PyObject *indexExpr = nullptr, *indexPredicate = nullptr, *loopIndex = nullptr, *addDefinition = nullptr,
         *ltDefinition = nullptr;
PyObject *shapeName, *constName, *coefsName, *lessText;

// A new IndexExpr like `e` with `const` `op` k (op: int's own add or subtract, of two ints: an
// exact int), or null with no error set when `e` is not an exact IndexExpr with an exact int const
// (the definition's case), null with an error set on failure.
PyObject* shifted(PyObject* e, PyObject* k, binaryfunc op) {
  if (Py_TYPE(e) != reinterpret_cast<PyTypeObject*>(indexExpr)) return nullptr;
  Owned constant(slotAttr(e, constName));
  if (constant.get() == nullptr) return nullptr;
  if (!PyLong_CheckExact(constant.get())) return nullptr;
  Owned shape(slotAttr(e, shapeName));
  Owned coefs(slotAttr(e, coefsName));
  if (shape.get() == nullptr || coefs.get() == nullptr) return nullptr;
  Owned value(op(constant.get(), k));  // (int's own: k a loop index adds as the int it is)
  if (value.get() == nullptr) return nullptr;
  PyObject* const slots[3] = {shape.get(), value.get(), coefs.get()};  // (__slots__ order)
  return newSlottedObject(indexExpr, slots, 3);
}

PyObject* callDefinition(PyObject* definition, PyObject* self, PyObject* other) {
  PyObject* const args[2] = {self, other};
  return PyObject_Vectorcall(definition, args, 2, nullptr);
}

PyObject* add(PyObject* self, PyObject* other) {
  if (PyLong_CheckExact(other) || Py_TYPE(other) == reinterpret_cast<PyTypeObject*>(loopIndex)) {
    PyObject* r = shifted(self, other, PyLong_Type.tp_as_number->nb_add);
    if (r != nullptr || PyErr_Occurred()) return r;
  }
  return callDefinition(addDefinition, self, other);
}

PyObject* lessThan(PyObject* self, PyObject* other) {
  if (PyLong_CheckExact(other)) {
    Owned expr(shifted(self, other, PyLong_Type.tp_as_number->nb_subtract));
    if (expr.get() != nullptr) {
      PyObject* const slots[2] = {expr.get(), lessText};  // (box_cache None)
      return newSlottedObject(indexPredicate, slots, 2);
    }
    if (PyErr_Occurred()) return nullptr;
  }
  return callDefinition(ltDefinition, self, other);
}

PyMethodDef addDef = {"__add__", add, METH_O, "e + k (and k + e): IndexExpr's sum, an int or loop index in C."};
PyMethodDef raddDef = {"__radd__", add, METH_O, "k + e: IndexExpr's sum, an int or loop index in C."};
PyMethodDef ltDef = {"__lt__", lessThan, METH_O, "e < k: IndexExpr's predicate, an int in C."};

void bindIndexExprOps(py::module_& m) {
  for (auto [slot, text] :
       {std::pair{&shapeName, "shape"}, {&constName, "const"}, {&coefsName, "coefs"}, {&lessText, "<"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  m.def(
      "configure_index_expr_ops",
      [](py::type expr, py::type predicate, py::type loop, py::object addFn, py::object ltFn) {
        for (PyObject** slot : {&indexExpr, &indexPredicate, &loopIndex, &addDefinition, &ltDefinition})
          Py_XDECREF(*slot);
        indexExpr = expr.inc_ref().ptr();
        indexPredicate = predicate.inc_ref().ptr();
        loopIndex = loop.inc_ref().ptr();
        addDefinition = addFn.inc_ref().ptr();
        ltDefinition = ltFn.inc_ref().ptr();
      },
      py::arg("index_expr"), py::arg("index_predicate"), py::arg("loop_index"), py::arg("add"), py::arg("lt"),
      "Gives IndexExpr's C operators the IndexExpr, IndexPredicate and LoopIndex classes and the Python definitions "
      "of __add__ and __lt__ (which answer every other operand).");
  m.def(
      "index_expr_methods",
      []() {
        if (indexExpr == nullptr) throw py::type_error("index_expr_methods: call configure_index_expr_ops first");
        py::dict methods;
        for (PyMethodDef* def : {&addDef, &raddDef, &ltDef}) {
          PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(indexExpr), def);
          if (descr == nullptr) throw py::error_already_set();
          methods[def->ml_name] = py::reinterpret_steal<py::object>(descr);
        }
        return methods;
      },
      "{name: method} of IndexExpr's __add__, __radd__ and __lt__ in C.");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindIndexExprOps);

}  // namespace index_expr_ops
}  // namespace
}  // namespace nxs::py_bind
