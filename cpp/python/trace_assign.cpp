// The commonest assignment of a trace, `_core.nki.assign_redirect(tr, dst, value)`
// (neuronxsim.nki.language.assign, which calls it first): `dst[...] = value` where `value` is the
// untouched result tile of the instruction just recorded, made to write `dst` instead (the steps
// of assign and Tracer.redirect for it); True when done, False, having changed nothing, for
// anything else (assign then takes its general path: no-ops, errors, PSUM destinations and
// matmul placement, masks, copies, redirects that need the tracer's general write).
//
// It applies when `dst` and `value` are Tensors of different on-chip storages, `dst` not in PSUM,
// `value`'s instruction not masked out; `tr.fresh_result(value)` is an op whose engine can write
// `dst`'s memory (not a matmul; a DMA or GpSimd op only into SBUF), recorded without a mask box,
// `dst` has `value`'s shape, and `write_plain(dst, op.engine)` takes `dst`. Then, as redirect:
//     core.redirected[op.index] = acc; core.record.redirects.append((op.index, acc));
//     the temporary's state.forward = (dst, dst's write count, op)
// (the temporary: the storage of op's first output as earlier redirects left it); or, when
// nothing but the tracer can reach the temporary again (see soleTemporary), op made to write
// acc and the temporary dropped.
//
// `configure_assign(tensor_class, write_plain, matmult, dma, pool, psum, sbuf)` gives it the
// Tensor class, the tracer's C write_plain, the Matmult opcode, the DMA and GpSimd engines and
// the PSUM and SBUF kinds.
//
// Why C: most `dst[...] = expr` of a kernel are this redirect, and in Python they cost three
// frames (assign, _can_write, redirect) and dozens of attribute reads.
#include "trace_equal.h"
#include "trace_known_hash.h"
#include "trace_record.h"
#include "trace_ref.h"
#include "trace_method_site.h"
#include "trace_place_matmul.h"

#include "bindings.h"
#include "trace_slotted.h"

