// The NKI tracer's emission: `_core.bir.emit_trace(function, tensors, tensor_of, records)` creates
// a function's tensors and appends one block of ISA nodes, from plain records (the tracer's
// record, neuronxsim/nki/record.py, keeps its ops and operands as such tuples; nothing here
// knows the tracer's classes):
//   tensor: (name, memory type, dtype, shape, tensor kind, partitions, bytes per partition,
//            start partition, address), enums as ints; on-chip tensors (SB, PSUM) use
//            partitions, bytes, start partition and address, DRAM tensors the kind
//   tensor_of: a list of ints, the tensor of each storage number (-1: none)
//   record: a tuple of at least six elements (opcode, engine, source, fields, ins, outs, ...):
//           `opcode` and `engine` ints, `source` a str, `fields` None or a dict of the node's
//           fields by their BIR names (unknown names are an error), `ins`/`outs` lists or tuples
//           of operands, each a number (an fp32 immediate) or a tuple of at least three
//           elements (storage number, offset, ((step, num), ...), ...): a plain physical access
//           pattern over tensor_of[storage number], in the dtype of that tensor; further
//           elements of either tuple are the tracer's own and are not read
// Every element read is type-checked; a malformed record is a BIRError naming what is wrong.
//
// The records are walked with the CPython API directly: this loop is the emitter's inner loop
// (thousands of nodes per kernel), and a binding round trip per node, operand and field would
// cost more than building the node.
#include "bindings.h"
#include "trace_emit.h"
#include "trace_record.h"
#include "bir/Error.h"
#include "bir/Module.h"
#include "bir/VisitNode.h"

#include <array>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>

namespace nxs::py_bind {
namespace {

using namespace bir;

// The value of an int `o` that fits in one digit (nearly every number of a trace), read in place:
// PyLong_AsLongLong is a call and overflow checks per number, and a record has a dozen numbers.
// False for a larger int.
[[gnu::always_inline]] inline bool oneDigitValue(PyObject* o, int64_t& v) {
#if PY_VERSION_HEX >= 0x030C0000
  auto* n = reinterpret_cast<PyLongObject*>(o);
  if (!PyUnstable_Long_IsCompact(n)) return false;
  v = PyUnstable_Long_CompactValue(n);
#else
  const Py_ssize_t size = Py_SIZE(o);  // (ints of 3.10 and 3.11: a signed digit count, the digits)
  if (size < -1 || size > 1) return false;
  v = size * static_cast<int64_t>(reinterpret_cast<PyLongObject*>(o)->ob_digit[0]);
#endif
  return true;
}

// The checks below are inline with their failures out of line: a record has a dozen numbers and
// tuples, and a call per check (with the frame its error message's std::string needs) cost more
// than the check.
[[noreturn, gnu::noinline, gnu::cold]] void malformed(const char* what, const char* why = "") {
  throw BIRError(std::string("emit_trace: ") + what + why);
}

// The value of an int wider than a digit.
[[gnu::noinline]] int64_t wideIntOf(PyObject* o, const char* what) {
  const long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    malformed(what, " is out of range");
  }
  return v;
}

inline int64_t intOf(PyObject* o, const char* what) {
  if (!PyLong_Check(o)) malformed(what, " must be an integer");
  if (int64_t v; oneDigitValue(o, v)) return v;
  return wideIntOf(o, what);
}

inline PyObject* tupleOf(PyObject* o, Py_ssize_t size, const char* what) {
  if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != size) malformed(what);
  return o;
}

inline PyObject* recordOf(PyObject* o, Py_ssize_t size, const char* what) {
  if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) < size) malformed(what);
  return o;
}

// The text of the str `o` (valid while `o` lives).
std::string_view textOf(PyObject* o, const char* what) {
  Py_ssize_t length = 0;
  const char* text = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &length) : nullptr;
  if (!text) {
    PyErr_Clear();
    throw BIRError(std::string("emit_trace: ") + what + " must be a string");
  }
  return {text, static_cast<size_t>(length)};
}

