// Five methods of the NKI tracer (neuronxsim.nki.tracer.Tracer), in C, installed on the class as
// method descriptors by `tracer_method(cls, name)`:
//
//   record(opcode, engine, ins, outs, fields, loc, out_box=None, zero_fill=False) -> Op
//       one more instruction appended to `self.ops` (an Op made by new_op, with `self.loop` and its
//       position), when the cap still allows one (`self.recordable`, counted down); at the cap,
//       `self._refuse_cap(loc)` raises the error.
//   new_result(kind, dtype, shape, name, loc) -> Tensor
//       a fresh [P, F] or [P] tile for an instruction's result: a Storage (its layout shared by
//       shape through `self.tile_layouts`, made by `self._tile_layout(kind, shape)` the first
//       time) appended to `self.storages`, with a fresh StorageState, and its full view. Any
//       other shape: `self._new_result_general(...)`.
//   fresh_result(value) -> Op | None
//       the instruction that just produced `value`, if `value` is an untouched full view of a
//       temporary that instruction alone wrote (the test `dst[...] = expr` makes before it
//       redirects the instruction), else None.
//   zero_fill(view, loc) -> Op
//       nl.zeros' Memset of the whole storage of `view` (see Tracer._zero_fill_general, the Python
//       definition), for a view plain_tile_access gives the DVE's access of; else
//       `self._zero_fill_general(view, loc)`.
//   write_fresh(view) -> Access
//       the write of a tile an instruction creates for its result (nothing to check yet): its state
//       written once over all its partitions; the access of the whole tile, made once from the
//       layout's full pairs (state.full_access); for a layout without them, `self.access(view, None)`.
//
// `configure_tracer_methods(op_class, storage_class, tensor_class, new_state, matmult, access_class)`
// gives them the record's Op class, the Storage and Tensor classes (slotted: made with new_slotted's slot
// order), the StorageState factory and the Matmult opcode object.
//
// `configure_zero_fill(plain_tile_access, memset, dve, fields)` gives zero_fill the tracer's
// plain_tile_access, the Memset opcode, the Vector Engine and the fields of every nl.zeros memset.
//
// Why C: every traced instruction calls record once and new_result about twice, and most
// `dst[...] = expr` call fresh_result; matmul kernels make an nl.zeros tile per accumulation group; as Python methods they cost a frame and a few dozen
// bytecodes each. The Python code states the same steps: see the docstrings in tracer.py.
#include "trace_equal.h"
#include "trace_ref.h"
#include "trace_method_site.h"
#include "trace_record.h"
#include "trace_slotted.h"

#include "bindings.h"

#include <array>