namespace nxs::py_bind {
namespace {
namespace assign_redirect {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

struct Names {
  PyObject *storage, *on_chip, *kind, *state, *masked_out, *shape, *fresh_result, *core, *redirected, *record,
      *redirects, *write_count, *forward, *ops, *is_transpose, *groups, *pending_zero, *double_rows, *open,
      *zero_started, *zero_init, *unwritten, *zero_covered, *refuse_accumulation, *matmul_joins,
      *close_overlapping_groups, *refuse_overlapping_start, *place_matmul_general, *storages, *full_access;
};
Names names{};
PyObject* tensorClass = nullptr;
PyObject* writePlain = nullptr;
PyObject* matmult = nullptr;
PyObject* dma = nullptr;
PyObject* pool = nullptr;
PyObject* psum = nullptr;
PyObject* sbuf = nullptr;
PyObject* matmulGroupsClass = nullptr;  // neuronxsim.nki.tracer.MatmulGroups (place_matmul_method)

using Owned = nxs::py_bind::OwnedRef;

// Op fields by position (neuronxsim.nki.record.Op), and the Access's storage.
constexpr Py_ssize_t kFields = op_pos::fields, kOuts = op_pos::outs, kOpcode = op_pos::opcode,
                     kEngine = op_pos::engine, kIndex = op_pos::index, kOutBox = op_pos::out_box, kOpSize = op_pos::size;
constexpr Py_ssize_t kAccessOffset = access_pos::offset, kAccessPairs = access_pos::pairs,
                     kAccessStorage = access_pos::storage;

// 1 if the string kind `k` is `what` (identity first), 0 if not, -1 on error.
int isKind(PyObject* k, PyObject* what) { return k == what ? 1 : equalTo(k, what); }

// 1 if o.name is true, 0 if not, -1 on error.
int attrIsTrue(PyObject* o, PyObject* name) {
  Owned v(slotAttr(o, name));
  return v.get() == nullptr ? -1 : PyObject_IsTrue(v.get());
}

// 1 when the assignment may take the fast path up to the op (storages, kinds), 0 if not, -1 on error.
int plainOperands(PyObject* dstSt, PyObject* valueSt, Owned& dstKind) {
  if (dstSt == valueSt) return 0;
  int t = attrIsTrue(dstSt, names.on_chip);
  if (t == 1) t = attrIsTrue(valueSt, names.on_chip);
  if (t != 1) return t;
  Owned valueState(slotAttr(valueSt, names.state));
  if (valueState.get() == nullptr) return -1;
  t = attrIsTrue(valueState.get(), names.masked_out);
  if (t != 0) return t < 0 ? -1 : 0;
  dstKind.p = slotAttr(dstSt, names.kind);
  if (dstKind.get() == nullptr) return -1;
  t = isKind(dstKind.get(), psum);
  return t < 0 ? -1 : !t;
}

// Whether op's engine can write memory of kind `kind` (language._can_write; not a matmul here).
int canWrite(PyObject* op, PyObject* kind) {
  if (PyTuple_GET_ITEM(op, kOpcode) == matmult) return 0;  // (into PSUM only: not this path)
  PyObject* engine = PyTuple_GET_ITEM(op, kEngine);
  if (engine == dma || engine == pool) return isKind(kind, sbuf);
  return 1;
}

// Redirect's bookkeeping once op writes `acc` (in dst) instead of its temporary:
//     core.redirected[op.index] = acc; core.record.redirects.append((op.index, acc));
//     the temporary's state.forward = (dst, dst's write count, op)
// 0, or -1 with an error set.
int noteRedirect(PyObject* tr, PyObject* op, PyObject* dst, PyObject* acc) {
  Owned core(slotAttr(tr, names.core));
  if (core.get() == nullptr) return -1;
  Owned redirected(slotAttr(core.get(), names.redirected));
  Owned record(slotAttr(core.get(), names.record));
  if (redirected.get() == nullptr || record.get() == nullptr) return -1;
  PyObject* index = PyTuple_GET_ITEM(op, kIndex);
  Owned first(Py_XNewRef(redirectedOutput(redirected.get(), index)));
  if (first.get() == nullptr) {
    if (PyErr_Occurred()) return -1;
    first.p = PySequence_GetItem(PyTuple_GET_ITEM(op, kOuts), 0);
    if (first.get() == nullptr) return -1;
  }
  if (!PyTuple_Check(first.get()) || PyTuple_GET_SIZE(first.get()) <= kAccessStorage || !PyTuple_Check(acc) ||
      PyTuple_GET_SIZE(acc) <= kAccessStorage) {
    PyErr_SetString(PyExc_TypeError, "redirect: an operand is not an Access");
    return -1;
  }
  Owned temp(Py_NewRef(PyTuple_GET_ITEM(first.get(), kAccessStorage)));
  if (setRedirected(redirected.get(), index, acc) < 0) return -1;
  Owned redirects(slotAttr(record.get(), names.redirects));
  Owned entry(PyTuple_Pack(2, index, acc));
  if (redirects.get() == nullptr || entry.get() == nullptr || PyList_Append(redirects.get(), entry.get()) < 0)
    return -1;
  Owned accState(slotAttr(PyTuple_GET_ITEM(acc, kAccessStorage), names.state));
  if (accState.get() == nullptr) return -1;
  Owned count(slotAttr(accState.get(), names.write_count));
  Owned tempState(slotAttr(temp.get(), names.state));
  if (count.get() == nullptr || tempState.get() == nullptr) return -1;
  Owned forward(PyTuple_Pack(3, dst, count.get(), op));
  if (forward.get() == nullptr || slotSet(tempState.get(), names.forward, forward.get()) < 0) return -1;
  return 0;
}

// The temporary result of the instruction just recorded, when nothing but the tracer can ever
// reach it again as an assignment or `+=` places it: `value` (its full view, fresh_result's answer
// `op` the instruction writing it) is referenced only by the caller (the interpreter's stack,
// holding the right-hand side of `dst[...] = expr` / `a += matmul(...)` until the store or the
// operator returns), and its storage only by value, the tracer's storages (the last one: the
// instruction was the last to make one) and its write's Access (op's only output, and its state's
// full_access if the write made that). Then the instruction may write the destination itself, as
// if recorded so (matmul_into does for NKI 0.6's matmul), rather than be redirected there: the
// same instruction once the Redirects pass has run, without the redirect's bookkeeping, the
// pass's work and a storage that stays in the trace unused. The references are counted exactly,
// so this is only for interpreters whose stack holds a counted reference to every value on it
// (CPython up to 3.13; 3.14 may push borrowed ones).
struct SoleTemporary {
  Owned storages{nullptr}, outs{nullptr}, st{nullptr}, s{nullptr};
  bool full = false;  // (out is the state's full_access)
};

// 1 when `value` is such a sole temporary (`temp` filled), 0 if not (or not known), -1 on error.
// `held`: the references to value's storage the caller holds.
int soleTemporary(PyObject* tr, PyObject* value, PyObject* op, Py_ssize_t held, SoleTemporary& temp) {
#if PY_VERSION_HEX >= 0x030E0000 || defined(Py_GIL_DISABLED)  // (free threading: counts shared with other threads)
  (void)tr, (void)value, (void)op, (void)held, (void)temp;
  return 0;
#else
  if (Py_REFCNT(value) != 1) return 0;
  PyObject* outs = PyTuple_GET_ITEM(op, kOuts);  // (op's own list: edited below)
  if (!PyList_CheckExact(outs) || PyList_GET_SIZE(outs) != 1 || Py_REFCNT(outs) != 1) return 0;
  PyObject* out = PyList_GET_ITEM(outs, 0);
  if (!PyTuple_Check(out) || PyTuple_GET_SIZE(out) <= kAccessStorage) return 0;
  temp.st.p = slotAttr(value, names.storage);
  if (temp.st.get() == nullptr) return -1;
  PyObject* st = temp.st.get();
  if (PyTuple_GET_ITEM(out, kAccessStorage) != st) return 0;
  temp.s.p = slotAttr(st, names.state);
  temp.storages.p = slotAttr(tr, names.storages);
  if (temp.s.get() == nullptr || temp.storages.get() == nullptr) return -1;
  Owned full(slotAttr(temp.s.get(), names.full_access));
  if (full.get() == nullptr) return -1;
  temp.full = full.get() == out;
  PyObject* storages = temp.storages.get();
  if (!PyList_CheckExact(storages) || PyList_GET_SIZE(storages) == 0 ||
      PyList_GET_ITEM(storages, PyList_GET_SIZE(storages) - 1) != st || (!temp.full && full.get() != Py_None))
    return 0;
  // (held: st by value, storages, out, temp.st here and the caller; out by outs, and by the
  // state's full_access and `full` here when it is that; the state by st and temp.s here)
  if (Py_REFCNT(st) != 4 + held || Py_REFCNT(out) != (temp.full ? 3 : 1) || Py_REFCNT(temp.s.get()) != 2) return 0;
  temp.outs.p = Py_NewRef(outs);
  return 1;
#endif
}

// The sole temporary's instruction made to write `acc`, and the temporary dropped from the trace
// (its storage, the last, taken off the tracer's storages; its state's full_access cleared, which
// referred back to the storage: the storage goes with value, without waiting for the cycle
// collector). 0, or -1 with an error set.
int retarget(SoleTemporary& temp, PyObject* acc) {
  if (PyList_SetItem(temp.outs.get(), 0, Py_NewRef(acc)) < 0 ||
      (temp.full && slotSet(temp.s.get(), names.full_access, Py_None) < 0))
    return -1;
  const Py_ssize_t n = PyList_GET_SIZE(temp.storages.get());
  return PyList_SetSlice(temp.storages.get(), n - 1, n, nullptr);
}

PyObject* assignRedirect(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "assign_redirect(tr, dst, value)");
    return nullptr;
  }
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "assign_redirect is not configured");
    return nullptr;
  }
  PyObject *tr = args[0], *dst = args[1], *value = args[2];
  if (Py_TYPE(dst) != reinterpret_cast<PyTypeObject*>(tensorClass) ||
      Py_TYPE(value) != reinterpret_cast<PyTypeObject*>(tensorClass))
    Py_RETURN_FALSE;
  Owned dstSt(slotAttr(dst, names.storage)), valueSt(slotAttr(value, names.storage));
  if (dstSt.get() == nullptr || valueSt.get() == nullptr) return nullptr;
  Owned dstKind(nullptr);
  int t = plainOperands(dstSt.get(), valueSt.get(), dstKind);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_False);
  PyObject* const fresh[2] = {tr, value};
  static MethodSite assignFreshSite;
  Owned op(assignFreshSite.call(names.fresh_result, fresh, 2));
  if (op.get() == nullptr) return nullptr;
  if (op.get() == Py_None) Py_RETURN_FALSE;
  if (!PyTuple_Check(op.get()) || PyTuple_GET_SIZE(op.get()) < kOpSize) {
    PyErr_SetString(PyExc_TypeError, "assign_redirect: fresh_result did not answer an Op");
    return nullptr;
  }
  t = canWrite(op.get(), dstKind.get());
  if (t == 1) t = PyTuple_GET_ITEM(op.get(), kOutBox) == Py_None;
  if (t == 1) {
    Owned dstShape(slotAttr(dst, names.shape)), valueShape(slotAttr(value, names.shape));
    if (dstShape.get() == nullptr || valueShape.get() == nullptr) return nullptr;
    t = equalTo(dstShape.get(), valueShape.get());
  }
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_False);
  PyObject* const write[2] = {dst, PyTuple_GET_ITEM(op.get(), kEngine)};
  Owned acc(callFast(writePlain, write, 2));
  if (acc.get() == nullptr) return nullptr;
  if (acc.get() == Py_None) Py_RETURN_FALSE;
  // (dst is written from here on)
  SoleTemporary temp;
  t = soleTemporary(tr, value, op.get(), 1, temp);  // (valueSt)
  if (t < 0 || (t == 1 ? retarget(temp, acc.get()) : noteRedirect(tr, op.get(), dst, acc.get())) < 0) return nullptr;
  Py_RETURN_TRUE;
}

