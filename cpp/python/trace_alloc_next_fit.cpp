// The allocation pass's common case in C (neuronxsim/nki/allocator.py, _place):
//   next_fit_place(sizes, first, last, capacity) -> (addresses, peak) or None
// places tiles in the order given (the allocator's order: by first use), tile k of `sizes[k]`
// bytes per partition (already aligned) living from instruction first[k] to last[k]: before each
// placement the tiles last used before its first use leave, then it takes the first free range at
// or after the end of the previous placement, wrapping around (next fit). Returns the byte
// address of each tile and the most bytes held at one moment; None as soon as a tile fits
// nowhere, for the Python pass to place everything again with what this does not do (packing,
// spilling, the kernel's own placements), from the start.
//   next_fit_storages(storages, first_use, last_use, capacity, align, addr[, storage_class])
//     -> peak or None
// the same for the pass's storages themselves: ordered by first use (stably), each of
// storage.bytes_per_partition rounded up to `align` (for storages of exactly `storage_class`,
// whose property the caller vouches is the stock one, computed here as it does), their live ranges first_use[sid] to
// last_use[sid]; sets addr[sid] of each and returns the peak, or None with `addr` untouched if
// one fits nowhere or the kernel placed one itself (storage.placement).
//
// Why C: a trace places one tile per instruction or so, and each placement scans the live tiles;
// ordering the storages and listing their sizes and ranges cost as much again in Python.
#include "bindings.h"
#include "trace_ref.h"
#include "trace_slotted.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <tuple>
#include <vector>

namespace nxs::py_bind {
namespace {

struct Placed {
  long long addr, end;
  size_t tile;
};

// allocator._next_fit: the first free range of `size` bytes at or after `rover` among `live`
// (sorted by address), wrapping around; -1 if none.
long long nextFit(const std::vector<Placed>& live, long long size, long long capacity, long long rover) {
  if (size > capacity) return -1;
  long long wrapped = -1, prev = 0;
  for (const Placed& p : live) {
    if (p.addr - prev >= size) {
      const long long start = prev >= rover ? prev : rover;
      if (p.addr - start >= size) return start;
      if (wrapped < 0) wrapped = prev;
    }
    if (p.end > prev) prev = p.end;
  }
  if (capacity - prev >= size) {
    const long long start = prev >= rover ? prev : rover;
    if (capacity - start >= size) return start;
    if (wrapped < 0) wrapped = prev;
  }
  return wrapped;
}

bool intsOf(PyObject* list, const char* what, std::vector<long long>& out) {
  if (!PyList_Check(list)) {
    PyErr_Format(PyExc_TypeError, "%s must be a list of ints", what);
    return false;
  }
  out.resize(static_cast<size_t>(PyList_GET_SIZE(list)));
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
    out[static_cast<size_t>(i)] = PyLong_AsLongLong(PyList_GET_ITEM(list, i));
    if (out[static_cast<size_t>(i)] == -1 && PyErr_Occurred()) return false;
  }
  return true;
}

// Places the tiles (see next_fit_place) into `addr`; returns the peak, or -1 if one fits nowhere.
long long placeNextFit(const std::vector<long long>& sizes, const std::vector<long long>& first,
                       const std::vector<long long>& last, long long capacity, std::vector<long long>& addr) {
  addr.resize(sizes.size());
  std::vector<Placed> live;  // sorted by (addr, end)
  using Expiry = std::tuple<long long, size_t>;  // (last use, placement number = tile)
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<>> expiry;
  long long rover = 0, held = 0, peak = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    while (!expiry.empty() && std::get<0>(expiry.top()) < first[k]) {
      const size_t gone = std::get<1>(expiry.top());
      expiry.pop();
      auto it = std::find_if(live.begin(), live.end(), [&](const Placed& p) { return p.tile == gone; });
      held -= it->end - it->addr;
      live.erase(it);
    }
    const long long at = nextFit(live, sizes[k], capacity, rover);
    if (at < 0) return -1;
    rover = at + sizes[k];
    addr[k] = at;
    const Placed entry{at, at + sizes[k], k};
    live.insert(std::upper_bound(live.begin(), live.end(), entry,
                                 [](const Placed& x, const Placed& y) {
                                   return x.addr != y.addr ? x.addr < y.addr : x.end < y.end;
                                 }),
                entry);
    expiry.emplace(last[k], k);
    held += sizes[k];
    peak = std::max(peak, held);
  }
  return peak;
}

