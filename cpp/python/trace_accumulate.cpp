// The in-place operators of the 2.2x tracer's tensors, `dst += value`, `-=`, `*=` and `/=`
// (neuronxsim.nki.tensor.Tensor.__iadd__ ...), in C, installed on the Tensor class as method
// descriptors by `accumulate_methods()` once `configure_accumulate(...)` has given them what
// they use. `dst op= value` returns dst, having recorded:
//   nothing, when `value` is a Tensor whose instruction was masked out (its storage's state says
//   masked_out);
//   for `+=` of a Tensor into a PSUM `dst`: the matmul that produced `value` joining the
//   accumulation group open in dst, when `tr.place_matmul(value, dst, True)` takes it;
//   for a Tensor `value` of dst's shape, both on chip: the TensorTensor instruction
//   `instructions.lanewise_plain` records when it takes the operands (see lanewisePlain);
//   else whatever `_accumulate_general(tr, dst, value, name)` of neuronxsim.nki.language records
//   (one lane-wise instruction reading and writing dst; the errors), tr being `current()`.
// (The steps language.accumulate took in Python; _accumulate_general, called straight from C,
// finds the kernel's line right above its frame.)
//
// Why C: `acc[...] += nisa.nc_matmul(...)` is the inner statement of every matmul kernel, and
// the Python operator method and the function it called cost two frames per matmul.
//
// The same file holds the plain binary operators `x + y`, `x - y`, `x * y`, `x / y` and their
// reversed forms (Tensor.__add__, __radd__, ...; `operator_methods()`), which share the shortcut:
// for two on-chip exact Tensors of one shape (the commonest case of a normalisation kernel's
// `x * y`, `x - mean`) they make the `lanewise_plain` call _apply_operator -> _binary ->
// instructions.tensor_tensor makes (see binaryPlain), and for a float tile with an int or a float
// (`x / cols`, `1.0 - x`) the instructions.tensor_scalar call _binary makes (see binaryNumber);
// every other case is language._apply_operator's, called with the kernel's line as the Python
// method found it (caller_location(), one frame up: the frame running this C method).
// Why C: the Python method, _apply_operator, _binary and tensor_tensor cost four frames per
// operator, two thirds of what recording one costs.
#include "trace_builder_args.h"
#include "trace_call_site.h"
#include "trace_current.h"
#include "trace_equal.h"
#include "trace_lanewise_answer.h"
#include "trace_mask_box.h"
#include "trace_method_site.h"
#include "trace_nki06_args.h"
#include "trace_ref.h"
#include "trace_remembered.h"
#include "trace_slotted.h"
#include "trace_value_memo.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace accumulate {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

PyTypeObject* tensorClass = nullptr;
PyObject* current = nullptr;   // _core.nki.current
PyObject* language = nullptr;  // neuronxsim.nki.language (its _accumulate_general, read per call)
PyObject* psum = nullptr;      // the PSUM kind, "psum"
PyObject *storageName, *stateName, *maskedOutName, *kindName, *placeMatmulName, *generalName;
PyObject *addName, *subtractName, *multiplyName, *divideName;
PyObject *onChipName, *shapeName, *opName, *dtypeName;
// From configure_accumulate_plain: neuronxsim.nki.instructions (its lanewise_plain, read per call:
// tests replace it), the TensorTensor opcode, the Vector Engine and {operator name: its ALU op} of
// the four operators.
PyObject *instructions = nullptr, *tensorTensor = nullptr, *dve = nullptr, *aluOps = nullptr;
PyObject* nkiDtypes = nullptr;  // {NKI dtype: ...}: those _dtype accepts, as themselves
PyObject* lanewiseName = nullptr;
// From configure_accumulate_plain too: dtypes.promote (called, never re-encoded: the one home of
// the promotion rule) and {float NKI dtype: ...} (those dtypes.is_float accepts: _binary's
// divide-of-integers rule needs one of them among a division's operands to leave the dtype to
// promote), and dtypes.WEAK_SCALARS ({int: int32, float: float32, ...}: the dtype a Python number
// operand is taken as, read here, never re-encoded).
PyObject *promote = nullptr, *floatDtypes = nullptr, *weakScalars = nullptr;
PyObject *applyOperatorName, *tensorTensorGeneralName, *tensorScalarName, *tensorTensorName, *maskName;
// From configure_tensor_scalar_plain: the TensorScalar and TensorScalarPtr opcodes and Alu.bypass,
// for tensor_scalar's own lanewise_plain call (tensorScalarPlain).
PyObject *tensorScalarOpcode = nullptr, *tensorScalarPtrOpcode = nullptr, *bypass = nullptr;
PyObject *tensorScalarGeneralName, *op0Name, *const0Name, *reverse0Name, *op1Name, *const1Name, *reverse1Name;
PyObject *zeroFloat, *emptyTuple;
// From configure_isa_tensor_scalar: opcodes._ALU_BY_FUNCTION (what alu_op answered before),
// opcodes.BITVEC_IDS and nisa.engine.unknown, for nisa.tensor_scalar's C path (isaTensorScalarFast).
PyObject *aluByFunction = nullptr, *bitvecIds = nullptr, *engineUnknown = nullptr;
PyObject *dataName, *operand0Name, *operand1Name, *engineName, *data1Name, *data2Name, *data0Name, *initialName,
    *tensorTensorScanName;
// From configure_remembered_masks: indexing's IndexPredicate and Mask classes and _FULL_BOXES.

using Owned = nxs::py_bind::OwnedRef;

// promote's answers for pairs of dtype objects (by identity: promote is a function of the
// dtypes' values, and an entry holds its objects, so no address is reused while it is there).
ValueMemo<2, 1, 4> promotedMemo;

// dtypes.promote(a, b): a itself when a is b (promote's first rule, `a is b` answers a), without
// the call's frame; else promote's answer (remembered). A new reference, null with an error set.
// Why: both operands of a normalisation kernel's `x * y` are mostly of one dtype object, and
// promote's Python frame is then all the call costs; `tile / n` of a float32 tile and an int (a
// weakly typed int32) calls it once per tile, its frame a thousands instructions each.
PyObject* promoted(PyObject* a, PyObject* b) {
  if (a == b) return Py_NewRef(a);
  ValueMemo<2, 1, 4>::Key key;
  key.objects[0] = a;
  key.objects[1] = b;
  if (PyObject* known = promotedMemo.find(key)) return Py_NewRef(known);
  PyObject* const pair[2] = {a, b};
  PyObject* answer = PyObject_Vectorcall(promote, pair, 2, nullptr);
  if (answer != nullptr) promotedMemo.remember(key, answer);
  return answer;
}

// 1 when `o.storage.on_chip` (o a Tensor), 0 if not, -1 on error.
int onChip(PyObject* o) {
  Owned st(slotAttr(o, storageName));
  if (st.get() == nullptr) return -1;
  Owned flag(slotAttr(st.get(), onChipName));
  return flag.get() == nullptr ? -1 : PyObject_IsTrue(flag.get());
}

