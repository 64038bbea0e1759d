// The passes that apply the NKI tracer's recorded facts and find live ranges
// (neuronxsim/nki/passes.py: ZeroElision, Redirects, MatmulGroups, Liveness), each one loop over the ops:
//   ops_zero_elided(ops, needed, index_at, zero_fill_at) -> list
//     the ops but those whose op[zero_fill_at] is true and whose index is not in `needed`
//   ops_redirected(ops, redirects, copies, index_at, outs_at) -> list
//     each op whose index (op[index_at]) a (index, access) of `redirects` names (the last
//     wins) with its first output replaced by that access; after each op, the copy ops that
//     (index, op) pairs of `copies` give for its index, the later pairs first
//   ops_matmul_grouped(ops, joins, index_at, fields_at) -> list
//     for each (earlier, later) index pair of `joins`: the earlier op with
//     fields["stop_tensor_calc"] = False, the later with fields["start_tensor_calc"] = False (in a
//     copy of its fields dict; ops whose fields are one dict, and change alike, share one copy:
//     the fields of an op never change once recorded)
//   live_ranges(ops, storage_count, ins_at, outs_at, sid_at) -> (first, last)
//     per storage number, the positions in `ops` of the first and the last op reading or writing
//     it (an operand is a tuple whose item sid_at is the storage number), -1 if none
// An op that changes is a new tuple of the op's own class (the record is never edited). The
// positions are arguments, not constants: the Python side names them (neuronxsim/nki/record.py,
// OP_AT and ACCESS_AT), so this file knows no layout of its own.
//
// Why C: these loops touch every recorded op and operand; in Python each op costs a few
// dictionary look-ups and, for a changed op, a list and a tuple built item by item.
#include "bindings.h"
#include "trace_new_object.h"
#include "trace_tuple_item.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace nxs::py_bind {
namespace {

// A position argument: a non-negative int.
bool positionOf(PyObject* o, const char* what, Py_ssize_t& at) {
  at = PyLong_Check(o) ? PyLong_AsSsize_t(o) : -1;
  if (at < 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be a non-negative int", what);
    return false;
  }
  return true;
}

// Item `at` of the record tuple `t` (borrowed), or null with an error set.
PyObject* itemOf(PyObject* t, Py_ssize_t at, const char* what) { return tupleItem(t, at, "", what); }

bool indexOf(PyObject* o, const char* what, long long& v) {
  // (an index fits in one digit: read it in place, without PyLong_AsLongLong's call; a larger
  // int, or another type, takes the general path)
#if PY_VERSION_HEX < 0x030C0000
  if (PyLong_CheckExact(o) && Py_SIZE(o) >= -1 && Py_SIZE(o) <= 1) {
    v = Py_SIZE(o) * static_cast<long long>(reinterpret_cast<PyLongObject*>(o)->ob_digit[0]);
    return true;
  }
#endif
  v = PyLong_Check(o) ? PyLong_AsLongLong(o) : -1;
  if (v == -1 && (PyErr_Occurred() || !PyLong_Check(o))) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be an int", what);
    return false;
  }
  return true;
}

// The (int, object) pairs of the list `pairs`, in order (objects borrowed).
bool pairsOf(PyObject* pairs, const char* what, std::vector<std::pair<long long, PyObject*>>& out) {
  if (!PyList_Check(pairs)) {
    PyErr_Format(PyExc_TypeError, "%s must be a list", what);
    return false;
  }
  out.reserve(static_cast<size_t>(PyList_GET_SIZE(pairs)));
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pairs); ++i) {
    PyObject* p = PyList_GET_ITEM(pairs, i);
    long long index;
    if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) != 2) {
      PyErr_Format(PyExc_TypeError, "%s holds (index, value) pairs", what);
      return false;
    }
    if (!indexOf(PyTuple_GET_ITEM(p, 0), what, index)) return false;
    out.emplace_back(index, PyTuple_GET_ITEM(p, 1));
  }
  return true;
}

