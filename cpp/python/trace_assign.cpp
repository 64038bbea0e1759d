// The commonest assignment of a trace, `_core.nki.assign_redirect(tr, dst, value)`
// (neuronxsim.nki.language.assign, which calls it first): `dst[...] = value` where `value` is the
// untouched result tile of the instruction just recorded, made to write `dst` instead (the steps
// of assign and Tracer.redirect for it); True when done, False, having changed nothing, for
// anything else (assign then takes its general path: no-ops, errors, PSUM destinations and
// matmul placement, masks, copies, redirects that need the tracer's general write).
//
// It applies when `dst` and `value` are Tensors of different on-chip storages, `dst` not in PSUM,
// `value`'s instruction not masked out; `tr.fresh_result(value)` is an op whose engine can write
// `dst`'s memory (not a matmul; a DMA or GpSimd op only into SBUF), recorded without a mask box,
// `dst` has `value`'s shape, and `write_plain(dst, op.engine)` takes `dst`. Then, as redirect:
//     core.redirected[op.index] = acc; core.record.redirects.append((op.index, acc));
//     the temporary's state.forward = (dst, dst's write count, op)
// (the temporary: the storage of op's first output as earlier redirects left it).
//
// `configure_assign(tensor_class, write_plain, matmult, dma, pool, psum, sbuf)` gives it the
// Tensor class, the tracer's C write_plain, the Matmult opcode, the DMA and GpSimd engines and
// the PSUM and SBUF kinds.
//
// Why C: most `dst[...] = expr` of a kernel are this redirect, and in Python they cost three
// frames (assign, _can_write, redirect) and dozens of attribute reads.
#include "trace_ref.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace assign_redirect {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

struct Names {
  PyObject *storage, *on_chip, *kind, *state, *masked_out, *shape, *fresh_result, *core, *redirected, *record,
      *redirects, *write_count, *forward;
};
Names names{};
PyObject* tensorClass = nullptr;
PyObject* writePlain = nullptr;
PyObject* matmult = nullptr;
PyObject* dma = nullptr;
PyObject* pool = nullptr;
PyObject* psum = nullptr;
PyObject* sbuf = nullptr;

using Owned = nxs::py_bind::OwnedRef;

// Op fields by position (neuronxsim.nki.record.Op), and the Access's storage.
constexpr Py_ssize_t kOuts = 5, kOpcode = 6, kEngine = 7, kIndex = 10, kOutBox = 11, kOpSize = 13;
constexpr Py_ssize_t kAccessStorage = 3;

// 1 if the string kind `k` is `what` (identity first), 0 if not, -1 on error.
int isKind(PyObject* k, PyObject* what) { return k == what ? 1 : PyObject_RichCompareBool(k, what, Py_EQ); }

// 1 if o.name is true, 0 if not, -1 on error.
int attrIsTrue(PyObject* o, PyObject* name) {
  Owned v(PyObject_GetAttr(o, name));
  return v.get() == nullptr ? -1 : PyObject_IsTrue(v.get());
}

// 1 when the assignment may take the fast path up to the op (storages, kinds), 0 if not, -1 on error.
int plainOperands(PyObject* dstSt, PyObject* valueSt, Owned& dstKind) {
  if (dstSt == valueSt) return 0;
  int t = attrIsTrue(dstSt, names.on_chip);
  if (t == 1) t = attrIsTrue(valueSt, names.on_chip);
  if (t != 1) return t;
  Owned valueState(PyObject_GetAttr(valueSt, names.state));
  if (valueState.get() == nullptr) return -1;
  t = attrIsTrue(valueState.get(), names.masked_out);
  if (t != 0) return t < 0 ? -1 : 0;
  dstKind.p = PyObject_GetAttr(dstSt, names.kind);
  if (dstKind.get() == nullptr) return -1;
  t = isKind(dstKind.get(), psum);
  return t < 0 ? -1 : !t;
}

// Whether op's engine can write memory of kind `kind` (language._can_write; not a matmul here).
int canWrite(PyObject* op, PyObject* kind) {
  if (PyTuple_GET_ITEM(op, kOpcode) == matmult) return 0;  // (into PSUM only: not this path)
  PyObject* engine = PyTuple_GET_ITEM(op, kEngine);
  if (engine == dma || engine == pool) return isKind(kind, sbuf);
  return 1;
}

