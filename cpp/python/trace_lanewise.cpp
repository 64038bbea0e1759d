// The commonest lane-wise instruction of a trace (tensor_tensor, tensor_scalar, activation,
// bn_stats, tensor_reduce, ...), in one call:
//
//   `_core.nki.lanewise_plain(tr, opcode, engine, shape, tiles, pointers, out, out_shape, dtype,
//                             what, fields, loc)`
//
// is neuronxsim.nki.instructions.plain_inputs (without a mask: callers resolve it first), then
// result_tile, then record_plain, for the case plain_inputs takes:
//
//   every view of the tuple `tiles` is a Tensor of the iteration space `shape`, without index
//   checks, not forwarded, written in all its partitions (state.written_partitions >= offset //
//   layout.row + P), and plain_tile_access(view, st, engine) gives its access; every view of the
//   tuple `pointers` is a [P, 1] or [P] Tensor of those P partitions, without checks, not
//   forwarded, written at least once, and has such an access; at most one input in PSUM unless
//   `engine` is the Scalar Engine. An input whose nl.zeros zeros are pending (`acc += t` into a
//   fresh nl.zeros block) first has them marked needed, tr.need_zeros(state), as the general
//   path's tr.read does (so a later refusal leaves that mark: the general path's read would make
//   it again, having nothing left to do).
//
// Then the destination: `out` if given (its shape must be `out_shape`), else a new SBUF result
// (tr.new_result(SBUF, dtype, out_shape, what, loc); NotImplemented when out_shape spans more
// partitions than a tile has: result_tile raises that). Its write is write_plain(out, engine), and
// the instruction tr.record(opcode, engine, [ins...], [write], fields, loc).
//
// Returns the destination, recorded; NotImplemented, having changed nothing (views may keep the
// access plain_tile_access made, as they do on the Python path), when the instruction needs the
// general path; or the 1-tuple (result,) when it made the new result but write_plain did not take
// it: the general path then records the instruction with that result (as record_plain's caller
// does when record_plain returns False).
//
// A partial tile (the last of a loop over rows, `t * 128 + i_p < rows`), for the opcodes of
// `cut_opcodes` (those whose builders' general path is plan over `tiles`, result_tile and
// record_lanewise) and an `out_shape` equal to `shape`: when the tiles were written in a leading
// run of n partitions only (0 < n < P, the fewest of theirs; every one at least one), the
// instruction is what plan's box ((0, n), the rest whole) makes of it: each tile's lane_view, each
// pointer's pointer_view and the destination's out_view cut to partitions [0, n) (new views of
// the same offsets and steps, a tile's size-1 dimensions stepping 0 as lane_view makes them), their
// accesses plain_tile_access's and write_plain's, recorded with that box as its out_box. A cut view
// plain_tile_access or write_plain does not take (the general path reads it and checks it) or a
// destination with index checks: NotImplemented (or (result,)), as above.
//
// `configure_lanewise(tensor_class, plain_tile_access, write_plain, activation, psum, sbuf,
// num_partitions, cut_opcodes)` gives it the Tensor class, the tracer's plain_tile_access and
// write_plain, the Scalar Engine, the PSUM and SBUF kinds, the partitions of a tile and the tuple
// of opcodes whose partial tiles it records.
//
// Why C: these instructions are most of a normalisation kernel's, and their Python steps
// (plain_inputs, result_tile, record_plain and what they call) cost a dozen frames each.
#include <algorithm>

#include "trace_method_site.h"
#include "trace_equal.h"
#include "trace_ref.h"

#include "bindings.h"
#include "trace_slotted.h"