PyObject* nextFitPlace(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "next_fit_place(sizes, first, last, capacity)");
    return nullptr;
  }
  std::vector<long long> sizes, first, last;
  if (!intsOf(args[0], "sizes", sizes) || !intsOf(args[1], "first", first) || !intsOf(args[2], "last", last))
    return nullptr;
  const long long capacity = PyLong_AsLongLong(args[3]);
  if (capacity == -1 && PyErr_Occurred()) return nullptr;
  if (first.size() != sizes.size() || last.size() != sizes.size()) {
    PyErr_SetString(PyExc_ValueError, "next_fit_place: sizes, first and last differ in length");
    return nullptr;
  }
  std::vector<long long> addr;
  const long long peak = placeNextFit(sizes, first, last, capacity, addr);
  if (peak < 0) Py_RETURN_NONE;
  PyObject* addresses = PyList_New(static_cast<Py_ssize_t>(addr.size()));
  if (addresses == nullptr) return nullptr;
  for (size_t k = 0; k < addr.size(); ++k) PyList_SET_ITEM(addresses, static_cast<Py_ssize_t>(k), PyLong_FromLongLong(addr[k]));
  PyObject* result = Py_BuildValue("(NL)", addresses, peak);
  return result;
}

PyObject* storageSidName = nullptr;        // "sid" (interned)
PyObject* storagePlacementName = nullptr;  // "placement" (interned)
PyObject* storageBytesName = nullptr;      // "bytes_per_partition" (interned)
PyObject* storageLayoutName = nullptr;     // "layout" (interned)
PyObject* storageDtypeName = nullptr;      // "dtype" (interned)
PyObject* layoutRowName = nullptr;         // "row" (interned)
PyObject* itemsizeName = nullptr;          // "itemsize" (interned)

// storage.bytes_per_partition, `layout.row * dtype.itemsize`, for a storage of `plainClass`
// (the Storage class, passed only while its property is that stock one): read through the
// slots without the property's Python call; the itemsize of the last dtype object read is
// remembered (a trace has a few dtypes, in runs). Any other storage, or a row or itemsize that
// is not an int, goes through the property. A new reference, or null with an error set.
struct BytesReader {
  PyObject* plainClass;
  PyObject* dtype = nullptr;  // (borrowed: the storages hold it through the call)
  long long itemsize = 0;

  PyObject* operator()(PyObject* st) {
    if (plainClass == nullptr || reinterpret_cast<PyObject*>(Py_TYPE(st)) != plainClass)
      return PyObject_GetAttr(st, storageBytesName);  // (the property: its one home)
    OwnedRef layout(slotAttr(st, storageLayoutName));
    if (layout.get() == nullptr) return nullptr;
    OwnedRef row(slotAttr(layout.get(), layoutRowName));
    OwnedRef dt(slotAttr(st, storageDtypeName));
    if (row.get() == nullptr || dt.get() == nullptr) return nullptr;
    if (dt.get() != dtype) {
      OwnedRef size(PyObject_GetAttr(dt.get(), itemsizeName));
      if (size.get() == nullptr) return nullptr;
      if (!PyLong_CheckExact(size.get())) return PyObject_GetAttr(st, storageBytesName);
      itemsize = PyLong_AsLongLong(size.get());
      if (itemsize == -1 && PyErr_Occurred()) return nullptr;
      dtype = dt.get();
    }
    if (!PyLong_CheckExact(row.get())) return PyObject_GetAttr(st, storageBytesName);
    const long long r = PyLong_AsLongLong(row.get());
    if (r == -1 && PyErr_Occurred()) return nullptr;
    long long bytes;
    if (__builtin_mul_overflow(r, itemsize, &bytes)) return PyObject_GetAttr(st, storageBytesName);
    return PyLong_FromLongLong(bytes);
  }
};

// Item `i` (a storage number) of the list of ints `list` (first_use, last_use), or false with an
// error set.
bool useOf(PyObject* list, long long i, long long& v) {
  if (i < 0 || i >= PyList_GET_SIZE(list)) {
    PyErr_Format(PyExc_IndexError, "next_fit_storages: storage number %lld of %zd", i, PyList_GET_SIZE(list));
    return false;
  }
  v = PyLong_AsLongLong(PyList_GET_ITEM(list, i));
  return !(v == -1 && PyErr_Occurred());
}

// What next_fit_storages reads of its storages, in the order given.
struct Tiles {
  std::vector<long long> sids, sizes, first, last;
};
enum class Read { kTiles, kPythonCase, kError };

