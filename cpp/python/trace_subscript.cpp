// The tracers' subscripts `t[key]`, their view arithmetic bir::View's (slice, at), installed on the
// tensor classes as method descriptors (`subscript_method(cls)` for each dialect's tensor class).
//
// `t[key]` of a 2.2x tensor (neuronxsim.nki.tensor.Tensor.__getitem__):
//   `...`: the tensor itself;
//   on a tensor without bound checks, a key (or a tuple key) of ints, loop indices, NumPy
//   integers, slices (of ints, loop indices or None, any nonzero step, negative bounds from the
//   end) and at most one `...`, no more entries than dims, every index and slice inside its dim,
//   that is not a tuple key starting with an int or loop index on an on-chip tensor (those are
//   `_getitem`'s, which keeps such blocks' views): the view of the same storage, ints (negative:
//   from the end) dropping their dim, a loop index at a tuple key's position > 0 on an on-chip
//   tensor keeping its dim at size 1 (NKI's symbolic loop variable: nki.indexing.plain_subscript),
//   slices slicing theirs, omitted trailing dims whole; it shares the tensor's strides tuple when
//   they are unchanged;
//   `t[a, b]` of a 2-D tensor without bound checks, `a` an IndexExpr (`configure_index_expr`) and `b`
//   an int or IndexExpr: nki.indexing.partition_free_subscript's view when that applies (as
//   _getitem's first case: `t[t * 128 + ip, ic]`), else the Python subscript;
//   anything else: the Python subscript (`fallback22(t, key)`, nki.tensor._getitem: index
//   expressions, blocks, slices reaching outside their dim with the bound checks they defer to
//   the instruction, run-time rows, and every error).
// `basic_subscript(key, shape, strides, offset)`: the same arithmetic for the Python subscript
// (a view without bound checks; at most one key entry per dim): ints, NumPy integers and slices,
// `(offset, shape, strides, ())`, or None from the first entry of another kind (a loop index,
// `...`, an index expression, ...) or when a slice reaches outside its dim (the general path's
// bound checks); an int outside its dim and a bad slice raise NKIError, in key order.
// `slice_range(s, size, axis)`: (start, step, count) of a slice of a dim of `size`, NumPy's
// without the clamping (a slice reaching outside is an out-of-range access, checked later).
//
// `t[key]` of an NKI 0.6 tensor (neuronxsim.nki06.tensor.NkiTensor.__getitem__), for every key:
//   ints (negative: from the end; `index(k)` converts other objects and refuses run-time ones),
//   slices (`to_int(v, what)` converts bounds that are not ints; positive steps only; every
//   slice inside its dim and not empty), `:` and at most one `...`, no more entries than dims:
//   the view of the tensor's view sliced and indexed (ints: the dim is dropped, except on the
//   partition dim of an on-chip tensor, which stays at size 1; when that leaves fewer than 2 dims
//   on chip, or none in HBM, a last dim of size 1 is added, of step 1 on chip or when nothing is
//   left, else the last dim's step), wrapped as an NkiTensor of the same buffer and indirection;
//   on a vector-selected tensor dim 0 can be neither indexed nor sliced (only `:`);
//   anything else raises NKIError (the kernel's line found by NKIError itself).
//
// `configure_subscripts(tensor_class, loop_index_class, fallback, error, as_int, np_integer)`
// (2.2x, whose Tensor NKI 0.6's views wrap), then `configure_nki06_subscript(nki_tensor_class,
// index, to_int)`.
//
// Why C: kernels subscript a tensor for nearly every instruction operand (dst=a[:, k, :],
// src=x[r * 128:(r + 1) * 128, :]); in Python each costs a frame or several and dozens of bytecodes.
#include "trace_equal.h"
#include "trace_subscript.h"

#include "trace_int_tuples.h"
#include "trace_ref.h"
#include "trace_slotted.h"

#include "bindings.h"
#include "bir/Error.h"
#include "bir/View.h"

namespace nxs::py_bind {
namespace {
namespace subscripts {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

PyObject* nkiTensorClass = nullptr;
PyObject* tensorClass = nullptr;
PyTypeObject* loopIndexClass = nullptr;
PyObject* fallback22 = nullptr;  // 2.2x's Python subscript, for the keys the C one does not take
PyObject* nkiError = nullptr;    // neuronxsim.nki.errors.NKIError
PyObject* asInt22 = nullptr;     // 2.2x's index conversion, nki.indexing._as_int(value, what)
PyObject* npInteger = nullptr;   // numpy.integer
PyObject* index06 = nullptr;     // NKI 0.6's index(k): an index that is no int, converted or refused
PyObject* toInt06 = nullptr;     // NKI 0.6's to_int(v, what): a slice bound or step, converted
PyObject *checksName, *viewName, *bufferName, *indirectName, *storageName, *onChipName, *offsetName, *shapeName,
    *stridesName, *kindName, *vectorName;

using Held = nxs::py_bind::OwnedRef;

// Raises NKIError(reason) (its location: the kernel line running, which NKIError finds); null.
PyObject* raise(PyObject* reason) {
  if (reason == nullptr) return nullptr;
  PyObject* e = PyObject_CallOneArg(nkiError, reason);
  Py_DECREF(reason);
  if (e != nullptr) {
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(e)), e);
    Py_DECREF(e);
  }
  return nullptr;
}

// An index taken as it is: an int or a loop index, exactly (not a bool, not a numpy int), that
// fits 64 bits (`overflow`: it does not).
bool plainIndex(PyObject* k, long long& v, bool* overflow = nullptr) {
  if (!PyLong_CheckExact(k) && Py_TYPE(k) != loopIndexClass) return false;
  int over = 0;
  v = PyLong_AsLongLongAndOverflow(k, &over);
  if (overflow) *overflow = over != 0;
  return over == 0;
}

// Python's floor division and the ceiling one (nki.indexing._ceil_div).
int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0); }
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

