// The C paths of `nl.ndarray`, `nl.zeros`, `nl.load` and `nl.store` (neuronxsim.nki.language), taken through a FastCall
// (trace_fast_call.cpp) for their commonest calls; anything else returns NotImplemented having
// changed nothing, and the Python definition answers it, with every check and error:
//
// - `ndarray_fast(shape, dtype, *, buffer=None)`: a tile of a (shape, dtype, buffer) made before
//   (language.py's `_NEW_TILES`, which _new_tensor fills once a tile's spec is checked), shape a
//   plain tuple without nl.par_dim: `current().new_result(kind, dtype, dims, "ndarray", loc)`, as
//   ndarray's first lines do; a shape with block dims made before: its BlockedTensor
//   (trace_new_blocked.cpp);
// - `zeros_fast(shape, dtype, *, buffer=None)`: the same for nl.zeros (what "zeros"), then
//   `tr.zero_fill(tile, loc)`, as zeros does for such a tile (of each block of a BlockedTensor);
// - `load_fast(src, *, mask=None)`: an HBM Tensor of at most pmax rows, no dtype, no mask or one
//   that keeps the whole tile (`keeps_all(mask, shape)`, below): the SBUF tile of its shape and
//   dtype (`tr.new_result`), then `dma_plain(tr, Load, tile, src, loc, True)`, else
//   `dma_general(tr, Load, tile, src, loc, None, None, "nl.load", True, None)`, as load does;
// - `store_fast(dst, value, *, mask=None)` (value also by keyword): an HBM Tensor dst, an SBUF
//   Tensor value, no mask or one that keeps the whole transfer (as for load):
//   `dma_plain(tr, Save, dst, value, loc, False)`, else dma_general, as store (through
//   instructions.dma) does.
//
// A mask is settled by instructions.keeps_all, the definitions' own test (a wrong mask raises
// there): the definitions drop a mask it keeps whole before anything else looks at it, so the
// call is then an unmasked one. When it keeps less, or raises, the call is the definition's (the
// error is dropped here: the definition raises it again, after the checks that come first).
//
// `configure_language_fast(tensor_class, new_tiles, par_dim, sbuf, load, pmax, dma_plain,
// dma_general, save, psum, keeps_all, num_partitions)` gives them the Tensor class, the
// `_NEW_TILES` dict, the par_dim class, the SBUF kind, the Load opcode, the partition count of
// nl.load's check, the two DMA steps, the Save opcode, the PSUM kind, keeps_all and the partition
// count of nl.store's.
//
// Why C: kernels make, load and store a tile per few instructions, and each call cost a Python frame
// (and caller_location a walk from it) around the one C call that records it.
#include "trace_method_site.h"
#include "trace_equal.h"
#include "trace_call_site.h"
#include "trace_current.h"
#include "trace_new_blocked.h"
#include "trace_ref.h"
#include "trace_slotted.h"
#include "trace_value_memo.h"

#include "bindings.h"

