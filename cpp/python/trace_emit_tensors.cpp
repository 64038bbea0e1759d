// The emission pass's tensor table (neuronxsim/nki/emit.py), and the record's unique names
// (neuronxsim/nki/record.py, CoreRecord.unique_name):
//   unique_name(names, counts, base) -> str
//     `base`, or `base.1`, `base.2`, ...: the first not in the set `names`, trying from
//     counts[base]; adds it to `names` and sets counts[base] past it
//   tensor_table(storages, first_use, addr, outputs, names, counts, kinds) -> (tensors, tensor_of)
//     the tensor records emit_trace takes (see bind_isa_emit.cpp) for the storages an instruction
//     uses, the kernel's inputs and the outputs it returns (the set `outputs`), in storage order,
//     naming the unnamed ones (storage.name = unique_name(names, counts, storage.hint)); and per
//     storage number the index of its tensor (-1: none). `kinds` is the tuple (SBUF, INPUT,
//     SHARED_HBM, {dtype: BIR dtype number}, SB, PSUM, Input, Output, DRAM, ExternalInput,
//     ExternalOutput, Internal) of the storage kinds and BIR numbers emit.py names.
//   emit_program(module, storages, first_use, addr, outputs, names, counts, kinds, records) -> Function
//     the emission pass in one call: the tensor table's rows (collectTensors, trace_emit.h) go
//     to emit_trace's builder as they are, not as tuples; same checks, errors and order as
//     tensor_table, module.addFunction() and emit_trace in turn (neuronxsim.nki.emit)
// A storage's and its layout's slots (neuronxsim/nki/tensor.py, Storage and Layout) are read by
// name (NamedSlots, trace_slotted.h).
//
// Why C: a trace emits about one tensor per instruction, and naming and describing each in
// Python costs a few microseconds.
#include "bindings.h"
#include "bir/Module.h"
#include "trace_emit.h"
#include "trace_slotted.h"