// tensor_tensor's call `lanewise_plain(tr, TensorTensor, DVE, shape, (x, y), (), out, shape,
// dtype, name, {"op": op}, loc)` (lanewise_plain read per call: tests replace it): its answer, a
// new reference, or null with an error set.
PyObject* callLanewise(PyObject* tr, PyObject* shape, PyObject* x, PyObject* y, PyObject* out, PyObject* dtype,
                       PyObject* name, PyObject* op, PyObject* loc) {
  Owned operands(PyTuple_Pack(2, x, y)), pointers(PyTuple_New(0)), fields(PyDict_New());
  if (operands.get() == nullptr || pointers.get() == nullptr || fields.get() == nullptr ||
      PyDict_SetItem(fields.get(), opName, op) < 0)
    return nullptr;
  PyObject* const call[12] = {tr,  tensorTensor, dve,   shape, operands.get(), pointers.get(),
                              out, shape,        dtype, name,  fields.get(),   loc};
  Owned lanewise(moduleAttr(instructions, lanewiseName));
  if (lanewise.get() == nullptr) return nullptr;
  return callFast(lanewise.get(), call, 12);
}

// `dst <name>= value` of two on-chip Tensors of one shape, the commonest general case (`res +=
// psum_tile` of a blocked matmul, `acc[...] += nisa.tensor_tensor(...)`), by the steps the Python
// path takes for it: _accumulate_general (dst is an on-chip Tensor: no error), _binary (x = dst, y
// = value, both on-chip Tensors; dtype dst.dtype, an NKI dtype (a key of dtypes._TO_BIR, which
// _dtype answers with itself); equal shapes) and
// instructions.tensor_tensor (add, subtract, mult and divide are not bitvec ALU ops, checked where
// they are configured; the Vector Engine; no mask; no broadcast), which is
//     lanewise_plain(tr, TensorTensor, DVE, shape, (dst, value), (), dst, shape, dtype, name,
//                    {"op": op}, loc)
// with loc the kernel's line (caller_location() of _accumulate_general: the frame above it, which
// is the one running this C method). Returns dst when recorded, null with an error set, or
// NotImplemented (a new reference) when the operands need the general path: lanewise_plain then
// changed nothing, and _accumulate_general takes it all again.
PyObject* lanewisePlain(PyObject* tr, PyObject* dst, PyObject* value, PyObject* name) {
  if (instructions == nullptr || Py_TYPE(dst) != tensorClass) Py_RETURN_NOTIMPLEMENTED;
  PyObject* op = PyDict_GetItemWithError(aluOps, name);  // (borrowed)
  if (op == nullptr) return PyErr_Occurred() ? nullptr : Py_NewRef(Py_NotImplemented);
  int t = onChip(dst);
  if (t == 1) t = onChip(value);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned shape(slotAttr(dst, shapeName)), valueShape(slotAttr(value, shapeName));
  if (shape.get() == nullptr || valueShape.get() == nullptr) return nullptr;
  t = shape.get() == valueShape.get() ? 1 : equalTo(shape.get(), valueShape.get());
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned st(slotAttr(dst, storageName));
  if (st.get() == nullptr) return nullptr;
  Owned dtype(slotAttr(st.get(), dtypeName));  // (dst.dtype: its storage's)
  if (dtype.get() == nullptr) return nullptr;
  t = PyDict_Contains(nkiDtypes, dtype.get());
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);  // (_dtype's error, if any)
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C method has none of its own)
  if (loc.get() == nullptr) return nullptr;
  Owned made(callLanewise(tr, shape.get(), dst, value, dst, dtype.get(), name, op, loc.get()));
  if (made.get() == nullptr || made.get() == Py_NotImplemented) return made.release();
  if (made.get() != dst) {  // (with a destination given it records into it, or does nothing)
    PyErr_SetString(PyExc_RuntimeError, "lanewise_plain answered other than its destination");
    return nullptr;
  }
  return made.release();
}

// `dst <name>= value` (see the file's comment): a new reference, null with an error set.
PyObject* accumulate(PyObject* dst, PyObject* value, PyObject* name) {
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the tensors' in-place operators are not configured");
    return nullptr;
  }
  Owned tr(PyObject_CallNoArgs(current));
  if (tr.get() == nullptr) return nullptr;
  const bool tile = Py_TYPE(value) == tensorClass;
  if (tile) {
    Owned st(slotAttr(value, storageName));
    if (st.get() == nullptr) return nullptr;
    Owned state(slotAttr(st.get(), stateName));
    if (state.get() == nullptr) return nullptr;
    Owned masked(slotAttr(state.get(), maskedOutName));
    if (masked.get() == nullptr) return nullptr;
    const int out = PyObject_IsTrue(masked.get());
    if (out < 0) return nullptr;
    if (out) return Py_NewRef(dst);  // the instruction computing the value was masked out
  }
  if (tile && name == addName) {
    Owned st(slotAttr(dst, storageName));
    if (st.get() == nullptr) return nullptr;
    Owned kind(slotAttr(st.get(), kindName));
    if (kind.get() == nullptr) return nullptr;
    const int inPsum = kind.get() == psum ? 1 : equalTo(kind.get(), psum);
    if (inPsum < 0) return nullptr;
    if (inPsum) {
      PyObject* const args[4] = {tr.get(), value, dst, Py_True};
      static MethodSite placeMatmulSite;
      Owned placed(placeMatmulSite.call(placeMatmulName, args, 4));
      if (placed.get() == nullptr) return nullptr;
      const int done = PyObject_IsTrue(placed.get());
      if (done < 0) return nullptr;
      if (done) return Py_NewRef(dst);
    }
  }
  if (tile) {
    Owned done(lanewisePlain(tr.get(), dst, value, name));
    if (done.get() != Py_NotImplemented) return done.release();
  }
  Owned general(moduleAttr(language, generalName));
  if (general.get() == nullptr) return nullptr;
  PyObject* const args[4] = {tr.get(), dst, value, name};
  return PyObject_Vectorcall(general.get(), args, 4, nullptr);
}

template <PyObject** name>
PyObject* inPlace(PyObject* dst, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "an in-place operator takes one operand");
    return nullptr;
  }
  return accumulate(dst, args[0], *name);
}

#define NXS_IN_PLACE(method, name, op)                                                                    \
  PyMethodDef method##Def = {#method, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(inPlace<&name>)), \
                             METH_FASTCALL, "t " op "= x: nl's " #name " of t and x, written to t."};
NXS_IN_PLACE(__iadd__, addName, "+")
NXS_IN_PLACE(__isub__, subtractName, "-")
NXS_IN_PLACE(__imul__, multiplyName, "*")
NXS_IN_PLACE(__itruediv__, divideName, "/")
#undef NXS_IN_PLACE

