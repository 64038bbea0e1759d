// The commonest tile broadcast of a kernel, a one-partition row repeated to all partitions
// (`row.broadcast_to((P, F))`, `nl.broadcast_to(row, shape=(P, F))`, a [1, F] operand of an
// arithmetic operator with a [P, F] one), in C:
//
//   `_core.nki.broadcast_row(tr, x, shape, loc)`
//
// is neuronxsim.nki.language._broadcast_tile(x, shape, loc) for the case it takes: x an exact
// Tensor on chip of shape (1, F) walking its row contiguously (F 1 or free step 1), without
// deferred bound checks (the definition makes those first: Tensor.check_bounds), of a dtype the
// PE reads (instructions.MATMUL_DTYPE_SET), shape an exact tuple of two exact ints (P, F) with
// 1 < P <= tile_size.pmax and 0 < F. Then, as _partition_broadcast records it, in its order, with
// its names and fields:
//
//   the [1, P] row of ones (instructions.constant_tile: tr.new_result(SBUF, dtype, (1, P), "const",
//   loc) and its Memset on the Vector Engine, {"mode": Const, "constant": 1.0}, written by
//   tr.write_plain, or, when that declines, by instructions.memset itself); the result
//   tr.new_result(SBUF, dtype, (P, F), "broadcast", loc); then per MATMUL_MAX_MOVING columns
//   [lo, hi) the matmul of the ones with the row's (instructions.matmul_plain, or
//   instructions.matmul when it declines) and the copy of its PSUM result into the result's
//   (instructions.lanewise_plain as tensor_copy calls it, or instructions.tensor_copy when it does
//   not record it).
//
// Returns the result; NotImplemented, having changed nothing, for anything else (_broadcast_tile
// then answers it, with every check and error: it calls this first). The builders are read from
// the instructions module per call (tests replace them).
//
// `broadcast_method()`: Tensor.broadcast_to(shape) in C, a method descriptor: broadcast_row with the
// kernel's line (the frame calling the method), else language._broadcast_tile(self, shape, loc),
// as the Python method does; any other arguments go to the Python method (its TypeError).
//
// `configure_broadcast(tensor_class, instructions, language, definition, sbuf, pmax, memset, dve,
// activation, memset_const)` gives them the Tensor class, the instructions and language modules,
// the Python method, the SBUF kind, the partitions of a tile, the Memset opcode, the Vector and
// Scalar Engines (tensor_copy's engine from PSUM) and MemsetMode.Const.
//
// Why C: a state-space kernel broadcasts two rows per inner iteration (a third of its
// instructions); _broadcast_tile, _partition_broadcast, constant_tile, memset, matmul and
// tensor_copy cost a dozen Python frames per broadcast.
#include "trace_call_site.h"
#include "trace_current.h"
#include "trace_equal.h"
#include "trace_int_tuples.h"
#include "trace_method_site.h"
#include "trace_ref.h"
#include "trace_slotted.h"

#include "bindings.h"

#include <algorithm>

