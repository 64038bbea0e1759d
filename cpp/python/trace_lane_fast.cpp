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
//   mask, "bn_stats")`;
// - `bn_aggr_fast(opcode)`: `nisa.bn_aggr(data, *, mask=None, dtype=None)` of an on-chip exact
//   Tensor whose free sizes (exact ints) multiply to a multiple of 3 (else the definition's error),
//   dtype as bn_stats': `instructions.per_lane(tr, opcode, data, 2, dtype or data.dtype, loc, mask,
//   "bn_aggr")`, opcode BNStatsAggregate.
// - `copy_fast()`: `nl.copy(src, *, mask=None, dtype=None)` of an on-chip exact Tensor src, dtype
//   None or one dtypes.as_dtype has answered before (as bn_stats'): what language.copy does then,
//   `instructions.tensor_copy(tr, src, dtype, loc, mask=mask, what="copy")`.
// tr is the tracer recording (none: the definition's error), loc the kernel's line (the frame
// calling the FastCall: these C functions have none of their own). The builders, read from the
// instructions module per call (tests replace them), keep every rule about masks and shapes.
//
// `configure_lane_fast(tensor_class, instructions, dtype_lookups, bn_stats_opcode)` gives them
// the Tensor class, the instructions module, dtypes._LOOKUPS and the BNStats opcode.
//
// Why C: the definition's frame (and caller_location's walk from it) was a third of what
// recording `nl.rsqrt(var)` or a bn_stats record costs.
#include "trace_builder_args.h"
#include "trace_call_site.h"
#include "trace_lanewise_answer.h"
#include "trace_current.h"
#include "trace_fields_memo.h"
#include "trace_mask_box.h"
#include "trace_method_site.h"
#include "trace_ref.h"
#include "trace_remembered.h"
#include "trace_slotted.h"
#include "trace_value_memo.h"

#include "bindings.h"
#include "trace_keywords.h"

