// The in-place operators of the 2.2x tracer's tensors, `dst += value`, `-=`, `*=` and `/=`
// (neuronxsim.nki.tensor.Tensor.__iadd__ ...), in C, installed on the Tensor class as method
// descriptors by `accumulate_methods()` once `configure_accumulate(...)` has given them what
// they use. `dst op= value` returns dst, having recorded:
//   nothing, when `value` is a Tensor whose instruction was masked out (its storage's state says
//   masked_out);
//   for `+=` of a Tensor into a PSUM `dst`: the matmul that produced `value` joining the
//   accumulation group open in dst, when `tr.place_matmul(value, dst, True)` takes it;
//   for a Tensor `value` of dst's shape, both on chip: the TensorTensor instruction
//   `instructions.lanewise_plain` records when it takes the operands (see lanewisePlain);
//   else whatever `_accumulate_general(tr, dst, value, name)` of neuronxsim.nki.language records
//   (one lane-wise instruction reading and writing dst; the errors), tr being `current()`.
// (The steps language.accumulate took in Python; _accumulate_general, called straight from C,
// finds the kernel's line right above its frame.)
//
// Why C: `acc[...] += nisa.nc_matmul(...)` is the inner statement of every matmul kernel, and
// the Python operator method and the function it called cost two frames per matmul.
#include "trace_call_site.h"
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
PyObject *onChipName, *shapeName, *opName, *dtypeName;
// From configure_accumulate_plain: neuronxsim.nki.instructions (its lanewise_plain, read per call:
// tests replace it), the TensorTensor opcode, the Vector Engine and {operator name: its ALU op} of
// the four operators.
PyObject *instructions = nullptr, *tensorTensor = nullptr, *dve = nullptr, *aluOps = nullptr;
PyObject* nkiDtypes = nullptr;  // {NKI dtype: ...}: those _dtype accepts, as themselves
PyObject* lanewiseName = nullptr;

using Owned = nxs::py_bind::OwnedRef;

// 1 when `o.storage.on_chip` (o a Tensor), 0 if not, -1 on error.
int onChip(PyObject* o) {
  Owned st(slotAttr(o, storageName));
  if (st.get() == nullptr) return -1;
  Owned flag(slotAttr(st.get(), onChipName));
  return flag.get() == nullptr ? -1 : PyObject_IsTrue(flag.get());
}

// `dst <name>= value` of two on-chip Tensors of one shape, the commonest general case (`res +=
// psum_tile` of a blocked matmul, `acc[...] += nisa.tensor_tensor(...)`), by the steps the Python
// path takes for it: _accumulate_general (dst is an on-chip Tensor: no error), _binary (x = dst, y
// = value, both on-chip Tensors; dtype dst.dtype, an NKI dtype (a key of dtypes._TO_BIR, which
// _dtype answers with itself); equal shapes) and
// instructions.tensor_tensor (add, subtract, mult and divide are not bitvec ALU ops, checked where
// they are configured; the Vector Engine; no mask; no broadcast), which is
//     lanewise_plain(tr, TensorTensor, DVE, shape, (dst, value), (), dst, shape, dtype, name,
//                    {"op": op}, loc)
// with loc the kernel's line (caller_location() of _accumulate_general: the frame above it, which
// is the one running this C method). Returns dst when recorded, null with an error set, or
// NotImplemented (a new reference) when the operands need the general path: lanewise_plain then
// changed nothing, and _accumulate_general takes it all again.
PyObject* lanewisePlain(PyObject* tr, PyObject* dst, PyObject* value, PyObject* name) {
  if (instructions == nullptr || Py_TYPE(dst) != tensorClass) Py_RETURN_NOTIMPLEMENTED;
  PyObject* op = PyDict_GetItemWithError(aluOps, name);  // (borrowed)
  if (op == nullptr) return PyErr_Occurred() ? nullptr : Py_NewRef(Py_NotImplemented);
  int t = onChip(dst);
  if (t == 1) t = onChip(value);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned shape(slotAttr(dst, shapeName)), valueShape(slotAttr(value, shapeName));
  if (shape.get() == nullptr || valueShape.get() == nullptr) return nullptr;
  t = shape.get() == valueShape.get() ? 1 : PyObject_RichCompareBool(shape.get(), valueShape.get(), Py_EQ);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned st(slotAttr(dst, storageName));
  if (st.get() == nullptr) return nullptr;
  Owned dtype(slotAttr(st.get(), dtypeName));  // (dst.dtype: its storage's)
  if (dtype.get() == nullptr) return nullptr;
  t = PyDict_Contains(nkiDtypes, dtype.get());
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);  // (_dtype's error, if any)
  Owned operands(PyTuple_Pack(2, dst, value)), pointers(PyTuple_New(0)), fields(PyDict_New());
  if (operands.get() == nullptr || pointers.get() == nullptr || fields.get() == nullptr ||
      PyDict_SetItem(fields.get(), opName, op) < 0)
    return nullptr;
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C method has none of its own)
  if (loc.get() == nullptr) return nullptr;
  PyObject* const call[12] = {tr,  tensorTensor, dve,          shape.get(), operands.get(), pointers.get(),
                              dst, shape.get(),  dtype.get(), name,        fields.get(),   loc.get()};
  Owned lanewise(PyObject_GetAttr(instructions, lanewiseName));
  if (lanewise.get() == nullptr) return nullptr;
  Owned made(PyObject_Vectorcall(lanewise.get(), call, 12, nullptr));
  if (made.get() == nullptr || made.get() == Py_NotImplemented) return made.release();
  if (made.get() != dst) {  // (with a destination given it records into it, or does nothing)
    PyErr_SetString(PyExc_RuntimeError, "lanewise_plain answered other than its destination");
    return nullptr;
  }
  return made.release();
}

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
  if (tile) {
    Owned done(lanewisePlain(tr.get(), dst, value, name));
    if (done.get() != Py_NotImplemented) return done.release();
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
        {&addName, "add"}, {&subtractName, "subtract"}, {&multiplyName, "multiply"}, {&divideName, "divide"},
        {&onChipName, "on_chip"}, {&shapeName, "shape"}, {&opName, "op"}, {&dtypeName, "dtype"},
        {&lanewiseName, "lanewise_plain"}}) {
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
      "configure_accumulate_plain",
      [](py::module_ instructionsModule, py::object tensorTensorOpcode, py::object vectorEngine, py::dict ops,
         py::dict dtypes) {
        for (PyObject** slot : {&instructions, &tensorTensor, &dve, &aluOps, &nkiDtypes}) Py_XDECREF(*slot);
        nkiDtypes = dtypes.inc_ref().ptr();
        instructions = instructionsModule.inc_ref().ptr();
        tensorTensor = tensorTensorOpcode.inc_ref().ptr();
        dve = vectorEngine.inc_ref().ptr();
        aluOps = ops.inc_ref().ptr();
      },
      py::arg("instructions"), py::arg("tensor_tensor"), py::arg("dve"), py::arg("alu_ops"), py::arg("dtypes"),
      "Gives the in-place operators the instructions module (whose lanewise_plain they call), the TensorTensor opcode, the Vector Engine and "
      "{name: ALU op} of add, subtract, multiply and divide (none a bitvec op) and {NKI dtype: ...}, to record `t op= x` of two "
      "on-chip tiles of one shape themselves.");
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