namespace nxs::py_bind {
namespace {
namespace language_fast {  // (named: the unity build merges the anonymous namespaces of trace_*.cpp)

using Owned = nxs::py_bind::OwnedRef;

struct Config {
  PyObject *tensorClass, *newTiles, *parDim, *sbuf, *load, *pmax, *dmaPlain, *dmaGeneral, *save, *psum, *keepsAll,
      *numPartitions;
};
Config config{};
PyObject *dtypeName, *bufferName, *storageName, *shapeName, *onChipName, *newResultName, *ndarrayText, *zerosText, *zeroFillName, *loadText, *valueName, *kindName, *nlStoreText,
    *nlLoadText, *maskName;

bool noKeywords(PyObject* kwnames) { return kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0; }

// Whether the call's mask (None when not given) leaves it an unmasked one: 1 when there is none or
// `keeps_all(mask, shape)` is true; 0 otherwise, and when keeps_all raises an Exception (cleared:
// the definition raises it in its turn, after the checks it makes first); -1 with the error set
// for anything else (a KeyboardInterrupt, ...).
int maskKeepsAll(PyObject* mask, PyObject* shape) {
  if (mask == nullptr || mask == Py_None) return 1;
  PyObject* const call[2] = {mask, shape};
  Owned keeps(callFast(config.keepsAll, call, 2));
  if (keeps.get() == nullptr) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return -1;
    PyErr_Clear();
    return 0;
  }
  return keeps.get() == Py_True ? 1 : 0;
}

// _NEW_TILES's hits by the values of their keys (trace_value_memo.h): a dtype, a buffer and a shape
// of up to four dims.
using TileMemo = ValueMemo<2, 1 + 4, 6>;
TileMemo newTilesMemo;

// A new tile of `what` ("ndarray", "zeros") for the arguments (shape, dtype, *, buffer=None) when
// they name a tile made before: `tile` (a new reference) and 1; for a shape with block dims, the
// BlockedTensor (zero-filled already for nl.zeros; `loc` left null) and 2; 0, having changed
// nothing, when the definition must answer; -1 with an error set.
int knownTile(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject* what, PyObject*& tile,
              PyObject*& loc) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.newTiles == nullptr || nargs < 1 || nargs > 2) return 0;
  PyObject* shape = args[0];
  PyObject* dtype = nargs == 2 ? args[1] : nullptr;
  PyObject* buffer = Py_None;
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < nkw; ++i) {  // (interned keywords: compared by identity; others decline)
    PyObject* key = PyTuple_GET_ITEM(kwnames, i);
    if (key == dtypeName && dtype == nullptr)
      dtype = args[nargs + i];
    else if (key == bufferName)
      buffer = args[nargs + i];
    else
      return 0;  // (name=, lazy_initialization=, a repeated or misspelt keyword: the definition's)
  }
  if (dtype == nullptr || !PyTuple_CheckExact(shape)) return 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); ++i)
    if (Py_TYPE(PyTuple_GET_ITEM(shape, i)) == reinterpret_cast<PyTypeObject*>(config.parDim)) {
      // (block dims: a BlockedTensor, its blocks zero-filled for nl.zeros, see trace_new_blocked.h)
      const int made = newBlockedTensor(tr, shape, dtype, buffer, what, what == zerosText, tile);
      return made == 1 ? 2 : made;
    }
  // (_NEW_TILES's answer for (shape, dtype, buffer), a function of their values: remembered in
  // front of it, a dtype object's hash being most of the dict lookup's cost)
  TileMemo::Key memoKey;
  memoKey.objects[0] = dtype;
  memoKey.objects[1] = buffer;
  const bool memoable = memoKey.addTuple(shape);
  PyObject* known = newTilesMemo.lookUp(memoKey, memoable, config.newTiles, {shape, dtype, buffer});  // (borrowed)
  if (known == nullptr) return PyErr_Occurred() ? -1 : 0;
  if (!PyTuple_CheckExact(known) || PyTuple_GET_SIZE(known) != 3) return 0;
  loc = callSiteLocation(0);  // (the kernel's frame: this C function has none of its own)
  if (loc == nullptr) return -1;
  PyObject* const call[6] = {tr, PyTuple_GET_ITEM(known, 0), PyTuple_GET_ITEM(known, 1), PyTuple_GET_ITEM(known, 2),
                             what, loc};
  static MethodSite newResultSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
  tile = newResultSite.call(newResultName, call, 6);
  return tile == nullptr ? -1 : 1;
}

PyObject* ndarrayFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject *tile = nullptr, *loc = nullptr;
  const int made = knownTile(args, nargs, kwnames, ndarrayText, tile, loc);
  Py_XDECREF(loc);
  if (made != 0) return made < 0 ? nullptr : tile;
  Py_RETURN_NOTIMPLEMENTED;
}