namespace nxs::py_bind {
namespace {
namespace lane_fast {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

using Owned = nxs::py_bind::OwnedRef;

PyTypeObject* tensorClass = nullptr;
PyObject *instructions = nullptr, *lookups = nullptr, *bnStats = nullptr;
PyObject *storageName, *onChipName, *dtypeName, *maskName, *axisName, *keepdimsName, *whatName;
PyObject *activationName, *tensorReduceName, *perLaneName, *bnStatsText, *one, *six, *whatOnly;
// From configure_lane_fast_plain: the Activation and TensorReduce opcodes, the Scalar and Vector
// Engines, AccumCmd.Idle, Alu.add, ReduceAxis.X and instructions' REDUCE_IDS and BITVEC_IDS (the
// sets of ids the builders test).
struct Plain {
  PyObject *activation, *scalarEngine, *idle, *aluAdd, *tensorReduce, *dve, *reduceX, *reduceIds, *bitvecIds;
};
Plain plain{};
PyObject *shapeName, *lanewiseName, *activationGeneralName, *tensorReduceGeneralName, *funcName, *accName,
    *accOpName, *scaleName, *opName, *negateName, *emptyTuple;
PyObject* one1;  // (1,): its item the int 1
// The fields of activationPlain's and reducePlain's instructions, per function / op.
FieldsMemo activationFields, reduceFields;
// From configure_per_lane_plain: instructions._SIZE_VERDICTS.
PyObject* sizeVerdicts = nullptr;
PyObject *kindName, *archName, *perLaneGeneralName;
PyObject* sizeRules = nullptr;  // instructions._SIZE_RULES: the opcodes per_lane asks the size rule about
PyObject *two, *bnAggrText;
PyObject *tensorCopyName, *copyText, *maskWhat;  // ("mask", "what"): tensor_copy's keywords in copy's call

// 1 when `o` is an exact Tensor on chip, 0 if not, -1 with an error set.
int onChipTile(PyObject* o) {
  if (tensorClass == nullptr || Py_TYPE(o) != tensorClass) return 0;
  Owned st(slotAttr(o, storageName));
  if (st.get() == nullptr) return -1;
  Owned flag(slotAttr(st.get(), onChipName));
  return flag.get() == nullptr ? -1 : PyObject_IsTrue(flag.get());
}

// builder(tr, positional..., what=name) of the instructions module: a new reference, null with an
// error set.
PyObject* callBuilder(PyObject* builderName, PyObject* const* positional, size_t n, PyObject* what) {
  Owned builder(moduleAttr(instructions, builderName));
  if (builder.get() == nullptr) return nullptr;
  PyObject* args[12];
  for (size_t i = 0; i < n; ++i) args[i] = positional[i];
  args[n] = what;
  return PyObject_Vectorcall(builder.get(), args, n, whatOnly);
}

// `lanewise_plain(tr, opcode, engine, x.shape, (x,), (), None, outShape, x.dtype, what, fields,
// loc)` (read per call from the instructions module: tests replace it), then, unless it answered
// a Tensor (recorded), `general(*generalArgs)` with its slot `outSlot` set to the result it made
// but did not record, or None (it changed nothing): the builders' own two steps (see
// instructions.activation and tensor_reduce). A new reference, or null with an error set.
template <size_t N>
PyObject* lanewiseThenGeneral(PyObject* tr, PyObject* opcode, PyObject* engine, PyObject* x, PyObject* shape,
                              PyObject* outShape, PyObject* what, PyObject* fields, PyObject* loc,
                              PyObject* generalName, PyObject* (&generalArgs)[N], size_t outSlot) {
  Owned st(slotAttr(x, storageName));
  if (st.get() == nullptr) return nullptr;
  Owned dtype(slotAttr(st.get(), dtypeName));  // (x.dtype: its storage's)
  Owned tiles(PyTuple_Pack(1, x));
  Owned lanewise(moduleAttr(instructions, lanewiseName));
  if (dtype.get() == nullptr || tiles.get() == nullptr || lanewise.get() == nullptr) return nullptr;
  PyObject* const call[12] = {tr,      opcode,   engine, shape,     tiles.get(), emptyTuple,
                              Py_None, outShape, dtype.get(), what, fields,      loc};
  Owned made(callFast(lanewise.get(), call, 12));
  if (made.get() == nullptr || Py_TYPE(made.get()) == tensorClass) return made.release();
  PyObject* out = unrecordedResult(made.get());  // (borrowed from made)
  if (out == nullptr) return nullptr;
  Owned general(moduleAttr(instructions, generalName));
  if (general.get() == nullptr) return nullptr;
  generalArgs[outSlot] = out;
  return PyObject_Vectorcall(general.get(), generalArgs, N, nullptr);
}

// instructions.activation(tr, func, x, None, 1.0, None, loc, None, what=name) of an on-chip exact
// Tensor x, as it runs for those arguments (bias None, scale a float, no mask: its lanewise_plain
// call, then activation_general), with the same fields in the same order.
PyObject* activationPlain(PyObject* tr, PyObject* func, PyObject* x, PyObject* what, PyObject* loc) {
  Owned shape(slotAttr(x, shapeName));
  if (shape.get() == nullptr) return nullptr;
  Owned fields(activationFields.fieldsFor(func, [func]() -> PyObject* {
    Owned made(PyDict_New());
    if (made.get() == nullptr || PyDict_SetItem(made.get(), funcName, func) < 0 ||
        PyDict_SetItem(made.get(), accName, plain.idle) < 0 || PyDict_SetItem(made.get(), accOpName, plain.aluAdd) < 0 ||
        PyDict_SetItem(made.get(), scaleName, one) < 0)
      return nullptr;
    return made.release();
  }));
  if (fields.get() == nullptr) return nullptr;
  PyObject* general[12] = {tr, func, x, Py_None, one, Py_None, loc, Py_None, Py_None, plain.idle, plain.aluAdd, what};
  return lanewiseThenGeneral(tr, plain.activation, plain.scalarEngine, x, shape.get(), shape.get(), what,
                             fields.get(), loc, activationGeneralName, general, 8);
}

// instructions.tensor_reduce(tr, op, x, axis, keepdims, False, None, loc, None, what=name) of an
// on-chip exact Tensor x of a [P, F] shape, axis its free one (lastAxisOfTwo), keepdims True or
// False, op a reduce op and no bit-vector one: as it runs for those arguments (its lanewise_plain
// call, then tensor_reduce_general), with the same fields in the same order. NotImplemented
// (changed nothing) for anything else: the builder's call.
PyObject* reducePlain(PyObject* tr, PyObject* op, PyObject* x, PyObject* axis, PyObject* keepdims, PyObject* what,
                      PyObject* loc) {
  if (plain.reduceIds == nullptr || (keepdims != Py_True && keepdims != Py_False) || !lastAxisOfTwo(axis))
    Py_RETURN_NOTIMPLEMENTED;
  int t = idIn(plain.reduceIds, op);  // (not one: the builder's error)
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  t = idIn(plain.bitvecIds, op);
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned shape(slotAttr(x, shapeName));
  if (shape.get() == nullptr) return nullptr;
  if (!PyTuple_CheckExact(shape.get()) || PyTuple_GET_SIZE(shape.get()) != 2) Py_RETURN_NOTIMPLEMENTED;
  PyObject* p = PyTuple_GET_ITEM(shape.get(), 0);
  Owned outShape(keepdims == Py_True ? PyTuple_Pack(2, p, PyTuple_GET_ITEM(one1, 0)) : PyTuple_Pack(1, p));
  if (outShape.get() == nullptr) return nullptr;
  Owned fields(reduceFields.fieldsFor(op, [op]() -> PyObject* {
    Owned made(PyDict_New());
    if (made.get() == nullptr || PyDict_SetItem(made.get(), opName, op) < 0 ||
        PyDict_SetItem(made.get(), axisName, plain.reduceX) < 0 || PyDict_SetItem(made.get(), negateName, Py_False) < 0)
      return nullptr;
    return made.release();
  }));
  Owned axes(PyList_New(1));
  if (fields.get() == nullptr || axes.get() == nullptr) return nullptr;
  PyList_SET_ITEM(axes.get(), 0, Py_NewRef(PyTuple_GET_ITEM(one1, 0)));
  PyObject* general[12] = {tr,      op,      x,    axes.get(),   keepdims,       Py_None,
                           loc,     Py_None, Py_None, what, fields.get(), outShape.get()};
  return lanewiseThenGeneral(tr, plain.tensorReduce, plain.dve, x, shape.get(), outShape.get(), what, fields.get(),
                             loc, tensorReduceGeneralName, general, 8);
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
  if (values[0] == Py_None && plain.activation != nullptr)
    return activationPlain(tr, PyTuple_GET_ITEM(self, 0), args[0], PyTuple_GET_ITEM(self, 1), loc.get());
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
  if (values[1] == Py_None) {
    Owned done(reducePlain(tr, PyTuple_GET_ITEM(self, 0), args[0], values[0], values[2], PyTuple_GET_ITEM(self, 1),
                           loc.get()));
    if (done.get() != Py_NotImplemented) return done.release();
  }
  PyObject* const positional[9] = {tr,       PyTuple_GET_ITEM(self, 0), args[0], values[0], values[2],
                                   Py_False, Py_None,                   loc.get(), values[1]};
  return callBuilder(tensorReduceName, positional, 9, PyTuple_GET_ITEM(self, 1));
}

// instructions.per_lane(tr, opcode, data, outFree, dtype, loc, mask, what) (no extra_in) as it runs
// when opcode has no size rule (not in _SIZE_RULES), or the size rule's verdict on (opcode, data's
// kind and dtype, shape, tr.arch) is remembered in _SIZE_VERDICTS as None (no error), and the mask is None or one whose remembered box is the full
// box of the shape: its lanewise_plain call (read per call from the instructions module), then,
// unless that answers a Tensor (recorded), _per_lane_general with the result it made but did not
// record, or None. A new reference, null with an error set, or NotImplemented (changed nothing)
// for per_lane to take the call.
// What _SIZE_VERDICTS answered, by the values of its key (opcode, kind, dtype, shape, arch)
// (trace_value_memo.h): all but the shape by identity. bn_stats asks it for every chunk.
using VerdictMemo = ValueMemo<4, 1 + 4, 6>;
VerdictMemo verdictMemo;

PyObject* perLanePlain(PyObject* tr, PyObject* opcode, PyObject* data, PyObject* outFree, PyObject* dtype,
                       PyObject* loc, PyObject* mask, PyObject* what) {
  if (sizeVerdicts == nullptr || sizeRules == nullptr || plain.dve == nullptr) Py_RETURN_NOTIMPLEMENTED;
  Owned shape(slotAttr(data, shapeName));
  if (shape.get() == nullptr) return nullptr;
  if (!PyTuple_CheckExact(shape.get()) || PyTuple_GET_SIZE(shape.get()) == 0) Py_RETURN_NOTIMPLEMENTED;
  const int sized = PyDict_Contains(sizeRules, opcode);  // (per_lane's `opcode in _SIZE_RULES`)
  if (sized < 0) return nullptr;
  if (sized == 1) {
    Owned st(slotAttr(data, storageName));
    if (st.get() == nullptr) return nullptr;
    Owned kind(slotAttr(st.get(), kindName));
    Owned dt(slotAttr(st.get(), dtypeName));
    Owned arch(slotAttr(tr, archName));
    if (kind.get() == nullptr || dt.get() == nullptr || arch.get() == nullptr) return nullptr;
    VerdictMemo::Key byValue;
    byValue.objects[0] = opcode;
    byValue.objects[1] = kind.get();
    byValue.objects[2] = dt.get();
    byValue.objects[3] = arch.get();
    const bool memoable = byValue.addTuple(shape.get());
    PyObject* verdict = memoable ? verdictMemo.find(byValue) : nullptr;  // (borrowed)
    if (verdict == nullptr) {
      Owned key(PyTuple_Pack(5, opcode, kind.get(), dt.get(), shape.get(), arch.get()));
      if (key.get() == nullptr) return nullptr;
      verdict = PyDict_GetItemWithError(sizeVerdicts, key.get());  // (borrowed: the dict holds it)
      if (verdict == nullptr) {
        if (PyErr_Occurred()) return nullptr;
        Py_RETURN_NOTIMPLEMENTED;  // (not asked before: refuse_illegal_size's)
      }
      if (memoable) verdictMemo.remember(byValue, verdict);
    }
    if (verdict != Py_None) Py_RETURN_NOTIMPLEMENTED;  // (an error: refuse_illegal_size raises it)
  }
  if (mask != Py_None) {  // (a box not remembered, or a cut: per_lane's general part)
    const int t = rememberedKeepsAll(mask, shape.get());
    if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  Owned outShape(PyTuple_Pack(2, PyTuple_GET_ITEM(shape.get(), 0), outFree));
  Owned tiles(PyTuple_Pack(1, data));
  Owned lanewise(moduleAttr(instructions, lanewiseName));
  if (outShape.get() == nullptr || tiles.get() == nullptr || lanewise.get() == nullptr) return nullptr;
  PyObject* const call[12] = {tr,      opcode,         plain.dve, shape.get(), tiles.get(), emptyTuple,
                              Py_None, outShape.get(), dtype,     what,        Py_None,     loc};
  Owned made(callFast(lanewise.get(), call, 12));
  if (made.get() == nullptr || Py_TYPE(made.get()) == tensorClass) return made.release();
  PyObject* out = unrecordedResult(made.get());  // (borrowed from made)
  if (out == nullptr) return nullptr;
  Owned general(moduleAttr(instructions, perLaneGeneralName));
  if (general.get() == nullptr) return nullptr;
  PyObject* const args[10] = {tr, opcode, data, outFree, dtype, loc, mask, what, Py_None, out};
  return PyObject_Vectorcall(general.get(), args, 10, nullptr);
}

// 1 when the free sizes of `data`'s shape (exact ints, not negative) multiply to a multiple of 3
// (bn_aggr's `math.prod(data.shape[1:]) % 3 == 0`), 0 when not or when they are anything else (the
// definition's to answer), -1 with an error set.
int wholeRecords(PyObject* data) {
  Owned shape(slotAttr(data, shapeName));
  if (shape.get() == nullptr) return -1;
  if (!PyTuple_CheckExact(shape.get())) return 0;
  long long n = 1;
  for (Py_ssize_t i = 1; i < PyTuple_GET_SIZE(shape.get()); ++i) {
    PyObject* size = PyTuple_GET_ITEM(shape.get(), i);
    if (!PyLong_CheckExact(size)) return 0;
    int overflow = 0;
    const long long k = PyLong_AsLongLongAndOverflow(size, &overflow);
    if (overflow != 0 || k < 0 || k > (1LL << 31)) return 0;  // (never a tile's size: Python's)
    n = (n * k) % 3;  // (only the remainder matters)
  }
  return n == 0 ? 1 : 0;
}

// The dtype isa._dtype / language._dtype answers for `value` from dtypes._LOOKUPS (borrowed), or
// null: not looked up before, unhashable, or not an NKI dtype (the definition's to answer or
// refuse; nothing set), or with an error set (`failed` true).
PyObject* knownDtype(PyObject* value, bool& failed) {
  failed = false;
  PyObject* dtype = rememberedIn(lookups, value);
  failed = dtype == nullptr && PyErr_Occurred();
  return dtype == Py_None ? nullptr : dtype;
}

// nisa.bn_stats and nisa.bn_aggr (`what`, `opcode`, `outFree` records per partition, `aggr`: bn_aggr's
// whole-records test): `fn(data, *, mask=None, dtype=None)`, see the file's comment.
PyObject* perLaneFast(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject* opcode,
                      PyObject* outFree, PyObject* what, bool aggr) {
  if (nargs != 1 || instructions == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const names[2] = {maskName, dtypeName};
  PyObject* values[2] = {Py_None, Py_None};
  if (!keywords(args, nargs, kwnames, names, values)) Py_RETURN_NOTIMPLEMENTED;
  PyObject* data = args[0];
  int t = onChipTile(data);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  if (aggr) {
    t = wholeRecords(data);  // (not: the definition's error)
    if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  PyObject* dtype = nullptr;  // isa._dtype's answer, or null for None (borrowed, then owned below)
  if (values[1] != Py_None) {
    bool failed = false;
    dtype = knownDtype(values[1], failed);
    if (dtype == nullptr) return failed ? nullptr : Py_NewRef(Py_NotImplemented);
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
  {
    Owned done(perLanePlain(tr, opcode, data, outFree, dtype, loc.get(), values[0], what));
    if (done.get() != Py_NotImplemented) return done.release();
  }
  Owned perLane(moduleAttr(instructions, perLaneName));
  if (perLane.get() == nullptr) return nullptr;
  PyObject* const call[8] = {tr, opcode, data, outFree, dtype, loc.get(), values[0], what};
  return PyObject_Vectorcall(perLane.get(), call, 8, nullptr);
}

// nl.copy(src, *, mask=None, dtype=None), see the file's comment.
PyObject* copyFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 1 || instructions == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const names[2] = {maskName, dtypeName};
  PyObject* values[2] = {Py_None, Py_None};
  if (!keywords(args, nargs, kwnames, names, values)) Py_RETURN_NOTIMPLEMENTED;
  const int t = onChipTile(args[0]);  // (language._tile's test)
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* dtype = Py_None;  // (language._opt_dtype's answer; borrowed)
  if (values[1] != Py_None) {
    bool failed = false;
    dtype = knownDtype(values[1], failed);
    if (dtype == nullptr) return failed ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  PyObject* tr = currentTracer();  // (borrowed)
  if (tr == nullptr) Py_RETURN_NOTIMPLEMENTED;
  Owned loc(callSiteLocation(0));
  Owned builder(moduleAttr(instructions, tensorCopyName));
  if (loc.get() == nullptr || builder.get() == nullptr) return nullptr;
  PyObject* const call[6] = {tr, args[0], dtype, loc.get(), values[0], copyText};
  return PyObject_Vectorcall(builder.get(), call, 4, maskWhat);
}

PyObject* bnStatsFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return perLaneFast(args, nargs, kwnames, bnStats, six, bnStatsText, false);
}

// self: the BNStatsAggregate opcode.
PyObject* bnAggrFast(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return perLaneFast(args, nargs, kwnames, self, two, bnAggrText, true);
}

PyMethodDef activationFastDef = {"activation_fast",
                                 reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(activationFast)),
                                 METH_FASTCALL | METH_KEYWORDS, "nl.<activation>(x, *, mask=None)'s C path."};
PyMethodDef reduceFastDef = {"reduce_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduceFast)),
                             METH_FASTCALL | METH_KEYWORDS,
                             "nl.<reduction>(x, axis, *, mask=None, keepdims=False)'s C path."};
PyMethodDef bnStatsFastDef = {"bn_stats_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(bnStatsFast)),
                              METH_FASTCALL | METH_KEYWORDS, "nisa.bn_stats(data, *, mask=None, dtype=None)'s C path."};
PyMethodDef bnAggrFastDef = {"bn_aggr_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(bnAggrFast)),
                             METH_FASTCALL | METH_KEYWORDS, "nisa.bn_aggr(data, *, mask=None, dtype=None)'s C path."};

PyMethodDef copyFastDef = {"copy_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(copyFast)),
                           METH_FASTCALL | METH_KEYWORDS, "nl.copy(src, *, mask=None, dtype=None)'s C path."};

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
                            {&bnStatsText, "bn_stats"}, {&shapeName, "shape"}, {&lanewiseName, "lanewise_plain"},
                            {&activationGeneralName, "activation_general"},
                            {&tensorReduceGeneralName, "tensor_reduce_general"}, {&funcName, "func"},
                            {&accName, "acc"}, {&accOpName, "acc_op"}, {&scaleName, "scale"}, {&opName, "op"},
                            {&negateName, "negate"}, {&kindName, "kind"}, {&archName, "arch"},
                            {&perLaneGeneralName, "_per_lane_general"}, {&bnAggrText, "bn_aggr"},
                            {&tensorCopyName, "tensor_copy"}, {&copyText, "copy"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  one = PyFloat_FromDouble(1.0);
  six = PyLong_FromLong(6);
  two = PyLong_FromLong(2);
  whatOnly = PyTuple_Pack(1, whatName);
  emptyTuple = PyTuple_New(0);
  one1 = Py_BuildValue("(i)", 1);
  maskWhat = PyTuple_Pack(2, maskName, whatName);
  if (one == nullptr || six == nullptr || two == nullptr || whatOnly == nullptr || emptyTuple == nullptr ||
      one1 == nullptr || maskWhat == nullptr)
    throw py::error_already_set();
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
      "configure_lane_fast_plain",
      [](py::object activationOpcode, py::object scalarEngine, py::object idle, py::object aluAdd,
         py::object tensorReduceOpcode, py::object dve, py::object reduceX, py::object reduceIds,
         py::object bitvecIds) {
        if (!PyFrozenSet_CheckExact(reduceIds.ptr()) || !PyFrozenSet_CheckExact(bitvecIds.ptr()))
          throw py::type_error("configure_lane_fast_plain: reduce_ids and bitvec_ids must be frozensets");
        for (PyObject** slot : {&plain.activation, &plain.scalarEngine, &plain.idle, &plain.aluAdd, &plain.tensorReduce,
                                &plain.dve, &plain.reduceX, &plain.reduceIds, &plain.bitvecIds})
          Py_XDECREF(*slot);
        activationFields.clear();  // (their constants change)
        reduceFields.clear();
        plain = Plain{activationOpcode.inc_ref().ptr(), scalarEngine.inc_ref().ptr(), idle.inc_ref().ptr(),
                      aluAdd.inc_ref().ptr(),           tensorReduceOpcode.inc_ref().ptr(),
                      dve.inc_ref().ptr(),              reduceX.inc_ref().ptr(),
                      reduceIds.inc_ref().ptr(),        bitvecIds.inc_ref().ptr()};
      },
      py::arg("activation"), py::arg("scalar_engine"), py::arg("idle"), py::arg("alu_add"),
      py::arg("tensor_reduce"), py::arg("dve"), py::arg("reduce_x"), py::arg("reduce_ids"), py::arg("bitvec_ids"),
      "Gives activation_fast and reduce_fast what they need to make the builders' lanewise_plain calls themselves "
      "(without a mask): the Activation opcode, the Scalar Engine, AccumCmd.Idle, Alu.add, the TensorReduce opcode, "
      "the Vector Engine, ReduceAxis.X and the instructions module's REDUCE_IDS and BITVEC_IDS.");
  m.def(
      "configure_per_lane_plain",
      [](py::dict verdicts, py::dict rules) {
        for (PyObject** slot : {&sizeVerdicts, &sizeRules}) Py_XDECREF(*slot);
        sizeVerdicts = verdicts.inc_ref().ptr();
        sizeRules = rules.inc_ref().ptr();
      },
      py::arg("size_verdicts"), py::arg("size_rules"),
      "Gives bn_stats_fast and bn_aggr_fast instructions._SIZE_VERDICTS and instructions._SIZE_RULES, to make "
      "per_lane's lanewise_plain call themselves when the opcode has no size rule or the rule's verdict is "
      "remembered, and the mask keeps the whole tile (as its remembered box tells: trace_mask_box.h).");
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
      "copy_fast", []() { return fastFunction(&copyFastDef, nullptr); },
      "The C path of nl.copy(src, *, mask=None, dtype=None): a result, or NotImplemented for the Python definition "
      "to answer (use in a FastCall).");
  m.def(
      "bn_stats_fast", []() { return fastFunction(&bnStatsFastDef, nullptr); },
      "The C path of nisa.bn_stats(data, *, mask=None, dtype=None): a result, or NotImplemented for the Python "
      "definition to answer (use in a FastCall).");
  m.def(
      "bn_aggr_fast", [](py::object opcode) { return fastFunction(&bnAggrFastDef, opcode.ptr()); },
      py::arg("opcode"),
      "The C path of nisa.bn_aggr(data, *, mask=None, dtype=None), opcode BNStatsAggregate: a result, or "
      "NotImplemented for the Python definition to answer (use in a FastCall).");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindLaneFast);

}  // namespace lane_fast
}  // namespace
}  // namespace nxs::py_bind
