// `nl.ndarray` and `nl.zeros` of an on-chip shape with block dimensions (`(2, nl.par_dim(128), 512)`)
// in C, for ndarray_fast / zeros_fast (trace_language_fast.cpp) — see trace_new_blocked.h.
//
// language.py's _new_tensor, once it has checked such a shape (unnamed, not directly allocated),
// keeps `_NEW_BLOCKED[(dims, pidx, dtype, buffer)] = (block_shape, tile_shape, dtype, kind)`.
// A later call whose shape is a tuple of ints with exactly one nl.par_dim, at `pidx` > 0, finds
// its entry (an nl.par_dim equals its int: `pidx` in the key tells the partition axis apart) and
// makes what _blocked makes: BlockedTensor(block_shape, tile, dtype, kind, what, loc, {},
// make_block) with make_block(index) = tr.new_result(kind, dtype, tile, what, loc) (a C function
// bound to those arguments, below); for nl.zeros every block in row-major order (all_blocks),
// then tr.zero_fill(block, loc) of each. Anything else is the definition's.
//
// Why C: the blocked matmul kernels make their operand and accumulator tiles per block
// iteration; the definition spent five Python frames (and a closure) on each.
#include "trace_method_site.h"
#include "trace_new_blocked.h"

#include "trace_call_site.h"
#include "trace_ref.h"
#include "trace_slotted.h"

#include "bindings.h"

#include <vector>

