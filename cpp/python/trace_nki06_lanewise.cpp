// The C paths of NKI 0.6's elementwise instructions `nisa.tensor_scalar`, `nisa.tensor_tensor`,
// `nisa.activation`, `nisa.activation_reduce`, `nisa.tensor_copy` and `nisa.tensor_reduce`
// (neuronxsim.nki06.isa), set
// as their ApiCall's `fast` (trace_api_call.cpp) for their commonest calls. Each takes a call only when every check
// of the definition (isa.py) would pass without asking the tracer anything, and then makes the
// builder's own two steps (neuronxsim.nki.instructions: its `lanewise_plain` call with the same
// operands and fields, then, unless that recorded the instruction, its `*_general` part) as the
// definition's builder call would; anything else returns NotImplemented having changed nothing,
// and the definition answers it, with every check and error. Common to all: the arguments
// bound by the definition's parameter names (positionally or by keyword, nothing twice, no other
// keyword), `name` None or a str, `engine` (where there is one) nisa.engine.unknown or
// nisa.engine.vector, the operators already in opcodes' memo tables (_ALU_BY_FUNCTION,
// _ACT_BY_FUNCTION: what alu_op / act_func answered before), dst and every tile operand a direct
// view of an on-chip NkiTensor (isa's _tile answers it at once), the tile inputs of dst's shape
// (_paired: no reshape) and written as check_written sees it without asking the tracer, number
// operands exact floats or ints (float() of them), [P, 1] operands of dst's partitions, and
// dst's dtype truthy (the builders' `dtype or ...`):
//
// - `tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
//   reverse1=False, engine, name)`: no unary op0 (abs, rsqrt), no bit-vector operator, reverse
//   flags bools, operand1 given exactly when op1 is, not a tile operand1 after a number operand0
//   (the builder's constant column): `_tensor_scalar_plain`'s lanewise_plain call, then
//   `tensor_scalar_general`;
// - `tensor_tensor(dst, data1, data2, op, engine, name)`: no bit-vector operator, not both inputs
//   in PSUM, on the Vector Engine (with engine unknown: not nl.power, not all-int32 operands
//   outside PSUM, which are GpSimd's): its lanewise_plain call, then `tensor_tensor_general`;
// - `activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
//   reduce_cmd=idle, name)` with no reduce_res and reduce_cmd idle, and
//   `activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name)` with
//   reduce_op one alu_op answered before (its rule, `refuse_illegal_reduce`, called as
//   _reduce_regs calls it) and a direct on-chip reduce_res: a function other than prelu, bias
//   None or a [P, 1] tile in PSUM or of a float dtype the Scalar Engine takes (a number bias is
//   the builder's constant column), scale a number or a [P, 1] tile: the builder's lanewise_plain
//   call, then `activation_general`; activation_reduce then `read_accumulator` (its plain case in C:
//   see readAccumulator), skipping refuse_illegal_reduce's call for Alu.add on an arch it passed;
// - `tensor_copy(dst, src, engine, name)` with the engine unknown (the builder's default: the
//   Scalar Engine from PSUM, else the Vector Engine; an explicit engine has the definition's
//   checks): its lanewise_plain call into dst with dst's dtype, then `tensor_copy_general`;
// - `tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name)`: data a [P, F] tile
//   (not checked as written: the definition does not), axis its free one (1 or -1, alone or in a
//   list or tuple), negate and keepdims bools, dst of the [P, 1] result's shape, op a reduce
//   operator and no bit-vector one: the builder's lanewise_plain call (its result [P, 1] whatever
//   keepdims is: the definition keeps the one kept dimension), then `tensor_reduce_general`.
//
// tr is the tracer recording (none: the definition's error), loc the kernel's line (these run
// with no frame of their own). The builders' functions are read from the instructions module per
// call (tests replace them).
//
// `configure_nki06_lanewise(nki_tensor, tensor, instructions, alu_by_function, act_by_function,
// bitvec_ids, constants)` gives them the NkiTensor and Tensor classes, the instructions module,
// opcodes' two memo tables, BITVEC_IDS and a dict of the enum members and kinds they compare with
// (its keys: see `constantNames`).
//
// Why C: these definitions (with _begin, _tile, _paired, _scalar_or_column and the builder
// each calls) were about four fifths of what recording an NKI 0.6 normalisation kernel cost.
#include "trace_builder_args.h"
#include "trace_call_site.h"
#include "trace_current.h"
#include "trace_equal.h"
#include "trace_lanewise_answer.h"
#include "trace_method_site.h"
#include "trace_nki06_args.h"
#include "trace_ref.h"
#include "trace_remembered.h"
#include "trace_slotted.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace nki06_lanewise {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

using Owned = nxs::py_bind::OwnedRef;

struct Config {
  PyObject *nkiTensor, *tensor, *instructions, *aluByFunction, *actByFunction, *bitvecIds;
  // from `constants`
  PyObject *engineUnknown, *engineVector, *reduceIdle, *tensorScalar, *tensorScalarPtr, *tensorTensor, *activation,
      *dve, *actEngine, *bypass, *aluAdd, *aluPow, *aluAbs, *aluRsqrt, *prelu, *accIdle, *accZeroAccumulate, *psum,
      *intDtypes, *actBiasDtypes, *tensorReduce, *reduceX, *reduceIds, *reduceAddArchs, *writePlain, *readActAcc,
      *tensorCopy;
};
Config config{};
constexpr const char* constantNames[] = {
    "engine_unknown", "engine_vector", "reduce_idle", "tensor_scalar", "tensor_scalar_ptr", "tensor_tensor",
    "activation", "dve", "act_engine", "bypass", "alu_add", "alu_pow", "alu_abs", "alu_rsqrt", "prelu",
    "acc_idle", "acc_zero_accumulate", "psum", "int_dtypes", "act_bias_dtypes", "tensor_reduce", "reduce_x",
    "reduce_ids", "reduce_add_archs", "write_plain", "read_act_acc", "tensor_copy"};

PyObject *dstName, *srcName, *dataName, *data1Name, *data2Name, *opName, *op0Name, *operand0Name, *reverse0Name, *op1Name,
    *operand1Name, *reverse1Name, *engineName, *nameName, *biasName, *scaleName, *reduceOpName, *reduceResName,
    *reduceCmdName, *axisName, *negateName, *keepdimsName;
