// The C paths of the one-tile Vector and Scalar Engine functions of a normalisation kernel, taken
// through a FastCall (trace_fast_call.cpp) for their commonest calls: each is its Python
// definition's single call of an instructions builder, made from here; anything else returns
// NotImplemented having changed nothing, and the definition answers it, with every check and
// error:
//
// - `activation_fast(func, name)`: `nl.<name>(x, *, mask=None)` (nl.exp, nl.rsqrt, nl.square...;
//   no dtype) of an on-chip exact Tensor x:
//   `instructions.activation(tr, func, x, None, 1.0, None, loc, mask, what=name)`;
// - `reduce_fast(op, name)`: `nl.<name>(x, axis, *, mask=None, keepdims=False)` (nl.sum, nl.max,
//   nl.min, nl.prod; no dtype) of an on-chip exact Tensor x:
//   `instructions.tensor_reduce(tr, op, x, axis, keepdims, False, None, loc, mask, what=name)`;
// - `bn_stats_fast()`: `nisa.bn_stats(data, *, mask=None, dtype=None)` of an on-chip exact Tensor,
//   dtype None or one dtypes.as_dtype has answered before (its `_LOOKUPS` memo, read as
//   isa._dtype reads it): `instructions.per_lane(tr, BNStats, data, 6, dtype or data.dtype, loc,
//   mask, "bn_stats")`.
// tr is the tracer recording (none: the definition's error), loc the kernel's line (the frame
// calling the FastCall: these C functions have none of their own). The builders, read from the
// instructions module per call (tests replace them), keep every rule about masks and shapes.
//
// `configure_lane_fast(tensor_class, instructions, dtype_lookups, bn_stats_opcode)` gives them
// the Tensor class, the instructions module, dtypes._LOOKUPS and the BNStats opcode.
//
// Why C: the definition's frame (and caller_location's walk from it) was a third of what
// recording `nl.rsqrt(var)` or a bn_stats record costs.
#include "trace_call_site.h"
#include "trace_current.h"
#include "trace_ref.h"
#include "trace_slotted.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace lane_fast {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

using Owned = nxs::py_bind::OwnedRef;

PyTypeObject* tensorClass = nullptr;
PyObject *instructions = nullptr, *lookups = nullptr, *bnStats = nullptr;
PyObject *storageName, *onChipName, *dtypeName, *maskName, *axisName, *keepdimsName, *whatName;
PyObject *activationName, *tensorReduceName, *perLaneName, *bnStatsText, *one, *six, *whatOnly;

// 1 when `o` is an exact Tensor on chip, 0 if not, -1 with an error set.
int onChipTile(PyObject* o) {
  if (tensorClass == nullptr || Py_TYPE(o) != tensorClass) return 0;
  Owned st(slotAttr(o, storageName));
  if (st.get() == nullptr) return -1;
  Owned flag(slotAttr(st.get(), onChipName));
  return flag.get() == nullptr ? -1 : PyObject_IsTrue(flag.get());
}

// The keyword arguments of a call, matched against `names` (interned): false when one is not
// among them (the definition's call: its TypeError, or a dtype); `values[i]` the value of
// `names[i]`, left as it was when not given.
template <size_t N>
bool keywords(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject* const (&names)[N],
              PyObject* (&values)[N]) {
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, i);
    size_t k = 0;
    while (k < N && key != names[k]) ++k;
    if (k == N) return false;
    values[k] = args[nargs + i];
  }
  return true;
}

// builder(tr, positional..., what=name) of the instructions module: a new reference, null with an
// error set.
PyObject* callBuilder(PyObject* builderName, PyObject* const* positional, size_t n, PyObject* what) {
  Owned builder(PyObject_GetAttr(instructions, builderName));
  if (builder.get() == nullptr) return nullptr;
  PyObject* args[12];
  for (size_t i = 0; i < n; ++i) args[i] = positional[i];
  args[n] = what;
  return PyObject_Vectorcall(builder.get(), args, n, whatOnly);
}

