// The NKI tracer's loop index, `_core.nki.LoopIndex` (neuronxsim.nki.indexing.LoopIndex): the
// index of a traced `nl.affine_range` / `nl.sequential_range` iteration, an int subclass that
// keeps its axis when it subscripts a tile (see indexing.py). Sums, differences and integer
// multiples of loop indices (with ints or loop indices) are loop indices; everything else is
// what int makes of it.
//
// Why C: kernels compute their subscripts from loop indices (`t[i * 128:(i + 1) * 128]`), a few
// operations per traced instruction, and an operator defined in Python costs a Python frame
// each time; as number slots they cost about what int's own operators do.
#include "trace_loop_index.h"

#include "trace_equal.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {

PyTypeObject LoopIndexType;  // (zero; filled in and readied by bindLoopIndex)

bool isIntOrIndex(PyObject* o) { return PyLong_CheckExact(o) || Py_TYPE(o) == &LoopIndexType; }

// `value` (a new reference to an exact int) as a new LoopIndex object.
PyObject* newIndexObject(PyObject* value) {
#if PY_VERSION_HEX < 0x030C0000
  // What int.__new__(LoopIndex, value) does (long_subtype_new), without the argument tuple and
  // the call through int.__new__ (a third of what a `k * 128` cost): the digits copied as they
  // are (ints of 3.10 and 3.11 are a signed digit count and the digits).
  auto* from = reinterpret_cast<PyLongObject*>(value);
  const Py_ssize_t size = Py_SIZE(from);
  const Py_ssize_t digits = size == 0 ? 1 : size < 0 ? -size : size;  // (zero has a digit too)
  auto* index = reinterpret_cast<PyLongObject*>(LoopIndexType.tp_alloc(&LoopIndexType, digits));
  if (index != nullptr) {
    Py_SET_SIZE(index, size);
    for (Py_ssize_t i = 0; i < digits; ++i) index->ob_digit[i] = from->ob_digit[i];
  }
  Py_DECREF(value);
  return reinterpret_cast<PyObject*>(index);
#else
  PyObject* args = PyTuple_Pack(1, value);
  Py_DECREF(value);
  if (args == nullptr) return nullptr;
  PyObject* index = PyLong_Type.tp_new(&LoopIndexType, args, nullptr);
  Py_DECREF(args);
  return index;
#endif
}

// The loop indices of the values kernels' subscripts take most (`i * 128`, `(k + 1) * 512`),
// each made once and shared, as CPython shares its small ints: a loop index is an immutable int,
// and making and freeing one for each `k * 128` was most of what the operation cost.
constexpr long long kFirstShared = -256, kEndShared = 1 << 14;
PyObject* sharedIndex[kEndShared - kFirstShared];  // (null until first asked for)

// The LoopIndex of `v` (a new reference; null with an error set).
PyObject* loopIndexOf(long long v) {
  const bool shared = v >= kFirstShared && v < kEndShared;
  PyObject*& slot = sharedIndex[shared ? v - kFirstShared : 0];
  if (shared && slot != nullptr) return Py_NewRef(slot);
  PyObject* value = PyLong_FromLongLong(v);
  PyObject* index = value == nullptr ? nullptr : newIndexObject(value);
  if (shared && index != nullptr) slot = Py_NewRef(index);  // (kept for good)
  return index;
}

// `value` (a new reference to an exact int, or null) as a LoopIndex.
PyObject* asLoopIndex(PyObject* value) {
  if (value == nullptr || !PyLong_CheckExact(value)) return value;
  long long v = 0;
  if (intObjectValue(value, v) && v >= kFirstShared && v < kEndShared) {
    Py_DECREF(value);
    return loopIndexOf(v);
  }
  return newIndexObject(value);
}

// The value of an int or loop index that fits a machine word (false for any other).
inline bool wordValue(PyObject* o, long long& v) { return isIntOrIndex(o) && intObjectValue(o, v); }

// a OP b in machine words (false when either does not fit one or the result overflows).
template <binaryfunc PyNumberMethods::*op>
bool wordOperator(long long a, long long b, long long& r) {
  if constexpr (op == &PyNumberMethods::nb_add) return !__builtin_add_overflow(a, b, &r);
  else if constexpr (op == &PyNumberMethods::nb_subtract) return !__builtin_sub_overflow(a, b, &r);
  else return !__builtin_mul_overflow(a, b, &r);
}

// a OP b, a LoopIndex when both are ints or loop indices (one of them is a loop index).
template <binaryfunc PyNumberMethods::*op>
PyObject* closedOperator(PyObject* a, PyObject* b) {
  long long x = 0, y = 0, r = 0;
  if (wordValue(a, x) && wordValue(b, y) && wordOperator<op>(x, y, r)) return loopIndexOf(r);
  PyObject* result = (PyLong_Type.tp_as_number->*op)(a, b);
  return isIntOrIndex(a) && isIntOrIndex(b) ? asLoopIndex(result) : result;
}

PyObject* negative(PyObject* a) { return asLoopIndex(PyLong_Type.tp_as_number->nb_negative(a)); }

PyObject* positive(PyObject* a) {
  Py_INCREF(a);
  return a;
}

PyNumberMethods loopIndexNumbers = [] {
  PyNumberMethods n{};
  n.nb_add = closedOperator<&PyNumberMethods::nb_add>;
  n.nb_subtract = closedOperator<&PyNumberMethods::nb_subtract>;
  n.nb_multiply = closedOperator<&PyNumberMethods::nb_multiply>;
  n.nb_negative = negative;
  n.nb_positive = positive;
  return n;
}();

void bindLoopIndex(py::module_& m) {
  Py_SET_REFCNT(reinterpret_cast<PyObject*>(&LoopIndexType), 1);  // (a static type: never freed)
  LoopIndexType.tp_name = "neuronxsim.nki.indexing.LoopIndex";
  LoopIndexType.tp_doc =
      "The index of an nl.affine_range / nl.sequential_range iteration: an integer (the trace runs "
      "the body once per iteration) that, like NKI's symbolic loop variable, keeps its axis when it "
      "subscripts a tile's free dimension. Sums, differences and integer multiples of loop indices "
      "are loop indices (i0 * 4 + i1); everything else is a plain integer.";
  LoopIndexType.tp_base = &PyLong_Type;
  LoopIndexType.tp_flags = Py_TPFLAGS_DEFAULT;
  LoopIndexType.tp_as_number = &loopIndexNumbers;
  if (PyType_Ready(&LoopIndexType) < 0) throw py::error_already_set();
  m.attr("LoopIndex") = py::handle(reinterpret_cast<PyObject*>(&LoopIndexType));
}

NXS_REGISTER_SUBMODULE(nki, 40, "the NKI tracer's hot paths", bindLoopIndex);

}  // namespace

PyObject* newLoopIndex(PyObject* value) { return asLoopIndex(PyNumber_Index(value)); }
PyObject* loopIndexOfValue(long long value) { return loopIndexOf(value); }
}  // namespace nxs::py_bind