// `x <name> y` of two exact Tensors by the operator methods' shortcut (see the file's comment): a
// new reference, null with an error set, or NotImplemented (a new reference), having changed
// nothing, when the Python path must take them. The shortcut takes two on-chip exact Tensors of one shape, for which the Python path
// is: caller_location() (the kernel's line: the frame running this C method); _apply_operator
// (dtype None: none of the four names is in _BOOL_RESULTS); _binary (both on chip: no error; no
// dtype given, so None, or float32 for a division of which neither operand's dtype is a float:
// that case is left to Python; equal shapes) and tensor_tensor (not bitvec ops, checked where they
// are configured; DVE; dtype promote(x.dtype, y.dtype); shape x.shape; no mask, no out), which
// calls lanewise_plain and, unless it answers a Tensor, goes on with its general part
// (tensor_tensor_general) with the result lanewise_plain made, if it answered one, or none.
// (`mask`: None for the operators; binaryMasked's mask when keeps_all would answer True: it is handed
// on to tensor_tensor_general as tensor_tensor does.)
PyObject* tensorTensorPlain(PyObject* x, PyObject* y, PyObject* op, PyObject* what, PyObject* mask, bool divide);

PyObject* binaryPlain(PyObject* x, PyObject* y, PyObject* name, PyObject* mask = Py_None) {
  PyObject* op = PyDict_GetItemWithError(aluOps, name);  // (borrowed; none: tests emptied the table)
  if (op == nullptr) return PyErr_Occurred() ? nullptr : Py_NewRef(Py_NotImplemented);
  return tensorTensorPlain(x, y, op, name, mask, name == divideName);
}

// binaryPlain's steps past its op: instructions.tensor_tensor(tr, x, y, op, None, loc, mask,
// what=what) for two on-chip Tensors of one shape (`divide`: _binary's float32 rule for a division
// of integers applies: Python's), from the kernel's line. Also nisa.tensor_tensor's
// (isaTensorTensorFast), whose definition makes that call for such operands. A new reference,
// null with an error set, or NotImplemented, having changed nothing.
PyObject* tensorTensorPlain(PyObject* x, PyObject* y, PyObject* op, PyObject* what, PyObject* mask, bool divide) {
  int t = onChip(x);
  if (t == 1) t = onChip(y);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned shape(slotAttr(x, shapeName)), yShape(slotAttr(y, shapeName));
  if (shape.get() == nullptr || yShape.get() == nullptr) return nullptr;
  t = shape.get() == yShape.get() ? 1 : equalTo(shape.get(), yShape.get());
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned xStorage(slotAttr(x, storageName)), yStorage(slotAttr(y, storageName));
  if (xStorage.get() == nullptr || yStorage.get() == nullptr) return nullptr;
  Owned xDtype(slotAttr(xStorage.get(), dtypeName)), yDtype(slotAttr(yStorage.get(), dtypeName));  // (x.dtype: its storage's)
  if (xDtype.get() == nullptr || yDtype.get() == nullptr) return nullptr;
  if (divide) {  // (is either a float? else _binary's float32 rule: Python's)
    t = PyDict_Contains(floatDtypes, xDtype.get());
    if (t == 0) t = PyDict_Contains(floatDtypes, yDtype.get());
    if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  Owned dtype(promoted(xDtype.get(), yDtype.get()));
  if (dtype.get() == nullptr) return nullptr;
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C method has none of its own)
  if (loc.get() == nullptr) return nullptr;
  Owned tr(PyObject_CallNoArgs(current));
  if (tr.get() == nullptr) return nullptr;
  Owned made(callLanewise(tr.get(), shape.get(), x, y, Py_None, dtype.get(), what, op, loc.get()));
  if (made.get() == nullptr || Py_TYPE(made.get()) == tensorClass) return made.release();
  PyObject* out = unrecordedResult(made.get());  // (borrowed from made)
  if (out == nullptr) return nullptr;
  // (NotImplemented: lanewise_plain changed nothing; tensor_tensor goes on as here, out None)
  Owned general(moduleAttr(instructions, tensorTensorGeneralName));
  if (general.get() == nullptr) return nullptr;
  PyObject* const args[12] = {tr.get(), x,   y,    op,          dtype.get(), loc.get(), mask,
                              out,      dve, what, shape.get(), Py_False};
  return PyObject_Vectorcall(general.get(), args, 12, nullptr);
}

// float(x) of an exact float or int `x` (a new reference); null with no error set for anything
// else, or an int too large for a float (the builder's own conversion raises that), null with an
// error set on failure.
PyObject* exactNumber(PyObject* x) {
  if (PyFloat_CheckExact(x)) return Py_NewRef(x);  // (float(x) of a float is x)
  if (!PyLong_CheckExact(x)) return nullptr;
  const double v = PyLong_AsDouble(x);  // (what float(x) answers)
  if (v == -1.0 && PyErr_Occurred()) {  // (too large: the builder's OverflowError)
    PyErr_Clear();
    return nullptr;
  }
  return PyFloat_FromDouble(v);
}