// self: (func, name).
PyObject* activationFast(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 1 || instructions == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const names[1] = {maskName};
  PyObject* values[1] = {Py_None};
  if (!keywords(args, nargs, kwnames, names, values)) Py_RETURN_NOTIMPLEMENTED;
  const int t = onChipTile(args[0]);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* tr = currentTracer();  // (borrowed)
  if (tr == nullptr) Py_RETURN_NOTIMPLEMENTED;
  Owned loc(callSiteLocation(0));
  if (loc.get() == nullptr) return nullptr;
  PyObject* const positional[8] = {tr, PyTuple_GET_ITEM(self, 0), args[0], Py_None, one, Py_None, loc.get(), values[0]};
  return callBuilder(activationName, positional, 8, PyTuple_GET_ITEM(self, 1));
}

// self: (op, name).
PyObject* reduceFast(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs < 1 || nargs > 2 || instructions == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const names[3] = {axisName, maskName, keepdimsName};
  PyObject* values[3] = {nullptr, Py_None, Py_False};
  if (!keywords(args, nargs, kwnames, names, values)) Py_RETURN_NOTIMPLEMENTED;
  // (no axis, or one given twice: the definition's TypeError)
  if ((values[0] == nullptr) == (nargs == 1)) Py_RETURN_NOTIMPLEMENTED;
  if (nargs == 2) values[0] = args[1];
  const int t = onChipTile(args[0]);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* tr = currentTracer();  // (borrowed)
  if (tr == nullptr) Py_RETURN_NOTIMPLEMENTED;
  Owned loc(callSiteLocation(0));
  if (loc.get() == nullptr) return nullptr;
  PyObject* const positional[9] = {tr,       PyTuple_GET_ITEM(self, 0), args[0], values[0], values[2],
                                   Py_False, Py_None,                   loc.get(), values[1]};
  return callBuilder(tensorReduceName, positional, 9, PyTuple_GET_ITEM(self, 1));
}

PyObject* bnStatsFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 1 || instructions == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const names[2] = {maskName, dtypeName};
  PyObject* values[2] = {Py_None, Py_None};
  if (!keywords(args, nargs, kwnames, names, values)) Py_RETURN_NOTIMPLEMENTED;
  PyObject* data = args[0];
  int t = onChipTile(data);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* dtype = nullptr;  // isa._dtype's answer, or null for None (borrowed, then owned below)
  if (values[1] != Py_None) {
    dtype = PyDict_GetItemWithError(lookups, values[1]);
    if (dtype == nullptr || dtype == Py_None) {  // (not seen before, unhashable, or not an NKI dtype)
      if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) return nullptr;
        PyErr_Clear();
      }
      Py_RETURN_NOTIMPLEMENTED;
    }
    t = PyObject_IsTrue(dtype);  // (`_dtype(...) or data.dtype`)
    if (t < 0) return nullptr;
    if (t == 0) dtype = nullptr;
  }
  Owned own(dtype == nullptr ? nullptr : Py_NewRef(dtype));
  if (dtype == nullptr) {  // data.dtype: its storage's
    Owned st(slotAttr(data, storageName));
    if (st.get() == nullptr) return nullptr;
    own.p = slotAttr(st.get(), dtypeName);
    if (own.get() == nullptr) return nullptr;
  }
  dtype = own.get();
  PyObject* tr = currentTracer();  // (borrowed)
  if (tr == nullptr) Py_RETURN_NOTIMPLEMENTED;
  Owned loc(callSiteLocation(0));
  if (loc.get() == nullptr) return nullptr;
  Owned perLane(PyObject_GetAttr(instructions, perLaneName));
  if (perLane.get() == nullptr) return nullptr;
  PyObject* const call[8] = {tr, bnStats, data, six, dtype, loc.get(), values[0], bnStatsText};
  return PyObject_Vectorcall(perLane.get(), call, 8, nullptr);
}