// nl.zeros: the tile, then tr.zero_fill(tile, loc) (its Memset, kept if something reads it).
PyObject* zerosFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject *made = nullptr, *where = nullptr;
  const int known = knownTile(args, nargs, kwnames, zerosText, made, where);
  Owned tile(made), loc(where);
  if (known == 0) Py_RETURN_NOTIMPLEMENTED;
  if (known < 0) return nullptr;
  if (known == 2) return tile.release();  // (a BlockedTensor: its blocks are filled)
  PyObject* const fill[3] = {currentTracer(), tile.get(), loc.get()};
  static MethodSite zeroFillSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
  Owned op(zeroFillSite.call(zeroFillName, fill, 3));
  return op.get() == nullptr ? nullptr : tile.release();
}

PyObject* loadFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.tensorClass == nullptr || nargs != 1) Py_RETURN_NOTIMPLEMENTED;
  // load(src) or load(src, mask=m): nothing else (a dtype is the definition's)
  PyObject* mask = nullptr;
  if (!noKeywords(kwnames)) {
    if (PyTuple_GET_SIZE(kwnames) != 1 || PyTuple_GET_ITEM(kwnames, 0) != maskName) Py_RETURN_NOTIMPLEMENTED;
    mask = args[1];
  }
  PyObject* src = args[0];
  if (Py_TYPE(src) != reinterpret_cast<PyTypeObject*>(config.tensorClass)) Py_RETURN_NOTIMPLEMENTED;
  Owned st(slotAttr(src, storageName));
  if (st.get() == nullptr) return nullptr;
  Owned onChip(slotAttr(st.get(), onChipName));
  Owned shape(slotAttr(src, shapeName));
  if (onChip.get() == nullptr || shape.get() == nullptr) return nullptr;
  if (onChip.get() != Py_False || !PyTuple_CheckExact(shape.get()) || PyTuple_GET_SIZE(shape.get()) == 0)
    Py_RETURN_NOTIMPLEMENTED;
  PyObject* rows = PyTuple_GET_ITEM(shape.get(), 0);
  if (!PyLong_CheckExact(rows)) Py_RETURN_NOTIMPLEMENTED;
  const int tooMany = PyObject_RichCompareBool(rows, config.pmax, Py_GT);
  if (tooMany != 0) return tooMany < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  // (load tests the mask after making the tile; the test changes nothing the tile depends on)
  const int keeps = maskKeepsAll(mask, shape.get());
  if (keeps != 1) return keeps < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned dtype(slotAttr(st.get(), dtypeName));
  if (dtype.get() == nullptr) return nullptr;
  Owned loc(callSiteLocation(0));
  if (loc.get() == nullptr) return nullptr;
  PyObject* const result[6] = {tr, config.sbuf, dtype.get(), shape.get(), loadText, loc.get()};
  static MethodSite newResultSite;  // (the tracer's C method, called directly when it is one: trace_method_site.h)
  Owned tile(newResultSite.call(newResultName, result, 6));
  if (tile.get() == nullptr) return nullptr;
  PyObject* const plain[6] = {tr, config.load, tile.get(), src, loc.get(), Py_True};
  Owned done(callFast(config.dmaPlain, plain, 6));
  if (done.get() == nullptr) return nullptr;
  if (done.get() == Py_NotImplemented) {
    PyObject* const general[10] = {tr, config.load, tile.get(), src, loc.get(), Py_None, Py_None, nlLoadText,
                                   Py_True, Py_None};
    Owned g(PyObject_Vectorcall(config.dmaGeneral, general, 10, nullptr));
    if (g.get() == nullptr) return nullptr;
  }
  return tile.release();
}

// The storage of `t` when it is an exact Tensor whose storage's on_chip is `onChip` (borrowed by
// `st`); 0 when not, -1 with an error set.
int tensorIn(PyObject* t, PyObject* onChip, Owned& st) {
  if (Py_TYPE(t) != reinterpret_cast<PyTypeObject*>(config.tensorClass)) return 0;
  st.p = slotAttr(t, storageName);
  if (st.get() == nullptr) return -1;
  Owned where(slotAttr(st.get(), onChipName));
  if (where.get() == nullptr) return -1;
  return where.get() == onChip ? 1 : 0;
}