// instructions.tensor_scalar(tr, tile, op0, scalar0, reverse0, op1', scalar1', reverse1, dtype,
// loc, None, None, DVE, name) as it runs for an exact Tensor `tile`, op0 and op1 ALU ops none of
// which is a bit-vector op (no legality call on the Vector Engine), a truthy dtype, no mask, and
// scalar0 and scalar1 each an exact Tensor or an exact float, or an exact int that converts to a
// float, a tile scalar1 only after a tile scalar0; op1 is the builder's op1 (Alu.bypass for None,
// with scalar1 0.0): _tensor_scalar_plain's lanewise_plain call (read per call from the
// instructions module: tests replace it) has the same fields, in the same order, and operands;
// unless it answers a Tensor (recorded), tensor_scalar_general goes on with the result it made but
// did not record, or None. A new reference, null with an error set, or NotImplemented (changed
// nothing) for the builder to take the call.
PyObject* tensorScalarPlain(PyObject* tr, PyObject* tile, PyObject* op0, PyObject* scalar0, bool reverse0,
                            PyObject* op1, PyObject* scalar1, bool reverse1, PyObject* dtype, PyObject* loc,
                            PyObject* name) {
  if (bypass == nullptr || Py_TYPE(tile) != tensorClass) Py_RETURN_NOTIMPLEMENTED;
  const bool tile0 = Py_TYPE(scalar0) == tensorClass, tile1 = Py_TYPE(scalar1) == tensorClass;
  if (tile1 && !tile0) Py_RETURN_NOTIMPLEMENTED;  // (operand0's constant column: the builder's general part)
  Owned const0(nullptr), const1(nullptr);
  if (!tile0) {
    const0.p = exactNumber(scalar0);
    if (const0.get() == nullptr) return PyErr_Occurred() ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  if (!tile1) {
    const1.p = exactNumber(scalar1);
    if (const1.get() == nullptr) return PyErr_Occurred() ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  int t = PyObject_IsTrue(dtype);  // (`dtype or data.dtype`)
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* rev0 = reverse0 ? Py_True : Py_False;
  PyObject* rev1 = reverse1 ? Py_True : Py_False;
  Owned shape(slotAttr(tile, shapeName));
  Owned fields(PyDict_New());
  if (shape.get() == nullptr || fields.get() == nullptr || PyDict_SetItem(fields.get(), op0Name, op0) < 0) return nullptr;
  if (tile0) {  // (_tensor_scalar_plain's order: const1 0.0 first, then the number operand1's)
    if (PyDict_SetItem(fields.get(), reverse0Name, rev0) < 0 || PyDict_SetItem(fields.get(), op1Name, op1) < 0 ||
        PyDict_SetItem(fields.get(), reverse1Name, rev1) < 0 ||
        PyDict_SetItem(fields.get(), const1Name, tile1 ? zeroFloat : const1.get()) < 0)
      return nullptr;
  } else if (PyDict_SetItem(fields.get(), const0Name, const0.get()) < 0 ||
             PyDict_SetItem(fields.get(), reverse0Name, rev0) < 0 || PyDict_SetItem(fields.get(), op1Name, op1) < 0 ||
             PyDict_SetItem(fields.get(), const1Name, const1.get()) < 0 ||
             PyDict_SetItem(fields.get(), reverse1Name, rev1) < 0) {
    return nullptr;
  }
  Owned tiles(PyTuple_Pack(1, tile));
  Owned pointers(!tile0 ? Py_NewRef(emptyTuple) : tile1 ? PyTuple_Pack(2, scalar0, scalar1) : PyTuple_Pack(1, scalar0));
  Owned lanewise(moduleAttr(instructions, lanewiseName));
  if (tiles.get() == nullptr || pointers.get() == nullptr || lanewise.get() == nullptr) return nullptr;
  PyObject* opcode = tile0 ? tensorScalarPtrOpcode : tensorScalarOpcode;
  PyObject* const call[12] = {tr,      opcode,      dve,   shape.get(), tiles.get(),  pointers.get(),
                              Py_None, shape.get(), dtype, name,        fields.get(), loc};
  Owned made(callFast(lanewise.get(), call, 12));
  if (made.get() == nullptr || Py_TYPE(made.get()) == tensorClass) return made.release();
  PyObject* out = unrecordedResult(made.get());  // (borrowed from made)
  if (out == nullptr) return nullptr;
  Owned general(moduleAttr(instructions, tensorScalarGeneralName));
  if (general.get() == nullptr) return nullptr;
  PyObject* const args[18] = {tr,  tile,    op0, scalar0, rev0, op1,    scalar1,                    rev1,     dtype,
                              loc, Py_None, out, dve,     name, opcode, tile0 ? Py_True : Py_False, tile1 ? Py_True : Py_False,
                              Py_False};
  return PyObject_Vectorcall(general.get(), args, 18, nullptr);
}

// instructions.tensor_scalar(tr, tile, op, scalar, reverse, None, None, False, dtype, loc, mask,
// None, DVE, name), the call _binary makes for a tile and a scalar (a number or a lane constant),
// with tr the tracer recording and loc the kernel's line: a new reference, null with an error set.
PyObject* tensorScalarCall(PyObject* tile, PyObject* op, PyObject* scalar, bool reverse, PyObject* dtype,
                           PyObject* mask, PyObject* name) {
  Owned loc(callSiteLocation(0));  // (the kernel's frame: these C functions have none of their own)
  if (loc.get() == nullptr) return nullptr;
  Owned tr(PyObject_CallNoArgs(current));
  if (tr.get() == nullptr) return nullptr;
  if (mask == Py_None) {  // (the builder's own steps for these operands: tensorScalarPlain)
    Owned done(tensorScalarPlain(tr.get(), tile, op, scalar, reverse, bypass, zeroFloat, false, dtype, loc.get(), name));
    if (done.get() != Py_NotImplemented) return done.release();
  }
  Owned scalarFn(moduleAttr(instructions, tensorScalarName));
  if (scalarFn.get() == nullptr) return nullptr;
  PyObject* const args[14] = {tr.get(), tile,    op,       scalar, reverse ? Py_True : Py_False,
                              Py_None,  Py_None, Py_False, dtype,  loc.get(),
                              mask,     Py_None, dve,      name};
  return PyObject_Vectorcall(scalarFn.get(), args, 14, nullptr);
}

// `tile <name> number` (reverse: `number <name> tile`) of an on-chip exact Tensor of a float dtype
// and an exact int or float: the call _apply_operator -> _binary makes,
//     instructions.tensor_scalar(tr, tile, op, number, reverse, None, None, False, dtype, loc,
//                                mask, None, DVE, name)
// (mask None for an operator; nl.<name>'s mask, which _binary hands on as it is, for binaryFast)
// with dtype promote(tile.dtype, WEAK_SCALARS[type(number)]), _binary's dtypes.promote_scalar (a
// float tile: _binary's integer-division rule does not apply; a bool is no exact int). A new
// reference, null with an error set, or NotImplemented (a new reference), having changed nothing,
// for any other operands.
PyObject* binaryNumber(PyObject* tile, PyObject* number, bool reverse, PyObject* name, PyObject* mask) {
  if (!PyLong_CheckExact(number) && !PyFloat_CheckExact(number)) Py_RETURN_NOTIMPLEMENTED;
  PyObject* op = PyDict_GetItemWithError(aluOps, name);  // (borrowed; none: tests emptied the table)
  if (op == nullptr) return PyErr_Occurred() ? nullptr : Py_NewRef(Py_NotImplemented);
  int t = onChip(tile);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned storage(slotAttr(tile, storageName));
  if (storage.get() == nullptr) return nullptr;
  Owned dtype(slotAttr(storage.get(), dtypeName));  // (tile.dtype: its storage's)
  if (dtype.get() == nullptr) return nullptr;
  t = PyDict_Contains(floatDtypes, dtype.get());
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* weak = PyDict_GetItemWithError(weakScalars, reinterpret_cast<PyObject*>(Py_TYPE(number)));  // (borrowed)
  if (weak == nullptr) return PyErr_Occurred() ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned promotedDtype(promoted(dtype.get(), weak));
  if (promotedDtype.get() == nullptr) return nullptr;
  return tensorScalarCall(tile, op, number, reverse, promotedDtype.get(), mask, name);
}

// The facts _binary tests of two exact Tensors x and y before it picks an instruction: 1 when both
// are on chip and, for a division, one's dtype is a float (so that _binary leaves the dtype None:
// its integer-division rule is Python's), with op the name's ALU op (borrowed), their shapes and
// their dtypes (their storages') set; 0, having changed nothing, when Python must take them; -1
// with an error set.
struct Pair {
  PyObject* op = nullptr;
  Owned xShape{nullptr}, yShape{nullptr}, xDtype{nullptr}, yDtype{nullptr};
};
int pairFacts(PyObject* x, PyObject* y, PyObject* name, Pair& p) {
  p.op = PyDict_GetItemWithError(aluOps, name);  // (none: tests emptied the table)
  if (p.op == nullptr) return PyErr_Occurred() ? -1 : 0;
  int t = onChip(x);
  if (t == 1) t = onChip(y);
  if (t != 1) return t;
  p.xShape.p = slotAttr(x, shapeName);
  p.yShape.p = slotAttr(y, shapeName);
  if (p.xShape.get() == nullptr || p.yShape.get() == nullptr) return -1;
  Owned xStorage(slotAttr(x, storageName)), yStorage(slotAttr(y, storageName));
  if (xStorage.get() == nullptr || yStorage.get() == nullptr) return -1;
  p.xDtype.p = slotAttr(xStorage.get(), dtypeName);
  p.yDtype.p = slotAttr(yStorage.get(), dtypeName);
  if (p.xDtype.get() == nullptr || p.yDtype.get() == nullptr) return -1;
  if (name != divideName) return 1;
  t = PyDict_Contains(floatDtypes, p.xDtype.get());
  return t == 0 ? PyDict_Contains(floatDtypes, p.yDtype.get()) : t;
}

// _binary's test of a lane constant (one element per partition: [P, 1], [P], [P, 1, 1]...), for a
// shape tuple of at least one entry whose free entries are exact ints: 1 when they are all 1 (their
// product is 1: sizes are never negative), 0 when one is another int, -1 when some entry is no
// exact int (Python must take it).
int isColumn(PyObject* shape) {
  int column = 1;
  for (Py_ssize_t i = 1; i < PyTuple_GET_SIZE(shape); ++i) {
    PyObject* size = PyTuple_GET_ITEM(shape, i);
    if (!PyLong_CheckExact(size)) return -1;
    int overflow = 0;
    const long n = PyLong_AsLongAndOverflow(size, &overflow);
    if (n < 0 || overflow != 0) return -1;  // (never a size: Python's)
    if (n != 1) column = 0;
  }
  return column;
}

// `x <name> y` of two on-chip exact Tensors of the same partitions, one a lane constant (see
// isColumn) and the other not (`x * rstd`, `x - mean`): the call _binary makes for them,
//     instructions.tensor_scalar(tr, data, op, column, reverse, None, None, False,
//                                promote(x.dtype, y.dtype), loc, mask, None, DVE, name)
// with column the lane constant, data the other and reverse whether the column is x (same
// partitions: no broadcast; different shapes: no tensor_tensor; dtype None, the division rule left
// to Python by pairFacts). A new reference, null with an error set, or NotImplemented (a new
// reference), having changed nothing, for any other operands.
PyObject* binaryColumn(PyObject* x, PyObject* y, PyObject* name, PyObject* mask) {
  Pair p;
  int t = pairFacts(x, y, name, p);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject *xs = p.xShape.get(), *ys = p.yShape.get();
  if (!PyTuple_CheckExact(xs) || !PyTuple_CheckExact(ys) || PyTuple_GET_SIZE(xs) == 0 || PyTuple_GET_SIZE(ys) == 0)
    Py_RETURN_NOTIMPLEMENTED;
  t = equalTo(PyTuple_GET_ITEM(xs, 0), PyTuple_GET_ITEM(ys, 0));
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  const int xColumn = isColumn(xs), yColumn = isColumn(ys);
  if (xColumn < 0 || yColumn < 0 || xColumn == yColumn) Py_RETURN_NOTIMPLEMENTED;
  const bool reverse = xColumn == 1;
  Owned dtype(promoted(p.xDtype.get(), p.yDtype.get()));
  if (dtype.get() == nullptr) return nullptr;
  return tensorScalarCall(reverse ? y : x, p.op, reverse ? x : y, reverse, dtype.get(), mask, name);
}

// `nl.<name>(x, y, mask=mask)` of two on-chip exact Tensors of one shape: the call _binary makes,
//     instructions.tensor_tensor(tr, x, y, op, None, loc, mask, None, DVE, name)
// (the dtype None: the division rule left to Python by pairFacts). A new reference, null with an
// error set, or NotImplemented (a new reference), having changed nothing, for any other operands.
PyObject* binaryMasked(PyObject* x, PyObject* y, PyObject* name, PyObject* mask) {
  Pair p;
  int t = pairFacts(x, y, name, p);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  t = p.xShape.get() == p.yShape.get() ? 1 : equalTo(p.xShape.get(), p.yShape.get());
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  // (a mask keeping the whole tile, as tensor_tensor's keeps_all finds it: its lanewise_plain call,
  // as without a mask, the mask handed on to its general part)
  t = rememberedKeepsAll(mask, p.xShape.get());
  if (t < 0) return nullptr;
  if (t == 1) {
    Owned done(binaryPlain(x, y, name, mask));
    if (done.get() != Py_NotImplemented) return done.release();
  }
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  Owned tr(PyObject_CallNoArgs(current));
  if (tr.get() == nullptr) return nullptr;
  Owned tensorTensorFn(moduleAttr(instructions, tensorTensorName));
  if (tensorTensorFn.get() == nullptr) return nullptr;
  PyObject* const args[10] = {tr.get(), x, y, p.op, Py_None, loc.get(), mask, Py_None, dve, name};
  return PyObject_Vectorcall(tensorTensorFn.get(), args, 10, nullptr);
}

// `x <name> y` (see binaryPlain and binaryNumber): a new reference, null with an error set.
PyObject* binary(PyObject* x, PyObject* y, PyObject* name) {
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the tensors' operators are not configured");
    return nullptr;
  }
  if (instructions != nullptr) {
    const bool xt = Py_TYPE(x) == tensorClass, yt = Py_TYPE(y) == tensorClass;
    Owned done(xt && yt ? binaryPlain(x, y, name)
               : xt     ? binaryNumber(x, y, false, name, Py_None)
               : yt     ? binaryNumber(y, x, true, name, Py_None)
                        : Py_NewRef(Py_NotImplemented));
    if (done.get() == Py_NotImplemented && xt && yt) {  // (not one shape: a lane constant?)
      Owned column(binaryColumn(x, y, name, Py_None));
      if (column.get() != Py_NotImplemented) return column.release();
    } else if (done.get() != Py_NotImplemented) {
      return done.release();
    }
  }
  Owned loc(callSiteLocation(0));  // (what the Python method's caller_location() answers)
  if (loc.get() == nullptr) return nullptr;
  Owned apply(moduleAttr(language, applyOperatorName));
  if (apply.get() == nullptr) return nullptr;
  PyObject* const args[4] = {x, y, name, loc.get()};
  return PyObject_Vectorcall(apply.get(), args, 4, nullptr);
}

template <PyObject** name, bool reversed>
PyObject* operatorMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "a binary operator takes one operand");
    return nullptr;
  }
  return reversed ? binary(args[0], self, *name) : binary(self, args[0], *name);
}