PyObject *viewName, *indirectName, *storageName, *onChipName, *shapeName, *kindName, *dtypeName, *stateName,
    *writeCountName, *forwardName, *pendingZeroName, *writtenPartitionsName, *offsetName, *layoutName, *rowName;
PyObject *funcName, *accName, *accOpName, *const0Name, *const1Name, *hasBiasName, *hasScaleTensorName;
PyObject *lanewiseName, *tensorScalarGeneralName, *tensorTensorGeneralName, *activationGeneralName,
    *refuseIllegalReduceName, *readAccumulatorName, *tensorReduceGeneralName, *tensorCopyGeneralName;
PyObject *tensorScalarText, *tensorTensorText, *activationText, *activationReduceText, *tensorReduceText,
    *tensorCopyText;
PyObject *zeroFloat, *oneFloat, *oneInt;
PyObject *archName, *recordName;

// The answer of a check: take the call, leave it to the definition, or an error (set).
enum Verdict { kTake = 1, kDecline = 0, kError = -1 };

// The view of x (a new reference) when x is an NkiTensor (the class itself) without an
// indirection whose view is a Tensor (the class itself) of an on-chip storage, as isa's _tile
// answers at once; null with no error set when the definition must look at it, with one set if
// reading a slot failed.
PyObject* onChipView(PyObject* x) {
  if (x == nullptr || Py_TYPE(x) != reinterpret_cast<PyTypeObject*>(config.nkiTensor)) return nullptr;
  Owned indirect(slotAttr(x, indirectName));
  if (indirect.get() != Py_None) return nullptr;
  Owned view(slotAttr(x, viewName));
  // (the builders take a Tensor view, the class itself, as a tile operand)
  if (view.get() == nullptr || Py_TYPE(view.get()) != reinterpret_cast<PyTypeObject*>(config.tensor)) return nullptr;
  Owned st(slotAttr(view.get(), storageName));
  if (st.get() == nullptr) return nullptr;
  Owned flag(slotAttr(st.get(), onChipName));
  if (flag.get() == nullptr) return nullptr;
  return flag.get() == Py_True ? view.release() : nullptr;
}

// The integer of a new reference `o` (released); false with an error set.
bool intOf(PyObject* o, long long& v) {
  if (o == nullptr) return false;
  v = PyLong_AsLongLong(o);
  Py_DECREF(o);
  return !(v == -1 && PyErr_Occurred());
}

// Whether check_written(v) (an on-chip view) passes without asking the tracer: nothing wrote the
// storage, it is forwarded or has pending zeros (check_written leaves those to the recording),
// or its state says all the partitions the view spans were written.
Verdict writtenAsChecked(PyObject* v) {
  Owned st(slotAttr(v, storageName));
  if (st.get() == nullptr) return kError;
  Owned s(slotAttr(st.get(), stateName));
  if (s.get() == nullptr) return kError;
  Owned count(slotAttr(s.get(), writeCountName));
  if (count.get() == nullptr) return kError;
  int t = PyObject_IsTrue(count.get());
  if (t <= 0) return t < 0 ? kError : kTake;
  Owned forward(slotAttr(s.get(), forwardName));
  Owned pending(slotAttr(s.get(), pendingZeroName));
  if (forward.get() == nullptr || pending.get() == nullptr) return kError;
  if (forward.get() != Py_None || pending.get() != Py_None) return kTake;
  long long offset = 0, written = 0, row = 0, parts = 0;
  if (!intOf(slotAttr(v, offsetName), offset) || !intOf(slotAttr(s.get(), writtenPartitionsName), written))
    return kError;
  Owned shape(slotAttr(v, shapeName));
  if (shape.get() == nullptr) return kError;
  if (!PyTuple_CheckExact(shape.get()) || PyTuple_GET_SIZE(shape.get()) == 0) return kDecline;
  parts = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.get(), 0));
  if (parts == -1 && PyErr_Occurred()) return kError;
  long long start = 0;
  if (offset != 0) {
    Owned layout(slotAttr(st.get(), layoutName));
    if (layout.get() == nullptr || !intOf(slotAttr(layout.get(), rowName), row)) return kError;
    if (row <= 0 || offset < 0) return kDecline;  // (never so: Python's // and C's / agree otherwise)
    start = offset / row;
  }
  return written >= start + parts ? kTake : kDecline;
}

// The view of an input tile paired with dst (of shape `shape`) as _paired answers it at once:
// a direct on-chip NkiTensor of that shape, written as check_written sees it. A new reference;
// null with no error set to decline, with one set on failure.
PyObject* pairedInput(PyObject* x, PyObject* shape) {
  Owned v(onChipView(x));
  if (v.get() == nullptr) return nullptr;
  Owned vShape(slotAttr(v.get(), shapeName));
  if (vShape.get() == nullptr) return nullptr;
  int t = equalTo(vShape.get(), shape);
  if (t != 1) return nullptr;
  const Verdict w = writtenAsChecked(v.get());
  return w == kTake ? v.release() : nullptr;
}

// _scalar_or_column(x, parts): a new reference to float(x) for an exact float or int, or the view
// of a direct on-chip [parts, ...] NkiTensor of one element per partition, written as
// check_written sees it; null with no error set to decline, with one set on failure.
PyObject* scalarOrColumn(PyObject* x, long long parts) {
  if (PyFloat_CheckExact(x)) return Py_NewRef(x);  // (float(x) of a float is x)
  if (PyLong_CheckExact(x)) {
    const double v = PyLong_AsDouble(x);
    if (v == -1.0 && PyErr_Occurred()) {  // (too large: the definition's OverflowError)
      PyErr_Clear();
      return nullptr;
    }
    return PyFloat_FromDouble(v);
  }
  Owned v(onChipView(x));
  if (v.get() == nullptr) return nullptr;
  Owned shape(slotAttr(v.get(), shapeName));
  if (shape.get() == nullptr) return nullptr;
  if (!PyTuple_CheckExact(shape.get()) || PyTuple_GET_SIZE(shape.get()) == 0) return nullptr;
  const Py_ssize_t rank = PyTuple_GET_SIZE(shape.get());
  for (Py_ssize_t i = 0; i < rank; ++i) {
    const long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.get(), i));
    if (n == -1 && PyErr_Occurred()) return nullptr;
    if (i == 0 ? n != parts : n != 1) return nullptr;
  }
  return writtenAsChecked(v.get()) == kTake ? v.release() : nullptr;
}

