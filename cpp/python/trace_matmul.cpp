// The commonest matmul of a trace, `_core.nki.matmul_plain(tr, stationary, moving, loc)`
// (neuronxsim.nki.instructions.matmul, which calls it first for a plain matmul: no fields, not a
// transpose, starting its group, into PSUM): the Tensor of its new fp32 PSUM result, recorded;
// NotImplemented, having changed nothing, when it needs matmul's general path.
//
// It applies when both operands are 2-D Tensors whose reads need none of the tracer's general work
// (written, not forwarded, no pending nl.zeros zeros, no index checks, a plain_tile_access for the
// PE) and the legality rules' verdict on the matmul is known to be "legal": the table
// `instructions._MATMUL_VERDICTS` (filled by refuse_illegal_matmul from
// neuronxsim.bir.legality.matmul, the rules' one home) holds None for its key. Then, as matmul:
// the result tile (tr.new_result(PSUM, float32, (M, N), "matmul", loc)), written fresh, and
// tr.record(Matmult, PE, [stationary, moving], [result], {start, stop, is_transpose False}, loc).
//
// `configure_matmul(tensor_class, plain_tile_access, verdicts, matmult, pe, psum, float32)` gives
// it the Tensor class, the tracer's plain_tile_access, the verdict table, the Matmult opcode, the
// PE engine, the PSUM kind and the float32 dtype.
//
// Why C: the matmuls of a kernel's inner loop are a large share of its instructions, and matmul's
// Python steps (with refuse_illegal_matmul and two engine_in) cost several frames each.
#include "trace_equal.h"
#include "trace_call_site.h"
#include "trace_current.h"
#include "trace_int_tuples.h"
#include "trace_keywords.h"
#include "trace_method_site.h"
#include "trace_place_matmul.h"
#include "trace_ref.h"

#include "bindings.h"
#include "trace_slotted.h"

