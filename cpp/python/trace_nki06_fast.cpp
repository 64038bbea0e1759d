// The C paths of NKI 0.6's `nisa.dma_copy`, `nisa.nc_matmul` (neuronxsim.nki06.isa) and `nl.ndarray`
// (neuronxsim.nki06.language), set as
// their ApiCall's `fast` (trace_api_call.cpp) for their commonest calls; anything else returns
// NotImplemented having changed nothing, and the Python definition answers it, with every check
// and error:
//
// - `dma_copy06_fast(dst, src)` (either by keyword, nothing else given): two NkiTensors (the class
//   itself) without an indirection: `dma_plain(tr, DMACopy, dst._view, src._view, loc, False)`,
//   else `dma_general(tr, DMACopy, d, s, loc, None, None, "nisa.dma_copy", False, None)`, as
//   dma_copy does for them;
// - `nc_matmul06_fast(dst, stationary, moving, accumulate=None)` (by keyword too; accumulate a bool
//   or None, nothing else given): three NkiTensors without an indirection whose storages are on
//   chip (what isa's `_tile` answers at once), dst in PSUM:
//   `matmul_into(tr, st, mv, d, accumulate, loc, "nisa.nc_matmul")` (the matmul recorded writing
//   dst, no result tile and no redirect); where that declines,
//   `matmul_plain(tr, st, mv, loc)` and, when that records the matmul, `place(tr, value, d,
//   accumulate, loc, "nisa.nc_matmul")` (isa's `_place_matmul`, nc_matmul's own last step), else
//   the definition answers.
//
// - `ndarray06_fast(shape, dtype, buffer=nl.sbuf)` (by keyword too; no name, no address): nl.ndarray of
//   a (shape, dtype, buffer, arch) that language.py's `_new` checked before (its `_CHECKED`
//   table) for an SBUF or PSUM tensor: `tr.new_result(kind, dtype, dims, "ndarray", loc)` in a new
//   NkiTensor (`_view`, `_buffer` the spec's region, `_indirect` None), as _new and _wrap make it.
//
// The kernel's line is `callSiteLocation(0)`: these run with no frame of their own, as the
// definitions' caller_location() sees the kernel's.
//
// `configure_nki06_fast(nki_tensor, dma_plain, dma_general, dma_copy, matmul_plain, place_matmul,
// psum, matmul_into)` gives them the NkiTensor class, the two DMA steps, the DMACopy opcode,
// matmul_plain, isa's `_place_matmul`, the PSUM kind and matmul_into.
//
// `configure_nki06_ndarray(nki_tensor, checked, sbuf, sbuf_kind, psum_kind)`: ndarray's.
//
// Why C: a DMA or a matmul of a 0.6 kernel cost a Python frame (nc_matmul: five, with its operand
// checks) around the one or two C calls that record it, and a new tensor three (ndarray, _new,
// _wrap) around tr.new_result.
#include "trace_method_site.h"
#include "trace_equal.h"
#include "trace_call_site.h"
#include "trace_nki06_args.h"
#include "trace_current.h"
#include "trace_ref.h"
#include "trace_slotted.h"
#include "trace_value_memo.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace nki06_fast {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

using Owned = nxs::py_bind::OwnedRef;

struct Config {
  PyObject *nkiTensor, *dmaPlain, *dmaGeneral, *dmaCopy, *matmulPlain, *placeMatmul, *psum, *matmulInto;
};
Config config{};
struct NdarrayConfig {
  PyObject *nkiTensor, *checked, *sbuf, *sbufKind, *psumKind;
  Py_ssize_t viewSlot, bufferSlot, indirectSlot;
};
NdarrayConfig ndarrayConfig{};
PyObject* noArgs;  // ()
PyObject *dstName, *srcName, *stationaryName, *movingName, *accumulateName, *viewName, *indirectName, *storageName,
    *onChipName, *kindName, *dmaCopyText, *ncMatmulText, *shapeName, *dtypeName, *bufferName, *archName,
    *newResultName, *ndarrayText;

// t._view (a new reference) when t is an NkiTensor (the class itself) without an indirection;
// null, with no error set, otherwise; null with an error set if reading a slot failed.
PyObject* directView(PyObject* t) {
  if (t == nullptr || Py_TYPE(t) != reinterpret_cast<PyTypeObject*>(config.nkiTensor)) return nullptr;
  Owned indirect(slotAttr(t, indirectName));
  if (indirect.get() != Py_None) return nullptr;
  return slotAttr(t, viewName);
}