// `view.storage.<name>`: a new reference, or null with an error set.
PyObject* storageAttr(PyObject* view, PyObject* name) {
  Owned st(slotAttr(view, storageName));
  return st.get() == nullptr ? nullptr : slotAttr(st.get(), name);
}

// 1 when kind is PSUM, 0 if not, -1 on error.
int isPsum(PyObject* view) {
  Owned kind(storageAttr(view, kindName));
  if (kind.get() == nullptr) return -1;
  return equalTo(kind.get(), config.psum);
}

// Whether the call's `name` is what isa's _name lets pass: None or a str.
bool plainName(PyObject* name) { return name == nullptr || name == Py_None || PyUnicode_Check(name); }

// Whether `engine` is one _engine answers the Vector Engine (or the default) for at once.
bool vectorOrDefault(PyObject* engine) {
  return engine == nullptr || engine == config.engineUnknown || engine == config.engineVector;
}

// The answer of a lanewise_plain call `made` (a new reference) and the builder's general part:
// None when lanewise_plain recorded the instruction (a Tensor), else `general(*args)` with
// args[outSlot] the destination (`dst` when lanewise_plain changed nothing, else the result it
// made but did not record). A new reference, or null with an error set.
template <size_t N>
PyObject* thenGeneral(PyObject* madeNew, PyObject* dst, PyObject* generalName, PyObject* (&args)[N], size_t outSlot) {
  Owned made(madeNew);
  if (made.get() == nullptr) return nullptr;
  if (Py_TYPE(made.get()) == reinterpret_cast<PyTypeObject*>(config.tensor)) Py_RETURN_NONE;
  PyObject* out = made.get() == Py_NotImplemented ? dst : unrecordedResult(made.get());  // (borrowed)
  if (out == nullptr) return nullptr;
  Owned general(PyObject_GetAttr(config.instructions, generalName));
  if (general.get() == nullptr) return nullptr;
  args[outSlot] = out;
  Owned done(PyObject_Vectorcall(general.get(), args, N, nullptr));
  if (done.get() == nullptr) return nullptr;
  Py_RETURN_NONE;
}

// instructions.lanewise_plain(tr, opcode, engine, shape, tiles, pointers, out, shape, dtype,
// what, fields, loc): a new reference, or null with an error set.
PyObject* lanewise(PyObject* tr, PyObject* opcode, PyObject* engine, PyObject* shape, PyObject* tiles,
                   PyObject* pointers, PyObject* out, PyObject* dtype, PyObject* what, PyObject* fields, PyObject* loc) {
  Owned plain(PyObject_GetAttr(config.instructions, lanewiseName));
  if (plain.get() == nullptr) return nullptr;
  PyObject* const call[12] = {tr, opcode, engine, shape, tiles, pointers, out, shape, dtype, what, fields, loc};
  return PyObject_Vectorcall(plain.get(), call, 12, nullptr);
}

// Declines (NotImplemented) unless the pointer holds a value; returns null when an error is set.
#define NXS_TAKE_OR_DECLINE(ptr)                   \
  do {                                             \
    if ((ptr) == nullptr) {                        \
      if (PyErr_Occurred()) return nullptr;        \
      Py_RETURN_NOTIMPLEMENTED;                    \
    }                                              \
  } while (0)

// dst's view, shape, its partitions and dtype, when dst is a direct on-chip NkiTensor of a truthy
// dtype; false with no error set to decline, with one set on failure.
struct Dst {
  Owned view{nullptr}, shape{nullptr}, dtype{nullptr};
  long long parts = 0;
};
bool dstOf(PyObject* x, Dst& d) {
  d.view.p = onChipView(x);
  if (d.view.get() == nullptr) return false;
  d.shape.p = slotAttr(d.view.get(), shapeName);
  if (d.shape.get() == nullptr) return false;
  if (!PyTuple_CheckExact(d.shape.get()) || PyTuple_GET_SIZE(d.shape.get()) == 0) return false;
  d.parts = PyLong_AsLongLong(PyTuple_GET_ITEM(d.shape.get(), 0));
  if (d.parts == -1 && PyErr_Occurred()) return false;
  d.dtype.p = storageAttr(d.view.get(), dtypeName);
  if (d.dtype.get() == nullptr) return false;
  const int t = PyObject_IsTrue(d.dtype.get());
  if (t < 0) return false;
  return t == 1;
}