PyObject* storeFast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tr = currentTracer();
  if (tr == nullptr || config.tensorClass == nullptr) Py_RETURN_NOTIMPLEMENTED;
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  // store(dst, value) or store(dst, value=value), then perhaps mask=m: nothing else
  if (nargs < 1 || nargs > 2 || nargs + nkw < 2 || nargs + nkw > 3) Py_RETURN_NOTIMPLEMENTED;
  PyObject *dst = args[0], *value = nargs == 2 ? args[1] : nullptr, *mask = nullptr;
  for (Py_ssize_t i = 0; i < nkw; ++i) {  // (interned keywords: compared by identity; others decline)
    PyObject* key = PyTuple_GET_ITEM(kwnames, i);
    if (key == valueName && value == nullptr)
      value = args[nargs + i];
    else if (key == maskName && mask == nullptr)
      mask = args[nargs + i];
    else
      Py_RETURN_NOTIMPLEMENTED;
  }
  if (value == nullptr) Py_RETURN_NOTIMPLEMENTED;
  Owned dstStorage(nullptr), valueStorage(nullptr);
  int t = tensorIn(dst, Py_False, dstStorage);
  if (t == 1) t = tensorIn(value, Py_True, valueStorage);
  if (t != 1) return t < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  Owned kind(slotAttr(valueStorage.get(), kindName));
  if (kind.get() == nullptr) return nullptr;
  const int inPsum = equalTo(kind.get(), config.psum);  // (store copies it first)
  if (inPsum != 0) return inPsum < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  if (mask != nullptr && mask != Py_None) {  // store's test: same shapes, at most a tile's partitions, kept whole
    Owned shape(slotAttr(value, shapeName)), dstShape(slotAttr(dst, shapeName));
    if (shape.get() == nullptr || dstShape.get() == nullptr) return nullptr;
    if (!PyTuple_CheckExact(shape.get()) || PyTuple_GET_SIZE(shape.get()) == 0 ||
        !PyLong_CheckExact(PyTuple_GET_ITEM(shape.get(), 0)))
      Py_RETURN_NOTIMPLEMENTED;
    int ok = equalTo(shape.get(), dstShape.get());
    if (ok == 1) ok = PyObject_RichCompareBool(PyTuple_GET_ITEM(shape.get(), 0), config.numPartitions, Py_LE);
    if (ok == 1) ok = maskKeepsAll(mask, shape.get());
    if (ok != 1) return ok < 0 ? nullptr : Py_NewRef(Py_NotImplemented);
  }
  Owned loc(callSiteLocation(0));
  if (loc.get() == nullptr) return nullptr;
  PyObject* const plain[6] = {tr, config.save, dst, value, loc.get(), Py_False};
  Owned done(callFast(config.dmaPlain, plain, 6));
  if (done.get() == nullptr) return nullptr;
  if (done.get() == Py_NotImplemented) {
    PyObject* const general[10] = {tr, config.save, dst, value, loc.get(), Py_None, Py_None, nlStoreText,
                                   Py_False, Py_None};
    Owned g(PyObject_Vectorcall(config.dmaGeneral, general, 10, nullptr));
    if (g.get() == nullptr) return nullptr;
  }
  Py_RETURN_NONE;
}

PyMethodDef storeFastDef = {
    "store_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(storeFast)), METH_FASTCALL | METH_KEYWORDS,
    "store_fast(dst, value, *, mask=None): nl.store of an SBUF Tensor into an HBM Tensor, no mask or one that "
    "keeps it whole; NotImplemented, having changed nothing, for any other call."};