namespace nxs::py_bind {
namespace {
namespace lanewise_plain {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

struct Names {
  PyObject *storage, *state, *shape, *checks, *forward, *pending_zero, *write_count, *written_partitions, *offset,
      *layout, *row, *kind, *new_result, *record, *need_zeros, *strides;
};
Names names{};
PyObject* tensorClass = nullptr;
PyObject* plainTileAccess = nullptr;
PyObject* writePlain = nullptr;
PyObject* activation = nullptr;
PyObject* psum = nullptr;
PyObject* sbuf = nullptr;
long long numPartitions = 0;
PyObject* cutOpcodes = nullptr;  // (a tuple)

using Owned = nxs::py_bind::OwnedRef;

// Whether a == b, by identity first (views of one tile share its shape tuple); -1 on error.
int same(PyObject* a, PyObject* b) { return a == b ? 1 : equalTo(a, b); }

// The access of one input view `v` (appended to `ins`, a list): 1 when it takes the plain path,
// 0 if not, -1 on error. `pointer`: a [P, 1] / [P] per-partition operand, else a tile of `shape`.
// `psumCount` counts the inputs in PSUM. `defined`: null, or the fewest leading partitions the
// tiles so far were written in, which a tile written in fewer (at least one) lowers instead of
// failing.
int input(PyObject* tr, PyObject* v, bool pointer, PyObject* shape, long long p, PyObject* engine, PyObject* ins,
          int& psumCount, long long* defined) {
  if (Py_TYPE(v) != reinterpret_cast<PyTypeObject*>(tensorClass)) return 0;
  Owned vShape(slotAttr(v, names.shape));
  if (vShape.get() == nullptr) return -1;
  int t;
  if (pointer) {
    PyObject* s = vShape.get();
    if (!PyTuple_CheckExact(s)) return 0;
    const Py_ssize_t rank = PyTuple_GET_SIZE(s);
    if (rank == 2) {
      const long long f = PyLong_AsLongLong(PyTuple_GET_ITEM(s, 1));
      if (f == -1 && PyErr_Occurred()) return -1;
      if (f != 1) return 0;
    } else if (rank != 1) {
      return 0;
    }
    const long long vp = PyLong_AsLongLong(PyTuple_GET_ITEM(s, 0));
    if (vp == -1 && PyErr_Occurred()) return -1;
    if (vp != p) return 0;
  } else {
    t = same(vShape.get(), shape);
    if (t != 1) return t;
  }
  Owned checks(slotAttr(v, names.checks));
  if (checks.get() == nullptr) return -1;
  t = PyObject_IsTrue(checks.get());
  if (t != 0) return t < 0 ? -1 : 0;
  Owned st(slotAttr(v, names.storage));
  if (st.get() == nullptr) return -1;
  Owned s(slotAttr(st.get(), names.state));
  if (s.get() == nullptr) return -1;
  Owned forward(slotAttr(s.get(), names.forward));
  Owned pending(slotAttr(s.get(), names.pending_zero));
  if (forward.get() == nullptr || pending.get() == nullptr) return -1;
  if (forward.get() != Py_None) return 0;
  if (pending.get() != Py_None) {
    Owned done(PyObject_CallMethodOneArg(tr, names.need_zeros, s.get()));
    if (done.get() == nullptr) return -1;
  }
  if (pointer) {
    Owned count(slotAttr(s.get(), names.write_count));
    if (count.get() == nullptr) return -1;
    t = PyObject_IsTrue(count.get());
    if (t != 1) return t;
  }
  PyObject* const args[3] = {v, st.get(), engine};
  Owned acc(callFast(plainTileAccess, args, 3));
  if (acc.get() == nullptr) return -1;
  if (acc.get() == Py_None) return 0;
  if (!pointer) {  // written in all the partitions the view spans
    long long written = 0, offset = 0, row = 0;
    Owned layout(slotAttr(st.get(), names.layout));
    if (layout.get() == nullptr || !intValue(slotAttr(s.get(), names.written_partitions), written) ||
        !intValue(slotAttr(v, names.offset), offset) || !intValue(slotAttr(layout.get(), names.row), row))
      return -1;
    if (row <= 0) return 0;  // (the Python path's floor division decides)
    long long q = offset / row;
    if (offset % row != 0 && offset < 0) --q;  // (Python's floor)
    if (written < q + p) {
      if (defined == nullptr || written <= q) return 0;
      *defined = std::min(*defined, written - q);
    }
  }
  Owned kind(slotAttr(st.get(), names.kind));
  if (kind.get() == nullptr) return -1;
  t = kind.get() == psum ? 1 : equalTo(kind.get(), psum);
  if (t < 0) return -1;
  psumCount += t;
  return PyList_Append(ins, acc.get()) < 0 ? -1 : 1;
}

// Whether `opcode` is one of cutOpcodes (by identity: the builders pass the opcodes themselves).
bool cutOpcode(PyObject* opcode) {
  if (cutOpcodes == nullptr) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cutOpcodes); ++i)
    if (PyTuple_GET_ITEM(cutOpcodes, i) == opcode) return true;
  return false;
}

// The view of the Tensor `v` cut to its leading `n` partitions, as new_view(v.storage, v.offset,
// (n,) + v.shape[1:], steps, ()) makes it: `laneSteps`, lane_view's steps (0 for a dimension of
// size 1), else v's own (restrict's). A new reference; null with an error set.
PyObject* cutView(PyObject* v, long long n, bool laneSteps) {
  Owned st(slotAttr(v, names.storage)), offset(slotAttr(v, names.offset)), shape(slotAttr(v, names.shape)),
      strides(slotAttr(v, names.strides));
  if (st.get() == nullptr || offset.get() == nullptr || shape.get() == nullptr || strides.get() == nullptr)
    return nullptr;
  if (!PyTuple_CheckExact(shape.get()) || !PyTuple_CheckExact(strides.get()) ||
      PyTuple_GET_SIZE(shape.get()) != PyTuple_GET_SIZE(strides.get())) {
    PyErr_SetString(PyExc_TypeError, "lanewise_plain: a tile's shape and strides are tuples of one rank");
    return nullptr;
  }
  const Py_ssize_t rank = PyTuple_GET_SIZE(shape.get());
  Owned cutShape(PyTuple_New(rank));
  if (cutShape.get() == nullptr) return nullptr;
  PyObject* first = PyLong_FromLongLong(n);
  if (first == nullptr) return nullptr;
  PyTuple_SET_ITEM(cutShape.get(), 0, first);
  for (Py_ssize_t i = 1; i < rank; ++i) PyTuple_SET_ITEM(cutShape.get(), i, Py_NewRef(PyTuple_GET_ITEM(shape.get(), i)));
  Owned steps(Py_NewRef(strides.get()));
  if (laneSteps) {
    steps.p = PyTuple_New(rank);
    if (steps.get() == nullptr) return nullptr;
    for (Py_ssize_t i = 0; i < rank; ++i) {
      long long size = 0;
      if (i > 0 && !intValue(Py_NewRef(PyTuple_GET_ITEM(shape.get(), i)), size)) return nullptr;
      PyObject* step = i > 0 && size == 1 ? PyLong_FromLong(0) : Py_NewRef(PyTuple_GET_ITEM(strides.get(), i));
      if (step == nullptr) return nullptr;
      PyTuple_SET_ITEM(steps.get(), i, step);
    }
  }
  Owned noChecks(PyTuple_New(0));
  if (noChecks.get() == nullptr) return nullptr;
  PyObject* const values[5] = {st.get(), offset.get(), cutShape.get(), steps.get(), noChecks.get()};
  return newSlottedObject(tensorClass, values, 5);
}

// The access plain_tile_access gives the view `v` cut to `n` partitions (appended to `ins`), when
// engine_in would take it so (its storage not forwarded, no zeros pending, written): 1; 0 when the
// general path must read it; -1 with an error set.
int cutInput(PyObject* v, long long n, bool pointer, PyObject* engine, PyObject* ins) {
  Owned cut(cutView(v, n, !pointer));
  if (cut.get() == nullptr) return -1;
  Owned st(slotAttr(v, names.storage));
  if (st.get() == nullptr) return -1;
  Owned s(slotAttr(st.get(), names.state));
  if (s.get() == nullptr) return -1;
  Owned forward(slotAttr(s.get(), names.forward)), pending(slotAttr(s.get(), names.pending_zero)),
      count(slotAttr(s.get(), names.write_count));
  if (forward.get() == nullptr || pending.get() == nullptr || count.get() == nullptr) return -1;
  if (forward.get() != Py_None || pending.get() != Py_None) return 0;
  const int t = PyObject_IsTrue(count.get());
  if (t != 1) return t;
  PyObject* const args[3] = {cut.get(), st.get(), engine};
  Owned acc(callFast(plainTileAccess, args, 3));
  if (acc.get() == nullptr) return -1;
  if (acc.get() == Py_None) return 0;
  return PyList_Append(ins, acc.get()) < 0 ? -1 : 1;
}

// plan's box of the iteration space `shape` cut to its leading `n` partitions: ((0, n), (0, F), ...).
PyObject* cutBox(PyObject* shape, long long n) {
  const Py_ssize_t rank = PyTuple_GET_SIZE(shape);
  Owned box(PyTuple_New(rank));
  if (box.get() == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < rank; ++i) {
    Owned hi(i == 0 ? PyLong_FromLongLong(n) : Py_NewRef(PyTuple_GET_ITEM(shape, i)));
    Owned lo(PyLong_FromLong(0));
    if (hi.get() == nullptr || lo.get() == nullptr) return nullptr;
    PyObject* range = PyTuple_Pack(2, lo.get(), hi.get());
    if (range == nullptr) return nullptr;
    PyTuple_SET_ITEM(box.get(), i, range);
  }
  return box.release();
}

PyObject* lanewisePlain(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 12) {
    PyErr_SetString(PyExc_TypeError,
                    "lanewise_plain(tr, opcode, engine, shape, tiles, pointers, out, out_shape, dtype, what, fields, "
                    "loc)");
    return nullptr;
  }
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "lanewise_plain is not configured");
    return nullptr;
  }
  PyObject *tr = args[0], *opcode = args[1], *engine = args[2], *shape = args[3], *tiles = args[4],
           *pointers = args[5], *out = args[6], *outShape = args[7], *dtype = args[8], *what = args[9],
           *fields = args[10], *loc = args[11];
  if (!PyTuple_CheckExact(shape) || PyTuple_GET_SIZE(shape) == 0 || !PyTuple_CheckExact(tiles) ||
      !PyTuple_CheckExact(pointers) || !PyTuple_CheckExact(outShape) || PyTuple_GET_SIZE(outShape) == 0)
    Py_RETURN_NOTIMPLEMENTED;
  const long long p = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, 0));
  if (p == -1 && PyErr_Occurred()) return nullptr;
  Owned ins(PyList_New(0));
  if (ins.get() == nullptr) return nullptr;
  int psumCount = 0;
  long long defined = p;  // (the leading partitions every tile was written in, when cut ones are taken)
  int cuttable = cutOpcode(opcode) ? same(outShape, shape) : 0;
  if (cuttable < 0) return nullptr;
  for (int pointer = 0; pointer < 2; ++pointer) {
    PyObject* views = pointer ? pointers : tiles;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(views); ++i) {
      const int t = input(tr, PyTuple_GET_ITEM(views, i), pointer != 0, shape, p, engine, ins.get(), psumCount,
                          cuttable ? &defined : nullptr);
      if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
    }
  }
  const bool cut = defined < p;
  if (cut) {  // (a partial tile: its cut views' accesses instead)
    ins.p = PyList_New(0);
    if (ins.get() == nullptr) return nullptr;
    for (int pointer = 0; pointer < 2; ++pointer) {
      PyObject* views = pointer ? pointers : tiles;
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(views); ++i) {
        const int t = cutInput(PyTuple_GET_ITEM(views, i), defined, pointer != 0, engine, ins.get());
        if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
      }
    }
  }
  if (PyList_GET_SIZE(ins.get()) > 1 && engine != activation && psumCount > 1)
    Py_RETURN_NOTIMPLEMENTED;  // (an error: the general path reports it)
  Owned result(nullptr);
  bool fresh = false;
  if (out == Py_None) {
    const long long resultPartitions = PyLong_AsLongLong(PyTuple_GET_ITEM(outShape, 0));
    if (resultPartitions == -1 && PyErr_Occurred()) return nullptr;
    if (resultPartitions > numPartitions) Py_RETURN_NOTIMPLEMENTED;  // (result_tile raises it)
    PyObject* const make[6] = {tr, sbuf, dtype, outShape, what, loc};
    static MethodSite newResultSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
    result.p = newResultSite.call(names.new_result, make, 6);
    if (result.get() == nullptr) return nullptr;
    fresh = true;
  } else {
    if (Py_TYPE(out) != reinterpret_cast<PyTypeObject*>(tensorClass)) Py_RETURN_NOTIMPLEMENTED;
    Owned oShape(slotAttr(out, names.shape));
    if (oShape.get() == nullptr) return nullptr;
    const int t = same(oShape.get(), outShape);
    if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
    if (cut) {  // (out_view's restrict of a view with index checks: the general path's)
      Owned checks(slotAttr(out, names.checks));
      if (checks.get() == nullptr) return nullptr;
      const int c = PyObject_IsTrue(checks.get());
      if (c != 0) return c < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
    }
    result.p = Py_NewRef(out);
  }
  Owned target(cut ? cutView(result.get(), defined, false) : Py_NewRef(result.get()));
  if (target.get() == nullptr) return nullptr;
  PyObject* const write[2] = {target.get(), engine};
  Owned o(callFast(writePlain, write, 2));
  if (o.get() == nullptr) return nullptr;
  if (o.get() == Py_None) return fresh ? PyTuple_Pack(1, result.get()) : Py_NewRef(Py_NotImplemented);
  Owned outs(PyList_New(1));
  if (outs.get() == nullptr) return nullptr;
  PyList_SET_ITEM(outs.get(), 0, o.release());
  Owned box(cut ? cutBox(shape, defined) : Py_NewRef(Py_None));
  if (box.get() == nullptr) return nullptr;
  PyObject* const rec[8] = {tr, opcode, engine, ins.get(), outs.get(), fields, loc, box.get()};
  static MethodSite recordSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
  Owned op(recordSite.call(names.record, rec, cut ? 8 : 7));
  if (op.get() == nullptr) return nullptr;
  return result.release();
}