namespace nxs::py_bind {
namespace {
namespace tracer_methods {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

struct Names {
  PyObject *recordable, *ops, *loop, *refuse_cap, *storages, *tile_layouts, *tile_layout, *on_chip, *strides,
      *new_result_general, *storage, *state, *write_count, *forward, *offset, *shape, *core, *redirected, *layout,
      *full_pairs, *partitions, *written_partitions, *full_access, *access, *pending_zero, *zero_init,
      *zero_fill_general;
};
Names names{};
PyObject* opClass = nullptr;
PyObject* storageClass = nullptr;
PyObject* tensorClass = nullptr;
PyObject* newState = nullptr;
// When new_state is functools.partial(new_slotted, cls, *values) (tracer.new_state): cls and the
// tuple of values, for newResult to make the state as that call would, without the partial's call;
// else null (newResult calls new_state).
PyObject *stateClass = nullptr, *stateValues = nullptr;
PyObject* matmult = nullptr;
PyObject* accessClass = nullptr;
PyObject* one = nullptr;         // the int 1
PyObject* zero = nullptr;        // the int 0
PyObject* emptyTuple = nullptr;  // ()
// From configure_zero_fill.
PyObject *plainTileAccess = nullptr, *memset = nullptr, *dve = nullptr, *zeroFillFields = nullptr;

using Owned = nxs::py_bind::OwnedRef;

bool configured() {
  if (opClass != nullptr) return true;
  PyErr_SetString(PyExc_RuntimeError, "the tracer's C methods are not configured");
  return false;
}

// Op fields by position (neuronxsim.nki.record.Op).
constexpr Py_ssize_t kIns = op_pos::ins, kOuts = op_pos::outs, kOpcode = op_pos::opcode, kIndex = op_pos::index,
                     kZeroFill = op_pos::zero_fill;
constexpr Py_ssize_t kAccessStorage = access_pos::storage;

PyObject* record(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 6 || nargs > 8) {
    PyErr_SetString(PyExc_TypeError, "record(opcode, engine, ins, outs, fields, loc, out_box=None, zero_fill=False)");
    return nullptr;
  }
  if (!configured()) return nullptr;
  Owned recordable(slotAttr(self, names.recordable));
  if (recordable.get() == nullptr) return nullptr;
  const long long left = PyLong_AsLongLong(recordable.get());
  if (left == -1 && PyErr_Occurred()) return nullptr;
  if (left == 0) {  // (the refusal's wording lives in Python)
    Owned refused(PyObject_CallMethodOneArg(self, names.refuse_cap, args[5]));
    if (refused.get() != nullptr)
      PyErr_SetString(PyExc_RuntimeError, "record: Tracer._refuse_cap returned instead of raising");
    return nullptr;
  }
  Owned ops(slotAttr(self, names.ops));
  Owned loop(slotAttr(self, names.loop));
  if (ops.get() == nullptr || loop.get() == nullptr) return nullptr;
  if (!PyList_CheckExact(ops.get())) {
    PyErr_SetString(PyExc_TypeError, "record: Tracer.ops must be a list");
    return nullptr;
  }
  Owned count(PyLong_FromLongLong(left - 1));
  Owned index(PyLong_FromSsize_t(PyList_GET_SIZE(ops.get())));
  if (count.get() == nullptr || index.get() == nullptr) return nullptr;
  PyObject* const opArgs[11] = {opClass, args[0], args[1], args[2],  args[3],
                                args[4], args[5], loop.get(), index.get(), nargs > 6 ? args[6] : Py_None,
                                nargs > 7 ? args[7] : Py_False};
  Owned op(newOpRecord(opArgs, 11));
  if (op.get() == nullptr || PyList_Append(ops.get(), op.get()) < 0 ||
      slotSet(self, names.recordable, count.get()) < 0)
    return nullptr;
  return op.release();
}

// What newResult found in a tracer's tile_layouts for a shape of exact ints: Tracer.tile_layouts is
// the tracer's memo (Tracer._tile_layout adds a shape's layout the first time; nothing replaces or
// removes one), so while `dict` is that tracer's dict (held: its address cannot come back as
// another's) the layout found for (p, f) is what the dict answers again. 64 entries, picked by
// the shape: a trace makes results of a handful of shapes. Why: the dict lookup hashes the shape
// tuple and compares it with the key (a new tuple each time), some 350 instructions of the
// machine per result.
namespace layout_memo {
struct Entry {
  Py_ssize_t rank = 0;  // (0: empty)
  long long p = 0, f = 0;
  PyObject* layout = nullptr;
};
constexpr size_t kEntries = 64;  // (slot's hash keeps the top 6 bits)
PyObject* dict = nullptr;
std::array<Entry, kEntries> entries{};

// The shape's sizes when it is a tuple of one or two exact ints that fit: false otherwise (no
// error set).
bool sizes(PyObject* shape, Py_ssize_t& rank, long long& p, long long& f) {
  rank = PyTuple_GET_SIZE(shape);
  if (rank < 1 || rank > 2) return false;
  long long v[2] = {0, 0};
  for (Py_ssize_t i = 0; i < rank; ++i) {
    PyObject* item = PyTuple_GET_ITEM(shape, i);
    if (!PyLong_CheckExact(item)) return false;
    int overflow = 0;
    v[i] = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (overflow != 0 || (v[i] == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
  }
  p = v[0];
  f = v[1];
  return true;
}

// (a multiplicative hash: tile sizes are mostly multiples of 8, which p * 31 + f modulo 8 would
// send to one slot)
Entry& slot(long long p, long long f) {
  const uint64_t key = static_cast<uint64_t>(p) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(f);
  return entries[(key * 0xC2B2AE3D27D4EB4Full) >> 58];
}

// The layout remembered for `layouts` and the shape (borrowed), or null.
PyObject* find(PyObject* layouts, Py_ssize_t rank, long long p, long long f) {
  if (layouts != dict) return nullptr;
  const Entry& e = slot(p, f);
  return e.rank == rank && e.p == p && e.f == f ? e.layout : nullptr;
}

void remember(PyObject* layouts, Py_ssize_t rank, long long p, long long f, PyObject* layout) {
  if (layouts != dict) {  // (another tracer's dict: forget the last one's)
    for (Entry& e : entries) {
      Py_CLEAR(e.layout);
      e.rank = 0;
    }
    Py_XSETREF(dict, Py_NewRef(layouts));
  }
  Entry& e = slot(p, f);
  Py_XSETREF(e.layout, Py_NewRef(layout));
  e.rank = rank;
  e.p = p;
  e.f = f;
}
}  // namespace layout_memo

PyObject* newResult(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "new_result(kind, dtype, shape, name, loc)");
    return nullptr;
  }
  if (!configured()) return nullptr;
  PyObject *kind = args[0], *dtype = args[1], *shape = args[2], *name = args[3], *loc = args[4];
  if (!PyTuple_CheckExact(shape) || PyTuple_GET_SIZE(shape) > 2) {
    PyObject* const general[6] = {self, kind, dtype, shape, name, loc};
    return PyObject_VectorcallMethod(names.new_result_general, general, 6, nullptr);
  }
  Owned layouts(slotAttr(self, names.tile_layouts));
  if (layouts.get() == nullptr) return nullptr;
  if (!PyDict_CheckExact(layouts.get())) {
    PyErr_SetString(PyExc_TypeError, "new_result: Tracer.tile_layouts must be a dict");
    return nullptr;
  }
  Py_ssize_t rank = 0;
  long long p = 0, f = 0;
  const bool plainShape = layout_memo::sizes(shape, rank, p, f);
  Owned layout(plainShape ? Py_XNewRef(layout_memo::find(layouts.get(), rank, p, f)) : nullptr);
  if (layout.get() == nullptr) {
    layout.p = Py_XNewRef(PyDict_GetItemWithError(layouts.get(), shape));
    if (layout.get() == nullptr) {
      if (PyErr_Occurred()) return nullptr;
      PyObject* const layoutArgs[3] = {self, kind, shape};
      layout.p = PyObject_VectorcallMethod(names.tile_layout, layoutArgs, 3, nullptr);
      if (layout.get() == nullptr) return nullptr;
    } else if (plainShape) {  // (found in the dict: what it answers for this shape from now on)
      layout_memo::remember(layouts.get(), rank, p, f, layout.get());
    }
  }
  Owned storages(slotAttr(self, names.storages));
  Owned onChip(slotAttr(layout.get(), names.on_chip));
  Owned strides(slotAttr(layout.get(), names.strides));
  Owned state(stateClass != nullptr ? newSlottedObject(stateClass, &PyTuple_GET_ITEM(stateValues, 0),
                                                       PyTuple_GET_SIZE(stateValues))
                                    : PyObject_CallNoArgs(newState));
  if (storages.get() == nullptr || onChip.get() == nullptr || strides.get() == nullptr || state.get() == nullptr)
    return nullptr;
  if (!PyList_CheckExact(storages.get())) {
    PyErr_SetString(PyExc_TypeError, "new_result: Tracer.storages must be a list");
    return nullptr;
  }
  Owned sid(PyLong_FromSsize_t(PyList_GET_SIZE(storages.get())));
  if (sid.get() == nullptr) return nullptr;
  // (Storage's slots in order: sid, kind, dtype, shape, layout, on_chip, strides, name, hint, created_at,
  // explicit_name, placement, state; tracer.py checks that order at import)
  PyObject* const slots[13] = {sid.get(), kind,     dtype,   shape,    layout.get(), onChip.get(), strides.get(),
                               Py_None,   name,     loc,     Py_False, Py_None,      state.get()};
  Owned st(newSlottedObject(storageClass, slots, 13));
  if (st.get() == nullptr || PyList_Append(storages.get(), st.get()) < 0) return nullptr;
  // (Tensor's: storage, offset, shape, strides, checks; the rest None)
  PyObject* const view[5] = {st.get(), zero, shape, strides.get(), emptyTuple};
  return newSlottedObject(tensorClass, view, 5);
}

// Whether some access of the list `accs` from `from` on is over `st` (-1 with an error set).
int touches(PyObject* accs, Py_ssize_t from, PyObject* st) {
  if (!PyList_Check(accs) && !PyTuple_Check(accs)) {
    PyErr_SetString(PyExc_TypeError, "fresh_result: an op's operands must be a list");
    return -1;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(accs);
  for (Py_ssize_t i = from; i < n; ++i) {
    PyObject* acc = PySequence_Fast_GET_ITEM(accs, i);
    if (!PyTuple_Check(acc) || PyTuple_GET_SIZE(acc) <= kAccessStorage) {
      PyErr_SetString(PyExc_TypeError, "fresh_result: an operand is not an Access");
      return -1;
    }
    if (PyTuple_GET_ITEM(acc, kAccessStorage) == st) return 1;
  }
  return 0;
}

// Whether a == b, by identity first (a result's view shares its storage's tuples); -1 on error.
int same(PyObject* a, PyObject* b) { return a == b ? 1 : equalTo(a, b); }

PyObject* freshResult(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "fresh_result(value)");
    return nullptr;
  }
  if (!configured()) return nullptr;
  PyObject* value = args[0];
  Owned ops(slotAttr(self, names.ops));
  if (ops.get() == nullptr) return nullptr;
  if (!PyList_CheckExact(ops.get())) {
    PyErr_SetString(PyExc_TypeError, "fresh_result: Tracer.ops must be a list");
    return nullptr;
  }
  const Py_ssize_t n = PyList_GET_SIZE(ops.get());
  if (n == 0) Py_RETURN_NONE;
  PyObject* op = PyList_GET_ITEM(ops.get(), n - 1);
  if (!PyTuple_Check(op) || PyTuple_GET_SIZE(op) <= kZeroFill) {
    PyErr_SetString(PyExc_TypeError, "fresh_result: the last op is not an Op");
    return nullptr;
  }
  PyObject* outs = PyTuple_GET_ITEM(op, kOuts);
  const int hasOuts = PyObject_IsTrue(outs);
  if (hasOuts <= 0) return hasOuts < 0 ? nullptr : Py_NewRef(Py_None);
  // the op's first output as redirects left it (core.first_output)
  Owned core(slotAttr(self, names.core));
  if (core.get() == nullptr) return nullptr;
  Owned redirected(slotAttr(core.get(), names.redirected));
  if (redirected.get() == nullptr) return nullptr;
  PyObject* out = redirectedOutput(redirected.get(), PyTuple_GET_ITEM(op, kIndex));  // (borrowed)
  if (out == nullptr) {
    if (PyErr_Occurred()) return nullptr;
    Owned first(PySequence_GetItem(outs, 0));
    if (first.get() == nullptr) return nullptr;
    out = first.get();  // (outs holds it)
  }
  if (!PyTuple_Check(out) || PyTuple_GET_SIZE(out) <= kAccessStorage) {
    PyErr_SetString(PyExc_TypeError, "fresh_result: an output is not an Access");
    return nullptr;
  }
  Owned st(slotAttr(value, names.storage));
  if (st.get() == nullptr) return nullptr;
  if (PyTuple_GET_ITEM(out, kAccessStorage) != st.get()) Py_RETURN_NONE;
  Owned s(slotAttr(st.get(), names.state));
  if (s.get() == nullptr) return nullptr;
  Owned count(slotAttr(s.get(), names.write_count));
  Owned forward(slotAttr(s.get(), names.forward));
  Owned offset(slotAttr(value, names.offset));
  if (count.get() == nullptr || forward.get() == nullptr || offset.get() == nullptr) return nullptr;
  const long long written = PyLong_AsLongLong(count.get());
  if (written == -1 && PyErr_Occurred()) return nullptr;
  if (written != 1 || forward.get() != Py_None) Py_RETURN_NONE;
  int t = PyObject_IsTrue(PyTuple_GET_ITEM(op, kZeroFill));
  if (t == 0) t = PyObject_IsTrue(offset.get());
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_None);
  Owned vShape(slotAttr(value, names.shape)), sShape(slotAttr(st.get(), names.shape));
  Owned vStrides(slotAttr(value, names.strides)), sStrides(slotAttr(st.get(), names.strides));
  if (!vShape.get() || !sShape.get() || !vStrides.get() || !sStrides.get()) return nullptr;
  t = same(vShape.get(), sShape.get());
  if (t == 1) t = same(vStrides.get(), sStrides.get());
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_None);  // (not a full view)
  if (PyTuple_GET_ITEM(op, kOpcode) == matmult) return Py_NewRef(op);  // (it reads SBUF, writes one PSUM tile)
  t = touches(PyTuple_GET_ITEM(op, kIns), 0, st.get());
  if (t == 0) t = touches(outs, 1, st.get());
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_None);
  return Py_NewRef(op);
}