#include <array>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nxs::py_bind {
namespace {

// `base.i` (a new reference; null with an error set). (PyUnicode_FromFormat parses its format
// and builds through a writer: several times this, once per temporary of a trace.) An ASCII base,
// the usual one, is copied straight into the new string.
PyObject* suffixed(PyObject* base, Py_ssize_t i) {
  char digits[24];  // ".i" (i >= 0: counts start at 0), without snprintf's format parsing
  char* end = digits + sizeof digits;
  char* at = end;
  for (size_t v = static_cast<size_t>(i);; v /= 10) {
    *--at = static_cast<char>('0' + v % 10);
    if (v < 10) break;
  }
  *--at = '.';
  const Py_ssize_t n = end - at;
  if (PyUnicode_IS_READY(base) && PyUnicode_IS_ASCII(base)) {
    const Py_ssize_t length = PyUnicode_GET_LENGTH(base);
    PyObject* name = PyUnicode_New(length + n, 127);
    if (name == nullptr) return nullptr;
    char* out = reinterpret_cast<char*>(PyUnicode_1BYTE_DATA(name));
    std::memcpy(out, PyUnicode_1BYTE_DATA(base), static_cast<size_t>(length));
    std::memcpy(out + length, at, static_cast<size_t>(n));
    return name;
  }
  Py_ssize_t length;
  const char* text = PyUnicode_AsUTF8AndSize(base, &length);
  if (text == nullptr) return nullptr;
  std::string name(text, static_cast<size_t>(length));
  name.append(at, static_cast<size_t>(n));
  return PyUnicode_DecodeUTF8(name.data(), static_cast<Py_ssize_t>(name.size()), nullptr);
}

bool uniqueNameArguments(PyObject* names, PyObject* counts, PyObject* base) {
  if (PySet_Check(names) && PyDict_Check(counts) && PyUnicode_Check(base)) return true;
  PyErr_SetString(PyExc_TypeError, "unique_name(names: set, counts: dict, base: str)");
  return false;
}

// The first of base (i == 0) or base.i, base.i+1, ... not in the set `names`, added to it (a new
// reference; null with an error set); `i` is left at its number.
PyObject* firstFreeName(PyObject* names, PyObject* base, Py_ssize_t& i) {
  PyObject* name = i == 0 ? Py_NewRef(base) : suffixed(base, i);
  while (name != nullptr) {
    // Added if not taken: one look-up for both (the set grows by one exactly when it was free).
    const Py_ssize_t before = PySet_GET_SIZE(names);
    if (PySet_Add(names, name) < 0) {
      Py_DECREF(name);
      return nullptr;
    }
    if (PySet_GET_SIZE(names) != before) break;
    Py_DECREF(name);
    name = suffixed(base, ++i);
  }
  return name;
}

// counts[base] (0 if absent); false with an error set.
bool countOf(PyObject* counts, PyObject* base, Py_ssize_t& i) {
  PyObject* known = PyDict_GetItemWithError(counts, base);
  if (known == nullptr && PyErr_Occurred()) return false;
  i = known == nullptr ? 0 : PyLong_AsSsize_t(known);
  return !(i == -1 && PyErr_Occurred());
}

bool setCount(PyObject* counts, PyObject* base, Py_ssize_t next) {
  PyObject* value = PyLong_FromSsize_t(next);
  const bool ok = value != nullptr && PyDict_SetItem(counts, base, value) == 0;
  Py_XDECREF(value);
  return ok;
}

PyObject* uniqueName(PyObject* names, PyObject* counts, PyObject* base) {
  if (!uniqueNameArguments(names, counts, base)) return nullptr;
  Py_ssize_t i;
  if (!countOf(counts, base, i)) return nullptr;
  PyObject* name = firstFreeName(names, base, i);
  if (name == nullptr) return nullptr;
  if (!setCount(counts, base, i + 1)) {
    Py_DECREF(name);
    return nullptr;
  }
  return name;
}

// uniqueName for the temporaries one tensor table names: the counts of ASCII str bases are kept
// here, by the base's text (equal strs are one key of the dict), and written to the dict once, in
// the order the bases were first named: at the end, on a failure, and before any Python code
// may read them. (A read and a write of the dict per temporary were a third of naming it.)
class TemporaryNames {
 public:
  TemporaryNames(PyObject* names, PyObject* counts) : names_(names), counts_(counts) {}
  TemporaryNames(const TemporaryNames&) = delete;
  TemporaryNames& operator=(const TemporaryNames&) = delete;
  ~TemporaryNames() {  // (on a failure: the error set stays the one raised)
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (!flush()) PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    for (Count& count : order_) Py_DECREF(count.base);
  }

  // As uniqueName(names, counts, base).
  PyObject* name(PyObject* base) {
    if (!uniqueNameArguments(names_, counts_, base)) return nullptr;
    if (!PyUnicode_CheckExact(base) || !PyUnicode_IS_READY(base) || !PyUnicode_IS_COMPACT_ASCII(base)) {
      byText_.clear();  // (after a flush: the dict is then the one record of every count)
      PyObject* name = flush() ? uniqueName(names_, counts_, base) : nullptr;
      for (Count& count : order_) Py_DECREF(count.base);
      order_.clear();
      return name;
    }
    const std::string_view text(reinterpret_cast<const char*>(PyUnicode_1BYTE_DATA(base)),
                                static_cast<size_t>(PyUnicode_GET_LENGTH(base)));
    auto [at, added] = byText_.try_emplace(text, order_.size());
    if (added) {
      Py_ssize_t i;
      if (!countOf(counts_, base, i)) {
        byText_.erase(at);
        return nullptr;
      }
      order_.push_back({Py_NewRef(base), i, false});  // (held: byText_ keeps a view of its text)
    }
    Count& count = order_[at->second];
    Py_ssize_t i = count.next;
    PyObject* name = firstFreeName(names_, base, i);
    if (name != nullptr) count = {count.base, i + 1, true};
    return name;
  }