// The pairs of `pairs` by index, stably (pairs of one index stay in their order), to be looked
// up by binary search: sorting a vector costs one allocation where a hash map of the thousands of
// redirects and joins of a large trace cost one per entry.
using IndexedPairs = std::vector<std::pair<long long, PyObject*>>;
void sortByIndex(IndexedPairs& pairs) {
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}
// The values of (index, value) pairs grouped by index, each group in the pairs' order. When the
// indices lie in a range not much wider than the ops (a record's: op positions), by a table over
// that range, filled by counting (no sort, and a look-up per op without a search); otherwise
// sorted stably and searched.
class PairsByIndex {
 public:
  PairsByIndex(const IndexedPairs& pairs, size_t opCount) {
    if (pairs.empty()) return;
    long long lo = pairs[0].first, hi = pairs[0].first;
    for (const auto& p : pairs) lo = std::min(lo, p.first), hi = std::max(hi, p.first);
    values_.resize(pairs.size());
    // (the width in unsigned arithmetic: exact for any two long longs)
    const unsigned long long width = static_cast<unsigned long long>(hi) - static_cast<unsigned long long>(lo);
    if (width <= 2 * static_cast<unsigned long long>(opCount) + 64) {
      lo_ = lo;
      start_.assign(static_cast<size_t>(width) + 2, 0);
      for (const auto& p : pairs) ++start_[offset(p.first) + 1];
      for (size_t k = 1; k < start_.size(); ++k) start_[k] += start_[k - 1];
      std::vector<size_t> next(start_.begin(), start_.end() - 1);
      for (const auto& p : pairs) values_[next[offset(p.first)]++] = p.second;
      return;
    }
    IndexedPairs sorted = pairs;
    sortByIndex(sorted);
    keys_.reserve(sorted.size());
    for (size_t k = 0; k < sorted.size(); ++k) keys_.push_back(sorted[k].first), values_[k] = sorted[k].second;
  }
  // The values at `index`, in order: [first, second).
  std::pair<PyObject* const*, PyObject* const*> at(long long index) const {
    if (!start_.empty()) {
      if (index < lo_ || offset(index) >= start_.size() - 1) return {nullptr, nullptr};
      const size_t k = offset(index);
      return {values_.data() + start_[k], values_.data() + start_[k + 1]};
    }
    const auto [from, to] = std::equal_range(keys_.begin(), keys_.end(), index);
    return {values_.data() + (from - keys_.begin()), values_.data() + (to - keys_.begin())};
  }

 private:
  size_t offset(long long index) const {  // (index >= lo_)
    return static_cast<size_t>(static_cast<unsigned long long>(index) - static_cast<unsigned long long>(lo_));
  }
  long long lo_ = 0;
  std::vector<size_t> start_;  // by table: index lo_ + k has values_[start_[k] .. start_[k + 1])
  std::vector<long long> keys_;  // else: the sorted indices of values_
  std::vector<PyObject*> values_;
};