// `convert(v, what)` as an int64 into `out`; false with an error set.
bool convertedInt(PyObject* convert, PyObject* v, const char* what, long long& out) {
  Held w(PyUnicode_FromString(what));
  if (w.get() == nullptr) return false;
  Held i(PyObject_CallFunctionObjArgs(convert, v, w.get(), nullptr));
  if (i.get() == nullptr) return false;
  int over = 0;
  out = PyLong_AsLongLongAndOverflow(i.get(), &over);
  if (out == -1 && PyErr_Occurred()) return false;
  if (over) {
    raise(PyUnicode_FromFormat("%s %S does not fit 64 bits", what, i.get()));
    return false;
  }
  return true;
}

// The ints of a tensor's shape or strides: kept inline for the few dims most tensors have (a
// subscript reads both for every operand; two vectors were two allocations each time).
class Ints {
 public:
  Ints() = default;
  Ints(const Ints&) = delete;
  Ints& operator=(const Ints&) = delete;
  size_t size() const { return n_; }
  int64_t operator[](size_t i) const { return p_[i]; }
  int64_t& operator[](size_t i) { return p_[i]; }
  void resize(size_t n) {
    if (n > kLocal) {
      many_.resize(n);
      p_ = many_.data();
    } else {
      p_ = local_;
    }
    n_ = n;
  }

 private:
  static constexpr size_t kLocal = 8;
  int64_t local_[kLocal] = {};
  std::vector<int64_t> many_;
  int64_t* p_ = local_;
  size_t n_ = 0;
};

