// The commonest DMA transfer of a trace, `_core.nki.dma_plain(tr, opcode, dst, src, loc, fresh)`
// (neuronxsim.nki.instructions.dma, which calls it first): the whole of `dma`'s steps for an
// unmasked transfer without read-modify-write or descriptor fields whose sides need none of the
// tracer's general reads and writes; NotImplemented, having changed nothing, for anything else
// (`dma` then takes its general path). The recorded Op otherwise.
//
// It applies when src and dst have the same shape, neither is in PSUM and an on-chip side spans
// at most `num_partitions` partitions, and
//   the source is an on-chip tile that was written, is not forwarded, has no pending nl.zeros
//       zeros and no index checks, whose plain_tile_access (for the DMA engine) exists; or a 2-D
//       view without index checks of an HBM tensor that was written (or is a kernel input), not
//       forwarded and without pending zeros: [(s0, n0), (s1, n1)] ((1, 1) for n1 1) from its offset;
//   the destination is the `fresh` result tile of the transfer (Tracer.write_fresh); an on-chip
//       view write_plain takes; or
//       such a 2-D HBM view of a tensor that is not a kernel input (its state: one more write,
//       no longer zero-initialised).
// The transfer goes to the core's next DMA queue (round robin over `dma_queues`) with the shared
// fields of that queue.
//
// `configure_dma_plain(access_class, plain_tile_access, write_plain, dma_engine, psum, input_kind,
// num_partitions, dma_queues, queue_fields)` gives it the record's Access class, the tracer's C
// operand functions, the DMA engine, the PSUM and kernel-input kinds, the limits and the per-queue
// field dicts (read in Python).
//
// Why C: nl.load, nl.store and nisa.dma_copy record a transfer for about half of the instructions
// of a typical kernel, and the Python steps (with _hbm_access, write_fresh, next_dma_queue) cost a
// few frames and dozens of attribute reads each.
#include "trace_method_site.h"
#include "trace_equal.h"
#include "trace_record.h"
#include "trace_ref.h"

#include "bindings.h"
#include "trace_slotted.h"