// A copy of the op `op` (a tuple of its record class) with item `at` replaced by `value`
// (stolen); null with an error set.
PyObject* replacedOp(PyObject* op, Py_ssize_t at, PyObject* value) {
  if (value == nullptr) return nullptr;
  PyTypeObject* cls = Py_TYPE(op);
  const Py_ssize_t n = PyTuple_GET_SIZE(op);
  const bool filled = new_object::itemsOnlyTuple(cls);  // (made filled, then tracked)
  PyObject* copy = filled ? new_object::newUntracked(cls, n) : cls->tp_alloc(cls, n);
  if (copy == nullptr) {
    Py_DECREF(value);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(copy, i, i == at ? value : Py_NewRef(PyTuple_GET_ITEM(op, i)));
  if (filled) PyObject_GC_Track(copy);
  return copy;
}

// Appends `o` (stolen) to `list`.
bool appendStolen(PyObject* list, PyObject* o) {
  if (o == nullptr) return false;
  const int failed = PyList_Append(list, o);
  Py_DECREF(o);
  return failed == 0;
}

bool listOfOps(PyObject* ops) {
  if (PyList_Check(ops)) return true;
  PyErr_SetString(PyExc_TypeError, "ops must be a list");
  return false;
}

PyObject* opsRedirected(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  Py_ssize_t indexAt, outsAt;
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "ops_redirected(ops, redirects, copies, index_at, outs_at)");
    return nullptr;
  }
  std::vector<std::pair<long long, PyObject*>> redirects, copies;
  if (!listOfOps(args[0]) || !pairsOf(args[1], "redirects", redirects) || !pairsOf(args[2], "copies", copies) ||
      !positionOf(args[3], "index_at", indexAt) || !positionOf(args[4], "outs_at", outsAt))
    return nullptr;
  const size_t opCount = static_cast<size_t>(PyList_GET_SIZE(args[0]));
  const PairsByIndex redirectsAt(redirects, opCount);  // (the last redirect of an op wins)
  const PairsByIndex copiesAt(copies, opCount);        // op index -> copies, as recorded
  PyObject* ops = args[0];
  PyObject* out = PyList_New(0);
  if (out == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ops); ++i) {
    PyObject* op = PyList_GET_ITEM(ops, i);
    PyObject* indexItem = itemOf(op, std::max(indexAt, outsAt), "an op") ? PyTuple_GET_ITEM(op, indexAt) : nullptr;
    long long index;
    if (indexItem == nullptr || !indexOf(indexItem, "an op's index", index)) {
      Py_DECREF(out);
      return nullptr;
    }
    PyObject* kept = Py_NewRef(op);
    const auto [redirectsFrom, redirectsTo] = redirectsAt.at(index);
    if (redirectsFrom != redirectsTo) {
      PyObject* redirected = redirectsTo[-1];
      Py_DECREF(kept);
      PyObject* outs = PyTuple_GET_ITEM(op, outsAt);
      if (!PyList_Check(outs)) {
        PyErr_SetString(PyExc_TypeError, "a redirected op's outputs must be a list");
        Py_DECREF(out);
        return nullptr;
      }
      const Py_ssize_t n = std::max<Py_ssize_t>(PyList_GET_SIZE(outs), 1);
      PyObject* newOuts = PyList_New(n);
      if (newOuts != nullptr) {
        PyList_SET_ITEM(newOuts, 0, Py_NewRef(redirected));
        for (Py_ssize_t k = 1; k < n; ++k) PyList_SET_ITEM(newOuts, k, Py_NewRef(PyList_GET_ITEM(outs, k)));
      }
      kept = replacedOp(op, outsAt, newOuts);
    }
    if (!appendStolen(out, kept)) {
      Py_DECREF(out);
      return nullptr;
    }
    const auto [copiesFrom, copiesTo] = copiesAt.at(index);
    for (auto c = copiesTo; c != copiesFrom;)  // (each made right after the op: the later first)
      if (!appendStolen(out, Py_NewRef(*--c))) {
        Py_DECREF(out);
        return nullptr;
      }
  }
  return out;
}

PyObject* opsZeroElided(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  Py_ssize_t indexAt, zeroFillAt;
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "ops_zero_elided(ops, needed, index_at, zero_fill_at)");
    return nullptr;
  }
  if (!listOfOps(args[0]) || !positionOf(args[2], "index_at", indexAt) ||
      !positionOf(args[3], "zero_fill_at", zeroFillAt))
    return nullptr;
  PyObject* ops = args[0];
  PyObject* needed = args[1];
  std::vector<PyObject*> kept;  // (borrowed from `ops`, which holds them through the call)
  kept.reserve(static_cast<size_t>(PyList_GET_SIZE(ops)));
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ops); ++i) {
    PyObject* op = PyList_GET_ITEM(ops, i);
    if (itemOf(op, std::max(indexAt, zeroFillAt), "an op") == nullptr) return nullptr;
    // (as `not op[zero_fill] or op[index] in needed`)
    PyObject* zeroFill = PyTuple_GET_ITEM(op, zeroFillAt);
    int keep = zeroFill == Py_False ? 1 : zeroFill == Py_True ? 0 : PyObject_Not(zeroFill);
    if (keep == 0) keep = PySequence_Contains(needed, PyTuple_GET_ITEM(op, indexAt));
    if (keep < 0) return nullptr;
    if (keep) kept.push_back(op);
  }
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(kept.size()));
  if (out == nullptr) return nullptr;
  for (size_t k = 0; k < kept.size(); ++k) PyList_SET_ITEM(out, static_cast<Py_ssize_t>(k), Py_NewRef(kept[k]));
  return out;
}

PyObject* stopName = nullptr;   // "stop_tensor_calc" (interned)
PyObject* startName = nullptr;  // "start_tensor_calc" (interned)