// Integers of a tuple of ints (false if one is not an int that fits).
bool intsOf(PyObject* tuple, Ints& out) {
  if (!PyTuple_Check(tuple)) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(tuple);
  out.resize(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyTuple_GET_ITEM(tuple, i);
    if (!PyLong_Check(v)) return false;
    out[static_cast<size_t>(i)] = PyLong_AsLongLong(v);
    if (out[static_cast<size_t>(i)] == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
  }
  return true;
}

// A tensor's view as a bir::View of no location (its dims the tensor's, the partition dim of an
// on-chip one included).
bir::View viewOf(int64_t offset, const Ints& shape, const Ints& strides) {
  std::vector<bir::APPair> dims(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) dims[d] = {strides[d], shape[d]};
  return bir::View(nullptr, bir::DType::float32, offset, std::move(dims));
}

// A key's entries: its items (a non-tuple key is one), the one `...` among them expanded to the
// `:`s (null) of the dims the others leave; `pos`: each entry's position in the key.
struct Entry {
  PyObject* key;
  Py_ssize_t pos;
};

// ---- 2.2x ----

enum class Walk { View, Other, Error };  // a view; a key the walk leaves to Python; an error set

// 2.2x's (start, step, count) of the slice `s` of a dim of `size` (slice_range). `raising`: bounds
// that are not ints are converted (nki.indexing._as_int) and a zero step or an empty slice raise;
// else they are Other.
Walk sliceRange22(PyObject* k, int64_t size, size_t axis, bool raising, int64_t& start, int64_t& step,
                  int64_t& count) {
  auto* s = reinterpret_cast<PySliceObject*>(k);
  auto value = [&](PyObject* v, const char* what, long long& out) {
    if (plainIndex(v, out)) return Walk::View;
    if (!raising) return Walk::Other;
    return convertedInt(asInt22, v, what, out) ? Walk::View : Walk::Error;
  };
  long long st = 1, a = 0, b = 0;
  Walk w;
  if (s->step != Py_None && (w = value(s->step, "a slice step", st)) != Walk::View) return w;
  if (st == 0) {
    if (!raising) return Walk::Other;
    raise(PyUnicode_FromString("slice step must not be 0"));
    return Walk::Error;
  }
  if (s->start == Py_None) {
    a = st > 0 ? 0 : size - 1;
  } else {
    if ((w = value(s->start, "a slice bound", a)) != Walk::View) return w;
    if (a < 0) a += size;
  }
  if (s->stop == Py_None) {
    count = st > 0 ? ceilDiv(size - a, st) : floorDiv(a, -st) + 1;
  } else {
    if ((w = value(s->stop, "a slice bound", b)) != Walk::View) return w;
    if (b < 0) b += size;
    count = ceilDiv(b - a, st);
  }
  if (count <= 0) {
    if (!raising) return Walk::Other;
    raise(PyUnicode_FromFormat("slice %S:%S:%S of dimension %zu (size %lld) is empty", s->start, s->stop, s->step,
                               axis, static_cast<long long>(size)));
    return Walk::Error;
  }
  start = a;
  step = st;
  return Walk::View;
}

// `v` (a 2.2x tensor's view, no bound checks) subscripted by `n` entries (n <= its rank).
// `method`: for Tensor.__getitem__: loop indices as plain_subscript has them (`keepLoopAxes`: an
// on-chip tensor and a tuple key, where a loop index past position 0 keeps its dim), and whatever
// is refused or reaches outside is Other (the Python subscript says what is wrong). Else
// basic_subscript's: a loop index is Other, an int outside its dim and a bad slice raise, and a
// slice reaching outside makes the key Other once the rest of it raised nothing.
Walk walk22(const Entry* e, size_t n, const Ints& shape, bir::View& v, bool method,
            bool keepLoopAxes) {
  size_t d = 0;  // v's dim for the next entry
  bool inside = true;
  for (size_t axis = 0; axis < n; ++axis) {
    PyObject* k = e[axis].key;
    const int64_t size = shape[axis];
    if (k == nullptr) {
      ++d;
      continue;
    }
    long long i = 0;
    bool overflow = false;
    if (PySlice_Check(k)) {
      auto* s = reinterpret_cast<PySliceObject*>(k);
      long long a = 0, b = 0;
      if (s->step == Py_None && s->start == Py_None && s->stop == Py_None) {
        ++d;
        continue;
      }
      if (s->step == Py_None && plainIndex(s->start, a) && plainIndex(s->stop, b) && 0 <= a && a < b && b <= size) {
        v = std::move(v).slice(d++, a, b - a);  // (the commonest: a:b inside the dim)
        continue;
      }
      int64_t start = 0, step = 1, count = 0;
      const Walk w = sliceRange22(k, size, axis, !method, start, step, count);
      if (w != Walk::View) return w;
      const int64_t last = start + step * (count - 1);
      if (start < 0 || last < 0 || start >= size || last >= size) {
        if (method) return Walk::Other;
        inside = false;  // (the general path defers its bound check)
        ++d;
        continue;
      }
      v = std::move(v).slice(d++, start, count, step);
      continue;
    }
    PyObject* shown = k;  // the int errors name
    Held converted(nullptr);
    if (PyLong_CheckExact(k)) {
      plainIndex(k, i, &overflow);
    } else if (Py_TYPE(k) == loopIndexClass) {
      if (!method) return Walk::Other;
      plainIndex(k, i, &overflow);
      if (keepLoopAxes && e[axis].pos > 0) {  // slice(i, i + 1): NKI keeps the axis
        if (overflow || i < 0 || i >= size) return Walk::Other;
        v = std::move(v).slice(d++, i, 1);
        continue;
      }
    } else {
      const int isNumpy = PyObject_IsInstance(k, npInteger);
      if (isNumpy < 0) return Walk::Error;
      if (!isNumpy) return Walk::Other;
      converted.p = PyNumber_Long(k);
      if (converted.get() == nullptr) return Walk::Error;
      shown = converted.get();
      int over = 0;
      i = PyLong_AsLongLongAndOverflow(shown, &over);
      overflow = over != 0;
    }
    if (!overflow && -size <= i && i < 0) i += size;
    if (overflow || i < 0 || i >= size) {
      if (method) return Walk::Other;
      raise(PyUnicode_FromFormat("index %S is out of range for dimension %zu of size %lld", shown, axis,
                                 static_cast<long long>(size)));
      return Walk::Error;
    }
    v = std::move(v).at(d, i);
  }
  return inside ? Walk::View : Walk::Other;
}

// (offset, shape, strides) of `v` into new references; `strides` is `sameStrides` (whose values
// are `oldStrides`) when they are equal.
bool viewParts(const bir::View& v, PyObject* sameStrides, const Ints& oldStrides, Held& offset,
               Held& shape, Held& strides) {
  const std::vector<bir::APPair>& dims = v.dims();
  const Py_ssize_t n = static_cast<Py_ssize_t>(dims.size());
  offset.p = PyLong_FromLongLong(v.offset());
  if (offset.get() == nullptr) return false;
  bool same = sameStrides != nullptr && oldStrides.size() == dims.size();
  if (n <= int_tuples::kMaxSize) {  // (the shape: the tuple held for its values)
    long long nums[int_tuples::kMaxSize];
    for (Py_ssize_t i = 0; i < n; ++i) nums[i] = dims[static_cast<size_t>(i)].num;
    shape.p = int_tuples::get(nums, static_cast<int>(n));
    if (shape.get() == nullptr) return false;
  } else {
    shape.p = PyTuple_New(n);
    if (shape.get() == nullptr) return false;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* num = PyLong_FromLongLong(dims[static_cast<size_t>(i)].num);
      if (num == nullptr) return false;
      PyTuple_SET_ITEM(shape.get(), i, num);
    }
  }
  for (Py_ssize_t i = 0; i < n; ++i)
    same = same && oldStrides[static_cast<size_t>(i)] == dims[static_cast<size_t>(i)].step;
  if (same) {
    strides.p = Py_NewRef(sameStrides);
    return true;
  }
  strides.p = PyTuple_New(n);
  if (strides.get() == nullptr) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* step = PyLong_FromLongLong(dims[static_cast<size_t>(i)].step);
    if (step == nullptr) return false;
    PyTuple_SET_ITEM(strides.get(), i, step);
  }
  return true;
}

PyTypeObject* indexExprClass = nullptr;  // nki.indexing.IndexExpr (configure_index_expr)
PyObject *constName, *coefsName;