PyObject* tensorScalarFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.nkiTensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const params[10] = {dstName,      dataName,     op0Name,   operand0Name, reverse0Name,
                                op1Name,      operand1Name, reverse1Name, engineName, nameName};
  PyObject* slots[10] = {};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  for (int i = 0; i < 4; ++i)
    if (slots[i] == nullptr) Py_RETURN_NOTIMPLEMENTED;  // (the definition's TypeError)
  PyObject* reverse0 = slots[4] != nullptr ? slots[4] : Py_False;
  PyObject* op1 = slots[5] != nullptr ? slots[5] : Py_None;
  PyObject* operand1 = slots[6] != nullptr ? slots[6] : Py_None;
  PyObject* reverse1 = slots[7] != nullptr ? slots[7] : Py_False;
  if ((reverse0 != Py_True && reverse0 != Py_False) || (reverse1 != Py_True && reverse1 != Py_False) ||
      !vectorOrDefault(slots[8]) || !plainName(slots[9]) || (op1 == Py_None) != (operand1 == Py_None))
    Py_RETURN_NOTIMPLEMENTED;
  Dst d;
  if (!dstOf(slots[0], d)) NXS_TAKE_OR_DECLINE(nullptr);
  Owned v(pairedInput(slots[1], d.shape.get()));
  NXS_TAKE_OR_DECLINE(v.get());
  PyObject* a0 = rememberedIn(config.aluByFunction, slots[2]);  // (borrowed from the table)
  NXS_TAKE_OR_DECLINE(a0);
  Owned keep0(Py_NewRef(a0));  // (held while Python runs below)
  if (a0 == config.aluAbs || a0 == config.aluRsqrt) Py_RETURN_NOTIMPLEMENTED;  // (unary: operand0's rule)
  PyObject* a1 = config.bypass;
  if (op1 != Py_None) {
    a1 = rememberedIn(config.aluByFunction, op1);
    NXS_TAKE_OR_DECLINE(a1);
  }
  Owned keep1(Py_NewRef(a1));
  int t = idIn(config.bitvecIds, a0);
  if (t == 0 && op1 != Py_None) t = idIn(config.bitvecIds, a1);
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);  // (the legality rules' path)
  Owned o0(scalarOrColumn(slots[3] == Py_None ? zeroFloat : slots[3], d.parts));
  NXS_TAKE_OR_DECLINE(o0.get());
  Owned o1(op1 == Py_None ? Py_NewRef(zeroFloat) : scalarOrColumn(operand1, d.parts));
  NXS_TAKE_OR_DECLINE(o1.get());
  const bool tile0 = !PyFloat_CheckExact(o0.get()), tile1 = !PyFloat_CheckExact(o1.get());
  if (tile1 && !tile0) Py_RETURN_NOTIMPLEMENTED;  // (operand0's constant column: the general path)
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  // _tensor_scalar_plain's fields, in its order
  Owned fields(PyDict_New());
  if (fields.get() == nullptr || PyDict_SetItem(fields.get(), op0Name, a0) < 0) return nullptr;
  if (tile0) {
    if (PyDict_SetItem(fields.get(), reverse0Name, reverse0) < 0 || PyDict_SetItem(fields.get(), op1Name, a1) < 0 ||
        PyDict_SetItem(fields.get(), reverse1Name, reverse1) < 0 ||
        PyDict_SetItem(fields.get(), const1Name, tile1 ? zeroFloat : o1.get()) < 0)
      return nullptr;
  } else if (PyDict_SetItem(fields.get(), const0Name, o0.get()) < 0 ||
             PyDict_SetItem(fields.get(), reverse0Name, reverse0) < 0 || PyDict_SetItem(fields.get(), op1Name, a1) < 0 ||
             PyDict_SetItem(fields.get(), const1Name, o1.get()) < 0 ||
             PyDict_SetItem(fields.get(), reverse1Name, reverse1) < 0) {
    return nullptr;
  }
  Owned shape(slotAttr(v.get(), shapeName));  // (data.shape: the builder's iteration space)
  Owned tiles(PyTuple_Pack(1, v.get()));
  Owned pointers(!tile0 ? PyTuple_New(0) : tile1 ? PyTuple_Pack(2, o0.get(), o1.get()) : PyTuple_Pack(1, o0.get()));
  if (shape.get() == nullptr || tiles.get() == nullptr || pointers.get() == nullptr) return nullptr;
  PyObject* opcode = tile0 ? config.tensorScalarPtr : config.tensorScalar;
  PyObject* made = lanewise(tr, opcode, config.dve, shape.get(), tiles.get(), pointers.get(), d.view.get(),
                            d.dtype.get(), tensorScalarText, fields.get(), loc.get());
  PyObject* general[18] = {tr,         v.get(),  a0,      o0.get(),      reverse0,         a1,
                           o1.get(),   reverse1, d.dtype.get(), loc.get(), Py_None,          nullptr,
                           config.dve, tensorScalarText, opcode, tile0 ? Py_True : Py_False,
                           tile1 ? Py_True : Py_False, Py_False};
  return thenGeneral(made, d.view.get(), tensorScalarGeneralName, general, 11);
}

PyObject* tensorTensorFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.nkiTensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const params[6] = {dstName, data1Name, data2Name, opName, engineName, nameName};
  PyObject* slots[6] = {};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  for (int i = 0; i < 4; ++i)
    if (slots[i] == nullptr) Py_RETURN_NOTIMPLEMENTED;  // (the definition's TypeError)
  if (!vectorOrDefault(slots[4]) || !plainName(slots[5])) Py_RETURN_NOTIMPLEMENTED;
  const bool chosen = slots[4] != nullptr && slots[4] == config.engineVector;
  PyObject* alu = rememberedIn(config.aluByFunction, slots[3]);
  NXS_TAKE_OR_DECLINE(alu);
  Owned keep(Py_NewRef(alu));  // (held while Python runs below)
  Dst d;
  if (!dstOf(slots[0], d)) NXS_TAKE_OR_DECLINE(nullptr);
  Owned a(pairedInput(slots[1], d.shape.get()));
  NXS_TAKE_OR_DECLINE(a.get());
  Owned b(pairedInput(slots[2], d.shape.get()));
  NXS_TAKE_OR_DECLINE(b.get());
  int t = idIn(config.bitvecIds, alu);
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);  // (the legality rules' path)
  const int aPsum = isPsum(a.get()), bPsum = isPsum(b.get()), dPsum = isPsum(d.view.get());
  if (aPsum < 0 || bPsum < 0 || dPsum < 0) return nullptr;
  if (aPsum && bPsum) Py_RETURN_NOTIMPLEMENTED;  // (operand.psum-inputs: the definition's error)
  if (!chosen && !(aPsum || bPsum || dPsum)) {  // (GpSimd by default for power and integers)
    if (alu == config.aluPow) Py_RETURN_NOTIMPLEMENTED;
    Owned aDtype(storageAttr(a.get(), dtypeName)), bDtype(storageAttr(b.get(), dtypeName));
    if (aDtype.get() == nullptr || bDtype.get() == nullptr) return nullptr;
    int ints = PySequence_Contains(config.intDtypes, aDtype.get());
    if (ints == 1) ints = PySequence_Contains(config.intDtypes, bDtype.get());
    if (ints == 1) ints = PySequence_Contains(config.intDtypes, d.dtype.get());
    if (ints != 0) return ints < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  Owned shape(slotAttr(a.get(), shapeName));  // (a.shape: the builder's iteration space)
  Owned fields(PyDict_New());
  Owned tiles(PyTuple_Pack(2, a.get(), b.get()));
  Owned pointers(PyTuple_New(0));
  if (shape.get() == nullptr || fields.get() == nullptr || tiles.get() == nullptr || pointers.get() == nullptr ||
      PyDict_SetItem(fields.get(), opName, alu) < 0)
    return nullptr;
  PyObject* made = lanewise(tr, config.tensorTensor, config.dve, shape.get(), tiles.get(), pointers.get(),
                            d.view.get(), d.dtype.get(), tensorTensorText, fields.get(), loc.get());
  PyObject* general[12] = {tr,      a.get(),    b.get(),          alu,         d.dtype.get(), loc.get(),
                           Py_None, nullptr,    config.dve, tensorTensorText, shape.get(), Py_False};
  return thenGeneral(made, d.view.get(), tensorTensorGeneralName, general, 7);
}