// The fields of the ops ops_matmul_grouped changes: a copy of an op's fields (as dict(was) would
// make it) with stop_tensor_calc and / or start_tensor_calc False, made once per dict and change
// (plain matmuls share one fields dict: trace_matmul.cpp) and shared by the ops it fits. Why: a
// matmul kernel joins most of its matmuls, and a dict copied and filled per op, then freed, was
// most of what this pass cost.
class GroupedFields {
 public:
  GroupedFields() = default;
  GroupedFields(const GroupedFields&) = delete;
  GroupedFields& operator=(const GroupedFields&) = delete;
  ~GroupedFields() {
    for (const Entry& e : made_) {
      Py_DECREF(e.was);
      Py_DECREF(e.fields);
    }
  }
  // The fields (a new reference), or null with an error set.
  PyObject* made(PyObject* was, bool stops, bool starts) {
    const bool exact = PyDict_CheckExact(was);
    if (exact)
      for (const Entry& e : made_)
        if (e.was == was && e.stops == stops && e.starts == starts) return Py_NewRef(e.fields);
    PyObject* fields = exact ? PyDict_Copy(was) : PyObject_CallOneArg(reinterpret_cast<PyObject*>(&PyDict_Type), was);
    if (fields != nullptr && ((!stops && PyDict_SetItem(fields, stopName, Py_False) < 0) ||
                              (!starts && PyDict_SetItem(fields, startName, Py_False) < 0)))
      Py_CLEAR(fields);
    if (fields != nullptr && exact && made_.size() < kEntries)  // (the entry holds both dicts)
      made_.push_back({Py_NewRef(was), Py_NewRef(fields), stops, starts});
    return fields;
  }

 private:
  struct Entry {
    PyObject *was, *fields;
    bool stops, starts;
  };
  static constexpr size_t kEntries = 8;  // (a kernel's matmuls bring one or two fields dicts)
  std::vector<Entry> made_;
};

PyObject* opsMatmulGrouped(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  Py_ssize_t indexAt, fieldsAt;
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "ops_matmul_grouped(ops, joins, index_at, fields_at)");
    return nullptr;
  }
  std::vector<std::pair<long long, PyObject*>> joins;
  if (!listOfOps(args[0]) || !pairsOf(args[1], "joins", joins) || !positionOf(args[2], "index_at", indexAt) ||
      !positionOf(args[3], "fields_at", fieldsAt))
    return nullptr;
  IndexedPairs continued, joined;  // (index, unused)
  continued.reserve(joins.size());
  joined.reserve(joins.size());
  for (const auto& [earlier, later] : joins) {
    long long l;
    if (!indexOf(later, "a join's later index", l)) return nullptr;
    continued.emplace_back(earlier, nullptr);
    joined.emplace_back(l, nullptr);
  }
  const size_t opCount = static_cast<size_t>(PyList_GET_SIZE(args[0]));
  const PairsByIndex continuedAt(continued, opCount), joinedAt(joined, opCount);
  PyObject* ops = args[0];
  PyObject* out = PyList_New(PyList_GET_SIZE(ops));
  if (out == nullptr) return nullptr;
  GroupedFields fieldsCopies;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ops); ++i) {
    PyObject* op = PyList_GET_ITEM(ops, i);
    long long index;
    if (itemOf(op, std::max(indexAt, fieldsAt), "an op") == nullptr ||
        !indexOf(PyTuple_GET_ITEM(op, indexAt), "an op's index", index)) {
      Py_DECREF(out);
      return nullptr;
    }
    const auto continues = continuedAt.at(index), joins = joinedAt.at(index);
    const bool stops = continues.first == continues.second, starts = joins.first == joins.second;
    PyObject* kept = Py_NewRef(op);
    if (!stops || !starts) {
      Py_DECREF(kept);
      PyObject* fields = fieldsCopies.made(PyTuple_GET_ITEM(op, fieldsAt), stops, starts);
      kept = fields != nullptr ? replacedOp(op, fieldsAt, fields) : nullptr;
      if (kept == nullptr) {
        Py_DECREF(out);
        return nullptr;
      }
    }
    PyList_SET_ITEM(out, i, kept);
  }
  return out;
}