// The value of an exact int that fits 64 bits (false, no error set, for anything else).
bool smallInt(PyObject* o, int64_t& v) {
  if (!PyLong_CheckExact(o)) return false;
  int over = 0;
  const long long x = PyLong_AsLongLongAndOverflow(o, &over);
  if (over || (x == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  v = x;
  return true;
}

// An IndexExpr's slots as read by partitionFree: its shape tuple (2-D) and the ints of its shape,
// const and coefs. False (no error set) when it is not such; -1 from read() on an error.
struct Expr2 {
  Held shape{nullptr};
  int64_t n[2]{}, c[2]{}, k = 0;
  int read(PyObject* e) {
    shape.p = slotAttr(e, shapeName);
    Held k0(slotAttr(e, constName)), coefs(slotAttr(e, coefsName));
    if (shape.get() == nullptr || k0.get() == nullptr || coefs.get() == nullptr) return -1;
    PyObject* s = shape.get();
    PyObject* cs = coefs.get();
    if (!PyTuple_CheckExact(s) || PyTuple_GET_SIZE(s) != 2 || !PyTuple_CheckExact(cs) || PyTuple_GET_SIZE(cs) != 2)
      return 0;
    return smallInt(PyTuple_GET_ITEM(s, 0), n[0]) && smallInt(PyTuple_GET_ITEM(s, 1), n[1]) &&
           smallInt(PyTuple_GET_ITEM(cs, 0), c[0]) && smallInt(PyTuple_GET_ITEM(cs, 1), c[1]) && smallInt(k0.get(), k);
  }
};

// Whether lo <= x < hi.
bool inside(int64_t x, int64_t hi) { return 0 <= x && x < hi; }

// nki.indexing.partition_free_subscript(a, b, shape, strides, offset) for the IndexExpr `a` (see
// there: `t[t * 128 + ip, ic]` and `t[ip, j]`), as _getitem applies it to a 2-D tensor without
// bound checks: the view (a new reference in `out`) and 1; 0 when it does not apply (the Python
// subscript then decides); -1 on error. Arithmetic that leaves 64 bits: 0.
int partitionFree(PyObject* a, PyObject* b, const Ints& shape, const Ints& strides,
                  PyObject* t, PyObject*& out) {
  Expr2 x;
  int r = x.read(a);
  if (r != 1) return r;
  int64_t p = x.n[0], ca = p != 1 ? x.c[0] : 0, a0 = x.k, n0 = shape[0], n1 = shape[1], s0 = strides[0],
          s1 = strides[1];
  int64_t last = 0, b0 = 0, cb = 0;
  Held newShape(nullptr);
  if (PyLong_CheckExact(b)) {  // t[ip, j]: column j as a [P, 1] tile
    if (!smallInt(b, b0) || x.n[1] != 1 || !inside(b0, n1)) return 0;
    newShape.p = Py_NewRef(x.shape.get());
  } else {
    if (Py_TYPE(b) != indexExprClass) return 0;
    Expr2 y;
    r = y.read(b);
    if (r != 1) return r;
    if ((x.n[1] != 1 && (x.c[1] != 0 || x.n[1] != y.n[1])) || (y.n[0] != 1 && (y.c[0] != 0 || y.n[0] != x.n[0])))
      return 0;
    const int64_t f = y.n[1];
    cb = f != 1 ? y.c[1] : 0;
    b0 = y.k;
    if (__builtin_mul_overflow(cb, f - 1, &last) || __builtin_add_overflow(b0, last, &last)) return 0;
    if (!inside(b0, n1) || !inside(last, n1)) return 0;
    newShape.p = PyTuple_Pack(2, PyTuple_GET_ITEM(x.shape.get(), 0), PyTuple_GET_ITEM(y.shape.get(), 1));
    if (newShape.get() == nullptr) return -1;
  }
  if (__builtin_mul_overflow(ca, p - 1, &last) || __builtin_add_overflow(a0, last, &last)) return 0;
  if (!inside(a0, n0) || !inside(last, n0)) return 0;
  Held offsetObj(slotAttr(t, offsetName));
  if (offsetObj.get() == nullptr) return -1;
  int64_t offset = 0, sa = 0, sb = 0, at = 0, step0 = 0, step1 = 0;
  if (!smallInt(offsetObj.get(), offset) || __builtin_mul_overflow(s0, a0, &sa) ||
      __builtin_mul_overflow(s1, b0, &sb) || __builtin_add_overflow(offset, sa, &at) ||
      __builtin_add_overflow(at, sb, &at) || __builtin_mul_overflow(s0, ca, &step0) ||
      __builtin_mul_overflow(s1, cb, &step1))
    return 0;
  Held storage(slotAttr(t, storageName));
  Held newOffset(PyLong_FromLongLong(at));
  // (the strides: the tuple held for their values, int_tuples.h; Py_BuildValue's format parsing
  // cost more than the rest of this view's making)
  const long long steps[2] = {static_cast<long long>(step0), static_cast<long long>(step1)};
  Held newStrides(int_tuples::get(steps, 2));
  Held noChecks(PyTuple_New(0));
  if (!storage.get() || !newOffset.get() || !newStrides.get() || !noChecks.get()) return -1;
  PyObject* const slots[5] = {storage.get(), newOffset.get(), newShape.get(), newStrides.get(), noChecks.get()};
  out = newSlottedObject(tensorClass, slots, 5);
  return out == nullptr ? -1 : 1;
}

PyObject* fallBack22(PyObject* t, PyObject* key) {
  PyObject* const args[2] = {t, key};
  return PyObject_Vectorcall(fallback22, args, 2, nullptr);
}

// walk22's commonest walk without its View: every entry `:` (or one an ellipsis stands for) or
// a:b of plain indices inside its dim, on a view of at most int_tuples::kMaxSize dims. Then each
// a:b is the View's slice of a in-place dim (no entry drops one): the offset moves by a times the
// dim's stride, the dim keeps its stride and has b - a elements (View::sliceInPlace, step 1), and
// walk22 would give that view. `offset` (the view's) and `nums` (the new shape) are set only for
// such a walk; false for anything else (left to walk22).
bool simpleSlices(const Entry* e, size_t n, const Ints& shape, const Ints& strides, long long& offset,
                  long long* nums) {
  if (shape.size() > static_cast<size_t>(int_tuples::kMaxSize) || n > shape.size()) return false;
  long long at = offset;
  for (size_t axis = 0; axis < shape.size(); ++axis) nums[axis] = shape[axis];
  for (size_t axis = 0; axis < n; ++axis) {
    PyObject* k = e[axis].key;
    if (k == nullptr) continue;
    if (!PySlice_Check(k)) return false;
    auto* s = reinterpret_cast<PySliceObject*>(k);
    if (s->step != Py_None) return false;
    if (s->start == Py_None && s->stop == Py_None) continue;
    long long a = 0, b = 0;
    if (!plainIndex(s->start, a) || !plainIndex(s->stop, b) || !(0 <= a && a < b && b <= shape[axis])) return false;
    at += a * strides[axis];
    nums[axis] = b - a;
  }
  offset = at;
  return true;
}

// fallBack22(t, key), `key` null for the tuple of items[0..count) (made only now).
PyObject* fallBackItems22(PyObject* t, PyObject* key, PyObject* const* items, Py_ssize_t count) {
  if (key != nullptr) return fallBack22(t, key);
  Held tuple(PyTuple_New(count));
  if (tuple.get() == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < count; ++i) PyTuple_SET_ITEM(tuple.get(), i, Py_NewRef(items[i]));
  return fallBack22(t, tuple.get());
}

// t[key] of the key's items[0..count) (subscriptItems); `key` null when it is the tuple of those
// items, made only for the Python subscript (a blocked tensor's subscript hands on the entries
// past its block index without building their tuple).
PyObject* subscriptOfItems22(PyObject* t, PyObject* key, PyObject* const* items, Py_ssize_t count) {
  const bool isTuple = key == nullptr || PyTuple_CheckExact(key);
  Held checks(slotAttr(t, checksName));
  Held shapeObj(slotAttr(t, shapeName));
  Held stridesObj(slotAttr(t, stridesName));
  if (!checks.get() || !shapeObj.get() || !stridesObj.get()) return nullptr;
  const int checked = PyObject_IsTrue(checks.get());
  if (checked < 0) return nullptr;
  Ints shape, strides;
  if (checked || !intsOf(shapeObj.get(), shape) || !intsOf(stridesObj.get(), strides) || shape.size() != strides.size())
    return fallBackItems22(t, key, items, count);
  const size_t ndim = shape.size();
  if (isTuple && count == 2 && ndim == 2 && Py_TYPE(items[0]) == indexExprClass) {
    // t[t * 128 + ip, ic]: _getitem's first case, in C (else the Python subscript's)
    PyObject* view = nullptr;
    const int made = partitionFree(items[0], items[1], shape, strides, t, view);
    if (made != 0) return made < 0 ? nullptr : view;
    return fallBackItems22(t, key, items, count);
  }
  Held storage(slotAttr(t, storageName));
  if (storage.get() == nullptr) return nullptr;
  bool loopIndices = false;
  Py_ssize_t ellipsis = -1;
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (items[i] == Py_Ellipsis) {
      if (ellipsis >= 0) return fallBackItems22(t, key, items, count);  // (two: the Python subscript refuses them)
      ellipsis = i;
    } else if (Py_TYPE(items[i]) == loopIndexClass) {
      loopIndices = true;
    }
  }
  const size_t given = static_cast<size_t>(count) - (ellipsis >= 0 ? 1 : 0);
  if (given > ndim) return fallBackItems22(t, key, items, count);
  int onChip = 0;
  if (isTuple && (loopIndices || (count > 0 && PyLong_CheckExact(items[0])))) {
    Held onChipObj(slotAttr(storage.get(), onChipName));
    if (onChipObj.get() == nullptr) return nullptr;
    onChip = PyObject_IsTrue(onChipObj.get());
    if (onChip < 0) return nullptr;
    // t[i, ...] of an on-chip tensor: a block of a multi-tile tensor (_getitem keeps its views)
    if (onChip && count > 0 && (PyLong_CheckExact(items[0]) || Py_TYPE(items[0]) == loopIndexClass))
      return fallBackItems22(t, key, items, count);
  }
  Entry local[8];  // (most tensors have a few dims: no allocation)
  std::vector<Entry> many(ndim > 8 ? ndim : 0);
  Entry* entries = ndim > 8 ? many.data() : local;
  size_t n = 0;
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (i == ellipsis)
      for (size_t j = given; j < ndim; ++j) entries[n++] = {nullptr, i};
    else
      entries[n++] = {items[i], i};
  }
  Held offsetObj(slotAttr(t, offsetName));
  if (offsetObj.get() == nullptr) return nullptr;
  const long long offset = PyLong_AsLongLong(offsetObj.get());
  if (offset == -1 && PyErr_Occurred()) return nullptr;
  long long simpleOffset = offset, nums[int_tuples::kMaxSize];
  if (simpleSlices(entries, n, shape, strides, simpleOffset, nums)) {
    Held newOffset(PyLong_FromLongLong(simpleOffset));
    Held newShape(newOffset.get() != nullptr ? int_tuples::get(nums, static_cast<int>(ndim)) : nullptr);
    Held noChecks(PyTuple_New(0));
    if (!newShape.get() || !noChecks.get()) return nullptr;
    PyObject* const slots[5] = {storage.get(), newOffset.get(), newShape.get(), stridesObj.get(), noChecks.get()};
    return newSlottedObject(tensorClass, slots, 5);
  }
  bir::View v = viewOf(offset, shape, strides);
  try {
    const Walk w = walk22(entries, n, shape, v, true, onChip && isTuple);
    if (w == Walk::Error) return nullptr;
    if (w == Walk::Other) return fallBackItems22(t, key, items, count);
  } catch (const bir::BIRError&) {  // (not expected: the walk keeps every slice inside)
    return fallBackItems22(t, key, items, count);
  }
  Held newOffset(nullptr), newShape(nullptr), newStrides(nullptr);
  Held noChecks(PyTuple_New(0));
  if (!viewParts(v, stridesObj.get(), strides, newOffset, newShape, newStrides) || !noChecks.get()) return nullptr;
  PyObject* const slots[5] = {storage.get(), newOffset.get(), newShape.get(), newStrides.get(), noChecks.get()};
  return newSlottedObject(tensorClass, slots, 5);
}

