// Bulk appending of ISA nodes: `_core.bir.append_isa(block, locations, records)`.
//
// Emitters that produce thousands of instructions from Python (the NKI tracer, neuronxsim.nki)
// would otherwise pay one binding round trip per node, per operand and per field. A record is
//   (opcode, engine, source, fields, ins, outs)
// with `opcode` and `engine` as ints, `fields` None or a dict of the node's fields by their BIR
// names (unknown names are an error), and each operand either a number (an fp32 immediate) or
// (location index, offset, ((step, num), ...)): a plain physical access pattern, in the dtype of
// its location, over `locations[index]` (the locations are converted once per call).
//
// The records are walked with the CPython API directly: this loop is the emitter's inner loop.
//
// `_core.bir.emit_traced(function, tensors, ops)` is the NKI tracer's whole emission in one call:
// it creates the function's tensors from compact descriptions (no Python object per location) and
// appends a block holding the enabled ops of the trace, read from the tracer's own objects:
//   tensor: (name, memory type, dtype, shape, tensor kind, partitions, bytes per partition, addr)
//           (enums as ints; on-chip tensors (SB, PSUM) use partitions/bytes/addr, DRAM the kind)
//   op:     an object with `enabled`, `opcode`, `engine`, `loc` (None or an object with a
//           `short` string), `fields` (None or a dict) and `ins`/`outs`, sequences of accesses
//   access: an object with `storage` (whose `location_index` indexes `tensors`), `offset` and
//           `pairs`, or a number (an fp32 immediate)
#include "bindings.h"
#include "bir/Error.h"
#include "bir/Module.h"

#include <structmember.h>  // T_OBJECT_EX: the member type of a __slots__ entry

#include <cstring>
#include <unordered_map>

namespace nxs::py_bind {
namespace {

using namespace bir;

int64_t intOf(PyObject* o, const char* what) {
  const long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    throw BIRError(std::string("append_isa: ") + what + " must be an integer");
  }
  return v;
}

PyObject* tupleOf(PyObject* o, Py_ssize_t size, const char* what) {
  if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != size) throw BIRError(std::string("append_isa: ") + what);
  return o;
}

AccessPattern patternFrom(PyObject* index_obj, PyObject* offset, PyObject* pairs_obj,
                          const std::vector<MemoryLocation*>& locations);

AccessPattern operandFrom(PyObject* h, const std::vector<MemoryLocation*>& locations) {
  if (PyFloat_Check(h) || PyLong_Check(h)) {
    const double v = PyFloat_AsDouble(h);
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw BIRError("append_isa: an immediate operand out of range");
    }
    return AccessPattern::immediate(v);
  }
  tupleOf(h, 3, "an operand is a number or (location index, offset, pairs)");
  return patternFrom(PyTuple_GET_ITEM(h, 0), PyTuple_GET_ITEM(h, 1), PyTuple_GET_ITEM(h, 2),
                     locations);
}

AccessPattern patternFrom(PyObject* index_obj, PyObject* offset, PyObject* pairs_obj,
                          const std::vector<MemoryLocation*>& locations) {
  const int64_t index = intOf(index_obj, "a location index");
  if (index < 0 || index >= static_cast<int64_t>(locations.size()))
    throw BIRError("append_isa: location index " + std::to_string(index) + " is out of range");
  AccessPattern ap;
  ap.loc = locations[static_cast<size_t>(index)];
  ap.dtype = ap.loc->set->dtype;
  ap.offset = intOf(offset, "an offset");
  PyObject* pairs = PySequence_Fast(pairs_obj, "append_isa: pairs must be a sequence");
  if (!pairs) {
    PyErr_Clear();
    throw BIRError("append_isa: an operand's pairs must be a sequence of (step, num)");
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(pairs);
  PyObject** items = PySequence_Fast_ITEMS(pairs);
  ap.pattern.reserve(static_cast<size_t>(n));
  try {
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* p = tupleOf(items[i], 2, "an access-pattern pair is (step, num)");
      ap.pattern.push_back({intOf(PyTuple_GET_ITEM(p, 0), "a step"),
                            intOf(PyTuple_GET_ITEM(p, 1), "a num")});
    }
  } catch (...) {
    Py_DECREF(pairs);
    throw;
  }
  Py_DECREF(pairs);
  return ap;
}