PyObject* liveRanges(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  Py_ssize_t count, insAt, outsAt, sidAt;
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "live_ranges(ops, storage_count, ins_at, outs_at, sid_at)");
    return nullptr;
  }
  if (!listOfOps(args[0]) || !positionOf(args[1], "storage_count", count) || !positionOf(args[2], "ins_at", insAt) ||
      !positionOf(args[3], "outs_at", outsAt) || !positionOf(args[4], "sid_at", sidAt))
    return nullptr;
  std::vector<Py_ssize_t> first(static_cast<size_t>(count), -1), last(static_cast<size_t>(count), -1);
  PyObject* ops = args[0];
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ops); ++i) {
    PyObject* op = PyList_GET_ITEM(ops, i);
    if (itemOf(op, std::max(insAt, outsAt), "an op") == nullptr) return nullptr;
    for (PyObject* operands : {PyTuple_GET_ITEM(op, insAt), PyTuple_GET_ITEM(op, outsAt)}) {
      if (!PyList_Check(operands) && !PyTuple_Check(operands)) {
        PyErr_SetString(PyExc_TypeError, "an op's operands must be a list or a tuple");
        return nullptr;
      }
      PyObject** items = PySequence_Fast_ITEMS(operands);
      for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(operands); ++k) {
        PyObject* sidItem = itemOf(items[k], sidAt, "an operand");
        long long sid;
        if (sidItem == nullptr || !indexOf(sidItem, "an operand's storage number", sid)) return nullptr;
        if (sid < 0 || sid >= count) {
          PyErr_Format(PyExc_IndexError, "storage number %lld of %zd", sid, count);
          return nullptr;
        }
        if (first[static_cast<size_t>(sid)] < 0) first[static_cast<size_t>(sid)] = i;
        last[static_cast<size_t>(sid)] = i;
      }
    }
  }
  PyObject* firstList = PyList_New(count);
  PyObject* lastList = PyList_New(count);
  if (firstList == nullptr || lastList == nullptr) {
    Py_XDECREF(firstList);
    Py_XDECREF(lastList);
    return nullptr;
  }
  for (Py_ssize_t s = 0; s < count; ++s) {
    PyList_SET_ITEM(firstList, s, PyLong_FromSsize_t(first[static_cast<size_t>(s)]));
    PyList_SET_ITEM(lastList, s, PyLong_FromSsize_t(last[static_cast<size_t>(s)]));
  }
  PyObject* ranges = PyTuple_Pack(2, firstList, lastList);
  Py_DECREF(firstList);
  Py_DECREF(lastList);
  return ranges;
}

PyMethodDef opsZeroElidedDef = {
    "ops_zero_elided", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(opsZeroElided)), METH_FASTCALL,
    "ops_zero_elided(ops, needed, index_at, zero_fill_at): the ops but the zero_fill memsets whose index is not "
    "in `needed` (see neuronxsim.nki.passes.ZeroElision)."};
PyMethodDef opsRedirectedDef = {
    "ops_redirected", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(opsRedirected)), METH_FASTCALL,
    "ops_redirected(ops, redirects, copies, index_at, outs_at): the ops with the record's redirects and copies "
    "applied (see neuronxsim.nki.passes.Redirects)."};
PyMethodDef opsMatmulGroupedDef = {
    "ops_matmul_grouped", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(opsMatmulGrouped)),
    METH_FASTCALL,
    "ops_matmul_grouped(ops, joins, index_at, fields_at): the ops with the record's matmul joins applied (see "
    "neuronxsim.nki.passes.MatmulGroups)."};
PyMethodDef liveRangesDef = {
    "live_ranges", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(liveRanges)), METH_FASTCALL,
    "live_ranges(ops, storage_count, ins_at, outs_at, sid_at): (first, last), per storage number the positions "
    "of the first and last op using it, -1 if none (see neuronxsim.nki.passes.Liveness)."};

void bindPassFacts(py::module_& m) {
  stopName = PyUnicode_InternFromString("stop_tensor_calc");
  startName = PyUnicode_InternFromString("start_tensor_calc");
  if (stopName == nullptr || startName == nullptr) throw py::error_already_set();
  for (PyMethodDef* def : {&opsZeroElidedDef, &opsRedirectedDef, &opsMatmulGroupedDef, &liveRangesDef})
    m.attr(def->ml_name) = py::reinterpret_steal<py::object>(PyCFunction_NewEx(def, nullptr, nullptr));
}

NXS_REGISTER_SUBMODULE(nki, 46, "the NKI tracer's hot paths", bindPassFacts);

}  // namespace
}  // namespace nxs::py_bind