PyObject* subscript22(PyObject* t, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "__getitem__(key)");
    return nullptr;
  }
  if (tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the tracer's subscripts are not configured");
    return nullptr;
  }
  PyObject* key = args[0];
  if (key == Py_Ellipsis) return Py_NewRef(t);
  PyObject* const* items;
  Py_ssize_t count;
  if (!subscriptItems(key, items, count)) return fallBack22(t, key);
  return subscriptOfItems22(t, key, items, count);
}

// basic_subscript(key, shape, strides, offset) (see the file's comment).
PyObject* basicSubscript(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4 || !PyTuple_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "basic_subscript(key: tuple, shape, strides, offset)");
    return nullptr;
  }
  Ints shape, strides;
  const long long offset = PyLong_AsLongLong(args[3]);
  if ((offset == -1 && PyErr_Occurred()) || !intsOf(args[1], shape) || !intsOf(args[2], strides) ||
      shape.size() != strides.size()) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "basic_subscript: shape and strides are tuples of as many ints, offset an int");
    return nullptr;
  }
  PyObject* key = args[0];
  const Py_ssize_t n = PyTuple_GET_SIZE(key);
  if (static_cast<size_t>(n) > shape.size()) Py_RETURN_NONE;
  std::vector<Entry> entries(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* k = PyTuple_GET_ITEM(key, i);
    if (k == Py_Ellipsis) {  // (not the walk's `:`)
      entries.resize(static_cast<size_t>(i));
      break;
    }
    entries[static_cast<size_t>(i)] = {k, i};
  }
  bir::View v = viewOf(offset, shape, strides);
  Walk w;
  try {
    w = walk22(entries.data(), entries.size(), shape, v, false, false);
  } catch (const bir::BIRError& e) {  // (not expected: the walk keeps every slice inside)
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  if (w == Walk::Error) return nullptr;
  if (w == Walk::Other || entries.size() != static_cast<size_t>(n)) Py_RETURN_NONE;
  Held newOffset(nullptr), newShape(nullptr), newStrides(nullptr);
  Held noChecks(PyTuple_New(0));
  if (!viewParts(v, args[2], strides, newOffset, newShape, newStrides) || !noChecks.get()) return nullptr;
  return PyTuple_Pack(4, newOffset.get(), newShape.get(), newStrides.get(), noChecks.get());
}