PyObject* tensorCopyFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.nkiTensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const params[4] = {dstName, srcName, engineName, nameName};
  PyObject* slots[4] = {};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  if (slots[0] == nullptr || slots[1] == nullptr) Py_RETURN_NOTIMPLEMENTED;  // (the definition's TypeError)
  if ((slots[2] != nullptr && slots[2] != config.engineUnknown) || !plainName(slots[3])) Py_RETURN_NOTIMPLEMENTED;
  Dst d;
  if (!dstOf(slots[0], d)) NXS_TAKE_OR_DECLINE(nullptr);
  Owned src(pairedInput(slots[1], d.shape.get()));
  NXS_TAKE_OR_DECLINE(src.get());
  const int psum = isPsum(src.get());
  if (psum < 0) return nullptr;
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  Owned shape(slotAttr(src.get(), shapeName));  // (src.shape: the builder's iteration space)
  Owned tiles(PyTuple_Pack(1, src.get()));
  Owned pointers(PyTuple_New(0));
  if (shape.get() == nullptr || tiles.get() == nullptr || pointers.get() == nullptr) return nullptr;
  PyObject* engine = psum ? config.actEngine : config.dve;
  PyObject* made = lanewise(tr, config.tensorCopy, engine, shape.get(), tiles.get(), pointers.get(), d.view.get(),
                            d.dtype.get(), tensorCopyText, Py_None, loc.get());
  PyObject* general[8] = {tr, src.get(), d.dtype.get(), loc.get(), Py_None, nullptr, engine, tensorCopyText};
  return thenGeneral(made, d.view.get(), tensorCopyGeneralName, general, 5);
}

// 1 when refuse_illegal_reduce(tr, reduceOp, ...) passed before, as it does for Alu.add on an arch
// it has passed (instructions._REDUCE_ADD_ARCHS: the rule's verdict is the op's and the arch's
// alone), so that its call would pass again; 0 when it must be called; -1 with an error set.
int reduceAddPassed(PyObject* tr, PyObject* reduceOp) {
  if (reduceOp != config.aluAdd || config.reduceAddArchs == nullptr) return 0;
  Owned arch(PyObject_GetAttr(tr, archName));
  if (arch.get() == nullptr) return -1;
  const int t = PySet_Contains(config.reduceAddArchs, arch.get());
  if (t < 0 && PyErr_ExceptionMatches(PyExc_TypeError)) {  // (unhashable: the call's to answer)
    PyErr_Clear();
    return 0;
  }
  return t;
}

// instructions.read_accumulator(tr, dst, partitions, loc) as it runs when its write needs none of
// the tracer's general work: dst a Tensor (the class itself) of shape [partitions, 1] or
// [partitions] (pointer_view's answer is dst itself: the box is all its partitions) that
// write_plain takes for the Scalar Engine (engine_out's first step); then
// tr.record(ReadActivationAccumulator, Activation, [], [acc], None, loc). Anything else: the Python
// function, with its checks and errors (write_plain changed nothing when it declined). A new
// reference (None), null with an error set.
PyObject* readAccumulator(PyObject* tr, PyObject* dst, PyObject* partitions, PyObject* loc) {
  long long parts = 0, p = 0, f = 0;
  bool plain = Py_TYPE(dst) == reinterpret_cast<PyTypeObject*>(config.tensor) && config.writePlain != nullptr &&
               exactIntValue(partitions, parts);
  if (plain) {
    Owned shape(slotAttr(dst, shapeName));
    if (shape.get() == nullptr) return nullptr;
    const Py_ssize_t rank = PyTuple_CheckExact(shape.get()) ? PyTuple_GET_SIZE(shape.get()) : 0;
    plain = (rank == 1 || rank == 2) && exactIntValue(PyTuple_GET_ITEM(shape.get(), 0), p) && p == parts &&
            (rank == 1 || (exactIntValue(PyTuple_GET_ITEM(shape.get(), 1), f) && f == 1));
  }
  Owned acc(nullptr);
  if (plain) {
    PyObject* const write[2] = {dst, config.actEngine};
    acc.p = PyObject_Vectorcall(config.writePlain, write, 2, nullptr);
    if (acc.get() == nullptr) return nullptr;
  }
  if (acc.get() == nullptr || acc.get() == Py_None) {
    Owned read(PyObject_GetAttr(config.instructions, readAccumulatorName));
    if (read.get() == nullptr) return nullptr;
    PyObject* const call[4] = {tr, dst, partitions, loc};
    return PyObject_Vectorcall(read.get(), call, 4, nullptr);
  }
  Owned ins(PyList_New(0)), outs(PyList_New(1));
  if (ins.get() == nullptr || outs.get() == nullptr) return nullptr;
  PyList_SET_ITEM(outs.get(), 0, acc.release());
  PyObject* const rec[7] = {tr, config.readActAcc, config.actEngine, ins.get(), outs.get(), Py_None, loc};
  static MethodSite recordSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
  Owned op(recordSite.call(recordName, rec, 7));
  if (op.get() == nullptr) return nullptr;
  Py_RETURN_NONE;
}