namespace nxs::py_bind {
namespace {
namespace new_blocked {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

using Owned = nxs::py_bind::OwnedRef;

PyObject* blockedClass = nullptr;  // neuronxsim.nki.tensor.BlockedTensor
PyObject* parDimClass = nullptr;   // nl.par_dim
PyObject* known = nullptr;         // language._NEW_BLOCKED
PyObject *newResultName, *zeroFillName;

// make_block of a BlockedTensor made here: `self` is (tr.new_result, kind, dtype, tile, what,
// loc); the block index is not used (every block is a new tile of the same spec).
PyObject* makeBlock(PyObject* self, PyObject* /*index*/) {
  PyObject* const* a = &PyTuple_GET_ITEM(self, 0);
  return PyObject_Vectorcall(a[0], a + 1, 5, nullptr);
}

PyMethodDef makeBlockDef = {"make_block", makeBlock, METH_O,
                            "make_block(index): a new tile of the blocked tensor's tile spec (tr.new_result)."};

}  // namespace new_blocked
}  // namespace

int newBlockedTensor(PyObject* tr, PyObject* shape, PyObject* dtype, PyObject* buffer, PyObject* what, bool fill,
                     PyObject*& out) {
  using namespace new_blocked;
  if (known == nullptr || !PyTuple_CheckExact(shape)) return 0;
  Py_ssize_t pidx = -1;
  const Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
  for (Py_ssize_t i = 0; i < ndim; ++i) {
    PyTypeObject* c = Py_TYPE(PyTuple_GET_ITEM(shape, i));
    if (c == reinterpret_cast<PyTypeObject*>(parDimClass)) {
      if (pidx >= 0) return 0;  // (two: the definition's error)
      pidx = i;
    } else if (c != &PyLong_Type) {
      return 0;
    }
  }
  if (pidx <= 0) return 0;
  Owned axis(PyLong_FromSsize_t(pidx));
  if (axis.get() == nullptr) return -1;
  Owned key(PyTuple_Pack(4, shape, axis.get(), dtype, buffer));
  if (key.get() == nullptr) return -1;
  PyObject* spec = PyDict_GetItemWithError(known, key.get());  // (borrowed)
  if (spec == nullptr) {
    if (!PyErr_Occurred()) return 0;
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
    PyErr_Clear();  // (an unhashable argument: the definition refuses it)
    return 0;
  }
  if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 4) return 0;
  PyObject *blockShape = PyTuple_GET_ITEM(spec, 0), *tile = PyTuple_GET_ITEM(spec, 1),
           *kind = PyTuple_GET_ITEM(spec, 3);
  PyObject* tileDtype = PyTuple_GET_ITEM(spec, 2);
  std::vector<Py_ssize_t> sizes;
  if (fill) {  // (the block counts, for the row-major walk; checked before anything is made)
    if (!PyTuple_CheckExact(blockShape)) return 0;
    for (Py_ssize_t a = 0; a < PyTuple_GET_SIZE(blockShape); ++a) {
      const Py_ssize_t n = PyLong_AsSsize_t(PyTuple_GET_ITEM(blockShape, a));
      if (n < 0) {
        if (PyErr_Occurred()) PyErr_Clear();
        return 0;
      }
      sizes.push_back(n);
    }
  }
  Owned loc(callSiteLocation(0));  // (the kernel's frame: no C function here has one of its own)
  if (loc.get() == nullptr) return -1;
  Owned newResult(PyObject_GetAttr(tr, newResultName));  // (bound now, as _blocked's closure binds it)
  if (newResult.get() == nullptr) return -1;
  Owned bound(PyTuple_Pack(6, newResult.get(), kind, tileDtype, tile, what, loc.get()));
  if (bound.get() == nullptr) return -1;
  Owned make(PyCFunction_NewEx(&makeBlockDef, bound.get(), nullptr));
  Owned blocks(PyDict_New());
  if (make.get() == nullptr || blocks.get() == nullptr) return -1;
  PyObject* const slots[8] = {blockShape, tile, tileDtype, kind, what, loc.get(), blocks.get(), make.get()};
  Owned t(newSlottedObject(blockedClass, slots, 8));
  if (t.get() == nullptr) return -1;
  if (fill) {  // (zeros: all_blocks, then zero_fill of each, in row-major order)
    Owned made(PyList_New(0));
    if (made.get() == nullptr) return -1;
    const size_t nb = sizes.size();
    std::vector<Py_ssize_t> at(nb, 0);
    bool empty = false;
    for (Py_ssize_t n : sizes) empty = empty || n == 0;
    while (!empty) {
      Owned index(PyTuple_New(static_cast<Py_ssize_t>(nb)));
      if (index.get() == nullptr) return -1;
      for (size_t a = 0; a < nb; ++a) {
        PyObject* i = PyLong_FromSsize_t(at[a]);
        if (i == nullptr) return -1;
        PyTuple_SET_ITEM(index.get(), static_cast<Py_ssize_t>(a), i);
      }
      Owned view(makeBlock(bound.get(), index.get()));
      if (view.get() == nullptr || PyDict_SetItem(blocks.get(), index.get(), view.get()) < 0 ||
          PyList_Append(made.get(), view.get()) < 0)
        return -1;
      size_t a = nb;  // (the next index: the last dim fastest, as itertools.product)
      while (a > 0 && ++at[a - 1] == sizes[a - 1]) at[--a] = 0;
      if (a == 0) break;
    }
    for (Py_ssize_t b = 0; b < PyList_GET_SIZE(made.get()); ++b) {
      PyObject* const args[3] = {tr, PyList_GET_ITEM(made.get(), b), loc.get()};
      static MethodSite zeroFillSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
      Owned op(zeroFillSite.call(zeroFillName, args, 3));
      if (op.get() == nullptr) return -1;
    }
  }
  out = t.release();
  return 1;
}

namespace {
namespace new_blocked {

void bindNewBlocked(py::module_& m) {
  for (auto [slot, text] : {std::pair{&newResultName, "new_result"}, {&zeroFillName, "zero_fill"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  m.def(
      "configure_new_blocked",
      [](py::type blockedTensor, py::type parDim, py::dict newBlocked) {
        for (PyObject** slot : {&blockedClass, &parDimClass, &known}) Py_XDECREF(*slot);
        blockedClass = blockedTensor.inc_ref().ptr();
        parDimClass = parDim.inc_ref().ptr();
        known = newBlocked.inc_ref().ptr();
      },
      py::arg("blocked_tensor_class"), py::arg("par_dim"), py::arg("new_blocked"),
      "Gives ndarray_fast and zeros_fast the BlockedTensor class, the par_dim class and language.py's "
      "_NEW_BLOCKED ((dims, partition axis, dtype, buffer) -> (block shape, tile shape, dtype, kind) of the "
      "unnamed blocked tensors made before), for the nl.ndarray and nl.zeros of block-dimension shapes.");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindNewBlocked);

}  // namespace new_blocked
}  // namespace
}  // namespace nxs::py_bind