// slice_range(s, size, axis) (see the file's comment).
PyObject* sliceRange(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 || !PySlice_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "slice_range(s: slice, size: int, axis: int)");
    return nullptr;
  }
  const long long size = PyLong_AsLongLong(args[1]);
  const long long axis = PyLong_AsLongLong(args[2]);
  if (PyErr_Occurred()) return nullptr;
  int64_t start = 0, step = 1, count = 0;
  if (sliceRange22(args[0], size, static_cast<size_t>(axis), true, start, step, count) != Walk::View) return nullptr;
  return Py_BuildValue("(LLL)", static_cast<long long>(start), static_cast<long long>(step),
                       static_cast<long long>(count));
}

// ---- NKI 0.6 ----

// The int of an NKI 0.6 slice bound or step `v` (nki06.tensor._int for what is no int).
// `overflow`: an int that does not fit 64 bits (no error set).
bool int06(PyObject* v, const char* what, long long& out, bool& overflow) {
  overflow = false;
  if (PyLong_CheckExact(v) || Py_TYPE(v) == loopIndexClass) {
    plainIndex(v, out, &overflow);
    return true;
  }
  return convertedInt(toInt06, v, what, out);
}

// (start, step, count) of NKI 0.6's slice `k` of a dim of `n` (nki06's slice rules); false with
// an NKIError set.
bool sliceRange06(PyObject* k, int64_t n, size_t axis, int64_t& start, int64_t& step, int64_t& count) {
  auto* s = reinterpret_cast<PySliceObject*>(k);
  long long st = 1, a = 0, b = n;
  bool over = false, outside = false;
  if (s->step != Py_None) {
    if (!int06(s->step, "a slice step", st, over)) return false;
    if (over) {
      raise(PyUnicode_FromFormat("a slice step %S does not fit 64 bits", s->step));
      return false;
    }
  }
  if (st < 1) {
    raise(PyUnicode_FromFormat("slice step %lld: steps must be positive", st));
    return false;
  }
  if (s->start != Py_None) {
    if (!int06(s->start, "a slice start", a, over)) return false;
    outside = over;
  }
  if (s->stop != Py_None) {
    if (!int06(s->stop, "a slice stop", b, over)) return false;
    outside = outside || over;
  }
  if (!outside) {
    if (a < 0) a += n;
    if (b < 0) b += n;
  }
  if (outside || !(0 <= a && a < b && b <= n)) {
    raise(PyUnicode_FromFormat("slice %S:%S of dimension %zu (size %lld) is empty or reaches outside it", s->start,
                               s->stop, axis, static_cast<long long>(n)));
    return false;
  }
  start = a;
  step = st;
  count = ceilDiv(b - a, st);
  return true;
}

