// The in-place operators of the 2.2x tracer's tensors, `dst += value`, `-=`, `*=` and `/=`
// (neuronxsim.nki.tensor.Tensor.__iadd__ ...), in C, installed on the Tensor class as method
// descriptors by `accumulate_methods()` once `configure_accumulate(...)` has given them what
// they use. `dst op= value` returns dst, having recorded:
//   nothing, when `value` is a Tensor whose instruction was masked out (its storage's state says
//   masked_out);
//   for `+=` of a Tensor into a PSUM `dst`: the matmul that produced `value` joining the
//   accumulation group open in dst, when `tr.place_matmul(value, dst, True)` takes it;
//   else whatever `_accumulate_general(tr, dst, value, name)` of neuronxsim.nki.language records
//   (one lane-wise instruction reading and writing dst; the errors), tr being `current()`.
// (The steps language.accumulate took in Python; _accumulate_general, called straight from C,
// finds the kernel's line right above its frame.)
//
// Why C: `acc[...] += nisa.nc_matmul(...)` is the inner statement of every matmul kernel, and
// the Python operator method and the function it called cost two frames per matmul.
#include "trace_ref.h"
#include "trace_slotted.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace accumulate {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

PyTypeObject* tensorClass = nullptr;
PyObject* current = nullptr;   // _core.nki.current
PyObject* language = nullptr;  // neuronxsim.nki.language (its _accumulate_general, read per call)
PyObject* psum = nullptr;      // the PSUM kind, "psum"
PyObject *storageName, *stateName, *maskedOutName, *kindName, *placeMatmulName, *generalName;
PyObject *addName, *subtractName, *multiplyName, *divideName;

using Owned = nxs::py_bind::OwnedRef;

// `dst <name>= value` (see the file's comment): a new reference, null with an error set.
PyObject* accumulate(PyObject* dst, PyObject* value, PyObject* name) {
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the tensors' in-place operators are not configured");
    return nullptr;
  }
  Owned tr(PyObject_CallNoArgs(current));
  if (tr.get() == nullptr) return nullptr;
  const bool tile = Py_TYPE(value) == tensorClass;
  if (tile) {
    Owned st(slotAttr(value, storageName));
    if (st.get() == nullptr) return nullptr;
    Owned state(slotAttr(st.get(), stateName));
    if (state.get() == nullptr) return nullptr;
    Owned masked(slotAttr(state.get(), maskedOutName));
    if (masked.get() == nullptr) return nullptr;
    const int out = PyObject_IsTrue(masked.get());
    if (out < 0) return nullptr;
    if (out) return Py_NewRef(dst);  // the instruction computing the value was masked out
  }
  if (tile && name == addName) {
    Owned st(slotAttr(dst, storageName));
    if (st.get() == nullptr) return nullptr;
    Owned kind(slotAttr(st.get(), kindName));
    if (kind.get() == nullptr) return nullptr;
    const int inPsum = kind.get() == psum ? 1 : PyObject_RichCompareBool(kind.get(), psum, Py_EQ);
    if (inPsum < 0) return nullptr;
    if (inPsum) {
      PyObject* const args[4] = {tr.get(), value, dst, Py_True};
      Owned placed(PyObject_VectorcallMethod(placeMatmulName, args, 4, nullptr));
      if (placed.get() == nullptr) return nullptr;
      const int done = PyObject_IsTrue(placed.get());
      if (done < 0) return nullptr;
      if (done) return Py_NewRef(dst);
    }
  }
  Owned general(PyObject_GetAttr(language, generalName));
  if (general.get() == nullptr) return nullptr;
  PyObject* const args[4] = {tr.get(), dst, value, name};
  return PyObject_Vectorcall(general.get(), args, 4, nullptr);
}

template <PyObject** name>
PyObject* inPlace(PyObject* dst, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "an in-place operator takes one operand");
    return nullptr;
  }
  return accumulate(dst, args[0], *name);
}

#define NXS_IN_PLACE(method, name, op)                                                                    \
  PyMethodDef method##Def = {#method, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(inPlace<&name>)), \
                             METH_FASTCALL, "t " op "= x: nl's " #name " of t and x, written to t."};
NXS_IN_PLACE(__iadd__, addName, "+")
NXS_IN_PLACE(__isub__, subtractName, "-")
NXS_IN_PLACE(__imul__, multiplyName, "*")
NXS_IN_PLACE(__itruediv__, divideName, "/")
#undef NXS_IN_PLACE

void bindAccumulate(py::module_& m) {
  for (auto [slot, text] :
       {std::pair{&storageName, "storage"}, {&stateName, "state"}, {&maskedOutName, "masked_out"},
        {&kindName, "kind"}, {&placeMatmulName, "place_matmul"}, {&generalName, "_accumulate_general"},
        {&addName, "add"}, {&subtractName, "subtract"}, {&multiplyName, "multiply"}, {&divideName, "divide"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  m.def(
      "configure_accumulate",
      [](py::type tensor, py::object currentFn, py::module_ languageModule, py::str psumKind) {
        for (PyObject** slot : {&current, &language, &psum}) Py_XDECREF(*slot);
        Py_XDECREF(reinterpret_cast<PyObject*>(tensorClass));
        tensorClass = reinterpret_cast<PyTypeObject*>(tensor.inc_ref().ptr());
        current = currentFn.inc_ref().ptr();
        language = languageModule.inc_ref().ptr();
        psum = psumKind.inc_ref().ptr();
      },
      py::arg("tensor_class"), py::arg("current"), py::arg("language"), py::arg("psum"),
      "Gives the in-place operators the Tensor class, current(), the language module (whose "
      "_accumulate_general(tr, dst, value, name) records what they do not) and the PSUM kind.");
  m.def(
      "accumulate_methods",
      []() {
        if (tensorClass == nullptr) throw py::type_error("accumulate_methods: call configure_accumulate first");
        py::dict methods;
        for (PyMethodDef* def : {&__iadd__Def, &__isub__Def, &__imul__Def, &__itruediv__Def}) {
          PyObject* descr = PyDescr_NewMethod(tensorClass, def);
          if (descr == nullptr) throw py::error_already_set();
          methods[def->ml_name] = py::reinterpret_steal<py::object>(descr);
        }
        return methods;
      },
      "{name: method} of Tensor's in-place operators (__iadd__, __isub__, __imul__, __itruediv__) in C.");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindAccumulate);

}  // namespace accumulate
}  // namespace
}  // namespace nxs::py_bind