// The tensor of each storage number, and its dtype (kept beside it: reading it through the
// tensor's set costs two dependent loads per operand).
struct StorageTensors {
  const std::vector<int64_t>& tensorOf;
  const std::vector<MemoryLocation*>& tensors;
  const std::vector<DType>& dtypes;
  size_t operator()(int64_t storage) const {
    if (storage < 0 || storage >= static_cast<int64_t>(tensorOf.size()))
      throw BIRError("emit_trace: storage number " + std::to_string(storage) + " is out of range");
    const int64_t t = tensorOf[static_cast<size_t>(storage)];
    if (t < 0 || t >= static_cast<int64_t>(tensors.size()))
      throw BIRError("emit_trace: storage " + std::to_string(storage) + " has no tensor");
    return static_cast<size_t>(t);
  }
};

// The items of a list or tuple `o` (borrowed; `o` must outlive their use).
std::pair<PyObject**, Py_ssize_t> itemsOf(PyObject* o, const char* what) {
  if (PyList_Check(o)) return {PySequence_Fast_ITEMS(o), PyList_GET_SIZE(o)};
  if (PyTuple_Check(o)) return {PySequence_Fast_ITEMS(o), PyTuple_GET_SIZE(o)};
  throw BIRError(std::string("emit_trace: ") + what + " must be a list or a tuple");
}

// What one emit_trace call learns once and reuses: which member a field name is, per node class
// (keyed by the name's string object: a kernel's field names are a few interned strings), and
// the value of each enum member object (Python enum members are singletons).
struct EmitCache;

// How to set one field of one node class, found once per (node class, field name object): the
// field's member pointer, kept as its bytes, and the setter instantiated for its type (which reads
// them back). (Finding a field by walking the class's field list was most of setting it.)
struct FieldSetter {
  void (*set)(Instruction& node, const FieldSetter& field, PyObject* value, EmitCache& cache) = nullptr;
  const char* name = nullptr;  // the field's BIR name
  alignas(16) unsigned char member[16] = {};
};

struct EmitCache {
  std::unordered_map<uint64_t, FieldSetter> fieldSetters;  // (nodes: a setter stays where it is)
  // The setters last used, direct-mapped by their key: a record sets five fields or so, and
  // finding each in the map (hashing, a bucket's walk) was a third of setting it.
  struct RecentSetter {
    uint64_t slot = 0;  // (0 is no key: a key's name object is not null)
    const FieldSetter* setter = nullptr;
  };
  static constexpr int kRecentBits = 7;
  std::array<RecentSetter, size_t{1} << kRecentBits> recentSetters;
  std::unordered_map<PyObject*, int64_t> enumValues;
  // The pairs last read from each of many list objects (direct-mapped by address): the tracer
  // shares one pairs list among the accesses of a tile, so most operands find theirs here
  // without reading the list's tuples and ints again. (The lists are the caller's and live, and
  // unchanged, through the call: no Python code runs in it.) A matmul kernel reads a few hundred
  // lists: with 64 entries, a hundred or more of its reads missed, more or fewer as the lists'
  // addresses fell; with 1024 a handful do. (Hence the cache on the heap: 100 KB.)
  struct Pairs {
    PyObject* list = nullptr;
    APPairs pairs;
  };
  std::array<Pairs, 1024> pairs;
  // The last source string object read, and its text (a kernel's instructions come from a few
  // lines, in runs; often as a new string object per instruction, so the text is compared too).
  PyObject* source = nullptr;
  std::string sourceText;
};

// Reads the record's source `o` into cache.sourceText, unless it holds that text already.
void readSource(PyObject* o, EmitCache& cache) {
  if (o == cache.source) return;
  const std::string_view text = textOf(o, "a source");
  if (text != cache.sourceText) cache.sourceText.assign(text);
  cache.source = o;  // (the records hold it through the call)
}