namespace nxs::py_bind {
namespace {
namespace broadcast {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

using Owned = nxs::py_bind::OwnedRef;

PyTypeObject* tensorClass = nullptr;
PyObject *instructions = nullptr, *language = nullptr, *definition = nullptr, *sbuf = nullptr, *memsetOpcode = nullptr,
         *dve = nullptr, *activation = nullptr, *memsetConst = nullptr;
long long pmax = 0;

struct Names {
  PyObject *storage, *on_chip, *shape, *strides, *offset, *dtype, *layout, *row, *new_result, *write_plain, *record,
      *checks, *matmul_plain, *matmul, *lanewise_plain, *tensor_copy, *memset, *MATMUL_DTYPE_SET, *MATMUL_MAX_MOVING,
      *_COPY, *what, *out, *mode, *constant, *const_, *broadcast, *broadcast_to, *_broadcast_tile;
};
Names names{};
PyObject *one = nullptr, *zero = nullptr, *noChecks = nullptr, *whatOnly = nullptr,
         *outWhat = nullptr;

// The integer slot `name` of `o` into v: 1, 0 when it is not an exact int, -1 with an error set.
int intSlot(PyObject* o, PyObject* name, long long& v) {
  Owned a(slotAttr(o, name));
  if (a.get() == nullptr) return -1;
  return exactIntValue(a.get(), v) ? 1 : 0;
}

// new_view(storage, offset, (p, f), (row, 1), ()): a new reference, null with an error set.
PyObject* rowView(PyObject* storage, PyObject* offset, long long p, long long f, long long row) {
  const long long dims[2] = {p, f}, steps[2] = {row, 1};
  Owned shape(int_tuples::get(dims, 2)), strides(int_tuples::get(steps, 2));
  if (shape.get() == nullptr || strides.get() == nullptr) return nullptr;
  PyObject* const slots[5] = {storage, offset, shape.get(), strides.get(), noChecks};
  return newSlottedObject(reinterpret_cast<PyObject*>(tensorClass), slots, 5);
}

// instructions.<name>(*args, **kwargs) (kwnames: the last arguments' names, or null): a new
// reference, null with an error set.
PyObject* builder(PyObject* name, PyObject* const* args, size_t nargs, PyObject* kwnames) {
  Owned f(moduleAttr(instructions, name));
  if (f.get() == nullptr) return nullptr;
  return PyObject_Vectorcall(f.get(), args, nargs, kwnames);
}

// instructions.constant_tile(tr, (1, p), 1.0, dtype, loc): a new reference, null with an error set.
PyObject* onesRow(PyObject* tr, long long p, PyObject* dtype, PyObject* loc) {
  static MethodSite newResultSite, recordSite;
  const long long dims[2] = {1, p};
  Owned shape(int_tuples::get(dims, 2));
  if (shape.get() == nullptr) return nullptr;
  PyObject* const made[6] = {tr, sbuf, dtype, shape.get(), names.const_, loc};
  Owned ones(newResultSite.call(names.new_result, made, 6));
  if (ones.get() == nullptr) return nullptr;
  // memset(tr, ones, 1.0, loc): no mask, its out_view the whole tile, engine_out's write_plain
  PyObject* const write[3] = {tr, ones.get(), dve};  // (a static method of the tracer)
  Owned acc(PyObject_VectorcallMethod(names.write_plain, write, 3, nullptr));
  if (acc.get() == nullptr) return nullptr;
  if (acc.get() == Py_None) {  // (write_plain changed nothing: memset's general write)
    PyObject* const general[4] = {tr, ones.get(), one, loc};
    Owned done(builder(names.memset, general, 4, nullptr));
    return done.get() == nullptr ? nullptr : ones.release();
  }
  Owned fields(PyDict_New()), ins(PyList_New(0)), outs(PyList_New(1));
  if (fields.get() == nullptr || ins.get() == nullptr || outs.get() == nullptr ||
      PyDict_SetItem(fields.get(), names.mode, memsetConst) < 0 || PyDict_SetItem(fields.get(), names.constant, one) < 0)
    return nullptr;
  PyList_SET_ITEM(outs.get(), 0, acc.release());
  PyObject* const rec[7] = {tr, memsetOpcode, dve, ins.get(), outs.get(), fields.get(), loc};
  Owned op(recordSite.call(names.record, rec, 7));
  return op.get() == nullptr ? nullptr : ones.release();
}

PyObject* broadcastRow(PyObject* tr, PyObject* x, PyObject* shape, PyObject* loc) {
  if (tensorClass == nullptr || Py_TYPE(x) != tensorClass || !PyTuple_CheckExact(shape) ||
      PyTuple_GET_SIZE(shape) != 2)
    Py_RETURN_NOTIMPLEMENTED;
  long long p = 0, f = 0, maxMoving = 0;
  if (!exactIntValue(PyTuple_GET_ITEM(shape, 0), p) || !exactIntValue(PyTuple_GET_ITEM(shape, 1), f) || p <= 1 || p > pmax ||
      f <= 0)
    Py_RETURN_NOTIMPLEMENTED;
  Owned moving(moduleAttr(instructions, names.MATMUL_MAX_MOVING));
  if (moving.get() == nullptr) return nullptr;
  if (!exactIntValue(moving.get(), maxMoving) || maxMoving <= 0) Py_RETURN_NOTIMPLEMENTED;
  Owned st(slotAttr(x, names.storage));
  if (st.get() == nullptr) return nullptr;
  Owned onChip(slotAttr(st.get(), names.on_chip));
  if (onChip.get() == nullptr) return nullptr;
  int t = PyObject_IsTrue(onChip.get());
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  // x: a (1, f) row walking its elements contiguously (_is_flat_row)
  Owned xShape(slotAttr(x, names.shape)), xStrides(slotAttr(x, names.strides));
  if (xShape.get() == nullptr || xStrides.get() == nullptr) return nullptr;
  long long x0 = 0, x1 = 0, step = 1;
  if (!PyTuple_CheckExact(xShape.get()) || PyTuple_GET_SIZE(xShape.get()) != 2 ||
      !exactIntValue(PyTuple_GET_ITEM(xShape.get(), 0), x0) || !exactIntValue(PyTuple_GET_ITEM(xShape.get(), 1), x1) ||
      x0 != 1 || x1 != f || !PyTuple_CheckExact(xStrides.get()) || PyTuple_GET_SIZE(xStrides.get()) != 2 ||
      (f != 1 && (!exactIntValue(PyTuple_GET_ITEM(xStrides.get(), 1), step) || step != 1)))
    Py_RETURN_NOTIMPLEMENTED;
  Owned checks(slotAttr(x, names.checks));  // (deferred bound checks: unusual, the definition's)
  if (checks.get() == nullptr) return nullptr;
  if (!PyTuple_CheckExact(checks.get()) || PyTuple_GET_SIZE(checks.get()) != 0) Py_RETURN_NOTIMPLEMENTED;
  Owned dtype(slotAttr(st.get(), names.dtype));
  Owned dtypes(moduleAttr(instructions, names.MATMUL_DTYPE_SET));
  if (dtype.get() == nullptr || dtypes.get() == nullptr) return nullptr;
  t = PySet_Contains(dtypes.get(), dtype.get());  // (not one: a cast first, Python's)
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned layout(slotAttr(st.get(), names.layout));
  if (layout.get() == nullptr) return nullptr;
  long long row = 0, offset = 0;
  t = intSlot(layout.get(), names.row, row);
  if (t == 1) t = intSlot(x, names.offset, offset);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  // From here on the trace changes: every step is _partition_broadcast's, by C or by its builder.
  Owned ones(onesRow(tr, p, dtype.get(), loc));
  if (ones.get() == nullptr) return nullptr;
  static MethodSite newResultSite;
  PyObject* const made[6] = {tr, sbuf, dtype.get(), shape, names.broadcast, loc};
  Owned out(newResultSite.call(names.new_result, made, 6));
  if (out.get() == nullptr) return nullptr;
  Owned outSt(slotAttr(out.get(), names.storage));
  if (outSt.get() == nullptr) return nullptr;
  Owned outLayout(slotAttr(outSt.get(), names.layout)), copy(moduleAttr(instructions, names._COPY));
  if (outLayout.get() == nullptr || copy.get() == nullptr) return nullptr;
  long long outRow = 0;
  t = intSlot(outLayout.get(), names.row, outRow);
  if (t != 1) {
    if (t == 0) PyErr_SetString(PyExc_TypeError, "broadcast_row: a layout's row is not an int");
    return nullptr;
  }
  for (long long lo = 0; lo < f; lo += maxMoving) {  // (src[:, lo:hi] and flat[:, lo:hi])
    const long long n = std::min(f, lo + maxMoving) - lo;
    Owned from(PyLong_FromLongLong(offset + lo)), to(PyLong_FromLongLong(lo));
    if (from.get() == nullptr || to.get() == nullptr) return nullptr;
    Owned src(rowView(st.get(), from.get(), 1, n, row)), dst(rowView(outSt.get(), to.get(), p, n, outRow));
    if (src.get() == nullptr || dst.get() == nullptr) return nullptr;
    // instructions.matmul(tr, ones, src, loc, what="broadcast_to")
    PyObject* const mm[5] = {tr, ones.get(), src.get(), loc, names.broadcast_to};
    Owned ps(builder(names.matmul_plain, mm, 4, nullptr));
    if (ps.get() == Py_NotImplemented) {  // (it changed nothing: matmul's general path)
      Py_DECREF(ps.release());
      ps.p = builder(names.matmul, mm, 4, whatOnly);
    }
    if (ps.get() == nullptr) return nullptr;
    // instructions.tensor_copy(tr, ps, dtype, loc, out=dst, what="broadcast_to"): no mask, so
    // lanewise_plain first (the copy from PSUM: on the Scalar Engine)
    Owned psShape(slotAttr(ps.get(), names.shape)), tiles(PyTuple_Pack(1, ps.get()));
    if (psShape.get() == nullptr || tiles.get() == nullptr) return nullptr;
    PyObject* const lw[12] = {tr,        copy.get(),    activation,  psShape.get(),      tiles.get(), noChecks,
                              dst.get(), psShape.get(), dtype.get(), names.broadcast_to, Py_None,     loc};
    Owned copied(builder(names.lanewise_plain, lw, 12, nullptr));
    if (copied.get() == nullptr) return nullptr;
    if (Py_TYPE(copied.get()) != tensorClass) {  // (not recorded, nothing changed: tensor_copy's general path)
      PyObject* const tc[6] = {tr, ps.get(), dtype.get(), loc, dst.get(), names.broadcast_to};
      Py_DECREF(copied.release());
      copied.p = builder(names.tensor_copy, tc, 4, outWhat);
      if (copied.get() == nullptr) return nullptr;
    }
  }
  return out.release();
}

PyObject* broadcastRowFunction(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "broadcast_row(tr, x, shape, loc)");
    return nullptr;
  }
  return broadcastRow(args[0], args[1], args[2], args[3]);
}

// Tensor.broadcast_to(shape), see the file's comment.
PyObject* broadcastMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (language == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "Tensor.broadcast_to's C method is not configured");
    return nullptr;
  }
  if (nargs != 1 || (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0)) {  // (the definition's to answer)
    PyObject* call[8];
    const Py_ssize_t n = nargs + (kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames));
    if (n > 7) {
      PyErr_SetString(PyExc_TypeError, "broadcast_to(shape) takes one argument");
      return nullptr;
    }
    call[0] = self;
    for (Py_ssize_t i = 0; i < n; ++i) call[i + 1] = args[i];
    return PyObject_Vectorcall(definition, call, static_cast<size_t>(nargs + 1), kwnames);
  }
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C method has none of its own)
  if (loc.get() == nullptr) return nullptr;
  PyObject* tr = currentTracer();  // (borrowed)
  if (tr != nullptr) {
    Owned done(broadcastRow(tr, self, args[0], loc.get()));
    if (done.get() != Py_NotImplemented) return done.release();
  }
  Owned general(moduleAttr(language, names._broadcast_tile));
  if (general.get() == nullptr) return nullptr;
  PyObject* const call[3] = {self, args[0], loc.get()};
  return PyObject_Vectorcall(general.get(), call, 3, nullptr);
}