namespace nxs::py_bind {
namespace {
namespace matmul_plain {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

struct Names {
  PyObject *storage, *state, *forward, *pending_zero, *write_count, *checks, *shape, *kind, *dtype, *arch,
      *new_result, *write_fresh, *record, *start_tensor_calc, *stop_tensor_calc, *is_transpose, *matmul, *on_chip,
      *transpose_x, *mask, *reason;
};
Names names{};
PyObject* tensorClass = nullptr;
PyObject* plainTileAccess = nullptr;
PyObject* verdicts = nullptr;
PyObject* matmult = nullptr;
PyObject* pe = nullptr;
PyObject* psum = nullptr;
PyObject* float32 = nullptr;
PyObject* writePlain = nullptr;
PyObject* nkiError = nullptr;

using Owned = nxs::py_bind::OwnedRef;

// One operand: its storage, shape and the access the PE reads it by.
struct Operand {
  Owned st{nullptr}, shape{nullptr}, access{nullptr}, kind{nullptr}, dtype{nullptr};
  // 1 when the operand takes the plain path, 0 if not, -1 on error.
  int read(PyObject* view) {
    if (Py_TYPE(view) != reinterpret_cast<PyTypeObject*>(tensorClass)) return 0;
    st.p = slotAttr(view, names.storage);
    shape.p = slotAttr(view, names.shape);
    if (st.get() == nullptr || shape.get() == nullptr) return -1;
    if (!PyTuple_CheckExact(shape.get()) || PyTuple_GET_SIZE(shape.get()) != 2) return 0;
    Owned s(slotAttr(st.get(), names.state));
    if (s.get() == nullptr) return -1;
    Owned forward(slotAttr(s.get(), names.forward));
    Owned pending(slotAttr(s.get(), names.pending_zero));
    Owned count(slotAttr(s.get(), names.write_count));
    Owned checks(slotAttr(view, names.checks));
    if (forward.get() == nullptr || pending.get() == nullptr || count.get() == nullptr || checks.get() == nullptr)
      return -1;
    if (forward.get() != Py_None || pending.get() != Py_None) return 0;
    int t = PyObject_IsTrue(count.get());
    if (t == 1) {
      t = PyObject_IsTrue(checks.get());
      if (t >= 0) t = !t;
    }
    if (t != 1) return t;
    PyObject* const args[3] = {view, st.get(), pe};
    access.p = callFast(plainTileAccess, args, 3);
    if (access.get() == nullptr) return -1;
    if (access.get() == Py_None) return 0;
    kind.p = slotAttr(st.get(), names.kind);
    dtype.p = slotAttr(st.get(), names.dtype);
    return kind.get() == nullptr || dtype.get() == nullptr ? -1 : 1;
  }
};

// {start_tensor_calc: True, stop_tensor_calc: True, is_transpose: False}, the fields of every plain
// matmul, one dict all their ops share (the fields of a recorded op never change; the matmul-groups
// pass makes the joined ones theirs).
PyObject* plainFields = nullptr;

// Keys of `verdicts` known to map to None (legal), the last few found: a kernel's loops ask for
// the same key matmul after matmul, and packing, hashing and comparing its 13 facts is a share of
// a matmul's cost. Reusing a known verdict is the dict lookup's answer: refuse_illegal_matmul
// only ever adds a key, with the verdict of neuronxsim.bir.legality.matmul, a function of the
// key's facts (the table only remembers it), so a key found legal stays legal.
constexpr Py_ssize_t kKeySize = 13;
constexpr int kKnownKeys = 4;
PyObject* knownKeys[kKnownKeys] = {};  // (tuples, referenced)
int nextKnown = 0;

// Whether a and b are the same key fact: the same object, or exact ints of one value (shapes are
// made afresh by subscripts; equal ints are equal dict-key parts, with equal hashes).
bool sameFact(PyObject* a, PyObject* b) {
  if (a == b) return true;
  if (!PyLong_CheckExact(a) || !PyLong_CheckExact(b)) return false;
  int overA = 0, overB = 0;
  const long long x = PyLong_AsLongLongAndOverflow(a, &overA), y = PyLong_AsLongLongAndOverflow(b, &overB);
  return !overA && !overB && x == y;
}

bool knownLegal(PyObject* const* facts) {
  for (PyObject* key : knownKeys) {
    if (key == nullptr) continue;
    bool same = true;
    for (Py_ssize_t i = 0; same && i < kKeySize; ++i) same = sameFact(PyTuple_GET_ITEM(key, i), facts[i]);
    if (same) return true;
  }
  return false;
}

void rememberLegal(PyObject* key) {
  Py_XSETREF(knownKeys[nextKnown], Py_NewRef(key));
  nextKnown = (nextKnown + 1) % kKnownKeys;
}

// The operands of a plain matmul: both read as the PE reads them, and the matmul known legal.
struct PlainMatmul {
  Operand s, m;
  PyObject *mCols = nullptr, *n = nullptr;  // (the result's shape; borrowed from the operands' shapes)
};

// Reads the operands of matmulPlain (1; 0 when the matmul needs the general path, -1 on error):
// changes nothing.
int readPlainMatmul(PyObject* tr, PyObject* stationary, PyObject* moving, PlainMatmul& p) {
  int t = p.s.read(stationary);
  if (t == 1) t = p.m.read(moving);
  if (t != 1) return t;
  Operand &s = p.s, &m = p.m;
  PyObject* k = PyTuple_GET_ITEM(s.shape.get(), 0);
  p.mCols = PyTuple_GET_ITEM(s.shape.get(), 1);
  p.n = PyTuple_GET_ITEM(m.shape.get(), 1);
  // (refuse_illegal_matmul's key for a plain matmul: the verdict is known or the general path asks)
  Owned arch(slotAttr(tr, names.arch));
  if (arch.get() == nullptr) return -1;
  PyObject* const facts[kKeySize] = {s.kind.get(), s.dtype.get(), k, p.mCols, m.kind.get(), m.dtype.get(),
                                     PyTuple_GET_ITEM(m.shape.get(), 0), p.n, float32, Py_False, Py_True, psum,
                                     arch.get()};
  if (!knownLegal(facts)) {
    Owned key(PyTuple_Pack(kKeySize, facts[0], facts[1], facts[2], facts[3], facts[4], facts[5], facts[6], facts[7],
                           facts[8], facts[9], facts[10], facts[11], facts[12]));
    if (key.get() == nullptr) return -1;
    PyObject* verdict = PyDict_GetItemWithError(verdicts, key.get());  // (borrowed)
    if (verdict == nullptr) return PyErr_Occurred() ? -1 : 0;
    if (verdict != Py_None) return 0;  // (the general path raises it)
    rememberLegal(key.get());
  }
  return 1;
}

// tr.record(Matmult, PE, [stationary, moving], [out], {start, stop, is_transpose False}, loc) of
// the operands `p` read: the Op (a new reference), or null with an error set. Takes the
// operands' accesses.
PyObject* recordPlainMatmul(PyObject* tr, PlainMatmul& p, PyObject* out, PyObject* loc) {
  // (the fields: plainFields itself, the same items in the same order as set one by one)
  Owned ins(PyList_New(2)), outs(PyList_New(1)), fields(Py_NewRef(plainFields));
  if (ins.get() == nullptr || outs.get() == nullptr || fields.get() == nullptr) return nullptr;
  PyList_SET_ITEM(ins.get(), 0, p.s.access.release());
  PyList_SET_ITEM(ins.get(), 1, p.m.access.release());
  PyList_SET_ITEM(outs.get(), 0, Py_NewRef(out));
  PyObject* const rec[7] = {tr, matmult, pe, ins.get(), outs.get(), fields.get(), loc};
  static MethodSite recordSite;
  return recordSite.call(names.record, rec, 7);
}

PyObject* matmulPlain(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "matmul_plain(tr, stationary, moving, loc)");
    return nullptr;
  }
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "matmul_plain is not configured");
    return nullptr;
  }
  PyObject *tr = args[0], *loc = args[3];
  PlainMatmul p;
  const int t = readPlainMatmul(tr, args[1], args[2], p);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  // (the result's shape: the tuple held for its values when both are plain ints, so that the
  // tracer's layouts find it by identity)
  PyObject* const dims[2] = {p.mCols, p.n};
  long long values[2];
  Owned shape(int_tuples::valuesOf(dims, 2, values) ? int_tuples::get(values, 2) : PyTuple_Pack(2, p.mCols, p.n));
  if (shape.get() == nullptr) return nullptr;
  PyObject* const result[6] = {tr, psum, float32, shape.get(), names.matmul, loc};
  static MethodSite newResultSite;
  Owned out(newResultSite.call(names.new_result, result, 6));
  if (out.get() == nullptr) return nullptr;
  PyObject* const fresh[2] = {tr, out.get()};
  static MethodSite writeFreshSite;
  Owned o(writeFreshSite.call(names.write_fresh, fresh, 2));
  if (o.get() == nullptr) return nullptr;
  Owned op(recordPlainMatmul(tr, p, o.get(), loc));
  if (op.get() == nullptr) return nullptr;
  return out.release();
}