// view.storage.<name> (a new reference, or null with an error set).
PyObject* storageAttr(PyObject* view, PyObject* name) {
  Owned storage(slotAttr(view, storageName));
  return storage.get() == nullptr ? nullptr : slotAttr(storage.get(), name);
}

PyObject* dmaCopyFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.nkiTensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const params[2] = {dstName, srcName};
  PyObject* slots[2] = {nullptr, nullptr};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  Owned d(directView(slots[0]));
  if (d.get() == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_NOTIMPLEMENTED;
  }
  Owned s(directView(slots[1]));
  if (s.get() == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_NOTIMPLEMENTED;
  }
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  PyObject* const plain[6] = {tr, config.dmaCopy, d.get(), s.get(), loc.get(), Py_False};
  Owned done(PyObject_Vectorcall(config.dmaPlain, plain, 6, nullptr));
  if (done.get() == nullptr) return nullptr;
  if (done.get() == Py_NotImplemented) {
    PyObject* const general[10] = {tr,      config.dmaCopy, d.get(),     s.get(),  loc.get(),
                                   Py_None, Py_None,        dmaCopyText, Py_False, Py_None};
    Owned recorded(PyObject_Vectorcall(config.dmaGeneral, general, 10, nullptr));
    if (recorded.get() == nullptr) return nullptr;
  }
  Py_RETURN_NONE;
}

// The view of an on-chip operand (a new reference), as isa's _tile answers at once; null with no
// error set when the definition must look at it, with one set if reading a slot failed.
PyObject* onChipView(PyObject* t) {
  Owned view(directView(t));
  if (view.get() == nullptr) return nullptr;
  Owned onChip(storageAttr(view.get(), onChipName));
  if (onChip.get() == nullptr) return nullptr;
  return onChip.get() == Py_True ? view.release() : nullptr;
}

PyObject* ncMatmulFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.nkiTensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const params[4] = {dstName, stationaryName, movingName, accumulateName};
  PyObject* slots[4] = {nullptr, nullptr, nullptr, nullptr};
  // (positionally, the fourth parameter is is_stationary_onezero: three at most)
  if (nargs > 3 || !bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  PyObject* accumulate = slots[3] != nullptr ? slots[3] : Py_None;
  if (accumulate != Py_None && accumulate != Py_True && accumulate != Py_False) Py_RETURN_NOTIMPLEMENTED;
  Owned d(onChipView(slots[0]));
  if (d.get() == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_NOTIMPLEMENTED;
  }
  Owned st(onChipView(slots[1]));
  if (st.get() == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_NOTIMPLEMENTED;
  }
  Owned mv(onChipView(slots[2]));
  if (mv.get() == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    Py_RETURN_NOTIMPLEMENTED;
  }
  Owned kind(storageAttr(d.get(), kindName));
  if (kind.get() == nullptr) return nullptr;
  if (kind.get() != config.psum) {
    const int psum = equalTo(kind.get(), config.psum);
    if (psum < 0) return nullptr;
    if (psum == 0) Py_RETURN_NOTIMPLEMENTED;  // (matmul's general path: the definition's)
  }
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  PyObject* const into[7] = {tr, st.get(), mv.get(), d.get(), accumulate, loc.get(), ncMatmulText};
  Owned done(PyObject_Vectorcall(config.matmulInto, into, 7, nullptr));
  if (done.get() == nullptr) return nullptr;
  if (done.get() != Py_NotImplemented) Py_RETURN_NONE;
  PyObject* const plain[4] = {tr, st.get(), mv.get(), loc.get()};
  Owned value(PyObject_Vectorcall(config.matmulPlain, plain, 4, nullptr));
  if (value.get() == nullptr) return nullptr;
  if (value.get() == Py_NotImplemented) Py_RETURN_NOTIMPLEMENTED;  // (nothing recorded)
  PyObject* const place[6] = {tr, value.get(), d.get(), accumulate, loc.get(), ncMatmulText};
  Owned placed(PyObject_Vectorcall(config.placeMatmul, place, 6, nullptr));
  if (placed.get() == nullptr) return nullptr;
  Py_RETURN_NONE;
}