// The tiles of `storages` (sizes rounded up to `align` > 0): kPythonCase if the kernel placed one
// (storage.placement) or a size is negative, kError with an error set.
Read readTiles(PyObject* storages, PyObject* firstUse, PyObject* lastUse, Py_ssize_t addresses, long long align,
               BytesReader& bytesOf, Tiles& t) {
  const size_t n = static_cast<size_t>(PyList_GET_SIZE(storages));
  for (auto* v : {&t.sids, &t.sizes, &t.first, &t.last}) v->resize(n);
  for (size_t k = 0; k < n; ++k) {
    PyObject* st = PyList_GET_ITEM(storages, static_cast<Py_ssize_t>(k));
    OwnedRef placement(slotAttr(st, storagePlacementName));
    if (placement.get() == nullptr) return Read::kError;
    if (placement.get() != Py_None) return Read::kPythonCase;
    OwnedRef sid(slotAttr(st, storageSidName));
    OwnedRef bytes(bytesOf(st));
    if (sid.get() == nullptr || bytes.get() == nullptr) return Read::kError;
    t.sids[k] = PyLong_AsLongLong(sid.get());
    const long long b = PyLong_AsLongLong(bytes.get());
    if ((t.sids[k] == -1 || b == -1) && PyErr_Occurred()) return Read::kError;
    if (b < 0) return Read::kPythonCase;
    t.sizes[k] = (b + align - 1) / align * align;  // (allocator: -(-b // align) * align)
    if (!useOf(firstUse, t.sids[k], t.first[k]) || !useOf(lastUse, t.sids[k], t.last[k])) return Read::kError;
    if (t.sids[k] >= addresses) {
      PyErr_Format(PyExc_IndexError, "next_fit_storages: storage number %lld of %zd addresses", t.sids[k],
                   addresses);
      return Read::kError;
    }
  }
  return Read::kTiles;
}

PyObject* nextFitStorages(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if ((nargs != 6 && nargs != 7) || !PyList_Check(args[0]) || !PyList_Check(args[1]) || !PyList_Check(args[2]) ||
      !PyList_Check(args[5]) || (nargs == 7 && args[6] != Py_None && !PyType_Check(args[6]))) {
    PyErr_SetString(PyExc_TypeError,
                    "next_fit_storages(storages: list, first_use: list, last_use: list, capacity, align, addr: list"
                    "[, storage_class: type | None])");
    return nullptr;
  }
  BytesReader bytesOf{nargs == 7 && args[6] != Py_None ? args[6] : nullptr};
  PyObject* addrList = args[5];
  const long long capacity = PyLong_AsLongLong(args[3]), align = PyLong_AsLongLong(args[4]);
  if ((capacity == -1 || align == -1) && PyErr_Occurred()) return nullptr;
  if (align <= 0) Py_RETURN_NONE;  // (the Python pass's arithmetic then)
  Tiles t;
  const Read read = readTiles(args[0], args[1], args[2], PyList_GET_SIZE(addrList), align, bytesOf, t);
  if (read == Read::kError) return nullptr;
  if (read == Read::kPythonCase) Py_RETURN_NONE;
  // In order of first use; ties in the order given (list.sort is stable).
  const size_t n = t.sids.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t.first[a] < t.first[b]; });
  const auto ordered = [&](const std::vector<long long>& v) {
    std::vector<long long> out(n);
    for (size_t k = 0; k < n; ++k) out[k] = v[order[k]];
    return out;
  };
  std::vector<long long> addr;
  const long long peak = placeNextFit(ordered(t.sizes), ordered(t.first), ordered(t.last), capacity, addr);
  if (peak < 0) Py_RETURN_NONE;
  for (size_t k = 0; k < n; ++k) {
    PyObject* at = PyLong_FromLongLong(addr[k]);
    if (at == nullptr) return nullptr;
    PyList_SetItem(addrList, static_cast<Py_ssize_t>(t.sids[order[k]]), at);  // (steals; in range: checked)
  }
  return PyLong_FromLongLong(peak);
}

PyMethodDef nextFitPlaceDef = {
    "next_fit_place", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(nextFitPlace)), METH_FASTCALL,
    "next_fit_place(sizes, first, last, capacity): (addresses, peak bytes) of tiles placed next fit in this "
    "order by their live ranges, or None if one fits nowhere (see neuronxsim.nki.allocator)."};

PyMethodDef nextFitStoragesDef = {
    "next_fit_storages", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(nextFitStorages)),
    METH_FASTCALL,
    "next_fit_storages(storages, first_use, last_use, capacity, align, addr[, storage_class]): next_fit_place for "
    "the allocation "
    "pass's storages, in order of first use, into addr[sid]; the peak bytes, or None (addr untouched) if one fits "
    "nowhere or has a placement (see neuronxsim.nki.allocator)."};

void bindAllocNextFit(py::module_& m) {
  storageSidName = PyUnicode_InternFromString("sid");
  storagePlacementName = PyUnicode_InternFromString("placement");
  storageBytesName = PyUnicode_InternFromString("bytes_per_partition");
  storageLayoutName = PyUnicode_InternFromString("layout");
  storageDtypeName = PyUnicode_InternFromString("dtype");
  layoutRowName = PyUnicode_InternFromString("row");
  itemsizeName = PyUnicode_InternFromString("itemsize");
  for (PyObject* name : {storageSidName, storagePlacementName, storageBytesName, storageLayoutName, storageDtypeName,
                         layoutRowName, itemsizeName})
    if (name == nullptr) throw py::error_already_set();
  for (PyMethodDef* def : {&nextFitPlaceDef, &nextFitStoragesDef})
    m.attr(def->ml_name) = py::reinterpret_steal<py::object>(PyCFunction_NewEx(def, nullptr, nullptr));
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindAllocNextFit);

}  // namespace
}  // namespace nxs::py_bind