// Sets the fields named in `fields` (a dict: BIR field name -> value) on `node`.
template <class T>
void setFields(T& node, PyObject* fields) {
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(fields, &pos, &key, &value)) {
    const char* name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
    if (!name) {
      PyErr_Clear();
      throw BIRError("append_isa: field names are strings");
    }
    bool found = false;
    T::fields([&](const char* field, auto member) {
      if (found || std::strcmp(field, name) != 0) return;
      found = true;
      using F = std::remove_reference_t<decltype(node.*member)>;
      py::handle v(value);
      node.*member = v.cast<F>();
    });
    if (!found)
      throw BIRError("append_isa: " + std::string(nodeClassName(node.nodeClass())) +
                     " has no field " + name);
  }
}

void setFieldsOf(Instruction& I, PyObject* fields) {
  switch (I.nodeClass()) {
#define BIR_NODE_CLASS(C)                        \
  case NodeClass::C:                             \
    setFields(static_cast<Inst##C&>(I), fields); \
    break;
#include "bir/NodeClasses.def"
#undef BIR_NODE_CLASS
  }
}

void appendOperands(PyObject* list, const std::vector<MemoryLocation*>& locations,
                    std::vector<AccessPattern>& to) {
  PyObject* seq = PySequence_Fast(list, "append_isa: operands must be a sequence");
  if (!seq) {
    PyErr_Clear();
    throw BIRError("append_isa: ins and outs are sequences of operands");
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  try {
    for (Py_ssize_t i = 0; i < n; ++i) to.push_back(operandFrom(items[i], locations));
  } catch (...) {
    Py_DECREF(seq);
    throw;
  }
  Py_DECREF(seq);
}

int64_t checkedEngine(PyObject* o) {
  constexpr int kEngines = EnumTraits<Engine>::kCount;
  const int64_t engine = intOf(o, "an engine");
  if (engine < 0 || engine >= kEngines)
    throw BIRError("append_isa: engine " + std::to_string(engine) + " is out of range");
  return engine;
}

int64_t checkedOpcode(PyObject* o) {
  const int64_t opcode = intOf(o, "an opcode");
  if (!isValidOpcode(opcode))
    throw BIRError("append_isa: opcode " + std::to_string(opcode) + " is out of range");
  return opcode;
}

// Appends one node; `source` a str, `fields` None or a dict.
Instruction* appendNode(BasicBlock& bb, int64_t opcode, int64_t engine, PyObject* source,
                        PyObject* fields) {
  Py_ssize_t length = 0;
  const char* text = PyUnicode_Check(source) ? PyUnicode_AsUTF8AndSize(source, &length) : nullptr;
  if (!text) {
    PyErr_Clear();
    throw BIRError("append_isa: a source is a string");
  }
  if (fields != Py_None && !PyDict_Check(fields))
    throw BIRError("append_isa: fields are None or a dict");
  Instruction* I = bb.addInstruction(static_cast<Opcode>(opcode));
  I->engine = static_cast<Engine>(engine);
  I->source.assign(text, static_cast<size_t>(length));
  if (fields != Py_None) setFieldsOf(*I, fields);
  return I;
}

void appendIsa(BasicBlock& bb, const std::vector<MemoryLocation*>& locations,
               py::sequence records) {
  for (const MemoryLocation* loc : locations)
    if (!loc || !loc->set) throw BIRError("append_isa: a location without its allocation");
  const Py_ssize_t count = PySequence_Size(records.ptr());
  for (Py_ssize_t i = 0; i < count; ++i) {
    py::object rec = records[i];
    PyObject* r = tupleOf(rec.ptr(), 6, "a record is (opcode, engine, source, fields, ins, outs)");
    const int64_t opcode = checkedOpcode(PyTuple_GET_ITEM(r, 0));
    const int64_t engine = checkedEngine(PyTuple_GET_ITEM(r, 1));
    Instruction* I = appendNode(bb, opcode, engine, PyTuple_GET_ITEM(r, 2), PyTuple_GET_ITEM(r, 3));
    appendOperands(PyTuple_GET_ITEM(r, 4), locations, I->ins);
    appendOperands(PyTuple_GET_ITEM(r, 5), locations, I->outs);
  }
}

// ---- emit_traced ----

// An attribute of a tracer object (a new reference, held for the caller's scope).
py::object attr(PyObject* o, PyObject* name) {
  PyObject* v = PyObject_GetAttr(o, name);
  if (!v) {
    PyErr_Clear();
    throw BIRError(std::string("emit_traced: an object without the attribute ") +
                   PyUnicode_AsUTF8(name));
  }
  return py::reinterpret_steal<py::object>(v);
}

// One attribute of the tracer's objects. Their classes declare __slots__, so the attribute is a
// member descriptor: a fixed offset in the object. Reading it there skips PyObject_GetAttr's
// lookup through the type, which was a third of the emission's cost. The offset is learned per
// type (the objects keep their types alive for the call); an object whose type has no such
// slot, or whose slot is unset, goes through attr().
class SlotReader {
 public:
  explicit SlotReader(const char* name) : name_(py::str(name)) {}
  py::object operator()(PyObject* o) {
    if (Py_TYPE(o) != type_) learn(Py_TYPE(o));
    if (offset_ >= 0)
      if (PyObject* v = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + offset_))
        return py::reinterpret_borrow<py::object>(v);
    return attr(o, name_.ptr());
  }

 private:
  void learn(PyTypeObject* type) {
    type_ = type;
    offset_ = -1;
    // Looked up on the type, a slot is its member descriptor (a subclass's property or method
    // of that name would come first, and is not one).
    PyObject* d = PyObject_GetAttr(reinterpret_cast<PyObject*>(type), name_.ptr());
    if (!d) {
      PyErr_Clear();
      return;
    }
    if (Py_IS_TYPE(d, &PyMemberDescr_Type)) {
      const PyMemberDef* m = reinterpret_cast<PyMemberDescrObject*>(d)->d_member;
      if (m->type == T_OBJECT_EX) offset_ = m->offset;
    }
    Py_DECREF(d);
  }
  py::str name_;
  PyTypeObject* type_ = nullptr;
  Py_ssize_t offset_ = -1;
};

struct TraceNames {
  SlotReader enabled{"enabled"}, opcode{"opcode"}, engine{"engine"}, loc{"loc"}, short_{"short"},
      fields{"fields"}, ins{"ins"}, outs{"outs"}, storage{"storage"},
      location_index{"location_index"}, offset{"offset"}, pairs{"pairs"};
};

// Enum members (pybind enums convert through __index__) are few: convert each once.
struct EnumCache {
  std::unordered_map<PyObject*, int64_t> values;
  template <class Check>
  int64_t get(PyObject* o, Check check) {
    if (PyLong_CheckExact(o)) return check(o);
    auto it = values.find(o);
    if (it != values.end()) return it->second;
    const int64_t v = check(o);
    values.emplace(o, v);
    return v;
  }
};

AccessPattern accessFrom(PyObject* a, const std::vector<MemoryLocation*>& locations, TraceNames& n) {
  if (PyFloat_Check(a) || PyLong_Check(a)) return operandFrom(a, locations);
  py::object storage = n.storage(a);
  py::object index = n.location_index(storage.ptr());
  py::object offset = n.offset(a);
  py::object pairs = n.pairs(a);
  return patternFrom(index.ptr(), offset.ptr(), pairs.ptr(), locations);
}

void appendAccesses(PyObject* list, const std::vector<MemoryLocation*>& locations, TraceNames& n,
                    std::vector<AccessPattern>& to) {
  PyObject* seq = PySequence_Fast(list, "emit_traced: operands must be a sequence");
  if (!seq) {
    PyErr_Clear();
    throw BIRError("emit_traced: ins and outs are sequences of accesses");
  }
  py::object hold = py::reinterpret_steal<py::object>(seq);
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t i = 0; i < count; ++i) to.push_back(accessFrom(items[i], locations, n));
}