#define NXS_OPERATOR(method, name, reversed, doc)                                                          \
  PyMethodDef method##Def = {#method,                                                                      \
                             reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(operatorMethod<&name, reversed>)), \
                             METH_FASTCALL, doc};
NXS_OPERATOR(__add__, addName, false, "t + x: nl.add(t, x).")
NXS_OPERATOR(__radd__, addName, true, "x + t: nl.add(x, t).")
NXS_OPERATOR(__sub__, subtractName, false, "t - x: nl.subtract(t, x).")
NXS_OPERATOR(__rsub__, subtractName, true, "x - t: nl.subtract(x, t).")
NXS_OPERATOR(__mul__, multiplyName, false, "t * x: nl.multiply(t, x).")
NXS_OPERATOR(__rmul__, multiplyName, true, "x * t: nl.multiply(x, t).")
NXS_OPERATOR(__truediv__, divideName, false, "t / x: nl.divide(t, x).")
NXS_OPERATOR(__rtruediv__, divideName, true, "x / t: nl.divide(x, t).")
#undef NXS_OPERATOR

// `nl.<name>(x, y, *, mask=None)` (self: the name, add, subtract, multiply or divide), the C path
// of the four functions (language.py wraps them in FastCalls, trace_fast_call.cpp): the definition
// calls _binary(x, y, op, None, mask, loc, what=name), which is _apply_operator's call with the
// mask added, so without a mask these are the operators' shortcuts (binaryPlain, binaryColumn,
// binaryNumber) and with one the same steps with the mask handed on (binaryMasked for one shape).
// A dtype, any other keyword or argument count, and every operand the shortcuts decline return
// NotImplemented, having changed nothing: the definition answers them (its TypeErrors too).
// Why C: the function's frame and _binary's cost a third of recording `nl.multiply(x, rstd)`.
PyObject* binaryFast(PyObject* name, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (tensorClass == nullptr || instructions == nullptr || nargs != 2) Py_RETURN_NOTIMPLEMENTED;
  PyObject* mask = Py_None;
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  if (nkw > 1 || (nkw == 1 && PyTuple_GET_ITEM(kwnames, 0) != maskName)) Py_RETURN_NOTIMPLEMENTED;
  if (nkw == 1) mask = args[2];
  PyObject *x = args[0], *y = args[1];
  const bool xt = Py_TYPE(x) == tensorClass, yt = Py_TYPE(y) == tensorClass;
  if (xt && !yt) return binaryNumber(x, y, false, name, mask);
  if (yt && !xt) return binaryNumber(y, x, true, name, mask);
  if (!xt) Py_RETURN_NOTIMPLEMENTED;
  Owned done(mask == Py_None ? binaryPlain(x, y, name) : binaryMasked(x, y, name, mask));
  if (done.get() != Py_NotImplemented) return done.release();
  return binaryColumn(x, y, name, mask);
}