// Appends the operand `h` to `to` (built in place).
void appendOperand(PyObject* h, const StorageTensors& tensorOf, EmitCache& cache,
                   std::vector<AccessPattern>& to) {
  // (the tuple test first: most operands are tuples, and PyFloat_Check of one walks its MRO)
  if (!PyTuple_Check(h) && (PyFloat_Check(h) || PyLong_Check(h))) {
    const double v = PyFloat_AsDouble(h);
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw BIRError("emit_trace: an immediate operand out of range");
    }
    to.push_back(AccessPattern::immediate(v));
    return;
  }
  recordOf(h, access_pos::pairs + 1, "an operand is a number or (storage number, offset, pairs, ...)");
  const size_t t = tensorOf(intOf(PyTuple_GET_ITEM(h, access_pos::sid), "a storage number"));
  const int64_t offset = intOf(PyTuple_GET_ITEM(h, access_pos::offset), "an offset");
  AccessPattern& ap = to.emplace_back();
  ap.loc = tensorOf.tensors[t];
  ap.dtype = tensorOf.dtypes[t];
  ap.offset = offset;
  PyObject* list = PyTuple_GET_ITEM(h, access_pos::pairs);
  EmitCache::Pairs& known = cache.pairs[(reinterpret_cast<uintptr_t>(list) >> 4) % cache.pairs.size()];
  if (known.list != list) {
    auto [pairs, n] = itemsOf(list, "an operand's pairs");
    known.list = nullptr;  // (until read whole: a malformed pair throws)
    known.pairs.clear();
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* p = tupleOf(pairs[i], 2, "an access-pattern pair is (step, num)");
      known.pairs.push_back({intOf(PyTuple_GET_ITEM(p, 0), "a step"), intOf(PyTuple_GET_ITEM(p, 1), "a num")});
    }
    known.list = list;
  }
  ap.pattern = known.pairs;
}

// The value of a field of type F from a Python object: the common scalar types read directly,
// enums through the cache, the rest through pybind11's casters.
template <class F>
F fieldValue(PyObject* value, EmitCache& cache) {
  if constexpr (std::is_same_v<F, bool>) {
    if (PyBool_Check(value)) return value == Py_True;
  } else if constexpr (std::is_same_v<F, double>) {
    if (PyFloat_CheckExact(value)) return PyFloat_AS_DOUBLE(value);
  } else if constexpr (std::is_same_v<F, int64_t>) {
    if (PyLong_CheckExact(value)) {
      if (int64_t v; oneDigitValue(value, v)) return v;
      const long long v = PyLong_AsLongLong(value);
      if (!(v == -1 && PyErr_Occurred())) return v;
      PyErr_Clear();
    }
  } else if constexpr (std::is_enum_v<F>) {
    auto it = cache.enumValues.find(value);
    if (it != cache.enumValues.end()) return static_cast<F>(it->second);
    const F v = py::handle(value).cast<F>();
    Py_INCREF(value);  // (kept alive while its address is a key: released with the call's cache)
    cache.enumValues.emplace(value, static_cast<int64_t>(v));
    return v;
  }
  return py::handle(value).cast<F>();
}

// Sets the field `field` of the node `I` (a T) to `value`.
template <class T, class M>
void setMember(Instruction& I, const FieldSetter& field, PyObject* value, EmitCache& cache) {
  M member;
  std::memcpy(&member, field.member, sizeof member);
  T& node = static_cast<T&>(I);
  using F = std::remove_reference_t<decltype(node.*member)>;
  try {
    node.*member = fieldValue<F>(value, cache);
  } catch (const py::cast_error&) {
    throw BIRError("emit_trace: field " + std::string(field.name) + " of " + nodeClassName(node.nodeClass()) +
                   " cannot take a " + Py_TYPE(value)->tp_name);
  }
}

// Sets the fields named in `fields` (a dict: BIR field name -> value) on `node`.
template <class T>
void setFields(T& node, PyObject* fields, EmitCache& cache) {
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(fields, &pos, &key, &value)) {
    const uint64_t slot = (static_cast<uint64_t>(node.nodeClass()) << 56) ^
                          reinterpret_cast<uint64_t>(key);
    EmitCache::RecentSetter& recent = cache.recentSetters[(slot * 0x9E3779B97F4A7C15ull) >> (64 - EmitCache::kRecentBits)];
    if (recent.slot == slot) {
      recent.setter->set(node, *recent.setter, value, cache);
      continue;
    }
    auto found = cache.fieldSetters.find(slot);
    if (found == cache.fieldSetters.end()) {
      const char* name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
      if (!name) {
        PyErr_Clear();
        throw BIRError("emit_trace: field names are strings");
      }
      FieldSetter setter;
      T::fields([&](const char* field, auto member) {  // (the first field of that name)
        if (setter.set != nullptr || std::strcmp(field, name) != 0) return;
        static_assert(sizeof member <= sizeof setter.member);
        setter.set = &setMember<T, decltype(member)>;
        setter.name = field;
        std::memcpy(setter.member, &member, sizeof member);
      });
      if (setter.set == nullptr)
        throw BIRError("emit_trace: " + std::string(nodeClassName(node.nodeClass())) +
                       " has no field " + name);
      // (the key string outlives the call: the dict has it)
      found = cache.fieldSetters.emplace(slot, setter).first;
    }
    recent = {slot, &found->second};
    found->second.set(node, found->second, value, cache);
  }
}