  // Writes the counts changed since the last flush to the dict; false with an error set.
  bool flush() {
    for (Count& count : order_) {
      if (!count.changed) continue;
      if (!setCount(counts_, count.base, count.next)) return false;
      count.changed = false;
    }
    return true;
  }

 private:
  struct Count {
    PyObject* base;   // the first base of its text: the dict's key, if the call adds it
    Py_ssize_t next;  // counts[base]
    bool changed;     // since the last flush
  };
  PyObject *names_, *counts_;
  std::unordered_map<std::string_view, size_t> byText_;  // -> its index in order_
  std::vector<Count> order_;
};

PyObject* uniqueNameCall(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "unique_name(names, counts, base)");
    return nullptr;
  }
  return uniqueName(args[0], args[1], args[2]);
}

const char* const kTensorTableSignature =
    "tensor_table(storages: list, first_use: list, addr: list, outputs: set, names: set, counts: dict, kinds: "
    "12-tuple)";

enum StorageSlot { kSid, kKind, kDtype, kShape, kLayout, kOnChip, kName, kHint, kPlacement, kStorageSlots };
const std::array<const char*, kStorageSlots> kStorageSlotNames = {"sid",    "kind", "dtype", "shape",    "layout",
                                                                  "on_chip", "name", "hint",  "placement"};
enum LayoutSlot { kPartitions, kRow, kLayoutSlots };
const std::array<const char*, kLayoutSlots> kLayoutSlotNames = {"partitions", "row"};

PyObject* nameAttr = nullptr;      // "name" (interned)
PyObject* itemsizeAttr = nullptr;  // "itemsize" (interned)

struct Kinds {
  PyObject *sbuf, *input, *sharedHbm, *dtypes;
  PyObject *sb, *psum, *inputType, *outputType, *dram, *externalInput, *externalOutput, *internal;
};

// kind == name. Two exact strs are compared here, as str == compares them (same kind, length and
// code units): the storages' kinds are equal strs more often than the same object, and the
// generic comparison was a tenth of the table.
bool sameKind(PyObject* kind, PyObject* name) {
  if (kind == name) return true;
  if (PyUnicode_CheckExact(kind) && PyUnicode_CheckExact(name) && PyUnicode_IS_READY(kind) &&
      PyUnicode_IS_READY(name))
    return PyUnicode_KIND(kind) == PyUnicode_KIND(name) && PyUnicode_GET_LENGTH(kind) == PyUnicode_GET_LENGTH(name) &&
           std::memcmp(PyUnicode_DATA(kind), PyUnicode_DATA(name),
                       static_cast<size_t>(PyUnicode_GET_LENGTH(kind)) * PyUnicode_KIND(kind)) == 0;
  return PyObject_RichCompareBool(kind, name, Py_EQ) == 1;
}

// What each dtype object gives a tensor: its BIR number and its size (looked up once per dtype).
struct DtypeFacts {
  PyObject* number;  // borrowed from the kinds' dict
  long long itemsize;
};

// A tensor record of the nine `items` (references stolen); null with an error set if one is.
PyObject* tensorRecord(std::initializer_list<PyObject*> items) {
  bool ok = true;
  for (PyObject* o : items) ok = ok && o != nullptr;
  PyObject* t = ok ? PyTuple_New(static_cast<Py_ssize_t>(items.size())) : nullptr;
  Py_ssize_t i = 0;
  for (PyObject* o : items) {
    if (t != nullptr)
      PyTuple_SET_ITEM(t, i++, o);
    else
      Py_XDECREF(o);
  }
  return t;
}