// alu_op's remembered answer for the operator `fn` (_ALU_BY_FUNCTION): 1 with `alu` set (a new
// reference: held while Python runs), 0 when alu_op must answer (not remembered, or unhashable:
// nothing set), -1 with an error set.
int rememberedAlu(PyObject* fn, Owned& alu) {
  PyObject* found = rememberedIn(aluByFunction, fn);  // (borrowed)
  if (found == nullptr) return PyErr_Occurred() ? -1 : 0;
  alu.p = Py_NewRef(found);
  return 1;
}

// nisa.tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, *,
// dtype=None, mask=None, engine=engine.unknown) (neuronxsim.nki.isa) for its commonest call: data
// an on-chip exact Tensor, op0 (and op1 when not None) an operator alu_op answered before (its memo
// _ALU_BY_FUNCTION holds it) and no bit-vector one, reverse flags bools, operand1 given exactly when
// op1 is, no dtype, mask or engine (or engine.unknown), each operand an on-chip exact Tensor or an
// exact float or int (a tile operand1 only after a tile operand0): the definition's builder call
// instructions.tensor_scalar(tr, data, a0, operand0, reverse0, a1, operand1, reverse1, None, loc,
// None, engine=DVE) made by tensorScalarPlain (the builder's own two steps for these operands).
// Anything else returns NotImplemented having changed nothing: the definition's, with every check
// and error. tr is the tracer recording (none: the definition's error), loc the kernel's line
// (the frame calling the FastCall).
// Why C: the definition, alu_op twice, the builder and _tensor_scalar_plain were five frames per
// call, most of what recording layernorm's normalisation step cost.
PyObject* isaTensorScalarFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (aluByFunction == nullptr || bypass == nullptr || instructions == nullptr || nargs > 7)
    Py_RETURN_NOTIMPLEMENTED;  // (more than 7 positional: the definition's TypeError)
  PyObject* const params[10] = {dataName,     op0Name,      operand0Name, reverse0Name, op1Name,
                                operand1Name, reverse1Name, dtypeName,    maskName,     engineName};
  PyObject* slots[10] = {};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  PyObject *data = slots[0], *op0 = slots[1], *operand0 = slots[2];
  if (data == nullptr || op0 == nullptr || operand0 == nullptr) Py_RETURN_NOTIMPLEMENTED;  // (its TypeError)
  PyObject* reverse0 = slots[3] != nullptr ? slots[3] : Py_False;
  PyObject* op1 = slots[4] != nullptr ? slots[4] : Py_None;
  PyObject* operand1 = slots[5] != nullptr ? slots[5] : Py_None;
  PyObject* reverse1 = slots[6] != nullptr ? slots[6] : Py_False;
  if ((reverse0 != Py_True && reverse0 != Py_False) || (reverse1 != Py_True && reverse1 != Py_False) ||
      (op1 == Py_None) != (operand1 == Py_None) || (slots[7] != nullptr && slots[7] != Py_None) ||
      (slots[8] != nullptr && slots[8] != Py_None) || (slots[9] != nullptr && slots[9] != engineUnknown))
    Py_RETURN_NOTIMPLEMENTED;
  if (Py_TYPE(data) != tensorClass) Py_RETURN_NOTIMPLEMENTED;
  int t = onChip(data);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  for (PyObject* operand : {operand0, operand1}) {  // (tiles: exact and on chip, as _tile answers at once)
    if (Py_TYPE(operand) != tensorClass) continue;  // (numbers: tensorScalarPlain's; a subclass: declined there)
    t = onChip(operand);
    if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  Owned keep0(nullptr);
  t = rememberedAlu(op0, keep0);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* a0 = keep0.get();
  Owned keep1(nullptr);
  if (op1 == Py_None) {
    keep1.p = Py_NewRef(bypass);  // (the builder's Alu.bypass, operand1 0.0)
  } else {
    t = rememberedAlu(op1, keep1);
    if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  t = idIn(bitvecIds, a0);
  if (t == 0) t = idIn(bitvecIds, keep1.get());
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);  // (the legality rules' path)
  PyObject* tr = currentTracer();  // (borrowed)
  if (tr == nullptr) Py_RETURN_NOTIMPLEMENTED;
  Owned st(slotAttr(data, storageName));
  if (st.get() == nullptr) return nullptr;
  Owned dtype(slotAttr(st.get(), dtypeName));  // (`dtype or data.dtype`, dtype None: its storage's)
  if (dtype.get() == nullptr) return nullptr;
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  return tensorScalarPlain(tr, data, a0, operand0, reverse0 == Py_True, keep1.get(),
                           op1 == Py_None ? zeroFloat : operand1, reverse1 == Py_True, dtype.get(), loc.get(),
                           tensorScalarName);
}