PyObject* writeFresh(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "write_fresh(view)");
    return nullptr;
  }
  if (!configured()) return nullptr;
  PyObject* view = args[0];
  Owned st(slotAttr(view, names.storage));
  if (st.get() == nullptr) return nullptr;
  Owned s(slotAttr(st.get(), names.state));
  Owned layout(slotAttr(st.get(), names.layout));
  if (s.get() == nullptr || layout.get() == nullptr) return nullptr;
  Owned partitions(slotAttr(layout.get(), names.partitions));
  if (partitions.get() == nullptr || slotSet(s.get(), names.write_count, one) < 0 ||
      slotSet(s.get(), names.written_partitions, partitions.get()) < 0)
    return nullptr;
  Owned fullPairs(slotAttr(layout.get(), names.full_pairs));
  if (fullPairs.get() == nullptr) return nullptr;
  if (fullPairs.get() == Py_None) {
    PyObject* const access[3] = {self, view, Py_None};
    return PyObject_VectorcallMethod(names.access, access, 3, nullptr);
  }
  Owned acc(slotAttr(s.get(), names.full_access));
  if (acc.get() == nullptr) return nullptr;
  if (acc.get() != Py_None) return acc.release();
  Owned made(newAccessRecord(accessClass, st.get(), zero, fullPairs.get()));
  if (made.get() == nullptr || slotSet(s.get(), names.full_access, made.get()) < 0) return nullptr;
  return made.release();
}