PyObject* assignRedirect(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "assign_redirect(tr, dst, value)");
    return nullptr;
  }
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "assign_redirect is not configured");
    return nullptr;
  }
  PyObject *tr = args[0], *dst = args[1], *value = args[2];
  if (Py_TYPE(dst) != reinterpret_cast<PyTypeObject*>(tensorClass) ||
      Py_TYPE(value) != reinterpret_cast<PyTypeObject*>(tensorClass))
    Py_RETURN_FALSE;
  Owned dstSt(PyObject_GetAttr(dst, names.storage)), valueSt(PyObject_GetAttr(value, names.storage));
  if (dstSt.get() == nullptr || valueSt.get() == nullptr) return nullptr;
  Owned dstKind(nullptr);
  int t = plainOperands(dstSt.get(), valueSt.get(), dstKind);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_False);
  PyObject* const fresh[2] = {tr, value};
  Owned op(PyObject_VectorcallMethod(names.fresh_result, fresh, 2, nullptr));
  if (op.get() == nullptr) return nullptr;
  if (op.get() == Py_None) Py_RETURN_FALSE;
  if (!PyTuple_Check(op.get()) || PyTuple_GET_SIZE(op.get()) < kOpSize) {
    PyErr_SetString(PyExc_TypeError, "assign_redirect: fresh_result did not answer an Op");
    return nullptr;
  }
  t = canWrite(op.get(), dstKind.get());
  if (t == 1) t = PyTuple_GET_ITEM(op.get(), kOutBox) == Py_None;
  if (t == 1) {
    Owned dstShape(PyObject_GetAttr(dst, names.shape)), valueShape(PyObject_GetAttr(value, names.shape));
    if (dstShape.get() == nullptr || valueShape.get() == nullptr) return nullptr;
    t = PyObject_RichCompareBool(dstShape.get(), valueShape.get(), Py_EQ);
  }
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_False);
  PyObject* const write[2] = {dst, PyTuple_GET_ITEM(op.get(), kEngine)};
  Owned acc(PyObject_Vectorcall(writePlain, write, 2, nullptr));
  if (acc.get() == nullptr) return nullptr;
  if (acc.get() == Py_None) Py_RETURN_FALSE;
  // (redirect's bookkeeping; dst is written from here on)
  Owned core(PyObject_GetAttr(tr, names.core));
  if (core.get() == nullptr) return nullptr;
  Owned redirected(PyObject_GetAttr(core.get(), names.redirected));
  Owned record(PyObject_GetAttr(core.get(), names.record));
  if (redirected.get() == nullptr || record.get() == nullptr) return nullptr;
  if (!PyDict_CheckExact(redirected.get())) {
    PyErr_SetString(PyExc_TypeError, "assign_redirect: CoreTrace.redirected must be a dict");
    return nullptr;
  }
  PyObject* index = PyTuple_GET_ITEM(op.get(), kIndex);
  Owned first(Py_XNewRef(PyDict_GetItemWithError(redirected.get(), index)));
  if (first.get() == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    first.p = PySequence_GetItem(PyTuple_GET_ITEM(op.get(), kOuts), 0);
    if (first.get() == nullptr) return nullptr;
  }
  if (!PyTuple_Check(first.get()) || PyTuple_GET_SIZE(first.get()) <= kAccessStorage ||
      !PyTuple_Check(acc.get()) || PyTuple_GET_SIZE(acc.get()) <= kAccessStorage) {
    PyErr_SetString(PyExc_TypeError, "assign_redirect: an operand is not an Access");
    return nullptr;
  }
  Owned temp(Py_NewRef(PyTuple_GET_ITEM(first.get(), kAccessStorage)));
  if (PyDict_SetItem(redirected.get(), index, acc.get()) < 0) return nullptr;
  Owned redirects(PyObject_GetAttr(record.get(), names.redirects));
  Owned entry(PyTuple_Pack(2, index, acc.get()));
  if (redirects.get() == nullptr || entry.get() == nullptr || PyList_Append(redirects.get(), entry.get()) < 0)
    return nullptr;
  Owned accState(PyObject_GetAttr(PyTuple_GET_ITEM(acc.get(), kAccessStorage), names.state));
  if (accState.get() == nullptr) return nullptr;
  Owned count(PyObject_GetAttr(accState.get(), names.write_count));
  Owned tempState(PyObject_GetAttr(temp.get(), names.state));
  if (count.get() == nullptr || tempState.get() == nullptr) return nullptr;
  Owned forward(PyTuple_Pack(3, dst, count.get(), op.get()));
  if (forward.get() == nullptr || PyObject_SetAttr(tempState.get(), names.forward, forward.get()) < 0)
    return nullptr;
  Py_RETURN_TRUE;
}

PyMethodDef assignRedirectDef = {
    "assign_redirect", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(assignRedirect)), METH_FASTCALL,
    "assign_redirect(tr, dst, value): True when `dst[...] = value` was done by making the instruction that just "
    "computed value write dst; False, having changed nothing, when the assignment needs the general path."};

void bindAssign(py::module_& m) {
  Names n{};
  for (auto [slot, text] :
       {std::pair{&n.storage, "storage"}, {&n.on_chip, "on_chip"}, {&n.kind, "kind"}, {&n.state, "state"},
        {&n.masked_out, "masked_out"}, {&n.shape, "shape"}, {&n.fresh_result, "fresh_result"}, {&n.core, "core"},
        {&n.redirected, "redirected"}, {&n.record, "record"}, {&n.redirects, "redirects"},
        {&n.write_count, "write_count"}, {&n.forward, "forward"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  names = n;
  m.attr("assign_redirect") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&assignRedirectDef, nullptr, nullptr));
  m.def(
      "configure_assign",
      [](py::type tensor, py::object write, py::object matmultOpcode, py::object dmaEngine, py::object poolEngine,
         py::str psumKind, py::str sbufKind) {
        for (PyObject** slot : {&tensorClass, &writePlain, &matmult, &dma, &pool, &psum, &sbuf}) Py_XDECREF(*slot);
        tensorClass = tensor.inc_ref().ptr();
        writePlain = write.inc_ref().ptr();
        matmult = matmultOpcode.inc_ref().ptr();
        dma = dmaEngine.inc_ref().ptr();
        pool = poolEngine.inc_ref().ptr();
        psum = psumKind.inc_ref().ptr();
        sbuf = sbufKind.inc_ref().ptr();
      },
      py::arg("tensor_class"), py::arg("write_plain"), py::arg("matmult"), py::arg("dma"), py::arg("pool"),
      py::arg("psum"), py::arg("sbuf"),
      "Gives assign_redirect the Tensor class, the tracer's write_plain, the Matmult opcode, the DMA and GpSimd "
      "engines and the PSUM and SBUF kinds.");
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindAssign);

}  // namespace assign_redirect
}  // namespace
}  // namespace nxs::py_bind