// Replaces the error set, a refusal of the tracer (an NKIError without the kernel line), with
// the API's: NKIError(f"{what}: {e.reason}", loc) from None, as NKI 0.6's _place_matmul raises
// it. Other errors stay as they are.
void locateRefusal(PyObject* what, PyObject* loc) {
  if (!PyErr_ExceptionMatches(nkiError)) return;
  PyObject *type, *value, *trace;
  PyErr_Fetch(&type, &value, &trace);
  PyErr_NormalizeException(&type, &value, &trace);
  Owned t(type), v(value), tb(trace);
  Owned reason(PyObject_GetAttr(v.get(), names.reason));
  if (reason.get() == nullptr) return;
  Owned text(PyUnicode_FromFormat("%U: %S", what, reason.get()));
  if (text.get() == nullptr) return;
  PyObject* const make[2] = {text.get(), loc};
  Owned located(PyObject_Vectorcall(nkiError, make, 2, nullptr));
  if (located.get() == nullptr) return;
  if (tb.get() != nullptr) PyException_SetTraceback(v.get(), tb.get());
  PyException_SetContext(located.get(), v.release());  // (steals; as raised in its except block)
  PyException_SetCause(located.get(), nullptr);          // (from None)
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(located.get())), located.get());
}

// matmul_into(tr, stationary, moving, dst, accumulate, loc, what): the plain matmul of
// matmul_plain recorded writing the PSUM view `dst` directly, adding to the accumulation group
// open on its region (accumulate True) or starting one (False; None: as NKI 0.6's _accumulates
// answers, where accumulatesOnto can tell): what matmul_plain and then
// place_matmul(result, dst, accumulate) leave, without the result tile and its redirect. True when
// done; NotImplemented, having changed nothing, when the matmul needs matmul_plain's general path,
// dst is not the result's shape, is not a destination place_matmul's C path takes (see
// trace_place_matmul.h), or accumulate=True finds nothing written there (the caller's refusal).
// A refusal of the placement names `what` and the kernel line `loc`.
PyObject* matmulInto(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError, "matmul_into(tr, stationary, moving, dst, accumulate, loc, what)");
    return nullptr;
  }
  if (tensorClass == nullptr || nkiError == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "matmul_into is not configured");
    return nullptr;
  }
  PyObject *tr = args[0], *dst = args[3], *loc = args[5];
  if ((args[4] != Py_True && args[4] != Py_False && args[4] != Py_None) ||
      Py_TYPE(dst) != reinterpret_cast<PyTypeObject*>(tensorClass))
    Py_RETURN_NOTIMPLEMENTED;
  PlainMatmul p;
  int t = readPlainMatmul(tr, args[1], args[2], p);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  t = args[4] == Py_None ? accumulatesOnto(dst, plainTileAccess, pe) : args[4] == Py_True;
  if (t < 0) return nullptr;
  if (t > 1) Py_RETURN_NOTIMPLEMENTED;  // (the definition's _accumulates answers)
  const bool accumulate = t == 1;
  {  // (dst has the result's shape: else the caller reshapes it, or refuses)
    Owned shape(slotAttr(dst, names.shape));
    if (shape.get() == nullptr) return nullptr;
    if (!PyTuple_CheckExact(shape.get()) || PyTuple_GET_SIZE(shape.get()) != 2 ||
        !sameFact(PyTuple_GET_ITEM(shape.get(), 0), p.mCols) || !sameFact(PyTuple_GET_ITEM(shape.get(), 1), p.n))
      Py_RETURN_NOTIMPLEMENTED;
  }
  MatmulDestination d;
  t = matmulDestination(tr, dst, accumulate, d);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  if (accumulate && d.writes == 0) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const write[3] = {dst, pe, Py_True};
  Owned acc(callFast(writePlain, write, 3));
  if (acc.get() == nullptr) return nullptr;
  if (acc.get() == Py_None) Py_RETURN_NOTIMPLEMENTED;
  // (dst is written from here on)
  Owned op(recordPlainMatmul(tr, p, acc.get(), loc));
  if (op.get() == nullptr) return nullptr;
  if (placeWrittenMatmul(tr, d, op.get(), acc.get(), accumulate) < 0) {
    locateRefusal(args[6], loc);
    return nullptr;
  }
  Py_RETURN_TRUE;
}

