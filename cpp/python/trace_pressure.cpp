// Reordering to fit on-chip memory, the loops of neuronxsim/nki/pressure.py (PressureSchedule):
//   pressure_order(ops, storages, capacities, at, access_type, idle_acc, random_mode) -> list | None
// ops: the program's Op tuples, in program order. storages: per storage number, the tuple
// (on_chip, row, partitions, elements, memory, bytes): its layout (row and partitions on chip,
// elements off chip) and, for a tile whose bytes the reordering counts, the index in `capacities`
// (bytes per memory, in the order memories are checked) of its memory and its aligned bytes
// (memory -1 for any other storage). at: the positions (opcode, fields, ins, outs) of an Op and
// (sid, offset, pairs) of an Access (neuronxsim/nki/record.py OP_AT, ACCESS_AT). access_type: the
// Access class (to find the operands among an op's fields). idle_acc, random_mode:
// bir.AccumCmd.Idle and bir.MemsetMode.Random.
// Returns the new order as op indices (see pressure.py for the rules), or None when an op may not
// move at all (sim::kOrderWholeBlock).
//
// Dependencies are exact over the bounding boxes pressure.py describes: an access conflicts with
// every earlier one of another op on the same storage whose box overlaps it (a read with writes
// only). A storage with many accesses (the attention tutorial's v3 at 8192 has thousands per DRAM
// tensor) keeps them in buckets of elements, so that an access meets those near it (Seen).
//
// Why C: the reordering runs on every configuration whose tiles do not fit in program order; in
// Python it cost about 14 us per instruction (three times the rest of such a trace).
#include "bindings.h"
#include "trace_tuple_item.h"

#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <vector>

#include "bir/Instruction.h"
#include "sim/ListSchedule.h"

namespace nxs::py_bind {
namespace {
namespace pressure {

// What one call reads of the record: the positions, the Access class, the enum members.
struct Layout {
  Py_ssize_t opcodeAt, fieldsAt, insAt, outsAt, sidAt, offsetAt, pairsAt;
  PyTypeObject* accessType;
  PyObject* idleAcc;
  PyObject* randomMode;
};

PyObject* accKey;
PyObject* modeKey;
PyObject* indirectKey;

struct Box {
  int64_t p0, p1, e0, e1;  // first and last partition, first and last element
};
// Any element of the storage: an indirect DMA's accesses, whose rows are picked when the kernel runs.
constexpr int64_t kWholeEnd = int64_t{1} << 62;
constexpr Box kWhole{0, kWholeEnd, 0, kWholeEnd};

bool overlaps(const Box& a, const Box& b) { return a.p0 <= b.p1 && b.p0 <= a.p1 && a.e0 <= b.e1 && b.e0 <= a.e1; }

struct StorageFacts {
  bool onChip;
  int64_t row, partitions, elements;
  int memory;  // index in the capacities, -1: not counted
  int64_t bytes;
};

struct Pair {
  int64_t step, num;
};

bool int64Of(PyObject* o, const char* what, int64_t& v) {
  if (!PyLong_Check(o)) {
    PyErr_Format(PyExc_TypeError, "pressure_order: %s must be an int", what);
    return false;
  }
  v = PyLong_AsLongLong(o);
  return !(v == -1 && PyErr_Occurred());
}

bool positionOf(PyObject* o, const char* what, Py_ssize_t& at) {
  int64_t v;
  if (!int64Of(o, what, v)) return false;
  if (v < 0) {
    PyErr_Format(PyExc_ValueError, "pressure_order: %s must not be negative", what);
    return false;
  }
  at = static_cast<Py_ssize_t>(v);
  return true;
}

// Item `at` of the record tuple `t` (borrowed), or null with an error set.
PyObject* itemOf(PyObject* t, Py_ssize_t at, const char* what) { return tupleItem(t, at, "pressure_order: ", what); }

bool listOrTuple(PyObject* o, const char* what) {
  if (PyList_Check(o) || PyTuple_Check(o)) return true;
  PyErr_Format(PyExc_TypeError, "pressure_order: %s must be a list or a tuple", what);
  return false;
}

// The (step, num) pairs of an access.
bool pairsOf(PyObject* pairs, std::vector<Pair>& out) {
  out.clear();
  if (!listOrTuple(pairs, "an access's pairs")) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(pairs); ++i) {
    PyObject* p = PySequence_Fast_ITEMS(pairs)[i];
    if (!listOrTuple(p, "a pair") || PySequence_Fast_GET_SIZE(p) != 2) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "pressure_order: a pair must have two items");
      return false;
    }
    Pair pair;
    if (!int64Of(PySequence_Fast_ITEMS(p)[0], "a step", pair.step) ||
        !int64Of(PySequence_Fast_ITEMS(p)[1], "a count", pair.num))
      return false;
    out.push_back(pair);
  }
  return true;
}