// Tracer._zero_fill_general's steps for a view plain_tile_access takes:
//     op = self.record(Memset, DVE, [], [acc], fields, loc, None, True)
//     s.pending_zero = op; s.write_count += 1
//     s.written_partitions = st.layout.partitions; s.zero_init = True
PyObject* zeroFill(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "zero_fill(view, loc)");
    return nullptr;
  }
  if (!configured()) return nullptr;
  PyObject *view = args[0], *loc = args[1];
  Owned acc(nullptr), st(nullptr);
  if (plainTileAccess != nullptr && Py_TYPE(view) == reinterpret_cast<PyTypeObject*>(tensorClass)) {
    st.p = slotAttr(view, names.storage);
    if (st.get() == nullptr) return nullptr;
    PyObject* const access[3] = {view, st.get(), dve};
    acc.p = callFast(plainTileAccess, access, 3);
    if (acc.get() == nullptr) return nullptr;
  }
  if (acc.get() == nullptr || acc.get() == Py_None) {  // (nothing changed yet)
    PyObject* const general[3] = {self, view, loc};
    return PyObject_VectorcallMethod(names.zero_fill_general, general, 3, nullptr);
  }
  Owned s(slotAttr(st.get(), names.state)), layout(slotAttr(st.get(), names.layout));
  Owned ins(PyList_New(0)), outs(PyList_New(1));
  if (s.get() == nullptr || layout.get() == nullptr || ins.get() == nullptr || outs.get() == nullptr) return nullptr;
  PyList_SET_ITEM(outs.get(), 0, acc.release());
  PyObject* const rec[8] = {memset, dve, ins.get(), outs.get(), zeroFillFields, loc, Py_None, Py_True};
  Owned op(record(self, rec, 8));
  if (op.get() == nullptr) return nullptr;
  Owned count(slotAttr(s.get(), names.write_count)), partitions(slotAttr(layout.get(), names.partitions));
  if (count.get() == nullptr || partitions.get() == nullptr) return nullptr;
  Owned more(PyNumber_Add(count.get(), one));
  if (more.get() == nullptr || slotSet(s.get(), names.pending_zero, op.get()) < 0 ||
      slotSet(s.get(), names.write_count, more.get()) < 0 ||
      slotSet(s.get(), names.written_partitions, partitions.get()) < 0 ||
      slotSet(s.get(), names.zero_init, Py_True) < 0)
    return nullptr;
  return op.release();
}