// 2.2x nisa.nc_matmul(stationary, moving) (a FastCall's C path, see trace_fast_call.cpp) for two
// Tensors in SBUF and no keywords: what isa.py's nc_matmul does then, matmul_plain with the call's
// line; NotImplemented, having changed nothing, for anything else (matmul_plain's refusals among
// them: the Python definition answers, with its errors).
PyObject* ncMatmulFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (nargs != 2 || (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0) || tr == nullptr || tensorClass == nullptr) Py_RETURN_NOTIMPLEMENTED;
  for (Py_ssize_t i = 0; i < 2; ++i) {  // (on chip, not in PSUM: isa.nc_matmul copies those)
    if (Py_TYPE(args[i]) != reinterpret_cast<PyTypeObject*>(tensorClass)) Py_RETURN_NOTIMPLEMENTED;
    Owned st(slotAttr(args[i], names.storage));
    if (st.get() == nullptr) return nullptr;
    Owned onChip(slotAttr(st.get(), names.on_chip));
    Owned kind(slotAttr(st.get(), names.kind));
    if (onChip.get() == nullptr || kind.get() == nullptr) return nullptr;
    if (onChip.get() != Py_True) Py_RETURN_NOTIMPLEMENTED;
    const int inPsum = equalTo(kind.get(), psum);
    if (inPsum != 0) return inPsum < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  PyObject* const plain[4] = {tr, args[0], args[1], loc.get()};
  return matmulPlain(nullptr, plain, 4);
}