// An Access's partitions times its free elements (the elements it covers); -1 with an error set.
long long accessElements(PyObject* acc) {
  PyObject* pairs = PyTuple_GET_ITEM(acc, kAccessPairs);
  if (!PyList_Check(pairs) && !PyTuple_Check(pairs)) {
    PyErr_SetString(PyExc_TypeError, "place_matmul: an access's pairs must be a list");
    return -1;
  }
  long long n = 1;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(pairs); ++i) {
    PyObject* pair = PySequence_Fast_GET_ITEM(pairs, i);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_SetString(PyExc_TypeError, "place_matmul: an access pair must be (step, num)");
      return -1;
    }
    const long long num = PyLong_AsLongLong(PyTuple_GET_ITEM(pair, 1));
    if (num == -1 && PyErr_Occurred()) return -1;
    n *= num;
  }
  return n;
}

// Tracer._refuse_overlapping_start(st, groups, acc) where some group started in `st` (`started`,
// not empty): raises if `acc` partly overlaps such a group's region. 0, or -1 with the error set.
int refuseOverlappingStart(PyObject* tr, PyObject* st, PyObject* groups, PyObject* acc, PyObject* started) {
  if (PyDict_GET_SIZE(started) == 0) return 0;
  PyObject* const check[4] = {tr, st, groups, acc};
  Owned checked(PyObject_VectorcallMethod(names.refuse_overlapping_start, check, 4, nullptr));
  return checked.get() == nullptr ? -1 : 0;
}