PyMethodDef activationFastDef = {"activation_fast",
                                 reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(activationFast)),
                                 METH_FASTCALL | METH_KEYWORDS, "nl.<activation>(x, *, mask=None)'s C path."};
PyMethodDef reduceFastDef = {"reduce_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduceFast)),
                             METH_FASTCALL | METH_KEYWORDS,
                             "nl.<reduction>(x, axis, *, mask=None, keepdims=False)'s C path."};
PyMethodDef bnStatsFastDef = {"bn_stats_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(bnStatsFast)),
                              METH_FASTCALL | METH_KEYWORDS, "nisa.bn_stats(data, *, mask=None, dtype=None)'s C path."};

py::object fastFunction(PyMethodDef* def, PyObject* self) {
  PyObject* f = PyCFunction_NewEx(def, self, nullptr);  // (holds its own reference to self)
  if (f == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(f);
}

void bindLaneFast(py::module_& m) {
  for (auto [slot, text] : {std::pair{&storageName, "storage"}, {&onChipName, "on_chip"}, {&dtypeName, "dtype"},
                            {&maskName, "mask"}, {&axisName, "axis"}, {&keepdimsName, "keepdims"},
                            {&whatName, "what"}, {&activationName, "activation"},
                            {&tensorReduceName, "tensor_reduce"}, {&perLaneName, "per_lane"},
                            {&bnStatsText, "bn_stats"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  one = PyFloat_FromDouble(1.0);
  six = PyLong_FromLong(6);
  whatOnly = PyTuple_Pack(1, whatName);
  if (one == nullptr || six == nullptr || whatOnly == nullptr) throw py::error_already_set();
  m.def(
      "configure_lane_fast",
      [](py::type tensor, py::module_ instructionsModule, py::dict dtypeLookups, py::object bnStatsOpcode) {
        Py_XDECREF(reinterpret_cast<PyObject*>(tensorClass));
        for (PyObject** slot : {&instructions, &lookups, &bnStats}) Py_XDECREF(*slot);
        tensorClass = reinterpret_cast<PyTypeObject*>(tensor.inc_ref().ptr());
        instructions = instructionsModule.inc_ref().ptr();
        lookups = dtypeLookups.inc_ref().ptr();
        bnStats = bnStatsOpcode.inc_ref().ptr();
      },
      py::arg("tensor_class"), py::arg("instructions"), py::arg("dtype_lookups"), py::arg("bn_stats"),
      "Gives activation_fast, reduce_fast and bn_stats_fast the Tensor class, the instructions module (whose "
      "activation, tensor_reduce and per_lane they call), dtypes._LOOKUPS and the BNStats opcode.");
  m.def(
      "activation_fast",
      [](py::object func, py::str name) {
        return fastFunction(&activationFastDef, py::make_tuple(func, name).ptr());
      },
      py::arg("func"), py::arg("name"),
      "The C path of nl.<name>(x, *, mask=None), the activation func: a result, or NotImplemented for the Python "
      "definition to answer (use in a FastCall).");
  m.def(
      "reduce_fast",
      [](py::object op, py::str name) {
        return fastFunction(&reduceFastDef, py::make_tuple(op, name).ptr());
      },
      py::arg("op"), py::arg("name"),
      "The C path of nl.<name>(x, axis, *, mask=None, keepdims=False), the op-reduction: a result, or "
      "NotImplemented for the Python definition to answer (use in a FastCall).");
  m.def(
      "bn_stats_fast", []() { return fastFunction(&bnStatsFastDef, nullptr); },
      "The C path of nisa.bn_stats(data, *, mask=None, dtype=None): a result, or NotImplemented for the Python "
      "definition to answer (use in a FastCall).");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindLaneFast);

}  // namespace lane_fast
}  // namespace
}  // namespace nxs::py_bind