std::vector<int64_t> shapeOf(PyObject* o) {
  PyObject* seq = PySequence_Fast(o, "emit_traced: a shape is a sequence");
  if (!seq) {
    PyErr_Clear();
    throw BIRError("emit_traced: a shape is a sequence of integers");
  }
  py::object hold = py::reinterpret_steal<py::object>(seq);
  std::vector<int64_t> shape;
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
  for (Py_ssize_t i = 0; i < count; ++i)
    shape.push_back(intOf(PySequence_Fast_GET_ITEM(seq, i), "a dimension"));
  return shape;
}

template <class E>
E enumOf(PyObject* o, const char* what) {
  const int64_t v = intOf(o, what);
  if (v < 0 || v >= EnumTraits<E>::kCount)
    throw BIRError(std::string("emit_traced: ") + what + " " + std::to_string(v) + " is out of range");
  return static_cast<E>(v);
}

void emitTraced(Function& fn, py::sequence tensors, py::sequence ops) {
  std::vector<MemoryLocation*> locations;
  const Py_ssize_t num_tensors = PySequence_Size(tensors.ptr());
  locations.reserve(static_cast<size_t>(num_tensors));
  for (Py_ssize_t i = 0; i < num_tensors; ++i) {
    py::object item = tensors[i];
    PyObject* t = item.ptr();
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 8)
      throw BIRError("emit_traced: a tensor is (name, memory type, dtype, shape, kind, partitions, "
                     "bytes per partition, addr)");
    PyObject* name_obj = PyTuple_GET_ITEM(t, 0);
    const char* name = PyUnicode_Check(name_obj) ? PyUnicode_AsUTF8(name_obj) : nullptr;
    if (!name) {
      PyErr_Clear();
      throw BIRError("emit_traced: a tensor name is a string");
    }
    const auto type = enumOf<MemoryType>(PyTuple_GET_ITEM(t, 1), "a memory type");
    const auto dtype = enumOf<DType>(PyTuple_GET_ITEM(t, 2), "a dtype");
    std::vector<int64_t> shape = shapeOf(PyTuple_GET_ITEM(t, 3));
    if (type == MemoryType::SB || type == MemoryType::PSUM)
      locations.push_back(fn.createOnChipTensor(
          name, type, dtype, intOf(PyTuple_GET_ITEM(t, 5), "partitions"),
          intOf(PyTuple_GET_ITEM(t, 6), "bytes per partition"), 0,
          intOf(PyTuple_GET_ITEM(t, 7), "an address"), shape));
    else
      locations.push_back(fn.createDramTensor(name, type, dtype, shape,
                                              enumOf<TensorKind>(PyTuple_GET_ITEM(t, 4), "a tensor kind")));
  }
  BasicBlock& bb = *fn.addBlock();
  TraceNames n;
  EnumCache opcodes, engines;
  py::str empty("");
  const Py_ssize_t count = PySequence_Size(ops.ptr());
  for (Py_ssize_t i = 0; i < count; ++i) {
    py::object op = ops[i];
    PyObject* o = op.ptr();
    py::object enabled = n.enabled(o);
    const int truth = PyObject_IsTrue(enabled.ptr());
    if (truth < 0) throw py::error_already_set();
    if (!truth) continue;
    const int64_t opcode = opcodes.get(n.opcode(o).ptr(), checkedOpcode);
    const int64_t engine = engines.get(n.engine(o).ptr(), checkedEngine);
    py::object loc = n.loc(o);
    py::object source = loc.is_none() ? py::object(empty) : n.short_(loc.ptr());
    py::object fields = n.fields(o);
    Instruction* I = appendNode(bb, opcode, engine, source.ptr(), fields.ptr());
    appendAccesses(n.ins(o).ptr(), locations, n, I->ins);
    appendAccesses(n.outs(o).ptr(), locations, n, I->outs);
  }
}

void bindIsaEmit(py::module_& m) {
  m.def("append_isa", &appendIsa, py::arg("block"), py::arg("locations"), py::arg("records"),
        "Appends ISA nodes in bulk: records of (opcode, engine, source, fields, ins, outs), "
        "operands (index into locations, offset, pairs) or numbers.");
  m.def("emit_traced", &emitTraced, py::arg("function"), py::arg("tensors"), py::arg("ops"),
        "Creates a function's tensors from (name, memory type, dtype, shape, kind, partitions, "
        "bytes per partition, addr) tuples and appends a block of the enabled ops of an NKI trace.");
}

NXS_REGISTER_SUBMODULE(bir, 11, "libBIR: opcodes, node classes, modules, BIR JSON", bindIsaEmit);

}  // namespace
}  // namespace nxs::py_bind