// place_matmul's
//     if s.pending_zero is not None and groups.zero_covered >= st.elements:
//         s.pending_zero = None  # matmuls overwrite every zero: the memset is dead
// once the zero-started regions of the storage `st` (state `s`) cover `covered` elements.
// 0, or -1 with an error set.
int dropCoveredZeros(PyObject* st, PyObject* s, PyObject* covered) {
  Owned pending(slotAttr(s, names.pending_zero));
  if (pending.get() == nullptr) return -1;
  if (pending.get() == Py_None) return 0;
  // st.elements, the product of st.shape (tensor.py's Storage.elements), computed here: the
  // property through PyObject_GetAttr cost more than the rest of the test
  Owned shape(slotAttr(st, names.shape));
  if (shape.get() == nullptr) return -1;
  if (!PyTuple_CheckExact(shape.get())) {
    PyErr_SetString(PyExc_TypeError, "place_matmul: a storage's shape must be a tuple");
    return -1;
  }
  long long elements = 1;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape.get()); ++i) {
    const long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.get(), i));
    if (n == -1 && PyErr_Occurred()) return -1;
    if (__builtin_mul_overflow(elements, n, &elements)) {
      PyErr_SetString(PyExc_OverflowError, "place_matmul: a storage's element count overflows");
      return -1;
    }
  }
  Owned all(PyLong_FromLongLong(elements));
  if (all.get() == nullptr) return -1;
  const int covers = PyObject_RichCompareBool(covered, all.get(), Py_GE);
  if (covers <= 0) return covers;
  return slotSet(s, names.pending_zero, Py_None);
}

// The region keys (acc.key(): (offset, tuple(pairs))) place_matmul made last, by the identity of
// the pairs tuple and the offset's value, with their hashes: the matmuls of a kernel's loops
// accumulate into the same few regions over and over, and the groups' dicts find a key that is the
// very tuple they hold by identity (no tuple compare), nothing is built, and nothing is hashed
// (see trace_known_hash.h).
// An entry holds its region, so the pairs tuple it is keyed by stays alive (its address not reused)
// while it is in the table; the tuples are immutable, so handing one out where an equal one was
// built changes no value, and a hash stays right for its tuple.
constexpr int kRegionBits = 6;
struct RegionEntry {
  PyObject* pairs = nullptr;  // (borrowed: `region` holds it)
  long long offset = 0;
  PyObject* region = nullptr;  // (referenced)
  Py_hash_t hash = -1;         // (region's)
};
RegionEntry regions[size_t{1} << kRegionBits];

// A region key and its hash.
struct Region {
  Owned key{nullptr};
  Py_hash_t hash = -1;
};

// (offset, pairs) and its hash into `out`, `pairs` a tuple. 0, or -1 with an error set.
int regionKey(PyObject* offset, PyObject* pairs, Region& out) {
  int over = 0;
  const long long at = PyLong_CheckExact(offset) ? PyLong_AsLongLongAndOverflow(offset, &over) : 0;
  if (!PyLong_CheckExact(offset) || over != 0) {
    out.key.p = PyTuple_Pack(2, offset, pairs);
    if (out.key.get() == nullptr) return -1;
    out.hash = PyObject_Hash(out.key.get());
    return out.hash == -1 ? -1 : 0;
  }
  const uint64_t h = (reinterpret_cast<uintptr_t>(pairs) ^ static_cast<uint64_t>(at) * 0x9E3779B97F4A7C15ull) *
                     0xC2B2AE3D27D4EB4Full;
  RegionEntry& e = regions[h >> (64 - kRegionBits)];
  if (e.region == nullptr || e.pairs != pairs || e.offset != at) {
    Owned region(PyTuple_Pack(2, offset, pairs));
    if (region.get() == nullptr) return -1;
    const Py_hash_t hash = PyObject_Hash(region.get());
    if (hash == -1) return -1;
    PyObject* old = e.region;
    e = {pairs, at, region.release(), hash};
    Py_XDECREF(old);
  }
  out.key.p = Py_NewRef(e.region);
  out.hash = e.hash;
  return 0;
}