// The lowest and highest of start + sum(i * step) over the pairs.
std::pair<int64_t, int64_t> span(int64_t start, const Pair* pairs, size_t n) {
  int64_t lo = start, hi = start;
  for (size_t i = 0; i < n; ++i) {
    const int64_t reach = (pairs[i].num - 1) * pairs[i].step;
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// What the access may touch: elements within a partition on chip (the whole tile if the pattern
// leaves the partition's row), elements of the tensor off chip (partitions 0, 0).
bool boxOf(const StorageFacts& s, int64_t offset, const std::vector<Pair>& pairs, Box& box) {
  if (!s.onChip) {
    const auto [lo, hi] = span(offset, pairs.data(), pairs.size());
    box = {0, 0, lo, hi};
    return true;
  }
  if (pairs.empty()) {
    PyErr_SetString(PyExc_ValueError, "pressure_order: an on-chip access has no partition pair");
    return false;
  }
  const int64_t row = s.row, pstep = pairs[0].step;
  const Box whole{0, s.partitions - 1, 0, row - 1};
  if (row == 0 || pstep % row != 0) {
    box = whole;
    return true;
  }
  const int64_t p0 = floorDiv(offset, row);
  const auto [lo, hi] = span(offset - p0 * row, pairs.data() + 1, pairs.size() - 1);
  if (lo < 0 || hi >= row) {
    box = whole;
    return true;
  }
  const Pair partitions{pstep / row, pairs[0].num};
  const auto [first, last] = span(p0, &partitions, 1);
  box = {first, last, lo, hi};
  return true;
}

// An access over more buckets than this is kept apart.
constexpr int64_t kWideBuckets = 8;

struct Entry {
  Box box;
  int32_t op;
};

// The accesses so far on one storage, reads and writes apart ([0] reads, [1] writes): in a list
// while there are few, then in buckets of elements, about 256 over the storage's extent (an access
// over more than kWideBuckets of them kept apart; beyond the extent, never for the record's own
// accesses, by bucket number).
class Seen {
 public:
  explicit Seen(int64_t extent) : extent_(extent) {}

  // Calls met(j) for each earlier op j (not k) whose access op k's conflicts with (a write with
  // every access, a read with writes), then keeps it.
  template <class Meet>
  void meet(const Box& box, int32_t k, bool write, Meet&& met) {
    const int lowest = write ? 0 : 1;
    if (shift_ < 0) {
      for (int w = 1; w >= lowest; --w) conflicts(listed_[w], box, k, met);
      listed_[write].push_back({box, k});
      if (listed_[0].size() + listed_[1].size() > kListed) index();
      return;
    }
    const int64_t first = box.e0 >> shift_, last = box.e1 >> shift_;
    const bool wide = last - first >= kWideBuckets;
    for (int w = 1; w >= lowest; --w) {
      if (wide) {
        for (const auto& entries : buckets_[w]) conflicts(entries, box, k, met);
        for (const auto& [b, entries] : outside_[w]) conflicts(entries, box, k, met);
      } else {
        for (int64_t b = first; b <= last; ++b)
          if (const auto* entries = bucket(w, b)) conflicts(*entries, box, k, met);
      }
      conflicts(wide_[w], box, k, met);
    }
    keep({box, k}, write);
  }

 private:
  static constexpr size_t kListed = 32;

  template <class Meet>
  static void conflicts(const std::vector<Entry>& entries, const Box& box, int32_t k, Meet& met) {
    for (const Entry& e : entries)
      if (e.op != k && overlaps(e.box, box)) met(e.op);
  }

  void index() {
    int bits = 0;
    for (int64_t e = extent_; e > 0; e >>= 1) ++bits;
    shift_ = std::max(0, bits - 8);
    for (auto& b : buckets_) b.resize(static_cast<size_t>((std::max<int64_t>(extent_, 0) >> shift_) + 1));
    for (int w = 0; w < 2; ++w) {
      for (const Entry& e : listed_[w]) keep(e, w == 1);
      listed_[w] = {};
    }
  }

  void keep(const Entry& e, bool write) {
    const int64_t first = e.box.e0 >> shift_, last = e.box.e1 >> shift_;
    if (last - first >= kWideBuckets) {
      wide_[write].push_back(e);
      return;
    }
    auto& buckets = buckets_[write];
    for (int64_t b = first; b <= last; ++b) {
      if (b >= 0 && static_cast<size_t>(b) < buckets.size())
        buckets[static_cast<size_t>(b)].push_back(e);
      else
        outside_[write][b].push_back(e);
    }
  }

  const std::vector<Entry>* bucket(int w, int64_t b) const {
    if (b >= 0 && static_cast<size_t>(b) < buckets_[w].size()) return &buckets_[w][static_cast<size_t>(b)];
    const auto it = outside_[w].find(b);
    return it == outside_[w].end() ? nullptr : &it->second;
  }

  int64_t extent_;
  int shift_ = -1;  // -1: listed
  std::vector<Entry> listed_[2];
  std::vector<std::vector<Entry>> buckets_[2];
  std::map<int64_t, std::vector<Entry>> outside_[2];
  std::vector<Entry> wide_[2];
};

bool storagesOf(PyObject* list, size_t memories, std::vector<StorageFacts>& out) {
  if (!PyList_Check(list)) {
    PyErr_SetString(PyExc_TypeError, "pressure_order: storages must be a list");
    return false;
  }
  out.resize(static_cast<size_t>(PyList_GET_SIZE(list)));
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
    PyObject* t = PyList_GET_ITEM(list, i);
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 6) {
      PyErr_SetString(PyExc_TypeError,
                      "pressure_order: a storage must be (on_chip, row, partitions, elements, memory, bytes)");
      return false;
    }
    StorageFacts& s = out[static_cast<size_t>(i)];
    int64_t memory;
    const int onChip = PyObject_IsTrue(PyTuple_GET_ITEM(t, 0));
    if (onChip < 0) return false;
    s.onChip = onChip == 1;
    if (!int64Of(PyTuple_GET_ITEM(t, 1), "a row", s.row) ||
        !int64Of(PyTuple_GET_ITEM(t, 2), "a partition count", s.partitions) ||
        !int64Of(PyTuple_GET_ITEM(t, 3), "an element count", s.elements) ||
        !int64Of(PyTuple_GET_ITEM(t, 4), "a memory", memory) || !int64Of(PyTuple_GET_ITEM(t, 5), "a size", s.bytes))
      return false;
    if (memory < -1 || memory >= static_cast<int64_t>(memories)) {
      PyErr_Format(PyExc_ValueError, "pressure_order: memory %lld of %zu", static_cast<long long>(memory), memories);
      return false;
    }
    s.memory = static_cast<int>(memory);
  }
  return true;
}