PyMethodDef methods[] = {
    {"record", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(record)), METH_FASTCALL,
     "record(opcode, engine, ins, outs, fields, loc, out_box=None, zero_fill=False): appends an instruction "
     "to the record (see neuronxsim.nki.tracer.Tracer)."},
    {"new_result", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(newResult)), METH_FASTCALL,
     "new_result(kind, dtype, shape, name, loc): a fresh temporary tile for an instruction's result."},
    {"fresh_result", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(freshResult)), METH_FASTCALL,
     "fresh_result(value): the instruction that just produced value, if value is an untouched temporary it "
     "alone wrote; else None."},
    {"write_fresh", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(writeFresh)), METH_FASTCALL,
     "write_fresh(view): the write of a tile an instruction creates for its result (see "
     "neuronxsim.nki.tracer.Tracer)."},
    {"zero_fill", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(zeroFill)), METH_FASTCALL,
     "zero_fill(view, loc): records nl.zeros' Memset of the storage of view (see neuronxsim.nki.tracer.Tracer)."},
};

void bindTracerMethods(py::module_& m) {
  Names n{};
  for (auto [slot, text] :
       {std::pair{&n.recordable, "recordable"}, {&n.ops, "ops"}, {&n.loop, "loop"}, {&n.refuse_cap, "_refuse_cap"},
        {&n.storages, "storages"}, {&n.tile_layouts, "tile_layouts"}, {&n.tile_layout, "_tile_layout"},
        {&n.on_chip, "on_chip"}, {&n.strides, "strides"}, {&n.new_result_general, "_new_result_general"},
        {&n.storage, "storage"}, {&n.state, "state"}, {&n.write_count, "write_count"}, {&n.forward, "forward"},
        {&n.offset, "offset"}, {&n.shape, "shape"}, {&n.core, "core"}, {&n.redirected, "redirected"},
        {&n.layout, "layout"}, {&n.full_pairs, "full_pairs"}, {&n.partitions, "partitions"},
        {&n.written_partitions, "written_partitions"}, {&n.full_access, "full_access"}, {&n.access, "access"},
        {&n.pending_zero, "pending_zero"}, {&n.zero_init, "zero_init"}, {&n.zero_fill_general, "_zero_fill_general"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  names = n;
  zero = PyLong_FromLong(0);
  one = PyLong_FromLong(1);
  emptyTuple = PyTuple_New(0);
  if (zero == nullptr || one == nullptr || emptyTuple == nullptr) throw py::error_already_set();
  m.def(
      "configure_tracer_methods",
      [m](py::type op, py::type storage, py::type tensor, py::object state, py::object matmultOpcode,
          py::type access) {
        for (PyObject** slot : {&opClass, &storageClass, &tensorClass, &newState, &matmult, &accessClass, &stateClass,
                                &stateValues})
          Py_XDECREF(*slot);
        stateClass = stateValues = nullptr;
        // (new_state's call is new_slotted(cls, *values) when it is a partial of new_slotted with no keywords)
        py::object partial = py::module_::import("functools").attr("partial");
        if (py::isinstance(state, partial) && state.attr("func").is(m.attr("new_slotted")) &&
            py::len(state.attr("keywords")) == 0) {
          py::tuple args = state.attr("args");
          if (args.size() >= 1 && PyType_Check(args[0].ptr())) {
            stateClass = py::object(args[0]).release().ptr();
            stateValues = py::tuple(args[py::slice(1, static_cast<py::ssize_t>(args.size()), 1)]).release().ptr();
          }
        }
        accessClass = access.inc_ref().ptr();
        opClass = op.inc_ref().ptr();
        storageClass = storage.inc_ref().ptr();
        tensorClass = tensor.inc_ref().ptr();
        newState = state.inc_ref().ptr();
        matmult = matmultOpcode.inc_ref().ptr();
      },
      py::arg("op_class"), py::arg("storage_class"), py::arg("tensor_class"), py::arg("new_state"),
      py::arg("matmult"), py::arg("access_class"),
      "Gives the tracer's C methods the record's Op class, the Storage and Tensor classes, the StorageState "
      "factory, the Matmult opcode and the record's Access class.");
  m.def(
      "configure_zero_fill",
      [](py::object plain, py::object memsetOpcode, py::object vectorEngine, py::dict fields) {
        for (PyObject** slot : {&plainTileAccess, &memset, &dve, &zeroFillFields}) Py_XDECREF(*slot);
        plainTileAccess = plain.inc_ref().ptr();
        memset = memsetOpcode.inc_ref().ptr();
        dve = vectorEngine.inc_ref().ptr();
        zeroFillFields = fields.inc_ref().ptr();
      },
      py::arg("plain_tile_access"), py::arg("memset"), py::arg("dve"), py::arg("fields"),
      "Gives the tracer's C zero_fill the tracer's plain_tile_access, the Memset opcode, the Vector Engine and the "
      "fields of every nl.zeros memset.");
  m.def(
      "tracer_method",
      [](py::type cls, const std::string& name) {
        for (PyMethodDef& def : methods)
          if (name == def.ml_name)
            return py::reinterpret_steal<py::object>(PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &def));
        throw py::value_error("tracer_method: no C method " + name);
      },
      py::arg("cls"), py::arg("name"),
      "The C method `name` (record, new_result, fresh_result, write_fresh or zero_fill) as a method of the tracer class cls.");
}

NXS_REGISTER_SUBMODULE(nki, 46, "the NKI tracer's hot paths", bindTracerMethods);

}  // namespace tracer_methods
}  // namespace
}  // namespace nxs::py_bind