PyMethodDef ndarrayFastDef = {
    "ndarray_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(ndarrayFast)),
    METH_FASTCALL | METH_KEYWORDS,
    "ndarray_fast(shape, dtype, *, buffer=None): nl.ndarray of a tile made before; NotImplemented, having "
    "changed nothing, for any other call."};

PyMethodDef zerosFastDef = {
    "zeros_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(zerosFast)), METH_FASTCALL | METH_KEYWORDS,
    "zeros_fast(shape, dtype, *, buffer=None): nl.zeros of a tile made before; NotImplemented, having changed "
    "nothing, for any other call."};

PyMethodDef loadFastDef = {
    "load_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(loadFast)), METH_FASTCALL | METH_KEYWORDS,
    "load_fast(src, *, mask=None): nl.load of an HBM Tensor, no dtype, no mask or one that keeps the whole "
    "tile; NotImplemented, having changed nothing, for any other call."};

void bindLanguageFast(py::module_& m) {
  for (auto [slot, text] : {std::pair{&dtypeName, "dtype"}, {&bufferName, "buffer"}, {&storageName, "storage"},
                            {&shapeName, "shape"}, {&onChipName, "on_chip"}, {&newResultName, "new_result"},
                            {&ndarrayText, "ndarray"}, {&zerosText, "zeros"},
                            {&zeroFillName, "zero_fill"}, {&loadText, "load"},
                            {&valueName, "value"}, {&kindName, "kind"}, {&nlStoreText, "nl.store"}, {&nlLoadText, "nl.load"},
                            {&maskName, "mask"}}) {
    *slot = PyUnicode_InternFromString(text);
    if (*slot == nullptr) throw py::error_already_set();
  }
  m.attr("ndarray_fast") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&ndarrayFastDef, nullptr, nullptr));
  m.attr("zeros_fast") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&zerosFastDef, nullptr, nullptr));
  m.attr("store_fast") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&storeFastDef, nullptr, nullptr));
  m.attr("load_fast") = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&loadFastDef, nullptr, nullptr));
  m.def(
      "configure_language_fast",
      [](py::type tensor, py::dict newTiles, py::type parDim, py::str sbuf, py::object load, py::int_ pmax,
         py::object dmaPlain, py::object dmaGeneral, py::object save, py::str psum, py::object keepsAll,
         py::int_ numPartitions) {
        Config c{tensor.inc_ref().ptr(),   newTiles.inc_ref().ptr(),   parDim.inc_ref().ptr(),
                 sbuf.inc_ref().ptr(),     load.inc_ref().ptr(),       pmax.inc_ref().ptr(),
                 dmaPlain.inc_ref().ptr(), dmaGeneral.inc_ref().ptr(), save.inc_ref().ptr(),
                 psum.inc_ref().ptr(),     keepsAll.inc_ref().ptr(),   numPartitions.inc_ref().ptr()};
        for (PyObject* o : {config.tensorClass, config.newTiles, config.parDim, config.sbuf, config.load, config.pmax,
                            config.dmaPlain, config.dmaGeneral, config.save, config.psum, config.keepsAll,
                            config.numPartitions})
          Py_XDECREF(o);
        config = c;
      },
      py::arg("tensor_class"), py::arg("new_tiles"), py::arg("par_dim"), py::arg("sbuf"), py::arg("load"),
      py::arg("pmax"), py::arg("dma_plain"), py::arg("dma_general"), py::arg("save"), py::arg("psum"),
      py::arg("keeps_all"), py::arg("num_partitions"),
      "Gives ndarray_fast, zeros_fast, load_fast and store_fast the Tensor class, language.py's _NEW_TILES, the "
      "par_dim class, the SBUF kind, the Load opcode, nl.load's partition count, dma_plain / dma_general, the "
      "Save opcode, the PSUM kind, instructions.keeps_all and nl.store's partition count.");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindLanguageFast);

}  // namespace language_fast
}  // namespace
}  // namespace nxs::py_bind