// One op's facts for the dependencies: its engine orders and whether its DMA is indirect.
bool opFactsOf(PyObject* op, const Layout& at, PyObject* fields, uint32_t& orders, bool& indirect) {
  int64_t opcode;
  if (!int64Of(PyTuple_GET_ITEM(op, at.opcodeAt), "an opcode number", opcode)) return false;
  if (opcode < 0 || opcode >= bir::InstructionType::kCount) {
    PyErr_Format(PyExc_ValueError, "pressure_order: no opcode number %lld", static_cast<long long>(opcode));
    return false;
  }
  bool accumulates = false, randomMemset = false;
  indirect = false;
  if (fields != Py_None) {
    PyObject* acc = PyDict_GetItemWithError(fields, accKey);
    if (acc == nullptr && PyErr_Occurred()) return false;
    PyObject* mode = PyDict_GetItemWithError(fields, modeKey);
    if (mode == nullptr && PyErr_Occurred()) return false;
    int differs = acc != nullptr ? PyObject_RichCompareBool(acc, at.idleAcc, Py_NE) : 0;
    int random = mode != nullptr ? PyObject_RichCompareBool(mode, at.randomMode, Py_EQ) : 0;
    int hasIndirect = PyDict_Contains(fields, indirectKey);
    if (differs < 0 || random < 0 || hasIndirect < 0) return false;
    accumulates = differs == 1;
    randomMemset = random == 1;
    indirect = hasIndirect == 1;
  }
  orders = sim::engineOrders(bir::kNodeClassOfOpcode[opcode], accumulates, randomMemset);
  return true;
}