void setFieldsOf(Instruction& I, PyObject* fields, EmitCache& cache) {
  visitNode(I, [&](auto& node) { setFields(node, fields, cache); });
}

void appendOperands(PyObject* list, const StorageTensors& tensorOf, EmitCache& cache,
                    std::vector<AccessPattern>& to) {
  auto [items, n] = itemsOf(list, "ins and outs");
  to.reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) appendOperand(items[i], tensorOf, cache, to);
}

template <class E>
E enumOf(PyObject* o, const char* what) {
  const int64_t v = intOf(o, what);
  if (v < 0 || v >= EnumTraits<E>::kCount)
    throw BIRError(std::string("emit_trace: ") + what + " " + std::to_string(v) + " is out of range");
  return static_cast<E>(v);
}

Opcode opcodeOf(PyObject* o) {
  const int64_t opcode = intOf(o, "an opcode");
  if (!isValidOpcode(opcode))
    throw BIRError("emit_trace: opcode " + std::to_string(opcode) + " is out of range");
  return static_cast<Opcode>(opcode);
}

std::string stringOf(PyObject* o, const char* what) { return std::string(textOf(o, what)); }

std::vector<int64_t> shapeOf(PyObject* o) {
  auto [items, n] = itemsOf(o, "a shape");
  std::vector<int64_t> shape;
  shape.reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) shape.push_back(intOf(items[i], "a dimension"));
  return shape;
}

// The objects of one tensor's record (borrowed), as tensorFrom reads them: the items of an
// emit_trace tuple, or of a TensorRow (trace_emit.h) where `shape` null is the on-chip pair
// (partitions, row), `bytes` null is `bytesValue`, and `start` null is 0.
struct TensorItems {
  PyObject *name, *type, *dtype, *shape, *row, *kind, *partitions, *bytes;
  int64_t bytesValue;
  PyObject *start, *addr;
};

TensorItems itemsOfTuple(PyObject* t) {
  tupleOf(t, 9,
          "a tensor is (name, memory type, dtype, shape, kind, partitions, bytes per partition, start partition, "
          "address)");
  PyObject** i = &PyTuple_GET_ITEM(t, 0);
  return {i[0], i[1], i[2], i[3], nullptr, i[4], i[5], i[6], 0, i[7], i[8]};
}

TensorItems itemsOfRow(const TensorRow& r) {
  return {r.name, r.type, r.dtype, r.shape, r.row, r.kind, r.partitions, nullptr, r.bytes, r.start, r.addr};
}

// The shape of `t`: its shape's dims, or the on-chip pair (checked as the tuple's would be).
std::vector<int64_t> shapeOf(const TensorItems& t) {
  if (t.shape != nullptr) return shapeOf(t.shape);
  std::vector<int64_t> shape;
  shape.reserve(2);
  shape.push_back(intOf(t.partitions, "a dimension"));
  shape.push_back(intOf(t.row, "a dimension"));
  return shape;
}

MemoryLocation* tensorFrom(Function& fn, const TensorItems& t) {
  std::string name = stringOf(t.name, "a tensor name");
  const auto type = enumOf<MemoryType>(t.type, "a memory type");
  const auto dtype = enumOf<DType>(t.dtype, "a dtype");
  std::vector<int64_t> shape = shapeOf(t);
  if (type == MemoryType::SB || type == MemoryType::PSUM) {
    // (checked from the last to the first, the order of the released versions, which read them
    // as arguments of the call: test_emit_trace.py pins it)
    const int64_t addr = intOf(t.addr, "an address");
    const int64_t start = t.start ? intOf(t.start, "a start partition") : 0;
    const int64_t bytes = t.bytes ? intOf(t.bytes, "bytes per partition") : t.bytesValue;
    const int64_t partitions = intOf(t.partitions, "partitions");
    return fn.createOnChipTensor(std::move(name), type, dtype, partitions, bytes, start, addr, std::move(shape));
  }
  return fn.createDramTensor(name, type, dtype, shape, enumOf<TensorKind>(t.kind, "a tensor kind"));
}

