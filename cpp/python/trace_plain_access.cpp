// The commonest operand of a traced instruction, `_core.nki.plain_tile_access(view, st, engine)`
// (neuronxsim.nki.tracer.plain_tile_access): the Access of a [P, F] view of an on-chip tile
// that starts in partition 0 and walks its row forwards, when `engine` takes it as it is; None
// for anything else (the tracer's general path then resolves and checks it).
//
//   the whole tile (offset 0, the storage's own shape and strides tuples):
//       the storage's full access, made once (st.state.full_access) from layout.full_pairs;
//   else a view whose access was made before: view.access;
//   else an on-chip [p, n] view with p <= partitions, offset < row, partition step row (or p 1),
//       free step s with 0 < s < row and the row's last element inside the row (or n 1; a [p]
//       view is a [p, 1] one):
//       [(row, p), (s, n)] ((1, 1) for n 1) from the view's offset, kept as view.access;
//   then: the PE takes it; other engines take at most the DVE/ACT free-size cap of the tile's
//       memory (max_free_psum / max_free_sbuf elements per partition), and GpSimd no PSUM.
//
// `write_plain(view, engine, matmul=False)` (neuronxsim.nki.tracer.Tracer.write_plain): the
// write of such a destination, when nothing about its storage needs the tracer's general write
// (no redirect forward, no partitions written beyond the written prefix, no bound checks; unless
// `matmul`, no pending nl.zeros memset and no open matmul group): its access with the storage's
// state updated (one more write, written partitions extended; unless `matmul`, no longer zeroed by
// nl.zeros and no longer unwritten for matmul groups); None, having changed nothing, otherwise.
//
// `configure_plain_tile_access(access_class, pe, pool, psum, num_partitions, max_free_psum,
// max_free_sbuf)` gives it the tracer's Access class, the PE and GpSimd engine objects, the PSUM
// kind string and the limits (from the target description, read in Python).
//
// Why C: this runs for nearly every operand of every traced instruction, and in Python it reads a
// dozen attributes one bytecode at a time.
#include "trace_equal.h"
#include "trace_ref.h"
#include "trace_record.h"

#include "bindings.h"
#include "trace_slotted.h"
#include "bir/Error.h"
#include "bir/Memory.h"
#include "bir/View.h"

#include <cstdint>
#include <cstring>