// isa's _activation(tr, d, op, data, bias, scale, acc, loc, what) for the calls taken (see the
// file's comment), then, for activation_reduce (`reduceRes` its view, else null), its
// read_accumulator call. `reduceOp` (activation_reduce's, else null) is checked first, as
// _reduce_regs does before _activation. NotImplemented when the definition must answer.
PyObject* activationCommon(PyObject* tr, Dst& d, PyObject* op, PyObject* data, PyObject* bias, PyObject* scale,
                           PyObject* reduceOp, PyObject* reduceRes, PyObject* what) {
  PyObject* func = rememberedIn(config.actByFunction, op);
  NXS_TAKE_OR_DECLINE(func);
  if (func == config.prelu) Py_RETURN_NOTIMPLEMENTED;
  Owned keep(Py_NewRef(func));  // (held while Python runs below)
  Owned v(pairedInput(data, d.shape.get()));
  NXS_TAKE_OR_DECLINE(v.get());
  Owned b(nullptr);
  if (bias != Py_None) {  // (a number bias: the builder's constant column, or the arch's error)
    if (PyFloat_CheckExact(bias) || PyLong_CheckExact(bias)) Py_RETURN_NOTIMPLEMENTED;
    b.p = scalarOrColumn(bias, d.parts);
    NXS_TAKE_OR_DECLINE(b.get());
    const int psum = isPsum(b.get());
    if (psum < 0) return nullptr;
    if (psum == 0) {
      Owned dtype(storageAttr(b.get(), dtypeName));
      if (dtype.get() == nullptr) return nullptr;
      const int t = PySequence_Contains(config.actBiasDtypes, dtype.get());
      if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);  // (activation_general's error)
    }
  }
  Owned s(scalarOrColumn(scale, d.parts));
  NXS_TAKE_OR_DECLINE(s.get());
  const bool scaleTile = !PyFloat_CheckExact(s.get());
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  PyObject* acc = config.accIdle;
  if (reduceOp != nullptr) {  // (_reduce_regs: the rule on reduce_op, then ZeroAccumulate)
    const int passed = reduceAddPassed(tr, reduceOp);
    if (passed < 0) return nullptr;
    if (passed == 0) {
      Owned refuse(PyObject_GetAttr(config.instructions, refuseIllegalReduceName));
      if (refuse.get() == nullptr) return nullptr;
      PyObject* const call[4] = {tr, reduceOp, loc.get(), what};
      Owned refused(PyObject_Vectorcall(refuse.get(), call, 4, nullptr));
      if (refused.get() == nullptr) return nullptr;
    }
    acc = config.accZeroAccumulate;
  }
  // the builder's fields, in its order
  Owned fields(PyDict_New());
  if (fields.get() == nullptr || PyDict_SetItem(fields.get(), funcName, func) < 0 ||
      PyDict_SetItem(fields.get(), accName, acc) < 0 || PyDict_SetItem(fields.get(), accOpName, config.aluAdd) < 0 ||
      PyDict_SetItem(fields.get(), scaleName, scaleTile ? oneFloat : s.get()) < 0)
    return nullptr;
  if (b.get() != nullptr && PyDict_SetItem(fields.get(), hasBiasName, Py_True) < 0)
    return nullptr;
  if (scaleTile && PyDict_SetItem(fields.get(), hasScaleTensorName, Py_True) < 0)
    return nullptr;
  Owned pointers(b.get() != nullptr ? (scaleTile ? PyTuple_Pack(2, b.get(), s.get()) : PyTuple_Pack(1, b.get()))
                                    : (scaleTile ? PyTuple_Pack(1, s.get()) : PyTuple_New(0)));
  Owned shape(slotAttr(v.get(), shapeName));  // (data.shape: the builder's iteration space)
  Owned tiles(PyTuple_Pack(1, v.get()));
  if (pointers.get() == nullptr || shape.get() == nullptr || tiles.get() == nullptr) return nullptr;
  PyObject* made = lanewise(tr, config.activation, config.actEngine, shape.get(), tiles.get(), pointers.get(),
                            d.view.get(), d.dtype.get(), what, fields.get(), loc.get());
  PyObject* general[12] = {tr,      func,    v.get(), b.get() != nullptr ? b.get() : Py_None, s.get(), d.dtype.get(),
                           loc.get(), Py_None, nullptr, acc, config.aluAdd, what};
  Owned done(thenGeneral(made, d.view.get(), activationGeneralName, general, 8));
  if (done.get() == nullptr || reduceRes == nullptr) return done.release();
  return readAccumulator(tr, reduceRes, PyTuple_GET_ITEM(d.shape.get(), 0), loc.get());
}

PyObject* activationFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.nkiTensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const params[9] = {dstName,     opName,        dataName,      biasName, scaleName,
                               reduceOpName, reduceResName, reduceCmdName, nameName};
  PyObject* slots[9] = {};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  for (int i = 0; i < 3; ++i)
    if (slots[i] == nullptr) Py_RETURN_NOTIMPLEMENTED;  // (the definition's TypeError)
  // (reduce_op is read only with a reduce_res or another reduce_cmd: left to the definition)
  if ((slots[6] != nullptr && slots[6] != Py_None) || (slots[7] != nullptr && slots[7] != config.reduceIdle) ||
      !plainName(slots[8]))
    Py_RETURN_NOTIMPLEMENTED;
  Dst d;
  if (!dstOf(slots[0], d)) NXS_TAKE_OR_DECLINE(nullptr);
  return activationCommon(tr, d, slots[1], slots[2], slots[3] != nullptr ? slots[3] : Py_None,
                          slots[4] != nullptr ? slots[4] : oneFloat, nullptr, nullptr, activationText);
}

PyObject* activationReduceFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.nkiTensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const params[8] = {dstName,       opName,   dataName,  reduceOpName,
                               reduceResName, biasName, scaleName, nameName};
  PyObject* slots[8] = {};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  for (int i = 0; i < 5; ++i)
    if (slots[i] == nullptr) Py_RETURN_NOTIMPLEMENTED;  // (the definition's TypeError)
  if (!plainName(slots[7])) Py_RETURN_NOTIMPLEMENTED;
  Dst d;
  if (!dstOf(slots[0], d)) NXS_TAKE_OR_DECLINE(nullptr);
  PyObject* reduceOp = rememberedIn(config.aluByFunction, slots[3]);  // (its rule: refuse_illegal_reduce's)
  NXS_TAKE_OR_DECLINE(reduceOp);
  Owned keep(Py_NewRef(reduceOp));
  Owned res(onChipView(slots[4]));  // (read after the activation: _tile's error then is the definition's)
  NXS_TAKE_OR_DECLINE(res.get());
  return activationCommon(tr, d, slots[1], slots[2], slots[5] != nullptr ? slots[5] : Py_None,
                          slots[6] != nullptr ? slots[6] : oneFloat, reduceOp, res.get(), activationReduceText);
}