// A groups dict's entry of region `r` (borrowed; as dictGetKnownHash), and its setting.
PyObject* regionGet(PyObject* dict, const Region& r) { return dictGetKnownHash(dict, r.key.get(), r.hash); }
int regionSet(PyObject* dict, const Region& r, PyObject* value) {
  return dictSetKnownHash(dict, r.key.get(), value, r.hash);
}

// The end of place_matmul once `acc` is redirected: the accumulation group `region` of `groups`
// joined (accumulate) or started. 0, or -1 with an error set.
int placeInGroups(PyObject* tr, PyObject* st, PyObject* s, PyObject* groups, PyObject* op, PyObject* acc,
                  bool accumulate) {
  Owned pairs(pairsTuple(PyTuple_GET_ITEM(acc, kAccessPairs)));  // (tuple(acc.pairs))
  if (pairs.get() == nullptr) return -1;
  Region region;
  Owned open(slotAttr(groups, names.open)), started(slotAttr(groups, names.zero_started));
  if (regionKey(PyTuple_GET_ITEM(acc, kAccessOffset), pairs.get(), region) < 0 || open.get() == nullptr ||
      started.get() == nullptr)
    return -1;
  if (!PyDict_CheckExact(open.get()) || !PyDict_CheckExact(started.get())) {
    PyErr_SetString(PyExc_TypeError, "place_matmul: MatmulGroups.open and zero_started must be dicts");
    return -1;
  }
  if (accumulate) {
    int zeroed = attrIsTrue(s, names.zero_init);
    if (zeroed == 0) zeroed = attrIsTrue(groups, names.unwritten);
    if (zeroed == 1) {
      zeroed = regionGet(started.get(), region) == nullptr;
      if (zeroed && PyErr_Occurred()) zeroed = -1;
    }
    if (zeroed < 0) return -1;
    if (zeroed) {  // (the region's first matmul replaces zeros)
      // (another group's results must not be overwritten)
      if (refuseOverlappingStart(tr, st, groups, acc, started.get()) < 0) return -1;
      const long long elements = accessElements(acc);
      if (elements < 0 || regionSet(started.get(), region, Py_None) < 0) return -1;
      Owned covered(slotAttr(groups, names.zero_covered));
      Owned more(PyLong_FromLongLong(elements));
      if (covered.get() == nullptr || more.get() == nullptr) return -1;
      Owned sum(PyNumber_Add(covered.get(), more.get()));
      if (sum.get() == nullptr || slotSet(groups, names.zero_covered, sum.get()) < 0) return -1;
      if (dropCoveredZeros(st, s, sum.get()) < 0) return -1;
    } else {
      PyObject* last = regionGet(open.get(), region);  // (borrowed)
      if (last == nullptr) {
        if (PyErr_Occurred()) return -1;
        // (the overlap's message, where there is one)
        if (refuseOverlappingStart(tr, st, groups, acc, started.get()) < 0) return -1;
        PyObject* const refuse[2] = {tr, st};
        Owned refused(PyObject_VectorcallMethod(names.refuse_accumulation, refuse, 2, nullptr));
        if (refused.get() != nullptr)
          PyErr_SetString(PyExc_RuntimeError, "place_matmul: Tracer._refuse_accumulation returned");
        return -1;
      }
      if (!PyTuple_Check(last) || PyTuple_GET_SIZE(last) < kOpSize) {
        PyErr_SetString(PyExc_TypeError, "place_matmul: an open group's last op is not an Op");
        return -1;
      }
      Owned core(slotAttr(tr, names.core));
      if (core.get() == nullptr) return -1;
      Owned record(slotAttr(core.get(), names.record));
      if (record.get() == nullptr) return -1;
      Owned joins(slotAttr(record.get(), names.matmul_joins));
      Owned join(PyTuple_Pack(2, PyTuple_GET_ITEM(last, kIndex), PyTuple_GET_ITEM(op, kIndex)));
      if (joins.get() == nullptr || join.get() == nullptr || PyList_Append(joins.get(), join.get()) < 0) return -1;
    }
  } else {
    if (PyDict_GET_SIZE(open.get()) != 0) {  // (with no group open it forgets nothing)
      PyObject* const close[3] = {tr, groups, acc};
      Owned closed(PyObject_VectorcallMethod(names.close_overlapping_groups, close, 3, nullptr));
      if (closed.get() == nullptr) return -1;
    }
    if (regionSet(started.get(), region, Py_None) < 0) return -1;
  }
  return regionSet(open.get(), region, op);
}