PyMethodDef lanewisePlainDef = {
    "lanewise_plain", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(lanewisePlain)), METH_FASTCALL,
    "lanewise_plain(tr, opcode, engine, shape, tiles, pointers, out, out_shape, dtype, what, fields, loc): a "
    "lane-wise instruction of plain operands, recorded (its destination); NotImplemented, having changed nothing, "
    "when it needs the general path; (result,) when it made a new result that the general path must record."};

void bindLanewise(py::module_& m) {
  Names n{};
  for (auto [slot, text] :
       {std::pair{&n.storage, "storage"}, {&n.state, "state"}, {&n.shape, "shape"}, {&n.checks, "checks"},
        {&n.forward, "forward"}, {&n.pending_zero, "pending_zero"}, {&n.write_count, "write_count"},
        {&n.written_partitions, "written_partitions"}, {&n.offset, "offset"}, {&n.layout, "layout"},
        {&n.row, "row"}, {&n.kind, "kind"}, {&n.new_result, "new_result"}, {&n.record, "record"},
        {&n.need_zeros, "need_zeros"}, {&n.strides, "strides"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  names = n;
  m.attr("lanewise_plain") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&lanewisePlainDef, nullptr, nullptr));
  m.def(
      "configure_lanewise",
      [](py::type tensor, py::object plain, py::object write, py::object act, py::str psumKind, py::str sbufKind,
         long long partitions, py::tuple cut) {
        for (PyObject** slot : {&tensorClass, &plainTileAccess, &writePlain, &activation, &psum, &sbuf, &cutOpcodes})
          Py_XDECREF(*slot);
        cutOpcodes = cut.inc_ref().ptr();
        tensorClass = tensor.inc_ref().ptr();
        plainTileAccess = plain.inc_ref().ptr();
        writePlain = write.inc_ref().ptr();
        activation = act.inc_ref().ptr();
        psum = psumKind.inc_ref().ptr();
        sbuf = sbufKind.inc_ref().ptr();
        numPartitions = partitions;
      },
      py::arg("tensor_class"), py::arg("plain_tile_access"), py::arg("write_plain"), py::arg("activation"),
      py::arg("psum"), py::arg("sbuf"), py::arg("num_partitions"), py::arg("cut_opcodes"),
      "Gives lanewise_plain the Tensor class, the tracer's plain_tile_access and write_plain, the Scalar Engine, "
      "the PSUM and SBUF kinds, the partitions of a tile and the opcodes whose partial tiles it records.");
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindLanewise);

}  // namespace lanewise_plain
}  // namespace
}  // namespace nxs::py_bind