// The emit_trace tuple of `row` (a new reference; null with an error set).
PyObject* tupleOfRow(const TensorRow& row) {
  if (row.shape == nullptr)  // on chip
    return tensorRecord({Py_NewRef(row.name), Py_NewRef(row.type), Py_NewRef(row.dtype),
                         PyTuple_Pack(2, row.partitions, row.row), Py_NewRef(row.kind), Py_NewRef(row.partitions),
                         PyLong_FromLongLong(row.bytes), row.start ? Py_NewRef(row.start) : PyLong_FromLong(0),
                         Py_NewRef(row.addr)});
  return tensorRecord({Py_NewRef(row.name), Py_NewRef(row.type), Py_NewRef(row.dtype), Py_NewRef(row.shape),
                       Py_NewRef(row.kind), PyLong_FromLong(0), PyLong_FromLong(0), PyLong_FromLong(0),
                       PyLong_FromLong(0)});
}

PyObject* tensorTable(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError, kTensorTableSignature);
    return nullptr;
  }
  std::vector<TensorRow> rows;
  std::vector<int64_t> tensorOf;
  if (!collectTensors(args, rows, tensorOf)) return nullptr;
  PyObject* tensors = PyList_New(static_cast<Py_ssize_t>(rows.size()));
  PyObject* numbers = PyList_New(static_cast<Py_ssize_t>(tensorOf.size()));
  bool ok = tensors != nullptr && numbers != nullptr;
  for (size_t i = 0; ok && i < rows.size(); ++i) {
    PyObject* t = tupleOfRow(rows[i]);
    ok = t != nullptr;
    if (ok) PyList_SET_ITEM(tensors, static_cast<Py_ssize_t>(i), t);
  }
  for (size_t s = 0; ok && s < tensorOf.size(); ++s) {
    PyObject* n = PyLong_FromLongLong(tensorOf[s]);
    ok = n != nullptr;
    if (ok) PyList_SET_ITEM(numbers, static_cast<Py_ssize_t>(s), n);
  }
  PyObject* table = ok ? PyTuple_Pack(2, tensors, numbers) : nullptr;
  Py_XDECREF(tensors);
  Py_XDECREF(numbers);
  return table;
}

}  // namespace

TensorRow& TensorRow::operator=(TensorRow&& o) noexcept {
  std::swap(name, o.name);
  std::swap(type, o.type);
  std::swap(dtype, o.dtype);
  std::swap(shape, o.shape);
  std::swap(row, o.row);
  std::swap(kind, o.kind);
  std::swap(partitions, o.partitions);
  std::swap(bytes, o.bytes);
  std::swap(start, o.start);
  std::swap(addr, o.addr);
  return *this;
}

TensorRow::~TensorRow() {
  for (PyObject* o : {name, type, dtype, shape, row, kind, partitions, start, addr}) Py_XDECREF(o);
}

