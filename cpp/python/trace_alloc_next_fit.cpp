// The allocation pass's common case in C (neuronxsim/nki/allocator.py, _place):
//   next_fit_place(sizes, first, last, capacity) -> (addresses, peak) or None
// places tiles in the order given (the allocator's order: by first use), tile k of `sizes[k]`
// bytes per partition (already aligned) living from instruction first[k] to last[k]: before each
// placement the tiles last used before its first use leave, then it takes the first free range at
// or after the end of the previous placement, wrapping around (next fit). Returns the byte
// address of each tile and the most bytes held at one moment; None as soon as a tile fits
// nowhere, for the Python pass to place everything again with what this does not do (packing,
// spilling, the kernel's own placements), from the start.
//
// Why C: a trace places one tile per instruction or so, and each placement scans the live tiles.
#include "bindings.h"

#include <algorithm>
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
  std::vector<long long> addr(sizes.size());
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
    if (at < 0) Py_RETURN_NONE;
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
  PyObject* addresses = PyList_New(static_cast<Py_ssize_t>(addr.size()));
  if (addresses == nullptr) return nullptr;
  for (size_t k = 0; k < addr.size(); ++k) PyList_SET_ITEM(addresses, static_cast<Py_ssize_t>(k), PyLong_FromLongLong(addr[k]));
  PyObject* result = Py_BuildValue("(NL)", addresses, peak);
  return result;
}

PyMethodDef nextFitPlaceDef = {
    "next_fit_place", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(nextFitPlace)), METH_FASTCALL,
    "next_fit_place(sizes, first, last, capacity): (addresses, peak bytes) of tiles placed next fit in this "
    "order by their live ranges, or None if one fits nowhere (see neuronxsim.nki.allocator)."};

void bindAllocNextFit(py::module_& m) {
  m.attr("next_fit_place") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&nextFitPlaceDef, nullptr, nullptr));
}

NXS_REGISTER_SUBMODULE(nki, 47, "the NKI tracer's hot paths", bindAllocNextFit);

}  // namespace
}  // namespace nxs::py_bind