PyObject* tensorReduceFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.nkiTensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const params[7] = {dstName, opName, dataName, axisName, negateName, keepdimsName, nameName};
  PyObject* slots[7] = {};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  for (int i = 0; i < 4; ++i)
    if (slots[i] == nullptr) Py_RETURN_NOTIMPLEMENTED;  // (the definition's TypeError)
  PyObject* negate = slots[4] != nullptr ? slots[4] : Py_False;
  PyObject* keepdims = slots[5] != nullptr ? slots[5] : Py_False;
  // (keepdims either way: the one kept dimension of a [P, F] tile's reduction makes it [P, 1])
  if ((negate != Py_True && negate != Py_False) || (keepdims != Py_True && keepdims != Py_False) ||
      !plainName(slots[6]) || !lastAxisOfTwo(slots[3]))
    Py_RETURN_NOTIMPLEMENTED;
  PyObject* alu = rememberedIn(config.aluByFunction, slots[1]);
  NXS_TAKE_OR_DECLINE(alu);
  Owned keep(Py_NewRef(alu));  // (held while Python runs below)
  Dst d;
  if (!dstOf(slots[0], d)) NXS_TAKE_OR_DECLINE(nullptr);
  Owned v(onChipView(slots[2]));  // (no check_written: the definition makes none)
  NXS_TAKE_OR_DECLINE(v.get());
  Owned shape(slotAttr(v.get(), shapeName));
  if (shape.get() == nullptr) return nullptr;
  if (!PyTuple_CheckExact(shape.get()) || PyTuple_GET_SIZE(shape.get()) != 2) Py_RETURN_NOTIMPLEMENTED;
  // dst of the [P, 1] result's shape itself (_as answers it unchanged)
  PyObject* p = PyTuple_GET_ITEM(shape.get(), 0);
  PyObject* dShape = d.shape.get();
  if (PyTuple_GET_SIZE(dShape) != 2) Py_RETURN_NOTIMPLEMENTED;
  int t = equalTo(PyTuple_GET_ITEM(dShape, 0), p);
  if (t == 1) t = equalTo(PyTuple_GET_ITEM(dShape, 1), oneInt);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned id(PyLong_FromVoidPtr(alu));
  if (id.get() == nullptr) return nullptr;
  t = PySet_Contains(config.reduceIds, id.get());  // (not one: the builder's error)
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  t = PySet_Contains(config.bitvecIds, id.get());  // (the builder's general path)
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  // the builder's fields, axes, out_shape ((shape[0], 1): keepdims) and lanewise_plain call
  Owned fields(PyDict_New());
  Owned axes(PyList_New(1));
  Owned outShape(PyTuple_Pack(2, p, oneInt));
  Owned tiles(PyTuple_Pack(1, v.get()));
  Owned pointers(PyTuple_New(0));
  Owned plain(PyObject_GetAttr(config.instructions, lanewiseName));
  if (fields.get() == nullptr || axes.get() == nullptr || outShape.get() == nullptr || tiles.get() == nullptr ||
      pointers.get() == nullptr || plain.get() == nullptr || PyDict_SetItem(fields.get(), opName, alu) < 0 ||
      PyDict_SetItem(fields.get(), axisName, config.reduceX) < 0 || PyDict_SetItem(fields.get(), negateName, negate) < 0)
    return nullptr;
  PyList_SET_ITEM(axes.get(), 0, Py_NewRef(oneInt));
  PyObject* const call[12] = {tr,          config.tensorReduce, config.dve,     shape.get(),
                              tiles.get(), pointers.get(),      d.view.get(),   outShape.get(),
                              d.dtype.get(), tensorReduceText,  fields.get(),   loc.get()};
  PyObject* made = PyObject_Vectorcall(plain.get(), call, 12, nullptr);
  PyObject* general[12] = {tr,      alu,     v.get(), axes.get(),       Py_True,      d.dtype.get(),
                           loc.get(), Py_None, nullptr, tensorReduceText, fields.get(), outShape.get()};
  return thenGeneral(made, d.view.get(), tensorReduceGeneralName, general, 8);
}

#undef NXS_TAKE_OR_DECLINE