// Calls fn(access, writes) for every operand of the op: ins, outs, then the Access values of its
// fields (alone or in a list or tuple that is not itself an Access), taken as written (they may
// be either). Returns false with an error set (fn's or its own).
template <class Fn>
bool forEachAccess(PyObject* op, PyObject* fields, const Layout& at, Fn&& fn) {
  for (int w = 0; w < 2; ++w) {
    PyObject* operands = PyTuple_GET_ITEM(op, w == 0 ? at.insAt : at.outsAt);
    if (!listOrTuple(operands, "an op's operands")) return false;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(operands); ++i)
      if (!fn(PySequence_Fast_ITEMS(operands)[i], w == 1)) return false;
  }
  if (fields == Py_None) return true;
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(fields, &pos, &key, &value)) {
    const bool many = (PyList_Check(value) || PyTuple_Check(value)) && !PyObject_TypeCheck(value, at.accessType);
    const Py_ssize_t n = many ? PySequence_Fast_GET_SIZE(value) : 1;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = many ? PySequence_Fast_ITEMS(value)[i] : value;
      if (PyObject_TypeCheck(item, at.accessType) && !fn(item, true)) return false;
    }
  }
  return true;
}

// Per op, the ops it must follow (an index list per op, flattened) and the storages with counted
// bytes it uses (sorted, flattened); per storage, how many ops use it.
struct Graph {
  std::vector<int32_t> predStart, preds;
  std::vector<int32_t> sidStart, sids;
  std::vector<int32_t> users;
};

// The dependencies; false with an error set, or with `whole` set when an op may not move.
bool dependencies(PyObject* ops, const Layout& at, const std::vector<StorageFacts>& storages, Graph& g,
                  bool& whole) {
  const Py_ssize_t n = PyList_GET_SIZE(ops);
  std::vector<int32_t> mark(static_cast<size_t>(n), -1), lastUser(storages.size(), -1);
  std::vector<std::unique_ptr<Seen>> seen(storages.size());
  int32_t lastInOrder[32];
  std::fill(std::begin(lastInOrder), std::end(lastInOrder), -1);
  std::vector<Pair> pairs;
  g.users.assign(storages.size(), 0);
  g.predStart.assign(1, 0);
  g.sidStart.assign(1, 0);
  for (Py_ssize_t i = 0; i < n; ++i) {
    const auto k = static_cast<int32_t>(i);
    PyObject* op = PyList_GET_ITEM(ops, i);
    if (itemOf(op, std::max({at.opcodeAt, at.fieldsAt, at.insAt, at.outsAt}), "an op") == nullptr) return false;
    PyObject* fields = PyTuple_GET_ITEM(op, at.fieldsAt);
    if (fields != Py_None && !PyDict_Check(fields)) {
      PyErr_SetString(PyExc_TypeError, "pressure_order: an op's fields must be a dict or None");
      return false;
    }
    uint32_t orders;
    bool indirect;
    if (!opFactsOf(op, at, fields, orders, indirect)) return false;
    if (orders & sim::kOrderWholeBlock) {
      whole = true;
      return false;
    }
    auto met = [&](int32_t j) {
      if (mark[static_cast<size_t>(j)] != k) {
        mark[static_cast<size_t>(j)] = k;
        g.preds.push_back(j);
      }
    };
    for (int bit = 0; bit < 32; ++bit) {
      if (!(orders >> bit & 1u)) continue;
      if (lastInOrder[bit] >= 0) met(lastInOrder[bit]);
      lastInOrder[bit] = k;
    }
    const size_t sidsFrom = g.sids.size();
    const bool ok = forEachAccess(op, fields, at, [&](PyObject* acc, bool write) {
      int64_t sid, offset;
      if (itemOf(acc, std::max({at.sidAt, at.offsetAt, at.pairsAt}), "an access") == nullptr ||
          !int64Of(PyTuple_GET_ITEM(acc, at.sidAt), "a storage number", sid))
        return false;
      if (sid < 0 || sid >= static_cast<int64_t>(storages.size())) {
        PyErr_Format(PyExc_IndexError, "pressure_order: storage number %lld of %zu", static_cast<long long>(sid),
                     storages.size());
        return false;
      }
      const auto s = static_cast<size_t>(sid);
      const StorageFacts& facts = storages[s];
      if (lastUser[s] != k) {
        lastUser[s] = k;
        ++g.users[s];
        if (facts.memory >= 0) g.sids.push_back(static_cast<int32_t>(s));
      }
      Box box = kWhole;
      if (!indirect && (!int64Of(PyTuple_GET_ITEM(acc, at.offsetAt), "an offset", offset) ||
                        !pairsOf(PyTuple_GET_ITEM(acc, at.pairsAt), pairs) || !boxOf(facts, offset, pairs, box)))
        return false;
      if (!seen[s]) seen[s] = std::make_unique<Seen>(facts.onChip ? facts.row : facts.elements);
      seen[s]->meet(box, k, write, met);
      return true;
    });
    if (!ok) return false;
    std::sort(g.sids.begin() + static_cast<std::ptrdiff_t>(sidsFrom), g.sids.end());
    g.predStart.push_back(static_cast<int32_t>(g.preds.size()));
    g.sidStart.push_back(static_cast<int32_t>(g.sids.size()));
  }
  return true;
}