// _CHECKED's hits by the values of their keys (trace_value_memo.h): a dtype, a buffer, an arch
// and a shape of up to four dims.
using SpecMemo = ValueMemo<3, 1 + 4, 6>;
SpecMemo checkedMemo;

// nl.ndarray: the arguments (shape, dtype, buffer=nl.sbuf) of a spec language.py's _new checked
// before (its `_CHECKED` table) for an SBUF or PSUM tensor: `tr.new_result(kind, dtype, dims,
// "ndarray", loc)` in a new NkiTensor, as _new and _wrap make it.
PyObject* ndarrayFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || ndarrayConfig.nkiTensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const params[3] = {shapeName, dtypeName, bufferName};
  PyObject* slots[3] = {nullptr, nullptr, nullptr};
  if (!bindNki06Args(args, nargs, kwnames, params, slots) || slots[0] == nullptr || slots[1] == nullptr)
    Py_RETURN_NOTIMPLEMENTED;  // (name=, address=, a missing argument: the definition's)
  Owned arch(slotAttr(tr, archName));
  if (arch.get() == nullptr) return nullptr;
  PyObject* buffer = slots[2] != nullptr ? slots[2] : ndarrayConfig.sbuf;
  // (_CHECKED's answer, a function of the key's values: remembered in front of it, a dtype
  // object's hash being most of the dict lookup's cost)
  SpecMemo::Key memoKey;
  memoKey.objects[0] = slots[1];
  memoKey.objects[1] = buffer;
  memoKey.objects[2] = arch.get();
  const bool memoable = memoKey.addTuple(slots[0]);
  PyObject* spec = checkedMemo.lookUp(memoKey, memoable, ndarrayConfig.checked,
                                      {slots[0], slots[1], buffer, arch.get()});  // (borrowed)
  if (spec == nullptr) return PyErr_Occurred() ? nullptr : Py_NewRef(Py_NotImplemented);
  if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 4) Py_RETURN_NOTIMPLEMENTED;
  Owned keep(Py_NewRef(spec));  // (the table's entry, held while new_result runs Python)
  PyObject* kind = PyTuple_GET_ITEM(spec, 3);
  if (kind != ndarrayConfig.sbufKind && kind != ndarrayConfig.psumKind) Py_RETURN_NOTIMPLEMENTED;  // (HBM)
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  PyObject* const make[6] = {tr, kind, PyTuple_GET_ITEM(spec, 1), PyTuple_GET_ITEM(spec, 0), ndarrayText, loc.get()};
  static MethodSite newResultSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
  Owned view(newResultSite.call(newResultName, make, 6));
  if (view.get() == nullptr) return nullptr;
  PyObject* t = PyBaseObject_Type.tp_new(reinterpret_cast<PyTypeObject*>(ndarrayConfig.nkiTensor), noArgs, nullptr);
  if (t == nullptr) return nullptr;
  const std::pair<Py_ssize_t, PyObject*> fill[3] = {{ndarrayConfig.viewSlot, view.get()},
                                                    {ndarrayConfig.bufferSlot, PyTuple_GET_ITEM(spec, 2)},
                                                    {ndarrayConfig.indirectSlot, Py_None}};
  for (auto [offset, value] : fill) {
    PyObject** slot = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(t) + offset);
    Py_XSETREF(*slot, Py_NewRef(value));
  }
  return t;
}

PyMethodDef ndarrayFastDef = {
    "ndarray06_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(ndarrayFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "ndarray06_fast(shape, dtype, buffer=nl.sbuf): NKI 0.6's nl.ndarray of an SBUF or PSUM spec checked before; "
    "NotImplemented, having changed nothing, for any other call."};

PyMethodDef dmaCopyFastDef = {
    "dma_copy06_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(dmaCopyFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "dma_copy06_fast(dst, src): nisa.dma_copy of two direct NkiTensors; NotImplemented, having changed nothing, "
    "for any other call."};

PyMethodDef ncMatmulFastDef = {
    "nc_matmul06_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(ncMatmulFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "nc_matmul06_fast(dst, stationary, moving, accumulate=None): nisa.nc_matmul of direct on-chip NkiTensors "
    "into PSUM when matmul_plain records it; NotImplemented, having changed nothing, for any other call."};