namespace nxs::py_bind {
namespace {
namespace dma_plain {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

struct Names {
  PyObject *storage, *kind, *on_chip, *shape, *strides, *offset, *checks, *state, *write_count, *forward,
      *pending_zero, *zero_init, *core, *dma_queue, *record, *write_fresh;
};
Names names{};
PyObject* accessClass = nullptr;
PyObject* plainTileAccess = nullptr;
PyObject* writePlain = nullptr;
PyObject* dmaEngine = nullptr;
PyObject* psumKind = nullptr;
PyObject* inputKind = nullptr;
PyObject* queueFields = nullptr;  // a list: the fields dict of each queue
PyObject* unitPair = nullptr;     // (1, 1)
long long numPartitions = 0, dmaQueues = 0;

using Owned = nxs::py_bind::OwnedRef;

// 1 if the string kind `k` is `what` (identity first), 0 if not, -1 on error.
int isKind(PyObject* k, PyObject* what) { return k == what ? 1 : equalTo(k, what); }

// The facts of one side of the transfer, read once.
struct Side {
  Owned view{nullptr}, st{nullptr}, state{nullptr}, shape{nullptr}, kind{nullptr};
  int onChip = 0;
  bool read(PyObject* v) {
    view.p = Py_NewRef(v);
    st.p = slotAttr(v, names.storage);
    if (st.get() == nullptr) return false;
    state.p = slotAttr(st.get(), names.state);
    shape.p = slotAttr(v, names.shape);
    kind.p = slotAttr(st.get(), names.kind);
    if (state.get() == nullptr || shape.get() == nullptr || kind.get() == nullptr) return false;
    Owned on(slotAttr(st.get(), names.on_chip));
    if (on.get() == nullptr) return false;
    onChip = PyObject_IsTrue(on.get());
    return onChip >= 0;
  }
};

// 1 if o.name is None, 0 if not, -1 on error.
int attrIsNone(PyObject* o, PyObject* name) {
  Owned v(slotAttr(o, name));
  return v.get() == nullptr ? -1 : v.get() == Py_None;
}

// 1 if o.name is true, 0 if not, -1 on error.
int attrIsTrue(PyObject* o, PyObject* name) {
  Owned v(slotAttr(o, name));
  return v.get() == nullptr ? -1 : PyObject_IsTrue(v.get());
}

// Whether nothing about the side's storage needs the general read / write: not forwarded, no
// pending zeros, no index checks (1), or something does (0); -1 on error.
int untouched(const Side& s) {
  int t = attrIsNone(s.state.get(), names.forward);
  if (t == 1) t = attrIsNone(s.state.get(), names.pending_zero);
  if (t == 1) {
    t = attrIsTrue(s.view.get(), names.checks);
    if (t >= 0) t = !t;
  }
  return t;
}

// The access of a 2-D HBM view (instructions._hbm_access, once `untouched` holds), None if the
// view is not 2-D (a new reference; null on error).
PyObject* hbmAccess(const Side& s) {
  if (!PyTuple_CheckExact(s.shape.get()) || PyTuple_GET_SIZE(s.shape.get()) != 2) Py_RETURN_NONE;
  Owned strides(slotAttr(s.view.get(), names.strides));
  Owned offset(slotAttr(s.view.get(), names.offset));
  if (strides.get() == nullptr || offset.get() == nullptr) return nullptr;
  if (!PyTuple_CheckExact(strides.get()) || PyTuple_GET_SIZE(strides.get()) != 2) Py_RETURN_NONE;
  PyObject* n0 = PyTuple_GET_ITEM(s.shape.get(), 0);
  PyObject* n1 = PyTuple_GET_ITEM(s.shape.get(), 1);
  const long long n = PyLong_AsLongLong(n1);
  if (n == -1 && PyErr_Occurred()) return nullptr;
  Owned outer(PyTuple_Pack(2, PyTuple_GET_ITEM(strides.get(), 0), n0));
  Owned inner(n > 1 ? PyTuple_Pack(2, PyTuple_GET_ITEM(strides.get(), 1), n1) : Py_NewRef(unitPair));
  if (outer.get() == nullptr || inner.get() == nullptr) return nullptr;
  Owned pairs(PyList_New(2));
  if (pairs.get() == nullptr) return nullptr;
  PyList_SET_ITEM(pairs.get(), 0, outer.release());
  PyList_SET_ITEM(pairs.get(), 1, inner.release());
  return newAccessRecord(accessClass, s.st.get(), offset.get(), pairs.get());
}

// Whether an on-chip side spans more partitions than a tile has (1), or not (0); -1 on error.
int tooTall(const Side& s) {
  if (!s.onChip) return 0;
  if (!PyTuple_Check(s.shape.get()) || PyTuple_GET_SIZE(s.shape.get()) == 0) return 1;  // (dma decides)
  const long long p = PyLong_AsLongLong(PyTuple_GET_ITEM(s.shape.get(), 0));
  if (p == -1 && PyErr_Occurred()) return -1;
  return p > numPartitions;
}

// The source's access (a new reference), None when the general read is needed; null on error.
PyObject* sourceAccess(const Side& s) {
  long long written = 0;
  {
    Owned count(slotAttr(s.state.get(), names.write_count));
    if (count.get() == nullptr) return nullptr;
    written = PyLong_AsLongLong(count.get());
    if (written == -1 && PyErr_Occurred()) return nullptr;
  }
  if (s.onChip) {
    if (written == 0) Py_RETURN_NONE;
    const int t = untouched(s);
    if (t <= 0) return t < 0 ? nullptr : Py_NewRef(Py_None);
    PyObject* const args[3] = {s.view.get(), s.st.get(), dmaEngine};
    return callFast(plainTileAccess, args, 3);
  }
  if (written == 0) {
    const int input = isKind(s.kind.get(), inputKind);
    if (input <= 0) return input < 0 ? nullptr : Py_NewRef(Py_None);
  }
  const int t = untouched(s);
  if (t <= 0) return t < 0 ? nullptr : Py_NewRef(Py_None);
  return hbmAccess(s);
}

// The write of an HBM destination (what Tracer.write does for a plain 2-D view): its access with
// the state updated; None, having changed nothing, when the general write is needed; null on error.
PyObject* writeHbm(const Side& d) {
  const int input = isKind(d.kind.get(), inputKind);
  if (input != 0) return input < 0 ? nullptr : Py_NewRef(Py_None);
  const int t = untouched(d);
  if (t <= 0) return t < 0 ? nullptr : Py_NewRef(Py_None);
  Owned acc(hbmAccess(d));
  if (acc.get() == nullptr || acc.get() == Py_None) return acc.release();
  Owned count(slotAttr(d.state.get(), names.write_count));
  if (count.get() == nullptr) return nullptr;
  Owned one(PyLong_FromLong(1));
  if (one.get() == nullptr) return nullptr;
  Owned more(PyNumber_Add(count.get(), one.get()));
  if (more.get() == nullptr || slotSet(d.state.get(), names.zero_init, Py_False) < 0 ||
      slotSet(d.state.get(), names.write_count, more.get()) < 0)
    return nullptr;
  return acc.release();
}

PyObject* dmaPlain(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 6) {
    PyErr_SetString(PyExc_TypeError, "dma_plain(tr, opcode, dst, src, loc, fresh)");
    return nullptr;
  }
  if (accessClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "dma_plain is not configured");
    return nullptr;
  }
  PyObject *tr = args[0], *opcode = args[1], *loc = args[4];
  const int fresh = PyObject_IsTrue(args[5]);
  if (fresh < 0) return nullptr;
  Side d, s;
  if (!d.read(args[2]) || !s.read(args[3])) return nullptr;
  int t = isKind(s.kind.get(), psumKind);
  if (t == 0) t = isKind(d.kind.get(), psumKind);
  if (t == 0) t = tooTall(s);
  if (t == 0) t = tooTall(d);
  if (t == 0) {
    t = equalTo(s.shape.get(), d.shape.get());
    if (t >= 0) t = !t;
  }
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned in(sourceAccess(s));
  if (in.get() == nullptr) return nullptr;
  if (in.get() == Py_None) Py_RETURN_NOTIMPLEMENTED;
  Owned out(nullptr);
  if (fresh) {
    PyObject* const w[2] = {tr, d.view.get()};
    static MethodSite writeFreshSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
    out.p = writeFreshSite.call(names.write_fresh, w, 2);
  } else if (d.onChip) {
    PyObject* const w[2] = {d.view.get(), dmaEngine};
    out.p = callFast(writePlain, w, 2);
  } else
    out.p = writeHbm(d);
  if (out.get() == nullptr) return nullptr;
  if (out.get() == Py_None) Py_RETURN_NOTIMPLEMENTED;
  // (the transfer is recorded from here on: dma's own steps)
  Owned core(slotAttr(tr, names.core));
  if (core.get() == nullptr) return nullptr;
  Owned queueObj(slotAttr(core.get(), names.dma_queue));
  if (queueObj.get() == nullptr) return nullptr;
  const long long queue = PyLong_AsLongLong(queueObj.get());
  if (queue == -1 && PyErr_Occurred()) return nullptr;
  if (queue < 0 || queue >= PyList_GET_SIZE(queueFields)) {
    PyErr_SetString(PyExc_ValueError, "dma_plain: the core's DMA queue is out of range");
    return nullptr;
  }
  Owned next(PyLong_FromLongLong((queue + 1) % dmaQueues));
  if (next.get() == nullptr || slotSet(core.get(), names.dma_queue, next.get()) < 0) return nullptr;
  Owned ins(PyList_New(1)), outs(PyList_New(1));
  if (ins.get() == nullptr || outs.get() == nullptr) return nullptr;
  PyList_SET_ITEM(ins.get(), 0, in.release());
  PyList_SET_ITEM(outs.get(), 0, out.release());
  PyObject* const rec[8] = {tr,        opcode, dmaEngine, ins.get(), outs.get(), PyList_GET_ITEM(queueFields, queue),
                            loc,       Py_None};
  static MethodSite recordSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
  return recordSite.call(names.record, rec, 8);
}

PyMethodDef dmaPlainDef = {
    "dma_plain", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(dmaPlain)), METH_FASTCALL,
    "dma_plain(tr, opcode, dst, src, loc, fresh): the Op of the commonest DMA transfer dst <- src, recorded; "
    "NotImplemented, having changed nothing, when the transfer needs the general path."};