// Program order where it fits: each step places the first ready op (in program order) whose new
// tiles fit beside those live then; one whose tiles do not fit waits until a tile of the first
// memory they overflow ends. If none fits, the first waiting one.
std::vector<int32_t> listSchedule(const Graph& g, const std::vector<StorageFacts>& storages,
                                  const std::vector<int64_t>& capacities) {
  const size_t n = g.predStart.size() - 1, memories = capacities.size();
  std::vector<int32_t> waiting(n), succStart(n + 1, 0), succs(g.preds.size());
  for (size_t k = 0; k < n; ++k) waiting[k] = g.predStart[k + 1] - g.predStart[k];
  for (int32_t j : g.preds) ++succStart[static_cast<size_t>(j) + 1];
  for (size_t k = 0; k < n; ++k) succStart[k + 1] += succStart[k];
  {
    std::vector<int32_t> fill(succStart.begin(), succStart.end() - 1);
    for (size_t k = 0; k < n; ++k)
      for (int32_t p = g.predStart[k]; p < g.predStart[k + 1]; ++p)
        succs[static_cast<size_t>(fill[static_cast<size_t>(g.preds[static_cast<size_t>(p)])]++)] =
            static_cast<int32_t>(k);
  }
  std::vector<int32_t> remaining(g.users);
  std::vector<char> started(storages.size(), 0);
  std::vector<int64_t> held(memories, 0), fresh(memories, 0);
  std::vector<std::vector<int32_t>> deferred(memories);
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
  for (size_t k = 0; k < n; ++k)
    if (waiting[k] == 0) ready.push(static_cast<int32_t>(k));

  auto misfit = [&](int32_t k) {  // the memory op k's new tiles do not fit in now, or -1
    std::fill(fresh.begin(), fresh.end(), 0);
    for (int32_t p = g.sidStart[static_cast<size_t>(k)]; p < g.sidStart[static_cast<size_t>(k) + 1]; ++p) {
      const auto s = static_cast<size_t>(g.sids[static_cast<size_t>(p)]);
      if (!started[s]) fresh[static_cast<size_t>(storages[s].memory)] += storages[s].bytes;
    }
    for (size_t m = 0; m < memories; ++m)
      if (fresh[m] && held[m] + fresh[m] > capacities[m]) return static_cast<int>(m);
    return -1;
  };

  std::vector<int32_t> order;
  order.reserve(n);
  while (order.size() < n) {
    int32_t k = -1;
    while (!ready.empty()) {
      const int32_t j = ready.top();
      ready.pop();
      const int m = misfit(j);
      if (m < 0) {
        k = j;
        break;
      }
      deferred[static_cast<size_t>(m)].push_back(j);
    }
    if (k < 0) {  // nothing fits: the first waiting one
      std::vector<int32_t>* from = nullptr;
      std::vector<int32_t>::iterator at;
      for (auto& d : deferred) {
        if (d.empty()) continue;
        const auto lowest = std::min_element(d.begin(), d.end());
        if (from == nullptr || *lowest < k) from = &d, at = lowest, k = *lowest;
      }
      from->erase(at);  // (never empty: the dependencies are acyclic, being in program order)
    }
    order.push_back(k);
    for (int32_t p = g.sidStart[static_cast<size_t>(k)]; p < g.sidStart[static_cast<size_t>(k) + 1]; ++p) {
      const auto s = static_cast<size_t>(g.sids[static_cast<size_t>(p)]);
      const auto m = static_cast<size_t>(storages[s].memory);
      if (!started[s]) {
        started[s] = 1;
        held[m] += storages[s].bytes;
      }
      if (--remaining[s] == 0) {
        held[m] -= storages[s].bytes;
        for (int32_t j : deferred[m]) ready.push(j);  // (room now, perhaps)
        deferred[m].clear();
      }
    }
    for (int32_t p = succStart[static_cast<size_t>(k)]; p < succStart[static_cast<size_t>(k) + 1]; ++p) {
      const int32_t j = succs[static_cast<size_t>(p)];
      if (--waiting[static_cast<size_t>(j)] == 0) ready.push(j);
    }
  }
  return order;
}