// 2.2x nl.matmul(x, y, transpose_x=True) (a FastCall's C path; self: the SBUF kind) for two exact
// Tensors in SBUF, no mask (or mask=None) and transpose_x the bool True (`acc += nl.matmul(lhsT, rhs,
// transpose_x=True)`, a tiled matmul's inner statement): what language.py's matmul does then,
// matmul_plain with the call's line; NotImplemented, having changed nothing, for anything else
// (matmul_plain's refusals among them: the Python definition answers, with its errors).
PyObject* nlMatmulFast(PyObject* sbuf, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (nargs != 2 || tr == nullptr || tensorClass == nullptr) Py_RETURN_NOTIMPLEMENTED;
  PyObject* const keys[2] = {names.transpose_x, names.mask};
  PyObject* values[2] = {Py_False, Py_None};
  // (any other keyword or value: the definition's, with its TypeError or general path)
  if (!keywords(args, nargs, kwnames, keys, values) || values[0] != Py_True || values[1] != Py_None)
    Py_RETURN_NOTIMPLEMENTED;
  for (Py_ssize_t i = 0; i < 2; ++i) {  // (language.matmul copies or checks anything else)
    if (Py_TYPE(args[i]) != reinterpret_cast<PyTypeObject*>(tensorClass)) Py_RETURN_NOTIMPLEMENTED;
    Owned st(slotAttr(args[i], names.storage));
    if (st.get() == nullptr) return nullptr;
    Owned kind(slotAttr(st.get(), names.kind));
    if (kind.get() == nullptr) return nullptr;
    const int inSbuf = kind.get() == sbuf ? 1 : equalTo(kind.get(), sbuf);
    if (inSbuf != 1) return inSbuf < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  Owned loc(callSiteLocation(0));  // (the kernel's frame: this C function has none of its own)
  if (loc.get() == nullptr) return nullptr;
  PyObject* const plain[4] = {tr, args[0], args[1], loc.get()};
  return matmulPlain(nullptr, plain, 4);
}

PyMethodDef nlMatmulFastDef = {
    "nl_matmul_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(nlMatmulFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "nl_matmul_fast(x, y, *, transpose_x=True, mask=None): nl.matmul of two SBUF tiles by matmul_plain; "
    "NotImplemented, having changed nothing, for any other call."};

PyMethodDef ncMatmulFastDef = {
    "nc_matmul_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(ncMatmulFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "nc_matmul_fast(stationary, moving): nisa.nc_matmul of two SBUF tiles by matmul_plain; NotImplemented, "
    "having changed nothing, for any other call."};

PyMethodDef matmulPlainDef = {
    "matmul_plain", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(matmulPlain)), METH_FASTCALL,
    "matmul_plain(tr, stationary, moving, loc): the PSUM result of the commonest matmul, recorded; "
    "NotImplemented, having changed nothing, when the matmul needs the general path."};

PyMethodDef matmulIntoDef = {
    "matmul_into", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(matmulInto)), METH_FASTCALL,
    "matmul_into(tr, stationary, moving, dst, accumulate, loc, what): the commonest matmul recorded writing the "
    "PSUM view dst directly, joining (accumulate True) or starting (False) its accumulation group (None: as NKI "
    "0.6's _accumulates answers where that is plain); True, or NotImplemented, having changed nothing, when it "
    "needs matmul_plain and place_matmul."};