PyObject* subscript06(PyObject* t, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "__getitem__(key)");
    return nullptr;
  }
  if (nkiTensorClass == nullptr || tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the tracer's subscripts are not configured");
    return nullptr;
  }
  PyObject* key = args[0];
  Held indirect(slotAttr(t, indirectName));
  Held view(slotAttr(t, viewName));
  if (indirect.get() == nullptr || view.get() == nullptr) return nullptr;
  Held storage(slotAttr(view.get(), storageName));
  Held offsetObj(slotAttr(view.get(), offsetName));
  Held shapeObj(slotAttr(view.get(), shapeName));
  Held stridesObj(slotAttr(view.get(), stridesName));
  if (!storage.get() || !offsetObj.get() || !shapeObj.get() || !stridesObj.get()) return nullptr;
  Held onChipObj(slotAttr(storage.get(), onChipName));
  if (onChipObj.get() == nullptr) return nullptr;
  const int onChip = PyObject_IsTrue(onChipObj.get());
  if (onChip < 0) return nullptr;
  Ints shape, strides;
  const long long offset = PyLong_AsLongLong(offsetObj.get());
  if ((offset == -1 && PyErr_Occurred()) || !intsOf(shapeObj.get(), shape) || !intsOf(stridesObj.get(), strides) ||
      shape.size() != strides.size()) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "NkiTensor subscript: a view of an int offset, shape and strides expected");
    return nullptr;
  }
  const size_t ndim = shape.size();
  PyObject* const* items = &key;
  Py_ssize_t count = 1;
  if (PyTuple_Check(key)) {
    items = &PyTuple_GET_ITEM(key, 0);
    count = PyTuple_GET_SIZE(key);
  }
  Py_ssize_t ellipsis = -1;
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (items[i] != Py_Ellipsis) continue;
    if (ellipsis >= 0) return raise(PyUnicode_FromString("a subscript takes one '...'"));
    ellipsis = i;
  }
  const size_t given = static_cast<size_t>(count) - (ellipsis >= 0 ? 1 : 0);
  if (given > ndim) return raise(PyUnicode_FromFormat("%zu indices for a %zu-dimensional tensor", given, ndim));
  std::vector<PyObject*> entries;  // null: `:`
  entries.reserve(ndim);
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (i == ellipsis)
      entries.insert(entries.end(), ndim - given, nullptr);
    else
      entries.push_back(items[i]);
  }
  entries.resize(ndim, nullptr);
  // Dim 0 of a vector-selected tensor is indirect: only `:` takes it.
  auto refuseIndirect = [&](size_t axis) {
    if (axis != 0 || indirect.get() == Py_None) return false;
    Held kind(slotAttr(indirect.get(), kindName));
    if (kind.get() == nullptr) return true;
    const int vector = equalTo(kind.get(), vectorName);
    if (vector < 0) return true;
    if (vector)
      raise(PyUnicode_FromString(
          "a subscript: dimension 0 of this view is indirect (vector-selected) and cannot be sliced or selected"));
    return vector != 0;
  };
  bir::View v = viewOf(offset, shape, strides);
  bool dropped = false;
  size_t d = 0;  // v's dim for the next entry
  try {
    for (size_t axis = 0; axis < ndim; ++axis) {
      PyObject* k = entries[axis];
      const int64_t n = shape[axis];
      if (k == nullptr) {
        ++d;
        continue;
      }
      if (PySlice_Check(k)) {
        auto* s = reinterpret_cast<PySliceObject*>(k);
        if (s->start == Py_None && s->stop == Py_None && s->step == Py_None) {
          ++d;
          continue;
        }
        int64_t start = 0, step = 1, num = 0;
        if (!sliceRange06(k, n, axis, start, step, num)) return nullptr;
        if ((start != 0 || step != 1 || num != n) && refuseIndirect(axis)) return nullptr;
        v = std::move(v).slice(d++, start, num, step);
        continue;
      }
      long long i = 0;
      bool overflow = false;
      if (!plainIndex(k, i, &overflow) && !overflow) {
        Held converted(PyObject_CallOneArg(index06, k));  // (raises for a run-time index)
        if (converted.get() == nullptr) return nullptr;
        int over = 0;
        i = PyLong_AsLongLongAndOverflow(converted.get(), &over);
        if (i == -1 && PyErr_Occurred()) return nullptr;
        overflow = over != 0;
      }
      if (!overflow && i < 0) i += n;
      if (overflow || i < 0 || i >= n)
        return raise(PyUnicode_FromFormat("index %S is outside dimension %zu (size %lld)", k, axis,
                                          static_cast<long long>(n)));
      if (refuseIndirect(axis)) return nullptr;
      if (onChip && axis == 0) {
        v = std::move(v).slice(d++, i, 1);  // (the partition dim stays, at size 1)
      } else {
        v = std::move(v).at(d, i);
        dropped = true;
      }
    }
  } catch (const bir::BIRError& e) {  // (not expected: the checks above keep every slice inside)
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  if (dropped && v.rank() < (onChip ? 2u : 1u)) {  // the last dim stays at size 1
    std::vector<bir::APPair> dims = v.dims();
    dims.push_back({dims.empty() || onChip ? 1 : dims.back().step, 1});
    v = bir::View(nullptr, bir::DType::float32, v.offset(), std::move(dims));
  }
  Held newOffset(nullptr), newShape(nullptr), newStrides(nullptr);
  Held noChecks(PyTuple_New(0));
  if (!viewParts(v, nullptr, strides, newOffset, newShape, newStrides) || !noChecks.get()) return nullptr;
  PyObject* const slots[5] = {storage.get(), newOffset.get(), newShape.get(), newStrides.get(), noChecks.get()};
  Held derived(newSlottedObject(tensorClass, slots, 5));
  if (derived.get() == nullptr) return nullptr;
  Held buffer(slotAttr(t, bufferName));
  if (buffer.get() == nullptr) return nullptr;
  auto* cls = reinterpret_cast<PyTypeObject*>(nkiTensorClass);
  PyObject* out = cls->tp_alloc(cls, 0);
  if (out == nullptr) return nullptr;
  if (PyObject_SetAttr(out, viewName, derived.get()) < 0 || PyObject_SetAttr(out, bufferName, buffer.get()) < 0 ||
      PyObject_SetAttr(out, indirectName, indirect.get()) < 0) {
    Py_DECREF(out);
    return nullptr;
  }
  return out;
}