PyObject* pressureOrder(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError,
                    "pressure_order(ops, storages, capacities, at, access_type, idle_acc, random_mode)");
    return nullptr;
  }
  PyObject *ops = args[0], *positions = args[3];
  if (!PyList_Check(ops) || !PyList_Check(args[2]) || !PyTuple_Check(positions) ||
      PyTuple_GET_SIZE(positions) != 7 || !PyType_Check(args[4])) {
    PyErr_SetString(PyExc_TypeError,
                    "pressure_order: ops and capacities must be lists, at a tuple of seven positions, "
                    "access_type a class");
    return nullptr;
  }
  Layout at{};
  Py_ssize_t* fieldsOf[] = {&at.opcodeAt, &at.fieldsAt, &at.insAt, &at.outsAt, &at.sidAt, &at.offsetAt, &at.pairsAt};
  for (Py_ssize_t i = 0; i < 7; ++i)
    if (!positionOf(PyTuple_GET_ITEM(positions, i), "a position", *fieldsOf[i])) return nullptr;
  at.accessType = reinterpret_cast<PyTypeObject*>(args[4]);
  at.idleAcc = args[5];
  at.randomMode = args[6];
  std::vector<int64_t> capacities(static_cast<size_t>(PyList_GET_SIZE(args[2])));
  for (size_t m = 0; m < capacities.size(); ++m)
    if (!int64Of(PyList_GET_ITEM(args[2], static_cast<Py_ssize_t>(m)), "a capacity", capacities[m])) return nullptr;
  std::vector<StorageFacts> storages;
  if (!storagesOf(args[1], capacities.size(), storages)) return nullptr;
  if (PyList_GET_SIZE(ops) >= INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "pressure_order: too many ops");
    return nullptr;
  }
  Graph g;
  bool whole = false;
  if (!dependencies(ops, at, storages, g, whole)) {
    if (!whole) return nullptr;
    Py_RETURN_NONE;
  }
  const std::vector<int32_t> order = listSchedule(g, storages, capacities);
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(order.size()));
  if (out == nullptr) return nullptr;
  for (size_t i = 0; i < order.size(); ++i) {
    PyObject* v = PyLong_FromLong(order[i]);
    if (v == nullptr) {
      Py_DECREF(out);
      return nullptr;
    }
    PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), v);
  }
  return out;
}

PyMethodDef pressureOrderDef = {
    "pressure_order", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(pressureOrder)), METH_FASTCALL,
    "pressure_order(ops, storages, capacities, at, access_type, idle_acc, random_mode): the ops' order to fit "
    "on-chip memory as indices, or None if an op may not move (see neuronxsim.nki.pressure)."};

}  // namespace pressure

void bindPressureOrder(py::module_& m) {
  using namespace pressure;
  accKey = PyUnicode_InternFromString("acc");
  modeKey = PyUnicode_InternFromString("mode");
  indirectKey = PyUnicode_InternFromString("indirect_dim");
  if (accKey == nullptr || modeKey == nullptr || indirectKey == nullptr) throw py::error_already_set();
  m.attr(pressureOrderDef.ml_name) =
      py::reinterpret_steal<py::object>(PyCFunction_NewEx(&pressureOrderDef, nullptr, nullptr));
}

NXS_REGISTER_SUBMODULE(nki, 46, "the NKI tracer's hot paths", bindPressureOrder);

}  // namespace
}  // namespace nxs::py_bind