PyMethodDef broadcastRowDef = {"broadcast_row",
                               reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(broadcastRowFunction)),
                               METH_FASTCALL,
                               "broadcast_row(tr, x, shape, loc): language._broadcast_tile's commonest case (a [1, F] "
                               "row to [P, F] by matmuls with a row of ones), recorded; else NotImplemented, having changed nothing."};
PyMethodDef broadcastMethodDef = {"broadcast_to",
                                  reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(broadcastMethod)),
                                  METH_FASTCALL | METH_KEYWORDS, "The tile repeated to shape (see nl.broadcast_to)."};

void bindBroadcast(py::module_& m) {
  for (auto [slot, text] :
       {std::pair{&names.storage, "storage"}, {&names.on_chip, "on_chip"}, {&names.shape, "shape"},
        {&names.strides, "strides"}, {&names.offset, "offset"}, {&names.dtype, "dtype"}, {&names.layout, "layout"},
        {&names.row, "row"}, {&names.new_result, "new_result"}, {&names.write_plain, "write_plain"},
        {&names.record, "record"}, {&names.checks, "checks"}, {&names.matmul_plain, "matmul_plain"},
        {&names.matmul, "matmul"}, {&names.lanewise_plain, "lanewise_plain"}, {&names.tensor_copy, "tensor_copy"},
        {&names.memset, "memset"}, {&names.MATMUL_DTYPE_SET, "MATMUL_DTYPE_SET"},
        {&names.MATMUL_MAX_MOVING, "MATMUL_MAX_MOVING"}, {&names._COPY, "_COPY"},
        {&names.what, "what"}, {&names.out, "out"}, {&names.mode, "mode"}, {&names.constant, "constant"},
        {&names.const_, "const"}, {&names.broadcast, "broadcast"}, {&names.broadcast_to, "broadcast_to"},
        {&names._broadcast_tile, "_broadcast_tile"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  one = PyFloat_FromDouble(1.0);
  zero = PyLong_FromLong(0);
  noChecks = PyTuple_New(0);
  whatOnly = PyTuple_Pack(1, names.what);
  outWhat = PyTuple_Pack(2, names.out, names.what);
  if (one == nullptr || zero == nullptr || noChecks == nullptr || whatOnly == nullptr || outWhat == nullptr)
    throw py::error_already_set();
  m.def(
      "configure_broadcast",
      [](py::type tensor, py::module_ instructionsModule, py::module_ languageModule, py::function method,
         py::str sbufKind, long long partitions, py::object memset, py::object vectorEngine, py::object scalarEngine,
         py::object constMode) {
        Py_XDECREF(reinterpret_cast<PyObject*>(tensorClass));
        for (PyObject** slot : {&instructions, &language, &definition, &sbuf, &memsetOpcode, &dve, &activation,
                                &memsetConst})
          Py_XDECREF(*slot);
        tensorClass = reinterpret_cast<PyTypeObject*>(tensor.inc_ref().ptr());
        instructions = instructionsModule.inc_ref().ptr();
        language = languageModule.inc_ref().ptr();
        definition = method.inc_ref().ptr();
        activation = scalarEngine.inc_ref().ptr();
        sbuf = sbufKind.inc_ref().ptr();
        pmax = partitions;
        memsetOpcode = memset.inc_ref().ptr();
        dve = vectorEngine.inc_ref().ptr();
        memsetConst = constMode.inc_ref().ptr();
      },
      py::arg("tensor_class"), py::arg("instructions"), py::arg("language"), py::arg("definition"), py::arg("sbuf"),
      py::arg("pmax"), py::arg("memset"), py::arg("dve"), py::arg("activation"), py::arg("memset_const"),
      "Gives broadcast_row and Tensor.broadcast_to's C method the Tensor class, the instructions and language "
      "modules, Tensor.broadcast_to's Python definition, the SBUF kind, the partitions of a tile, the Memset opcode, "
      "the Vector and Scalar Engines and MemsetMode.Const.");
  PyObject* f = PyCFunction_NewEx(&broadcastRowDef, nullptr, nullptr);
  if (f == nullptr) throw py::error_already_set();
  m.attr("broadcast_row") = py::reinterpret_steal<py::object>(f);
  m.def(
      "broadcast_method",
      []() {
        if (tensorClass == nullptr) throw py::type_error("broadcast_method: call configure_broadcast first");
        PyObject* descr = PyDescr_NewMethod(tensorClass, &broadcastMethodDef);
        if (descr == nullptr) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(descr);
      },
      "Tensor.broadcast_to(shape) in C (a method descriptor; see cpp/python/trace_broadcast.cpp).");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindBroadcast);

}  // namespace broadcast
}  // namespace
}  // namespace nxs::py_bind