namespace nxs::py_bind {
namespace {

struct Names {
  PyObject *layout, *full_pairs, *offset, *shape, *strides, *state, *full_access, *row, *access, *on_chip, *kind;
  PyObject *storage, *forward, *later_partitions, *checks, *pending_zero, *groups, *open, *zero_init, *unwritten,
      *write_count, *written_partitions;
};
Names names{};
PyObject* accessClass = nullptr;
PyObject* pe = nullptr;
PyObject* pool = nullptr;
PyObject* psum = nullptr;
long long numPartitions = 0, maxFreePsum = 0, maxFreeSbuf = 0;

using Ref = nxs::py_bind::OwnedRef;

// One partition row of `row` elements (as float32: elements are what the tracer counts), the
// location the tile views of viewAccess are made over.
bir::MemoryLocation rowLocation(long long row) {
  bir::MemoryLocation loc;
  loc.type = bir::MemoryType::SB;
  loc.partitions = numPartitions;
  loc.bytes_per_partition = row * static_cast<long long>(sizeof(float));
  return loc;
}

// The access of a [p, n] view that has none yet, or None (a new reference; null on error). The
// access-pattern algebra is bir::View's: the view is the tile's first p partitions, sliced to n
// elements every s1 from column `offset` of the row (View::slice refuses a slice that starts in
// a later partition or leaves the row); its ap() is the access.
// The access patterns viewAccess worked out last, by what they are a function of (the partition
// count, the view's partitions, the row, the offset, the element count and step): a kernel's loops
// read the same few tile views instruction after instruction, and building the View to slice costs
// a vector and its checks each time. `inside` false: the slice left the row (a BIRError).
struct PatternEntry {
  bool used = false, inside = false;
  long long key[6] = {};
  long long values[4] = {};  // (pattern[0].step, .num, pattern[1].step, .num)
};
constexpr int kPatternBits = 6;
PatternEntry patterns[size_t{1} << kPatternBits];

size_t patternSlot(const long long* key) {
  uint64_t h = 0;
  for (int i = 0; i < 6; ++i) h = (h ^ static_cast<uint64_t>(key[i])) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> (64 - kPatternBits));
}

PyObject* viewAccess(PyObject* view, PyObject* st, PyObject* layout, PyObject* shape, PyObject* offsetObj,
                     long long offset, long long& n) {
  Ref onChip(slotAttr(st, names.on_chip));
  if (onChip.get() == nullptr) return nullptr;
  const int on = PyObject_IsTrue(onChip.get());
  if (on < 0) return nullptr;
  // (a [p] view, one element per partition, is a [p, 1] one: the tracer's access makes the same
  // pairs of both; a partial tile's cut of a reduction's [P] result is one)
  const Py_ssize_t rank = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : 0;
  if (!on || (rank != 2 && rank != 1)) return Py_NewRef(Py_None);
  long long p = 0, row = 0;
  n = 1;
  if (!intValue(Py_NewRef(PyTuple_GET_ITEM(shape, 0)), p) ||
      (rank == 2 && !intValue(Py_NewRef(PyTuple_GET_ITEM(shape, 1)), n)) || !intValue(slotAttr(layout, names.row), row))
    return nullptr;
  Ref strides(slotAttr(view, names.strides));
  if (strides.get() == nullptr) return nullptr;
  if (!PyTuple_Check(strides.get()) || PyTuple_GET_SIZE(strides.get()) != rank) return Py_NewRef(Py_None);
  long long s0 = 0, s1 = 1;
  if (!intValue(Py_NewRef(PyTuple_GET_ITEM(strides.get(), 0)), s0) ||
      (rank == 2 && !intValue(Py_NewRef(PyTuple_GET_ITEM(strides.get(), 1)), s1)))
    return nullptr;
  // (a tile view's partition dim steps one row: the hardware has no other partition stride, and
  // View has none; a backward or repeating free dim is the general path's, as is an offset past
  // the tile's first row)
  if (p > numPartitions || (p != 1 && s0 != row) || (n != 1 && s1 < 1) || offset >= row) return Py_NewRef(Py_None);
  const long long step = n == 1 ? 1 : s1;
  const long long key[6] = {numPartitions, p, row, offset, n, step};
  PatternEntry& known = patterns[patternSlot(key)];
  if (!known.used || std::memcmp(known.key, key, sizeof key) != 0) {
    known.used = false;
    try {
      bir::MemoryLocation loc = rowLocation(row);
      const bir::AccessPattern ap = bir::View::onChip(&loc, bir::DType::float32, p, {row}).slice(0, offset, n, step).ap();
      known.inside = true;
      const long long values[4] = {ap.pattern[0].step, ap.pattern[0].num, ap.pattern[1].step, ap.pattern[1].num};
      std::memcpy(known.values, values, sizeof values);
    } catch (const bir::BIRError&) {  // (the slice leaves the row)
      known.inside = false;
    }
    std::memcpy(known.key, key, sizeof key);
    known.used = true;
  }
  if (!known.inside) return Py_NewRef(Py_None);
  // [(row, p), (step, num)] ((1, 1) for a single column): the shared list of those values when
  // there is one (the list, its tuples and ints are otherwise made only to be dropped)
  Ref acc(newAccessRecordOfValues(accessClass, st, offsetObj, known.values, 2));
  if (acc.get() == nullptr || slotSet(view, names.access, acc.get()) < 0) return nullptr;
  return acc.release();
}

PyObject* plainTileAccess(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "plain_tile_access(view, st, engine)");
    return nullptr;
  }
  if (accessClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "plain_tile_access: not configured");
    return nullptr;
  }
  PyObject *view = args[0], *st = args[1], *engine = args[2];
  Ref layout(slotAttr(st, names.layout));
  if (layout.get() == nullptr) return nullptr;
  Ref fullPairs(slotAttr(layout.get(), names.full_pairs));
  Ref offsetObj(slotAttr(view, names.offset));
  if (fullPairs.get() == nullptr || offsetObj.get() == nullptr) return nullptr;
  long long offset = 0;
  if (!intValue(Py_NewRef(offsetObj.get()), offset)) return nullptr;
  Ref acc(nullptr);
  long long n = 0;
  bool whole = false;
  if (fullPairs.get() != Py_None && offset == 0) {
    Ref vShape(slotAttr(view, names.shape)), sShape(slotAttr(st, names.shape));
    Ref vStrides(slotAttr(view, names.strides)), sStrides(slotAttr(st, names.strides));
    if (!vShape.get() || !sShape.get() || !vStrides.get() || !sStrides.get()) return nullptr;
    whole = vShape.get() == sShape.get() && vStrides.get() == sStrides.get();
  }
  if (whole) {  // the whole tile: the storage's full access
    Ref state(slotAttr(st, names.state));
    if (state.get() == nullptr) return nullptr;
    acc.p = slotAttr(state.get(), names.full_access);
    if (acc.get() == nullptr) return nullptr;
    if (acc.get() == Py_None) {
      Py_DECREF(acc.release());
      acc.p = newAccessRecord(accessClass, st, offsetObj.get(), fullPairs.get());
      if (acc.get() == nullptr || slotSet(state.get(), names.full_access, acc.get()) < 0) return nullptr;
    }
    if (!intValue(slotAttr(layout.get(), names.row), n)) return nullptr;
  } else {
    acc.p = slotAttr(view, names.access);  // (made by an earlier use of this view)
    if (acc.get() == nullptr) return nullptr;
    if (acc.get() != Py_None) {
      PyObject* pairs = PyTuple_Check(acc.get()) && PyTuple_GET_SIZE(acc.get()) > access_pos::pairs ? PyTuple_GET_ITEM(acc.get(), access_pos::pairs)
                                                                                     : nullptr;
      PyObject* free = pairs != nullptr && PyList_Check(pairs) && PyList_GET_SIZE(pairs) > 1
                           ? PyList_GET_ITEM(pairs, 1)
                           : nullptr;
      if (free == nullptr || !PyTuple_Check(free) || PyTuple_GET_SIZE(free) != 2) {
        PyErr_SetString(PyExc_TypeError, "plain_tile_access: a view's access has no [partition, free] pairs");
        return nullptr;
      }
      if (!intValue(Py_NewRef(PyTuple_GET_ITEM(free, 1)), n)) return nullptr;
    } else {
      Py_DECREF(acc.release());
      Ref shape(slotAttr(view, names.shape));
      if (shape.get() == nullptr) return nullptr;
      acc.p = viewAccess(view, st, layout.get(), shape.get(), offsetObj.get(), offset, n);
      if (acc.get() == nullptr || acc.get() == Py_None) return acc.release();
    }
  }
  if (engine != pe) {
    Ref kind(slotAttr(st, names.kind));
    if (kind.get() == nullptr) return nullptr;
    const int isPsum = kind.get() == psum ? 1 : equalTo(kind.get(), psum);
    if (isPsum < 0) return nullptr;
    if (isPsum ? (engine == pool || n > maxFreePsum) : n > maxFreeSbuf) return Py_NewRef(Py_None);
  }
  return acc.release();
}