// Alu.pow (borrowed: kept for good; found once through the class of Alu.bypass), or null with an
// error set.
PyObject* aluPow() {
  static PyObject* pow = nullptr;
  if (pow == nullptr) pow = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(bypass)), "pow");
  return pow;
}

// nisa.tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=unknown)'s usual call:
// two exact on-chip Tensors, an op alu_op answered before (_ALU_BY_FUNCTION) that is neither a
// bitvec op nor pow (whose default engine depends on the operands' memories), no dtype, mask or
// engine. The definition then calls instructions.tensor_tensor(tr, data1, data2, alu, None, loc,
// None, engine=DVE), tensorTensorPlain's call for operands of one shape; anything else (and every
// error) is the definition's.
// Why C: mamba's scan makes three of these per step, and the definition's frame, with alu_op's,
// _tile's, _engine's and _dtype's, cost more than recording the instruction.
PyObject* isaTensorTensorFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (aluByFunction == nullptr || bypass == nullptr || instructions == nullptr || nargs > 3)
    Py_RETURN_NOTIMPLEMENTED;  // (more than 3 positional: the definition's TypeError)
  PyObject* const params[6] = {data1Name, data2Name, opName, dtypeName, maskName, engineName};
  PyObject* slots[6] = {};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  PyObject *x = slots[0], *y = slots[1], *fn = slots[2];
  if (x == nullptr || y == nullptr || fn == nullptr || (slots[3] != nullptr && slots[3] != Py_None) ||
      (slots[4] != nullptr && slots[4] != Py_None) ||
      (slots[5] != nullptr && slots[5] != Py_None && slots[5] != engineUnknown) || Py_TYPE(x) != tensorClass ||
      Py_TYPE(y) != tensorClass)
    Py_RETURN_NOTIMPLEMENTED;
  Owned keep(nullptr);
  int t = rememberedAlu(fn, keep);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* alu = keep.get();
  PyObject* pow = aluPow();
  if (pow == nullptr) return nullptr;
  t = alu == pow ? 1 : idIn(bitvecIds, alu);
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  return tensorTensorPlain(x, y, alu, tensorTensorName, Py_None, false);
}

// nisa.tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *,
// dtype=None, mask=None)'s usual call: two exact on-chip Tensors, operators alu_op answered before,
// no reverse flag (whose rule is the definition's), dtype or mask. The definition then calls the
// builder instructions.tensor_tensor_scan(tr, data0, data1, initial, op0, op1, None, loc, None):
// that call, made here (the builder, read per call, stays the one home of the scan); anything
// else (and every error) is the definition's.
// Why C: mamba's scan makes one per step, and the definition's frame, with alu_op's and _tile's,
// cost as much as the builder.
PyObject* isaTensorTensorScanFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (aluByFunction == nullptr || instructions == nullptr || nargs > 7)
    Py_RETURN_NOTIMPLEMENTED;  // (more than 7 positional: the definition's TypeError)
  PyObject* const params[9] = {data0Name,    data1Name,    initialName, op0Name, op1Name,
                               reverse0Name, reverse1Name, dtypeName,   maskName};
  PyObject* slots[9] = {};
  if (!bindNki06Args(args, nargs, kwnames, params, slots)) Py_RETURN_NOTIMPLEMENTED;
  for (int i = 0; i < 5; ++i)
    if (slots[i] == nullptr) Py_RETURN_NOTIMPLEMENTED;  // (its TypeError)
  if ((slots[5] != nullptr && slots[5] != Py_False) || (slots[6] != nullptr && slots[6] != Py_False) ||
      (slots[7] != nullptr && slots[7] != Py_None) || (slots[8] != nullptr && slots[8] != Py_None) ||
      Py_TYPE(slots[0]) != tensorClass || Py_TYPE(slots[1]) != tensorClass)
    Py_RETURN_NOTIMPLEMENTED;
  int t = onChip(slots[0]);
  if (t == 1) t = onChip(slots[1]);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned a0(nullptr), a1(nullptr);
  t = rememberedAlu(slots[3], a0);
  if (t == 1) t = rememberedAlu(slots[4], a1);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  PyObject* tr = currentTracer();  // (borrowed)
  if (tr == nullptr) Py_RETURN_NOTIMPLEMENTED;
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  Owned builder(moduleAttr(instructions, tensorTensorScanName));
  if (builder.get() == nullptr) return nullptr;
  PyObject* const call[9] = {tr, slots[0], slots[1], slots[2], a0.get(), a1.get(), Py_None, loc.get(), Py_None};
  return PyObject_Vectorcall(builder.get(), call, 9, nullptr);
}

PyMethodDef isaTensorTensorScanFastDef = {
    "isa_tensor_tensor_scan_fast",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(isaTensorTensorScanFast)), METH_FASTCALL | METH_KEYWORDS,
    "nisa.tensor_tensor_scan's C path (NotImplemented: the definition's)."};

PyMethodDef isaTensorTensorFastDef = {
    "isa_tensor_tensor_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(isaTensorTensorFast)),
    METH_FASTCALL | METH_KEYWORDS, "nisa.tensor_tensor's C path (NotImplemented: the definition's)."};

PyMethodDef isaTensorScalarFastDef = {
    "isa_tensor_scalar_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(isaTensorScalarFast)),
    METH_FASTCALL | METH_KEYWORDS, "nisa.tensor_scalar's C path (NotImplemented: the definition's)."};

PyMethodDef binaryFastDef = {"binary_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(binaryFast)),
                             METH_FASTCALL | METH_KEYWORDS,
                             "binary_fast(x, y, *, mask=None): nl.<name>'s C path (NotImplemented: the definition's)."};