bool collectTensors(PyObject* const* args, std::vector<TensorRow>& rows, std::vector<int64_t>& tensorOf) {
  if (!PyList_Check(args[0]) || !PyList_Check(args[1]) || !PyList_Check(args[2]) || !PyAnySet_Check(args[3]) ||
      !PyTuple_Check(args[6]) || PyTuple_GET_SIZE(args[6]) != 12) {
    PyErr_SetString(PyExc_TypeError, kTensorTableSignature);
    return false;
  }
  PyObject *storages = args[0], *firstUse = args[1], *addr = args[2], *outputs = args[3];
  PyObject** k = &PyTuple_GET_ITEM(args[6], 0);
  const Kinds kinds{k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9], k[10], k[11]};
  if (!PyDict_Check(kinds.dtypes)) {
    PyErr_SetString(PyExc_TypeError, "tensor_table: kinds[3] must be a dict of dtype numbers");
    return false;
  }
  static NamedSlots<kStorageSlots> storageSlots("tensor_table", kStorageSlotNames);
  static NamedSlots<kLayoutSlots> layoutSlots("tensor_table", kLayoutSlotNames);
  std::unordered_map<PyObject*, DtypeFacts> dtypeFacts;  // (the storages hold the dtypes)
  const Py_ssize_t n = PyList_GET_SIZE(storages);
  if (PyList_GET_SIZE(firstUse) != n || PyList_GET_SIZE(addr) != n) {
    PyErr_SetString(PyExc_ValueError, "tensor_table: storages, first_use and addr differ in length");
    return false;
  }
  tensorOf.assign(static_cast<size_t>(n), -1);
  // (at most a row per storage: growing the vector moved every row again, a swap of its ten
  // fields and a destructor call each time; and each row is built in place)
  rows.reserve(rows.size() + static_cast<size_t>(n));
  TemporaryNames temporaries(args[4], args[5]);
  for (Py_ssize_t s = 0; s < n; ++s) {
    PyObject* st = PyList_GET_ITEM(storages, s);
    const auto* ss = storageSlots.of(Py_TYPE(st));
    if (ss == nullptr) return false;
    PyObject* values[kStorageSlots];
    for (size_t i = 0; i < kStorageSlots; ++i)
      if ((values[i] = storageSlots.get(st, *ss, i)) == nullptr) return false;
    const Py_ssize_t sid = PyLong_AsSsize_t(values[kSid]);
    if (sid < 0 || sid >= n) {
      if (!PyErr_Occurred()) PyErr_Format(PyExc_IndexError, "tensor_table: storage number %zd of %zd", sid, n);
      return false;
    }
    const long long first = PyLong_AsLongLong(PyList_GET_ITEM(firstUse, sid));
    if (first == -1 && PyErr_Occurred()) return false;
    const int onChipTruth = PyObject_IsTrue(values[kOnChip]);
    if (onChipTruth < 0) return false;
    const bool used = first >= 0, onChip = onChipTruth == 1;
    PyObject* kind = values[kKind];
    const bool input = !onChip && sameKind(kind, kinds.input);
    if (!used && (onChip || !(input || sameKind(kind, kinds.sharedHbm)))) continue;
    PyObject* name = values[kName];
    if (name == Py_None) {  // temporaries are named when they turn out to be needed
      name = temporaries.name(values[kHint]);
      if (name == nullptr) return false;
      // (straight into the slot: the generic setattr looks the name up on the class every time;
      // a class's own __setattr__ may read the counts, so they are written first)
      const bool named = storageSlots.set(st, *ss, kName, name) ||
                         (temporaries.flush() && PyObject_SetAttr(st, nameAttr, name) == 0);
      if (!named) {
        Py_DECREF(name);
        return false;
      }
    } else {
      Py_INCREF(name);
    }
    // (built in place, dropped again if the tensor turns out not to be emitted: the rows are
    // reserved, so `row` stays where it is)
    TensorRow& row = rows.emplace_back();
    row.name = name;  // (the row's reference)
    bool output = false;
    if (!onChip && !input) {
      const int in = PySet_Contains(outputs, st);
      if (in < 0) return false;
      output = in == 1;
      if (!output && !used) {  // a shared_hbm tensor nothing touches and the kernel does not return
        rows.pop_back();
        continue;
      }
    }
    auto facts = dtypeFacts.find(values[kDtype]);
    if (facts == dtypeFacts.end()) {
      PyObject* number = PyDict_GetItemWithError(kinds.dtypes, values[kDtype]);
      if (number == nullptr) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_KeyError, "tensor_table: dtype %R has no BIR number", values[kDtype]);
        return false;
      }
      PyObject* size = PyObject_GetAttr(values[kDtype], itemsizeAttr);
      const long long itemsize = size == nullptr ? -1 : PyLong_AsLongLong(size);
      Py_XDECREF(size);
      if (itemsize == -1 && PyErr_Occurred()) return false;
      facts = dtypeFacts.emplace(values[kDtype], DtypeFacts{number, itemsize}).first;
    }
    row.dtype = Py_NewRef(facts->second.number);
    if (onChip) {
      PyObject* layout = values[kLayout];
      const auto* ls = layoutSlots.of(Py_TYPE(layout));
      if (ls == nullptr) return false;
      PyObject* partitions = layoutSlots.get(layout, *ls, kPartitions);
      PyObject* rowElements = layoutSlots.get(layout, *ls, kRow);
      if (partitions == nullptr || rowElements == nullptr) return false;
      const long long elements = PyLong_AsLongLong(rowElements);
      if (elements == -1 && PyErr_Occurred()) return false;
      PyObject* placement = values[kPlacement];
      if (placement != Py_None && (row.start = PySequence_GetItem(placement, 0)) == nullptr) return false;
      row.type = Py_NewRef(sameKind(kind, kinds.sbuf) ? kinds.sb : kinds.psum);
      row.row = Py_NewRef(rowElements);
      row.kind = Py_NewRef(kinds.internal);
      row.partitions = Py_NewRef(partitions);
      row.bytes = elements * facts->second.itemsize;
      row.addr = Py_NewRef(PyList_GET_ITEM(addr, sid));
    } else {
      row.type = Py_NewRef(input ? kinds.inputType : output ? kinds.outputType : kinds.dram);
      row.shape = Py_NewRef(values[kShape]);
      row.kind = Py_NewRef(input ? kinds.externalInput : output ? kinds.externalOutput : kinds.internal);
    }
    tensorOf[static_cast<size_t>(sid)] = static_cast<int64_t>(rows.size() - 1);
  }
  return temporaries.flush();
}