// Whether o.name is None (-1 with an error set).
int isNone(PyObject* o, PyObject* name) {
  PyObject* v = slotAttr(o, name);
  if (v == nullptr) return -1;
  Py_DECREF(v);
  return v == Py_None;
}

// Whether o.name is true (-1 with an error set).
int isTrue(PyObject* o, PyObject* name) {
  PyObject* v = slotAttr(o, name);
  if (v == nullptr) return -1;
  const int t = PyObject_IsTrue(v);
  Py_DECREF(v);
  return t;
}

PyObject* writePlain(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2 || nargs > 3) {
    PyErr_SetString(PyExc_TypeError, "write_plain(view, engine, matmul=False)");
    return nullptr;
  }
  PyObject *view = args[0], *engine = args[1];
  const int matmul = nargs > 2 ? PyObject_IsTrue(args[2]) : 0;
  if (matmul < 0) return nullptr;
  Ref st(slotAttr(view, names.storage));
  if (st.get() == nullptr) return nullptr;
  Ref state(slotAttr(st.get(), names.state));
  if (state.get() == nullptr) return nullptr;
  PyObject* s = state.get();
  int ok = isNone(s, names.forward);
  if (ok == 1) ok = isNone(s, names.later_partitions);
  if (ok == 1) {
    const int checked = isTrue(view, names.checks);
    ok = checked < 0 ? -1 : !checked;
  }
  Ref groups(nullptr);
  if (ok == 1) {
    groups.p = slotAttr(s, names.groups);
    if (groups.get() == nullptr) return nullptr;
  }
  if (ok == 1 && !matmul) {
    ok = isNone(s, names.pending_zero);
    if (ok == 1 && groups.get() != Py_None) {
      const int open = isTrue(groups.get(), names.open);
      ok = open < 0 ? -1 : !open;
    }
  }
  if (ok < 0) return nullptr;
  if (ok == 0) return Py_NewRef(Py_None);
  PyObject* const accessArgs[3] = {view, st.get(), engine};
  Ref acc(plainTileAccess(nullptr, accessArgs, 3));
  if (acc.get() == nullptr || acc.get() == Py_None) return acc.release();
  if (!matmul) {
    if (slotSet(s, names.zero_init, Py_False) < 0) return nullptr;
    if (groups.get() != Py_None && slotSet(groups.get(), names.unwritten, Py_False) < 0) return nullptr;
  }
  long long count = 0, written = 0, p = 0;
  if (!intValue(slotAttr(s, names.write_count), count) || !intValue(slotAttr(s, names.written_partitions), written))
    return nullptr;
  PyObject* pairs = PyTuple_GET_ITEM(acc.get(), access_pos::pairs);  // (an Access: plain_tile_access made or kept it)
  PyObject* partitionPair = PySequence_Check(pairs) ? PySequence_GetItem(pairs, 0) : nullptr;
  if (partitionPair == nullptr) return nullptr;
  PyObject* pObj = PySequence_GetItem(partitionPair, 1);
  Py_DECREF(partitionPair);
  if (!intValue(pObj, p)) return nullptr;
  Ref newCount(PyLong_FromLongLong(count + 1));
  if (newCount.get() == nullptr || slotSet(s, names.write_count, newCount.get()) < 0) return nullptr;
  if (p > written) {
    Ref partitions(PyLong_FromLongLong(p));
    if (partitions.get() == nullptr || slotSet(s, names.written_partitions, partitions.get()) < 0)
      return nullptr;
  }
  return acc.release();
}