PyMethodDef tensorScalarDef = {
    "tensor_scalar06_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensorScalarFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "tensor_scalar06_fast(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, "
    "engine=nisa.engine.unknown, name=None): "
    "nisa.tensor_scalar's C path for its commonest calls; NotImplemented, having changed nothing, for any other."};
PyMethodDef tensorTensorDef = {
    "tensor_tensor06_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensorTensorFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "tensor_tensor06_fast(dst, data1, data2, op, engine=nisa.engine.unknown, name=None): "
    "nisa.tensor_tensor's C path for its commonest calls; NotImplemented, having changed nothing, for any other."};
PyMethodDef activationDef = {
    "activation06_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(activationFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "activation06_fast(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None, "
    "reduce_cmd=nisa.reduce_cmd.idle, name=None): "
    "nisa.activation's C path for its commonest calls; NotImplemented, having changed nothing, for any other."};
PyMethodDef tensorReduceDef = {
    "tensor_reduce06_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensorReduceFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "tensor_reduce06_fast(dst, op, data, axis, negate=False, keepdims=False, name=None): "
    "nisa.tensor_reduce's C path for its commonest calls; NotImplemented, having changed nothing, for any other."};
PyMethodDef tensorCopyDef = {
    "tensor_copy06_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensorCopyFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "tensor_copy06_fast(dst, src, engine=nisa.engine.unknown, name=None): "
    "nisa.tensor_copy's C path for its commonest calls; NotImplemented, having changed nothing, for any other."};
PyMethodDef activationReduceDef = {
    "activation_reduce06_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(activationReduceFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "activation_reduce06_fast(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None): "
    "nisa.activation_reduce's C path for its commonest calls; NotImplemented, having changed nothing, for any other."};

void bindNki06Lanewise(py::module_& m) {
  for (auto [slot, text] :
       {std::pair{&dstName, "dst"}, {&srcName, "src"}, {&dataName, "data"}, {&data1Name, "data1"}, {&data2Name, "data2"},
        {&opName, "op"}, {&op0Name, "op0"}, {&operand0Name, "operand0"}, {&reverse0Name, "reverse0"},
        {&op1Name, "op1"}, {&operand1Name, "operand1"}, {&reverse1Name, "reverse1"}, {&engineName, "engine"},
        {&nameName, "name"}, {&biasName, "bias"}, {&scaleName, "scale"}, {&reduceOpName, "reduce_op"},
        {&reduceResName, "reduce_res"}, {&reduceCmdName, "reduce_cmd"}, {&viewName, "_view"},
        {&indirectName, "_indirect"}, {&storageName, "storage"}, {&onChipName, "on_chip"}, {&shapeName, "shape"},
        {&kindName, "kind"}, {&dtypeName, "dtype"}, {&stateName, "state"}, {&writeCountName, "write_count"},
        {&forwardName, "forward"}, {&pendingZeroName, "pending_zero"},
        {&writtenPartitionsName, "written_partitions"}, {&offsetName, "offset"}, {&layoutName, "layout"},
        {&rowName, "row"}, {&funcName, "func"}, {&accName, "acc"}, {&accOpName, "acc_op"}, {&const0Name, "const0"},
        {&const1Name, "const1"}, {&hasBiasName, "has_bias"}, {&hasScaleTensorName, "has_scale_tensor"}, {&lanewiseName, "lanewise_plain"},
        {&tensorScalarGeneralName, "tensor_scalar_general"}, {&tensorTensorGeneralName, "tensor_tensor_general"},
        {&activationGeneralName, "activation_general"}, {&refuseIllegalReduceName, "refuse_illegal_reduce"},
        {&readAccumulatorName, "read_accumulator"}, {&tensorScalarText, "nisa.tensor_scalar"},
        {&tensorTensorText, "nisa.tensor_tensor"}, {&activationText, "nisa.activation"},
        {&activationReduceText, "nisa.activation_reduce"}, {&axisName, "axis"}, {&negateName, "negate"},
        {&keepdimsName, "keepdims"}, {&tensorReduceGeneralName, "tensor_reduce_general"},
        {&tensorReduceText, "nisa.tensor_reduce"}, {&tensorCopyText, "nisa.tensor_copy"},
        {&tensorCopyGeneralName, "tensor_copy_general"}, {&archName, "arch"},
        {&recordName, "record"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  zeroFloat = PyFloat_FromDouble(0.0);
  oneFloat = PyFloat_FromDouble(1.0);
  oneInt = PyLong_FromLong(1);
  if (zeroFloat == nullptr || oneFloat == nullptr || oneInt == nullptr) throw py::error_already_set();
  for (auto [def, name] : {std::pair{&tensorScalarDef, "tensor_scalar06_fast"},
                           {&tensorTensorDef, "tensor_tensor06_fast"},
                           {&activationDef, "activation06_fast"},
                           {&activationReduceDef, "activation_reduce06_fast"},
                           {&tensorReduceDef, "tensor_reduce06_fast"},
                           {&tensorCopyDef, "tensor_copy06_fast"}})
    m.attr(name) = py::reinterpret_steal<py::object>(PyCFunction_NewEx(def, nullptr, nullptr));
  m.def(
      "configure_nki06_lanewise",
      [](py::type nkiTensor, py::type tensor, py::module_ instructions, py::dict aluByFunction,
         py::dict actByFunction, py::frozenset bitvecIds, py::dict constants) {
        Config c{};
        c.nkiTensor = nkiTensor.ptr();
        c.tensor = tensor.ptr();
        c.instructions = instructions.ptr();
        c.aluByFunction = aluByFunction.ptr();
        c.actByFunction = actByFunction.ptr();
        c.bitvecIds = bitvecIds.ptr();
        PyObject** fromConstants[] = {&c.engineUnknown, &c.engineVector, &c.reduceIdle,   &c.tensorScalar,
                                      &c.tensorScalarPtr, &c.tensorTensor, &c.activation, &c.dve,
                                      &c.actEngine,     &c.bypass,       &c.aluAdd,       &c.aluPow,
                                      &c.aluAbs,        &c.aluRsqrt,     &c.prelu,        &c.accIdle,
                                      &c.accZeroAccumulate, &c.psum,     &c.intDtypes,    &c.actBiasDtypes,
                                      &c.tensorReduce,  &c.reduceX,      &c.reduceIds,
                                      &c.reduceAddArchs, &c.writePlain,  &c.readActAcc,
                                      &c.tensorCopy};
        static_assert(std::size(constantNames) == sizeof(fromConstants) / sizeof(fromConstants[0]));
        for (size_t i = 0; i < std::size(constantNames); ++i) {
          PyObject* value = PyDict_GetItemString(constants.ptr(), constantNames[i]);  // (borrowed)
          if (value == nullptr) throw py::key_error(std::string("configure_nki06_lanewise: no ") + constantNames[i]);
          *fromConstants[i] = value;
        }
        if (!PyTuple_CheckExact(c.intDtypes) || !PyTuple_CheckExact(c.actBiasDtypes))
          throw py::type_error("configure_nki06_lanewise: int_dtypes and act_bias_dtypes must be tuples");
        if (!PyFrozenSet_CheckExact(c.reduceIds))
          throw py::type_error("configure_nki06_lanewise: reduce_ids must be a frozenset");
        if (!PySet_CheckExact(c.reduceAddArchs))
          throw py::type_error("configure_nki06_lanewise: reduce_add_archs must be a set");
        // (kept for good: the module's constants, never released)
        for (PyObject* o : {c.nkiTensor, c.tensor, c.instructions, c.aluByFunction, c.actByFunction, c.bitvecIds})
          Py_INCREF(o);
        for (PyObject** slot : fromConstants) Py_INCREF(*slot);
        config = c;
      },
      py::arg("nki_tensor"), py::arg("tensor"), py::arg("instructions"), py::arg("alu_by_function"),
      py::arg("act_by_function"), py::arg("bitvec_ids"), py::arg("constants"),
      "Gives the C paths of nisa.tensor_scalar, tensor_tensor, activation, activation_reduce and tensor_reduce the NkiTensor and "
      "Tensor classes, the instructions module, opcodes' _ALU_BY_FUNCTION and _ACT_BY_FUNCTION, BITVEC_IDS and the "
      "enum members and kinds they compare with (constants: engine_unknown, engine_vector, reduce_idle, "
      "tensor_scalar, tensor_scalar_ptr, tensor_tensor, activation, dve, act_engine, bypass, alu_add, alu_pow, "
      "alu_abs, alu_rsqrt, prelu, acc_idle, acc_zero_accumulate, psum, int_dtypes, act_bias_dtypes, "
      "tensor_reduce, reduce_x, reduce_ids; and instructions._REDUCE_ADD_ARCHS, the tracer's write_plain and "
      "the ReadActivationAccumulator opcode: reduce_add_archs, write_plain, read_act_acc).");
}

NXS_REGISTER_SUBMODULE(nki, 50, "the NKI tracer's hot paths", bindNki06Lanewise);

}  // namespace nki06_lanewise
}  // namespace
}  // namespace nxs::py_bind