void bindAccumulate(py::module_& m) {
  for (auto [slot, text] :
       {std::pair{&storageName, "storage"}, {&stateName, "state"}, {&maskedOutName, "masked_out"},
        {&kindName, "kind"}, {&placeMatmulName, "place_matmul"}, {&generalName, "_accumulate_general"},
        {&addName, "add"}, {&subtractName, "subtract"}, {&multiplyName, "multiply"}, {&divideName, "divide"},
        {&onChipName, "on_chip"}, {&shapeName, "shape"}, {&opName, "op"}, {&dtypeName, "dtype"},
        {&lanewiseName, "lanewise_plain"}, {&applyOperatorName, "_apply_operator"},
        {&tensorTensorGeneralName, "tensor_tensor_general"}, {&tensorScalarName, "tensor_scalar"},
        {&tensorTensorName, "tensor_tensor"}, {&maskName, "mask"},
        {&tensorScalarGeneralName, "tensor_scalar_general"}, {&op0Name, "op0"}, {&const0Name, "const0"},
        {&reverse0Name, "reverse0"}, {&op1Name, "op1"}, {&const1Name, "const1"}, {&reverse1Name, "reverse1"},
        {&dataName, "data"}, {&operand0Name, "operand0"}, {&operand1Name, "operand1"}, {&engineName, "engine"},
        {&data1Name, "data1"}, {&data2Name, "data2"}, {&data0Name, "data0"}, {&initialName, "initial"},
        {&tensorTensorScanName, "tensor_tensor_scan"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  zeroFloat = PyFloat_FromDouble(0.0);
  emptyTuple = PyTuple_New(0);
  if (zeroFloat == nullptr || emptyTuple == nullptr) throw py::error_already_set();
  m.def(
      "configure_tensor_scalar_plain",
      [](py::object tensorScalar, py::object tensorScalarPtr, py::object bypassOp) {
        for (PyObject** slot : {&tensorScalarOpcode, &tensorScalarPtrOpcode, &bypass}) Py_XDECREF(*slot);
        tensorScalarOpcode = tensorScalar.inc_ref().ptr();
        tensorScalarPtrOpcode = tensorScalarPtr.inc_ref().ptr();
        bypass = bypassOp.inc_ref().ptr();
      },
      py::arg("tensor_scalar"), py::arg("tensor_scalar_ptr"), py::arg("bypass"),
      "Gives the operators' tensor_scalar calls the TensorScalar and TensorScalarPtr opcodes and Alu.bypass, to make "
      "the builder's lanewise_plain call themselves (without a mask).");
  m.def(
      "configure_isa_tensor_scalar",
      [](py::dict aluMemo, py::frozenset bitvec, py::object unknown) {
        for (PyObject** slot : {&aluByFunction, &bitvecIds, &engineUnknown}) Py_XDECREF(*slot);
        aluByFunction = aluMemo.inc_ref().ptr();
        bitvecIds = bitvec.inc_ref().ptr();
        engineUnknown = unknown.inc_ref().ptr();
      },
      py::arg("alu_by_function"), py::arg("bitvec_ids"), py::arg("engine_unknown"),
      "Gives nisa.tensor_scalar's C path (isa_tensor_scalar_fast) opcodes._ALU_BY_FUNCTION, opcodes.BITVEC_IDS and "
      "nisa.engine.unknown.");
  m.attr("isa_tensor_scalar_fast") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&isaTensorScalarFastDef, nullptr, nullptr));
  m.attr("isa_tensor_tensor_fast") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&isaTensorTensorFastDef, nullptr, nullptr));
  m.attr("isa_tensor_tensor_scan_fast") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&isaTensorTensorScanFastDef, nullptr, nullptr));
  m.def(
      "configure_accumulate",
      [](py::type tensor, py::object currentFn, py::module_ languageModule, py::str psumKind) {
        for (PyObject** slot : {&current, &language, &psum}) Py_XDECREF(*slot);
        Py_XDECREF(reinterpret_cast<PyObject*>(tensorClass));
        tensorClass = reinterpret_cast<PyTypeObject*>(tensor.inc_ref().ptr());
        current = currentFn.inc_ref().ptr();
        language = languageModule.inc_ref().ptr();
        psum = psumKind.inc_ref().ptr();
      },
      py::arg("tensor_class"), py::arg("current"), py::arg("language"), py::arg("psum"),
      "Gives the in-place operators the Tensor class, current(), the language module (whose "
      "_accumulate_general(tr, dst, value, name) records what they do not) and the PSUM kind.");
  m.def(
      "configure_accumulate_plain",
      [](py::module_ instructionsModule, py::object tensorTensorOpcode, py::object vectorEngine, py::dict ops,
         py::dict dtypes, py::object promoteFn, py::dict floats, py::dict weak) {
        for (PyObject** slot :
             {&instructions, &tensorTensor, &dve, &aluOps, &nkiDtypes, &promote, &floatDtypes, &weakScalars})
          Py_XDECREF(*slot);
        weakScalars = weak.inc_ref().ptr();
        nkiDtypes = dtypes.inc_ref().ptr();
        promote = promoteFn.inc_ref().ptr();
        floatDtypes = floats.inc_ref().ptr();
        instructions = instructionsModule.inc_ref().ptr();
        tensorTensor = tensorTensorOpcode.inc_ref().ptr();
        dve = vectorEngine.inc_ref().ptr();
        aluOps = ops.inc_ref().ptr();
      },
      py::arg("instructions"), py::arg("tensor_tensor"), py::arg("dve"), py::arg("alu_ops"), py::arg("dtypes"),
      py::arg("promote"), py::arg("float_dtypes"), py::arg("weak_scalars"),
      "Gives the in-place and binary operators the instructions module (whose lanewise_plain and tensor_tensor_general they call), the "
      "TensorTensor opcode, the Vector Engine, {name: ALU op} of add, subtract, multiply and divide (none a bitvec op), {NKI dtype: ...}, "
      "dtypes.promote, {float NKI dtype: ...} and dtypes.WEAK_SCALARS, to record `t op= x` and `t op x` of two on-chip tiles of one shape themselves.");
  m.def(
      "accumulate_methods",
      []() {
        if (tensorClass == nullptr) throw py::type_error("accumulate_methods: call configure_accumulate first");
        py::dict methods;
        for (PyMethodDef* def : {&__iadd__Def, &__isub__Def, &__imul__Def, &__itruediv__Def}) {
          PyObject* descr = PyDescr_NewMethod(tensorClass, def);
          if (descr == nullptr) throw py::error_already_set();
          methods[def->ml_name] = py::reinterpret_steal<py::object>(descr);
        }
        return methods;
      },
      "{name: method} of Tensor's in-place operators (__iadd__, __isub__, __imul__, __itruediv__) in C.");
  m.def(
      "binary_fast",
      [](py::str name) {
        PyObject* text = Py_NewRef(name.ptr());
        PyUnicode_InternInPlace(&text);  // (the interned name: the shortcuts compare names by identity)
        py::object fast = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&binaryFastDef, text, nullptr));
        Py_DECREF(text);
        if (!fast) throw py::error_already_set();
        return fast;
      },
      py::arg("name"),
      "The C path of nl.<name>(x, y, *, mask=None) for add, subtract, multiply and divide: a result, or NotImplemented "
      "for the Python definition to answer (use in a FastCall).");
  m.def(
      "operator_methods",
      []() {
        if (tensorClass == nullptr) throw py::type_error("operator_methods: call configure_accumulate first");
        py::dict methods;
        for (PyMethodDef* def : {&__add__Def, &__radd__Def, &__sub__Def, &__rsub__Def, &__mul__Def, &__rmul__Def,
                                 &__truediv__Def, &__rtruediv__Def}) {
          PyObject* descr = PyDescr_NewMethod(tensorClass, def);
          if (descr == nullptr) throw py::error_already_set();
          methods[def->ml_name] = py::reinterpret_steal<py::object>(descr);
        }
        return methods;
      },
      "{name: method} of Tensor's binary operators (__add__, __radd__, __sub__, __rsub__, __mul__, __rmul__, __truediv__, "
      "__rtruediv__) in C.");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindAccumulate);

}  // namespace accumulate
}  // namespace
}  // namespace nxs::py_bind