PyMethodDef writePlainDef = {
    "write_plain", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(writePlain)), METH_FASTCALL,
    "write_plain(view, engine, matmul=False): the write of a plain destination (see plain_tile_access) when "
    "nothing about its storage needs the tracer's general write, its state updated; None otherwise."};

PyMethodDef plainTileAccessDef = {
    "plain_tile_access", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(plainTileAccess)),
    METH_FASTCALL,
    "plain_tile_access(view, st, engine): the Access of the commonest operand, a [P, F] view from "
    "partition 0 that walks its row forwards and that engine may use as it is; None for anything else."};

void bindPlainAccess(py::module_& m) {
  Names n{};
  for (auto [slot, text] : {std::pair{&n.layout, "layout"}, {&n.full_pairs, "full_pairs"}, {&n.offset, "offset"},
                            {&n.shape, "shape"}, {&n.strides, "strides"}, {&n.state, "state"},
                            {&n.full_access, "full_access"}, {&n.row, "row"}, {&n.access, "access"},
                            {&n.on_chip, "on_chip"}, {&n.kind, "kind"}, {&n.storage, "storage"},
                            {&n.forward, "forward"}, {&n.later_partitions, "later_partitions"},
                            {&n.checks, "checks"}, {&n.pending_zero, "pending_zero"}, {&n.groups, "groups"},
                            {&n.open, "open"}, {&n.zero_init, "zero_init"}, {&n.unwritten, "unwritten"},
                            {&n.write_count, "write_count"}, {&n.written_partitions, "written_partitions"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  names = n;
  m.attr("plain_tile_access") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&plainTileAccessDef, nullptr, nullptr));
  m.attr("write_plain") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&writePlainDef, nullptr, nullptr));
  m.def(
      "configure_plain_tile_access",
      [](py::object access, py::object peEngine, py::object poolEngine, py::str psumKind, long long partitions,
         long long freePsum, long long freeSbuf) {
        for (PyObject** slot : {&accessClass, &pe, &pool, &psum}) Py_XDECREF(*slot);
        accessClass = access.inc_ref().ptr();
        pe = peEngine.inc_ref().ptr();
        pool = poolEngine.inc_ref().ptr();
        psum = psumKind.inc_ref().ptr();
        numPartitions = partitions;
        maxFreePsum = freePsum;
        maxFreeSbuf = freeSbuf;
      },
      py::arg("access_class"), py::arg("pe"), py::arg("pool"), py::arg("psum"), py::arg("num_partitions"),
      py::arg("max_free_psum"), py::arg("max_free_sbuf"),
      "Gives plain_tile_access the tracer's Access class, engine objects, PSUM kind and limits.");
}

NXS_REGISTER_SUBMODULE(nki, 45, "the NKI tracer's hot paths", bindPlainAccess);

}  // namespace
}  // namespace nxs::py_bind