// Whether place_matmul's C path takes the destination `dst` of a matmul recorded without a mask
// box (1; 0 if not, -1 on error): an exact Tensor in PSUM, no double-row pair in the core, and
// pending nl.zeros zeros only when `accumulate` (`+=` never keeps them: its first matmul per
// region replaces them, and they are dropped once such regions cover the tile;
// `dst[...] = matmul` of part of a zeroed tile needs them, see _place_matmul_general). Sets `st`,
// `s` (its state), `groups` (s.groups, None for the tile's first matmul) and `writes` (s's write
// count, read only then).
int psumDestination(PyObject* tr, PyObject* dst, int accumulate, Owned& st, Owned& s, Owned& groups,
                    long long& writes) {
  if (Py_TYPE(dst) != reinterpret_cast<PyTypeObject*>(tensorClass)) return 0;
  st.p = slotAttr(dst, names.storage);
  if (st.get() == nullptr) return -1;
  Owned kind(slotAttr(st.get(), names.kind));
  s.p = slotAttr(st.get(), names.state);
  if (kind.get() == nullptr || s.get() == nullptr) return -1;
  int t = isKind(kind.get(), psum);
  if (t != 1) return t;
  groups.p = slotAttr(s.get(), names.groups);
  if (groups.get() == nullptr) return -1;
  if (!accumulate) {
    Owned pending(slotAttr(s.get(), names.pending_zero));
    if (pending.get() == nullptr) return -1;
    if (pending.get() != Py_None) return 0;
  }
  if (groups.get() == Py_None) {
    Owned count(slotAttr(s.get(), names.write_count));
    if (count.get() == nullptr) return -1;
    writes = PyLong_AsLongLong(count.get());
    if (writes == -1 && PyErr_Occurred()) return -1;
  }
  Owned core(slotAttr(tr, names.core));
  if (core.get() == nullptr) return -1;
  t = attrIsTrue(core.get(), names.double_rows);
  return t < 0 ? -1 : !t;
}

// s.groups = MatmulGroups(unwritten) (its slots open {}, zero_started {}, zero_covered 0,
// unwritten; without the __init__ frame), also in `groups`. 0, or -1 with an error set.
int newGroups(PyObject* s, bool unwritten, Owned& groups) {
  Owned open(PyDict_New()), started(PyDict_New()), zero(PyLong_FromLong(0));
  if (open.get() == nullptr || started.get() == nullptr || zero.get() == nullptr) return -1;
  PyObject* const slots[4] = {open.get(), started.get(), zero.get(), unwritten ? Py_True : Py_False};
  Py_XSETREF(groups.p, newSlottedObject(matmulGroupsClass, slots, 4));
  if (groups.get() == nullptr) return -1;
  return slotSet(s, names.groups, groups.get());
}