void bindDmaPlain(py::module_& m) {
  Names n{};
  for (auto [slot, text] :
       {std::pair{&n.storage, "storage"}, {&n.kind, "kind"}, {&n.on_chip, "on_chip"}, {&n.shape, "shape"},
        {&n.strides, "strides"}, {&n.offset, "offset"}, {&n.checks, "checks"}, {&n.state, "state"},
        {&n.write_count, "write_count"}, {&n.forward, "forward"}, {&n.pending_zero, "pending_zero"},
        {&n.zero_init, "zero_init"}, {&n.core, "core"}, {&n.dma_queue, "dma_queue"}, {&n.record, "record"},
        {&n.write_fresh, "write_fresh"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  names = n;
  unitPair = Py_BuildValue("(ii)", 1, 1);
  if (unitPair == nullptr) throw py::error_already_set();
  m.attr("dma_plain") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&dmaPlainDef, nullptr, nullptr));
  m.def(
      "configure_dma_plain",
      [](py::type access, py::object plain, py::object write, py::object dma, py::str psum, py::str input,
         long long partitions, long long queues, py::list fields) {
        if (queues <= 0 || static_cast<long long>(fields.size()) != queues)
          throw py::value_error("configure_dma_plain: one fields dict per DMA queue");
        for (PyObject** slot : {&accessClass, &plainTileAccess, &writePlain, &dmaEngine, &psumKind, &inputKind,
                                &queueFields})
          Py_XDECREF(*slot);
        accessClass = access.inc_ref().ptr();
        plainTileAccess = plain.inc_ref().ptr();
        writePlain = write.inc_ref().ptr();
        dmaEngine = dma.inc_ref().ptr();
        psumKind = psum.inc_ref().ptr();
        inputKind = input.inc_ref().ptr();
        queueFields = fields.inc_ref().ptr();
        numPartitions = partitions;
        dmaQueues = queues;
      },
      py::arg("access_class"), py::arg("plain_tile_access"), py::arg("write_plain"), py::arg("dma_engine"),
      py::arg("psum"), py::arg("input_kind"), py::arg("num_partitions"), py::arg("dma_queues"),
      py::arg("queue_fields"),
      "Gives dma_plain the record's Access class, the tracer's operand functions, the DMA engine, the PSUM and "
      "kernel-input kinds, the partition count, the DMA queue count and each queue's fields dict.");
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindDmaPlain);

}  // namespace dma_plain
}  // namespace
}  // namespace nxs::py_bind