namespace {

PyMethodDef uniqueNameDef = {
    "unique_name", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(uniqueNameCall)), METH_FASTCALL,
    "unique_name(names, counts, base): base, or base.1, base.2, ...: the first not in names, trying from "
    "counts[base]; records it (see neuronxsim.nki.record.CoreRecord.unique_name)."};
PyMethodDef tensorTableDef = {
    "tensor_table", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensorTable)), METH_FASTCALL,
    "tensor_table(storages, first_use, addr, outputs, names, counts, kinds): (tensors, tensor_of), the tensor "
    "records of the emitted storages (see neuronxsim.nki.emit.Emission)."};

// The emission pass in one call: collectTensors, a new function of `module`, and emitRows.
bir::Function* emitProgram(bir::Module& module, py::handle storages, py::handle firstUse, py::handle addr,
                           py::handle outputs, py::handle names, py::handle counts, py::handle kinds,
                           py::list records) {
  PyObject* const args[] = {storages.ptr(), firstUse.ptr(), addr.ptr(), outputs.ptr(),
                            names.ptr(),    counts.ptr(),   kinds.ptr()};
  std::vector<TensorRow> rows;
  std::vector<int64_t> tensorOf;
  if (!collectTensors(args, rows, tensorOf)) throw py::error_already_set();
  bir::Function* fn = module.addFunction();
  emitRows(*fn, rows, tensorOf, records.ptr());
  return fn;
}

void bindEmitTensors(py::module_& m) {
  nameAttr = PyUnicode_InternFromString("name");
  itemsizeAttr = PyUnicode_InternFromString("itemsize");
  if (nameAttr == nullptr || itemsizeAttr == nullptr) throw py::error_already_set();
  for (PyMethodDef* def : {&uniqueNameDef, &tensorTableDef})
    m.attr(def->ml_name) = py::reinterpret_steal<py::object>(PyCFunction_NewEx(def, nullptr, nullptr));
  m.def("emit_program", &emitProgram, py::arg("module"), py::arg("storages"), py::arg("first_use"), py::arg("addr"),
        py::arg("outputs"), py::arg("names"), py::arg("counts"), py::arg("kinds"), py::arg("records"),
        py::return_value_policy::reference_internal,
        "The emission pass (neuronxsim.nki.emit.Emission) in one call: appends a function to module, makes the "
        "tensors tensor_table(storages, first_use, addr, outputs, names, counts, kinds) describes and the nodes "
        "of the records as emit_trace does, and returns the function.");
}

NXS_REGISTER_SUBMODULE(nki, 48, "the NKI tracer's hot paths", bindEmitTensors);

}  // namespace
}  // namespace nxs::py_bind