PyObject* placeMatmul(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "place_matmul(value, dst, accumulate)");
    return nullptr;
  }
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "place_matmul is not configured");
    return nullptr;
  }
  PyObject *value = args[0], *dst = args[1];
  {  // (the cheap test first: the last op is a matmul)
    Owned ops(slotAttr(self, names.ops));
    if (ops.get() == nullptr) return nullptr;
    if (!PyList_CheckExact(ops.get())) {
      PyErr_SetString(PyExc_TypeError, "place_matmul: Tracer.ops must be a list");
      return nullptr;
    }
    const Py_ssize_t n = PyList_GET_SIZE(ops.get());
    PyObject* last = n ? PyList_GET_ITEM(ops.get(), n - 1) : nullptr;
    if (last == nullptr || !PyTuple_Check(last) || PyTuple_GET_SIZE(last) < kOpSize ||
        PyTuple_GET_ITEM(last, kOpcode) != matmult)
      Py_RETURN_FALSE;
  }
  const int accumulate = PyObject_IsTrue(args[2]);
  if (accumulate < 0) return nullptr;
  PyObject* const fresh[2] = {self, value};
  static MethodSite placeFreshSite;
  Owned op(placeFreshSite.call(names.fresh_result, fresh, 2));
  if (op.get() == nullptr) return nullptr;
  if (op.get() == Py_None) Py_RETURN_FALSE;
  if (!PyTuple_Check(op.get()) || PyTuple_GET_SIZE(op.get()) < kOpSize) {
    PyErr_SetString(PyExc_TypeError, "place_matmul: fresh_result did not answer an Op");
    return nullptr;
  }
  // (op.fields["is_transpose"]: a dict's entry read directly, without PyObject_GetItem's dispatch;
  // PyObject_GetItem raises its error)
  PyObject* fields = PyTuple_GET_ITEM(op.get(), kFields);
  Owned transposed(PyDict_CheckExact(fields) ? Py_XNewRef(PyDict_GetItemWithError(fields, names.is_transpose))
                                             : nullptr);
  if (transposed.get() == nullptr && !PyErr_Occurred())
    transposed.p = PyObject_GetItem(fields, names.is_transpose);
  if (transposed.get() == nullptr) return nullptr;
  int t = PyObject_IsTrue(transposed.get());
  if (t != 0) return t < 0 ? nullptr : Py_NewRef(Py_False);
  // (the plain case: an exact Tensor in PSUM, no mask box, no double-row pair; pending nl.zeros
  // zeros only under `+=`, see psumDestination)
  Owned st(nullptr), s(nullptr), groups(nullptr);
  long long writes = 0;
  t = PyTuple_GET_ITEM(op.get(), kOutBox) == Py_None ? psumDestination(self, dst, accumulate, st, s, groups, writes) : 0;
  Owned acc(nullptr);
  if (t == 1) {
    PyObject* const write[3] = {dst, PyTuple_GET_ITEM(op.get(), kEngine), Py_True};
    acc.p = callFast(writePlain, write, 3);
    if (acc.get() == nullptr) return nullptr;
    t = acc.get() != Py_None;
  }
  if (t < 0) return nullptr;
  if (t == 0) {  // (nothing changed yet)
    PyObject* const general[4] = {self, value, dst, args[2]};
    return PyObject_VectorcallMethod(names.place_matmul_general, general, 4, nullptr);
  }
  // The tile's first matmul: its groups, as _place_matmul_general makes them before its write
  // (which leaves them alone: write_plain of a matmul reads nothing of them, and `writes` is the
  // write count from before it).
  if (groups.get() == Py_None && newGroups(s.get(), writes == 0, groups) < 0) return nullptr;
  SoleTemporary temp;
  t = soleTemporary(self, value, op.get(), 0, temp);
  if (t < 0) return nullptr;
  if (t == 0) {
    if (noteRedirect(self, op.get(), dst, acc.get()) < 0 ||
        placeInGroups(self, st.get(), s.get(), groups.get(), op.get(), acc.get(), accumulate) < 0)
      return nullptr;
    Py_RETURN_TRUE;
  }
  // (groups first: a refusal leaves the redirect, as above)
  if (placeInGroups(self, st.get(), s.get(), groups.get(), op.get(), acc.get(), accumulate) < 0) {
    PyObject *type, *error, *trace;
    PyErr_Fetch(&type, &error, &trace);
    if (noteRedirect(self, op.get(), dst, acc.get()) < 0) PyErr_Clear();  // (the refusal is the error)
    PyErr_Restore(type, error, trace);
    return nullptr;
  }
  if (retarget(temp, acc.get()) < 0) return nullptr;
  Py_RETURN_TRUE;
}

PyMethodDef placeMatmulDef = {
    "place_matmul", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(placeMatmul)), METH_FASTCALL,
    "place_matmul(value, dst, accumulate): points the matmul that just produced value at the PSUM view dst "
    "(see neuronxsim.nki.tracer.Tracer); False when value is not such a result."};

PyMethodDef assignRedirectDef = {
    "assign_redirect", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(assignRedirect)), METH_FASTCALL,
    "assign_redirect(tr, dst, value): True when `dst[...] = value` was done by making the instruction that just "
    "computed value write dst; False, having changed nothing, when the assignment needs the general path."};

void bindAssign(py::module_& m) {
  Names n{};
  for (auto [slot, text] :
       {std::pair{&n.storage, "storage"}, {&n.on_chip, "on_chip"}, {&n.kind, "kind"}, {&n.state, "state"},
        {&n.masked_out, "masked_out"}, {&n.shape, "shape"}, {&n.fresh_result, "fresh_result"}, {&n.core, "core"},
        {&n.redirected, "redirected"}, {&n.record, "record"}, {&n.redirects, "redirects"},
        {&n.write_count, "write_count"}, {&n.forward, "forward"}, {&n.ops, "ops"}, {&n.is_transpose, "is_transpose"},
        {&n.groups, "groups"}, {&n.pending_zero, "pending_zero"}, {&n.double_rows, "double_rows"}, {&n.open, "open"},
        {&n.zero_started, "zero_started"}, {&n.zero_init, "zero_init"}, {&n.unwritten, "unwritten"},
        {&n.zero_covered, "zero_covered"}, {&n.refuse_accumulation, "_refuse_accumulation"},
        {&n.matmul_joins, "matmul_joins"}, {&n.close_overlapping_groups, "_close_overlapping_groups"},
        {&n.refuse_overlapping_start, "_refuse_overlapping_start"},
        {&n.place_matmul_general, "_place_matmul_general"}, {&n.storages, "storages"},
        {&n.full_access, "full_access"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  names = n;
  m.attr("assign_redirect") =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&assignRedirectDef, nullptr, nullptr));
  m.def(
      "place_matmul_method",
      [](py::type cls, py::type matmulGroups) {
        Py_XDECREF(matmulGroupsClass);
        matmulGroupsClass = matmulGroups.inc_ref().ptr();
        return py::reinterpret_steal<py::object>(
            PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &placeMatmulDef));
      },
      py::arg("cls"), py::arg("matmul_groups"),
      "place_matmul as a method of the tracer class cls; matmul_groups: the class of a PSUM tile's "
      "accumulation groups (slots open, zero_started, zero_covered, unwritten), made for its first matmul.");
  m.def(
      "configure_assign",
      [](py::type tensor, py::object write, py::object matmultOpcode, py::object dmaEngine, py::object poolEngine,
         py::str psumKind, py::str sbufKind) {
        for (PyObject** slot : {&tensorClass, &writePlain, &matmult, &dma, &pool, &psum, &sbuf}) Py_XDECREF(*slot);
        tensorClass = tensor.inc_ref().ptr();
        writePlain = write.inc_ref().ptr();
        matmult = matmultOpcode.inc_ref().ptr();
        dma = dmaEngine.inc_ref().ptr();
        pool = poolEngine.inc_ref().ptr();
        psum = psumKind.inc_ref().ptr();
        sbuf = sbufKind.inc_ref().ptr();
      },
      py::arg("tensor_class"), py::arg("write_plain"), py::arg("matmult"), py::arg("dma"), py::arg("pool"),
      py::arg("psum"), py::arg("sbuf"),
      "Gives assign_redirect the Tensor class, the tracer's write_plain, the Matmult opcode, the DMA and GpSimd "
      "engines and the PSUM and SBUF kinds.");
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindAssign);

}  // namespace assign_redirect
}  // namespace