PyMethodDef subscript22Def = {
    "__getitem__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(subscript22)), METH_FASTCALL,
    "t[key]: a view of the tensor (see the NKI indexing rules)."};

PyMethodDef subscript06Def = {
    "__getitem__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(subscript06)), METH_FASTCALL,
    "t[key]: ints, slices (nl.ds) and ... (see the language guide's indexing rules)."};

PyMethodDef basicSubscriptDef = {
    "basic_subscript", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(basicSubscript)), METH_FASTCALL,
    "basic_subscript(key, shape, strides, offset): the view (offset, shape, strides, ()) of a 2.2x tensor view "
    "without bound checks subscripted by the tuple key of ints, NumPy integers and slices (at most one per dim); "
    "None for a key with another entry (from the first of them) or a slice reaching outside its dim; an int "
    "outside its dim and a bad slice raise NKIError, in key order."};

PyMethodDef sliceRangeDef = {
    "slice_range", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(sliceRange)), METH_FASTCALL,
    "slice_range(s, size, axis): (start, step, count) of the slice s of dim `axis` of `size` elements, without "
    "NumPy's clamping (a slice reaching outside is an out-of-range access, checked later); NKIError for a zero "
    "step or an empty slice."};

void setFunction(py::module_& m, PyMethodDef* def) {
  m.attr(def->ml_name) = py::reinterpret_steal<py::object>(PyCFunction_NewEx(def, nullptr, nullptr));
}

void bindSubscripts(py::module_& m) {
  for (auto [slot, text] :
       {std::pair{&checksName, "checks"}, {&viewName, "_view"}, {&bufferName, "_buffer"}, {&indirectName, "_indirect"},
        {&storageName, "storage"}, {&onChipName, "on_chip"}, {&offsetName, "offset"}, {&shapeName, "shape"},
        {&stridesName, "strides"}, {&kindName, "kind"}, {&vectorName, "vector"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  m.def(
      "configure_subscripts",
      [](py::type tensor, py::type loopIndex, py::object python, py::type error, py::object asInt,
         py::type integer) {
        for (PyObject** slot : {&tensorClass, &fallback22, &nkiError, &asInt22, &npInteger}) Py_XDECREF(*slot);
        Py_XDECREF(reinterpret_cast<PyObject*>(loopIndexClass));
        tensorClass = tensor.inc_ref().ptr();
        loopIndexClass = reinterpret_cast<PyTypeObject*>(loopIndex.inc_ref().ptr());
        fallback22 = python.inc_ref().ptr();
        nkiError = error.inc_ref().ptr();
        asInt22 = asInt.inc_ref().ptr();
        npInteger = integer.inc_ref().ptr();
      },
      py::arg("tensor_class"), py::arg("loop_index_class"), py::arg("fallback"), py::arg("error"),
      py::arg("as_int"), py::arg("np_integer"),
      "Gives the subscripts the Tensor (2.2x) and LoopIndex classes, the Python subscript fallback(t, key) of "
      "Tensor for the keys the C one does not take, the NKIError class, the conversion as_int(value, what) of "
      "slice bounds that are not ints, and numpy.integer.");
  for (auto [slot, text] : {std::pair{&constName, "const"}, {&coefsName, "coefs"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  m.def(
      "configure_index_expr",
      [](py::type indexExpr) {
        Py_XDECREF(reinterpret_cast<PyObject*>(indexExprClass));
        indexExprClass = reinterpret_cast<PyTypeObject*>(indexExpr.inc_ref().ptr());
      },
      py::arg("index_expr_class"),
      "Gives the 2.2x subscript the IndexExpr class: t[a, b] of a 2-D tensor without bound checks, `a` an "
      "IndexExpr, is then nki.indexing.partition_free_subscript's view when that applies (in C).");
  m.def(
      "configure_nki06_subscript",
      [](py::type nkiTensor, py::object index, py::object toInt) {
        for (PyObject** slot : {&nkiTensorClass, &index06, &toInt06}) Py_XDECREF(*slot);
        nkiTensorClass = nkiTensor.inc_ref().ptr();
        index06 = index.inc_ref().ptr();
        toInt06 = toInt.inc_ref().ptr();
      },
      py::arg("nki_tensor_class"), py::arg("index"), py::arg("to_int"),
      "Gives the subscripts the NkiTensor class (NKI 0.6; after configure_subscripts), index(k): the int of "
      "an index that is no int or loop index (NKIError for a run-time one), and to_int(v, what): the int of a "
      "slice bound or step that is no int.");
  m.def(
      "subscript_method",
      [](py::type cls) {
        auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
        if (cls.ptr() != tensorClass && cls.ptr() != nkiTensorClass)
          throw py::type_error("subscript_method: configure the subscripts of this class first");
        return py::reinterpret_steal<py::object>(
            PyDescr_NewMethod(type, cls.ptr() == tensorClass ? &subscript22Def : &subscript06Def));
      },
      py::arg("cls"), "The C subscript of the tensor class cls (Tensor or NkiTensor) as its __getitem__ method.");
  setFunction(m, &basicSubscriptDef);
  setFunction(m, &sliceRangeDef);
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindSubscripts);

}  // namespace subscripts
}  // namespace

PyObject* tensorSubscript22(PyObject* t, PyObject* key) { return subscripts::subscript22(t, &key, 1); }

PyObject* tensorSubscriptItems22(PyObject* t, PyObject* const* items, Py_ssize_t count) {
  if (subscripts::tensorClass == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "the tracer's subscripts are not configured");
    return nullptr;
  }
  return subscripts::subscriptOfItems22(t, nullptr, items, count);
}

}  // namespace nxs::py_bind