void appendRecord(BasicBlock& bb, PyObject* r, const StorageTensors& tensorOf, EmitCache& cache) {
  recordOf(r, op_pos::outs + 1, "a record is (opcode, engine, source, fields, ins, outs, ...)");
  const Opcode opcode = opcodeOf(PyTuple_GET_ITEM(r, op_pos::opcode_number));
  const auto engine = enumOf<Engine>(PyTuple_GET_ITEM(r, op_pos::engine_number), "engine");
  readSource(PyTuple_GET_ITEM(r, op_pos::source), cache);
  PyObject* fields = PyTuple_GET_ITEM(r, op_pos::fields);
  if (fields != Py_None && !PyDict_Check(fields)) throw BIRError("emit_trace: fields are None or a dict");
  Instruction* I = bb.addInstruction(opcode);
  I->engine = engine;
  I->source = cache.sourceText;
  if (fields != Py_None) setFieldsOf(*I, fields, cache);
  appendOperands(PyTuple_GET_ITEM(r, op_pos::ins), tensorOf, cache, I->ins);
  appendOperands(PyTuple_GET_ITEM(r, op_pos::outs), tensorOf, cache, I->outs);
}

// tensor_of as numbers (read here: pybind11's list caster costs a call per item, and a trace has
// a number per storage).
std::vector<int64_t> tensorNumbers(const py::list& tensorOf) {
  std::vector<int64_t> numbers;
  numbers.reserve(tensorOf.size());
  for (py::handle t : tensorOf) numbers.push_back(intOf(t.ptr(), "a tensor number"));
  return numbers;
}

// emit_trace's body past reading tensor_of: `count` tensors, the i-th made from itemsOf(i), then
// a block of the records' nodes (`records` a list).
template <class ItemsOf>
void emitTensorsAndRecords(Function& fn, size_t count, ItemsOf itemsOf, const std::vector<int64_t>& numbers,
                           PyObject* records) {
  const auto nRecords = static_cast<size_t>(PyList_GET_SIZE(records));
  fn.reserve(fn.allocations().size() + count, fn.instructionCount() + nRecords);
  std::vector<MemoryLocation*> tensors;
  tensors.reserve(count);
  std::vector<DType> dtypes;
  dtypes.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    tensors.push_back(tensorFrom(fn, itemsOf(i)));
    dtypes.push_back(tensors.back()->set->dtype);
  }
  const StorageTensors tensorOf{numbers, tensors, dtypes};
  BasicBlock& bb = *fn.addBlock();
  bb.reserve(nRecords);
  const std::unique_ptr<EmitCache> cached(new EmitCache);  // (not make_unique's EmitCache(): zeroed first)
  EmitCache& cache = *cached;
  struct Release {  // the enum members the cache holds
    EmitCache& c;
    ~Release() {
      for (auto& [o, v] : c.enumValues) Py_DECREF(o);
    }
  } release{cache};
  // (the list's length read each time, as py::list's iterator does: no Python code runs here)
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(records); ++i)
    appendRecord(bb, PyList_GET_ITEM(records, i), tensorOf, cache);
}

void emitTrace(Function& fn, py::list tensor_records, py::list tensor_of, py::list records) {
  const std::vector<int64_t> numbers = tensorNumbers(tensor_of);
  emitTensorsAndRecords(
      fn, tensor_records.size(), [&](size_t i) { return itemsOfTuple(PyList_GET_ITEM(tensor_records.ptr(), i)); },
      numbers, records.ptr());
}

void bindIsaEmit(py::module_& m) {
  m.def("emit_trace", &emitTrace, py::arg("function"), py::arg("tensors"), py::arg("tensor_of"),
        py::arg("records"),
        "Creates a function's tensors from (name, memory type, dtype, shape, kind, partitions, "
        "bytes per partition, start partition, address) tuples and appends a block of ISA nodes "
        "from (opcode, engine, source, fields, ins, outs, ...) records; operands are (storage "
        "number, offset, pairs, ...) over tensor_of[storage number], or numbers.");
}

NXS_REGISTER_SUBMODULE(bir, 11, "libBIR: opcodes, node classes, modules, BIR JSON", bindIsaEmit);

}  // namespace

void emitRows(Function& fn, const std::vector<TensorRow>& rows, const std::vector<int64_t>& tensorOf,
              PyObject* records) {
  emitTensorsAndRecords(fn, rows.size(), [&](size_t i) { return itemsOfRow(rows[i]); }, tensorOf, records);
}

}  // namespace nxs::py_bind