int matmulDestination(PyObject* tr, PyObject* dst, bool accumulate, MatmulDestination& d) {
  if (assign_redirect::tensorClass == nullptr) return 0;
  const int t = assign_redirect::psumDestination(tr, dst, accumulate, d.st, d.s, d.groups, d.writes);
  if (t != 1 || d.groups.get() == Py_None) return t;
  OwnedRef count(slotAttr(d.s.get(), assign_redirect::names.write_count));  // (psumDestination's only then)
  if (count.get() == nullptr) return -1;
  d.writes = PyLong_AsLongLong(count.get());
  return d.writes == -1 && PyErr_Occurred() ? -1 : 1;
}

int accumulatesOnto(PyObject* dst, PyObject* access, PyObject* pe) {
  using namespace assign_redirect;
  if (tensorClass == nullptr || Py_TYPE(dst) != reinterpret_cast<PyTypeObject*>(tensorClass)) return 2;
  Owned st(slotAttr(dst, names.storage));
  if (st.get() == nullptr) return -1;
  Owned s(slotAttr(st.get(), names.state));
  if (s.get() == nullptr) return -1;
  int t = attrIsTrue(s.get(), names.zero_init);
  if (t != 0) return t;  // (zeros: add to them)
  Owned count(slotAttr(s.get(), names.write_count));
  if (count.get() == nullptr) return -1;
  t = PyObject_IsTrue(count.get());
  if (t != 1) return t < 0 ? -1 : 0;  // (nothing written: start)
  Owned groups(slotAttr(s.get(), names.groups));
  if (groups.get() == nullptr) return -1;
  if (groups.get() == Py_None) return 2;
  Owned open(slotAttr(groups.get(), names.open));
  if (open.get() == nullptr) return -1;
  if (!PyDict_CheckExact(open.get()) || PyDict_GET_SIZE(open.get()) == 0) return 2;
  PyObject* const accessArgs[3] = {dst, st.get(), pe};
  Owned acc(callFast(access, accessArgs, 3));
  if (acc.get() == nullptr) return -1;
  if (!PyTuple_Check(acc.get()) || PyTuple_GET_SIZE(acc.get()) <= kAccessPairs) return 2;
  // (a group open on exactly this region: its extent is dst's, and open groups' extents never
  // overlap (a start closes the ones it overlaps, a first += onto zeros that overlaps another's
  // region is refused), so the definition's walk over them finds it and no overlap before it)
  Owned pairs(pairsTuple(PyTuple_GET_ITEM(acc.get(), kAccessPairs)));
  if (pairs.get() == nullptr) return -1;
  Region region;
  if (regionKey(PyTuple_GET_ITEM(acc.get(), kAccessOffset), pairs.get(), region) < 0) return -1;
  if (regionGet(open.get(), region) != nullptr) return 1;
  return PyErr_Occurred() ? -1 : 2;
}

int placeWrittenMatmul(PyObject* tr, MatmulDestination& d, PyObject* op, PyObject* acc, bool accumulate) {
  // (the tile's first matmul: its groups, from the write count before the matmul's write, as
  // placeMatmul makes them)
  if (d.groups.get() == Py_None && assign_redirect::newGroups(d.s.get(), d.writes == 0, d.groups) < 0) return -1;
  return assign_redirect::placeInGroups(tr, d.st.get(), d.s.get(), d.groups.get(), op, acc, accumulate);
}
}  // namespace nxs::py_bind