void bindMatmul(py::module_& m) {
  Names n{};
  for (auto [slot, text] :
       {std::pair{&n.storage, "storage"}, {&n.state, "state"}, {&n.forward, "forward"},
        {&n.pending_zero, "pending_zero"}, {&n.write_count, "write_count"}, {&n.checks, "checks"},
        {&n.shape, "shape"}, {&n.kind, "kind"}, {&n.dtype, "dtype"}, {&n.arch, "arch"},
        {&n.new_result, "new_result"}, {&n.write_fresh, "write_fresh"}, {&n.record, "record"},
        {&n.start_tensor_calc, "start_tensor_calc"}, {&n.stop_tensor_calc, "stop_tensor_calc"},
        {&n.is_transpose, "is_transpose"}, {&n.matmul, "matmul"}, {&n.on_chip, "on_chip"},
        {&n.transpose_x, "transpose_x"}, {&n.mask, "mask"}, {&n.reason, "reason"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  names = n;
  plainFields = PyDict_New();
  if (plainFields == nullptr || PyDict_SetItem(plainFields, n.start_tensor_calc, Py_True) < 0 ||
      PyDict_SetItem(plainFields, n.stop_tensor_calc, Py_True) < 0 || PyDict_SetItem(plainFields, n.is_transpose, Py_False) < 0)
    throw py::error_already_set();
  m.attr("matmul_plain") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&matmulPlainDef, nullptr, nullptr));
  m.attr("nc_matmul_fast") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&ncMatmulFastDef, nullptr, nullptr));
  m.def(
      "nl_matmul_fast",
      [](py::str sbufKind) {
        PyObject* f = PyCFunction_NewEx(&nlMatmulFastDef, sbufKind.ptr(), nullptr);  // (holds sbufKind)
        if (f == nullptr) throw py::error_already_set();
        return py::reinterpret_steal<py::object>(f);
      },
      py::arg("sbuf"),
      "The C path of nl.matmul(x, y, *, transpose_x=True, mask=None) for two tiles of the SBUF kind `sbuf`: the "
      "result, or NotImplemented for the Python definition to answer (use in a FastCall).");
  m.attr("matmul_into") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&matmulIntoDef, nullptr, nullptr));
  m.def(
      "configure_matmul",
      [](py::type tensor, py::object plain, py::dict table, py::object matmultOpcode, py::object peEngine,
         py::str psumKind, py::object f32, py::object write, py::type error) {
        for (PyObject** slot :
             {&tensorClass, &plainTileAccess, &verdicts, &matmult, &pe, &psum, &float32, &writePlain, &nkiError})
          Py_XDECREF(*slot);
        tensorClass = tensor.inc_ref().ptr();
        plainTileAccess = plain.inc_ref().ptr();
        verdicts = table.inc_ref().ptr();
        matmult = matmultOpcode.inc_ref().ptr();
        pe = peEngine.inc_ref().ptr();
        psum = psumKind.inc_ref().ptr();
        float32 = f32.inc_ref().ptr();
        writePlain = write.inc_ref().ptr();
        nkiError = error.inc_ref().ptr();
        for (PyObject*& key : knownKeys) Py_CLEAR(key);  // (another table: nothing known of it)
      },
      py::arg("tensor_class"), py::arg("plain_tile_access"), py::arg("verdicts"), py::arg("matmult"), py::arg("pe"),
      py::arg("psum"), py::arg("float32"), py::arg("write_plain"), py::arg("nki_error"),
      "Gives matmul_plain and matmul_into the Tensor class, the tracer's plain_tile_access, the legality verdicts "
      "of plain matmuls (a dict), the Matmult opcode, the PE engine, the PSUM kind, the float32 dtype, the "
      "tracer's write_plain and NKIError.");
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindMatmul);

}  // namespace matmul_plain
}  // namespace
}  // namespace nxs::py_bind