void bindNki06Fast(py::module_& m) {
  for (auto [slot, text] :
       {std::pair{&dstName, "dst"}, {&srcName, "src"}, {&stationaryName, "stationary"}, {&movingName, "moving"},
        {&accumulateName, "accumulate"}, {&viewName, "_view"}, {&indirectName, "_indirect"},
        {&storageName, "storage"}, {&onChipName, "on_chip"}, {&kindName, "kind"},
        {&dmaCopyText, "nisa.dma_copy"}, {&ncMatmulText, "nisa.nc_matmul"}, {&shapeName, "shape"},
        {&dtypeName, "dtype"}, {&bufferName, "buffer"}, {&archName, "arch"}, {&newResultName, "new_result"},
        {&ndarrayText, "ndarray"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  noArgs = PyTuple_New(0);
  if (noArgs == nullptr) throw py::error_already_set();
  m.attr("ndarray06_fast") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&ndarrayFastDef, nullptr, nullptr));
  m.attr("dma_copy06_fast") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&dmaCopyFastDef, nullptr, nullptr));
  m.attr("nc_matmul06_fast") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&ncMatmulFastDef, nullptr, nullptr));
  m.def(
      "configure_nki06_fast",
      [](py::type nkiTensor, py::object dmaPlain, py::object dmaGeneral, py::object dmaCopy, py::object matmulPlain,
         py::object placeMatmul, py::str psum, py::object matmulInto) {
        Config c{nkiTensor.inc_ref().ptr(),   dmaPlain.inc_ref().ptr(),    dmaGeneral.inc_ref().ptr(),
                 dmaCopy.inc_ref().ptr(),     matmulPlain.inc_ref().ptr(), placeMatmul.inc_ref().ptr(),
                 psum.inc_ref().ptr(),        matmulInto.inc_ref().ptr()};
        for (PyObject* o : {config.nkiTensor, config.dmaPlain, config.dmaGeneral, config.dmaCopy,
                            config.matmulPlain, config.placeMatmul, config.psum, config.matmulInto})
          Py_XDECREF(o);
        config = c;
      },
      py::arg("nki_tensor"), py::arg("dma_plain"), py::arg("dma_general"), py::arg("dma_copy"),
      py::arg("matmul_plain"), py::arg("place_matmul"), py::arg("psum"), py::arg("matmul_into"),
      "Gives dma_copy06_fast and nc_matmul06_fast the NkiTensor class, dma_plain / dma_general, the DMACopy "
      "opcode, matmul_plain, nisa's _place_matmul, the PSUM kind and matmul_into.");
  m.def(
      "configure_nki06_ndarray",
      [](py::type nkiTensor, py::dict checked, py::object sbuf, py::str sbufKind, py::str psumKind) {
        Py_ssize_t offsets[3];
        const char* names[3] = {"_view", "_buffer", "_indirect"};
        for (int i = 0; i < 3; ++i) {
          py::object descr = nkiTensor.attr(names[i]);
          offsets[i] = objectSlotOffset(descr.ptr());
          if (offsets[i] < 0) throw py::type_error(std::string("NkiTensor.") + names[i] + " is not a slot");
        }
        NdarrayConfig c{nkiTensor.inc_ref().ptr(), checked.inc_ref().ptr(), sbuf.inc_ref().ptr(), sbufKind.inc_ref().ptr(),
                        psumKind.inc_ref().ptr(), offsets[0], offsets[1], offsets[2]};
        for (PyObject* o : {ndarrayConfig.nkiTensor, ndarrayConfig.checked, ndarrayConfig.sbuf, ndarrayConfig.sbufKind, ndarrayConfig.psumKind})
          Py_XDECREF(o);
        ndarrayConfig = c;
      },
      py::arg("nki_tensor"), py::arg("checked"), py::arg("sbuf"), py::arg("sbuf_kind"), py::arg("psum_kind"),
      "Gives ndarray06_fast the NkiTensor class, language.py's _CHECKED table, nl.sbuf (the default buffer) and "
      "the SBUF and PSUM kinds.");
}

NXS_REGISTER_SUBMODULE(nki, 49, "the NKI tracer's hot paths", bindNki06Fast);

}  // namespace nki06_fast
}  // namespace
}  // namespace nxs::py_bind
