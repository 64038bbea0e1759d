// The NKI tracer's emission: `_core.bir.emit_trace(function, tensors, records)` creates a
// function's tensors and appends one block of ISA nodes, from plain records (the tracer's
// emission pass, neuronxsim/nki/emit.py, builds them; nothing here knows the tracer's classes):
//   tensor: (name, memory type, dtype, shape, tensor kind, partitions, bytes per partition,
//            start partition, address), enums as ints; on-chip tensors (SB, PSUM) use
//            partitions, bytes, start partition and address, DRAM tensors the kind
//   record: (opcode, engine, source, fields, ins, outs): `opcode` and `engine` ints, `source`
//           a str, `fields` None or a dict of the node's fields by their BIR names (unknown
//           names are an error), `ins`/`outs` sequences of operands, each a number (an fp32
//           immediate) or (tensor index, offset, ((step, num), ...)): a plain physical access
//           pattern, in the dtype of its tensor
// Every element is type-checked; a malformed record is a BIRError naming what is wrong.
//
// The records are walked with the CPython API directly: this loop is the emitter's inner loop
// (thousands of nodes per kernel), and a binding round trip per node, operand and field would
// cost more than building the node.
#include "bindings.h"
#include "bir/Error.h"
#include "bir/Module.h"

#include <cstring>

namespace nxs::py_bind {
namespace {

using namespace bir;

int64_t intOf(PyObject* o, const char* what) {
  if (!PyLong_Check(o)) throw BIRError(std::string("emit_trace: ") + what + " must be an integer");
  const long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    throw BIRError(std::string("emit_trace: ") + what + " is out of range");
  }
  return v;
}

PyObject* tupleOf(PyObject* o, Py_ssize_t size, const char* what) {
  if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != size) throw BIRError(std::string("emit_trace: ") + what);
  return o;
}

// The items of a list or tuple `o` (borrowed; `o` must outlive their use).
std::pair<PyObject**, Py_ssize_t> itemsOf(PyObject* o, const char* what) {
  if (PyList_Check(o)) return {PySequence_Fast_ITEMS(o), PyList_GET_SIZE(o)};
  if (PyTuple_Check(o)) return {PySequence_Fast_ITEMS(o), PyTuple_GET_SIZE(o)};
  throw BIRError(std::string("emit_trace: ") + what + " must be a list or a tuple");
}

AccessPattern operandFrom(PyObject* h, const std::vector<MemoryLocation*>& tensors) {
  if (PyFloat_Check(h) || PyLong_Check(h)) {
    const double v = PyFloat_AsDouble(h);
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw BIRError("emit_trace: an immediate operand out of range");
    }
    return AccessPattern::immediate(v);
  }
  tupleOf(h, 3, "an operand is a number or (tensor index, offset, pairs)");
  const int64_t index = intOf(PyTuple_GET_ITEM(h, 0), "a tensor index");
  if (index < 0 || index >= static_cast<int64_t>(tensors.size()))
    throw BIRError("emit_trace: tensor index " + std::to_string(index) + " is out of range");
  AccessPattern ap;
  ap.loc = tensors[static_cast<size_t>(index)];
  ap.dtype = ap.loc->set->dtype;
  ap.offset = intOf(PyTuple_GET_ITEM(h, 1), "an offset");
  auto [pairs, n] = itemsOf(PyTuple_GET_ITEM(h, 2), "an operand's pairs");
  ap.pattern.reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* p = tupleOf(pairs[i], 2, "an access-pattern pair is (step, num)");
    ap.pattern.push_back({intOf(PyTuple_GET_ITEM(p, 0), "a step"), intOf(PyTuple_GET_ITEM(p, 1), "a num")});
  }
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
      throw BIRError("emit_trace: field names are strings");
    }
    bool found = false;
    T::fields([&](const char* field, auto member) {
      if (found || std::strcmp(field, name) != 0) return;
      found = true;
      using F = std::remove_reference_t<decltype(node.*member)>;
      py::handle v(value);
      try {
        if constexpr (std::is_same_v<F, RawJson>)
          (node.*member).text = v.cast<std::string>();
        else
          node.*member = v.cast<F>();
      } catch (const py::cast_error&) {
        throw BIRError("emit_trace: field " + std::string(name) + " of " +
                       nodeClassName(node.nodeClass()) + " cannot take a " +
                       Py_TYPE(value)->tp_name);
      }
    });
    if (!found)
      throw BIRError("emit_trace: " + std::string(nodeClassName(node.nodeClass())) +
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

void appendOperands(PyObject* list, const std::vector<MemoryLocation*>& tensors,
                    std::vector<AccessPattern>& to) {
  auto [items, n] = itemsOf(list, "ins and outs");
  for (Py_ssize_t i = 0; i < n; ++i) to.push_back(operandFrom(items[i], tensors));
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

std::string stringOf(PyObject* o, const char* what) {
  Py_ssize_t length = 0;
  const char* text = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &length) : nullptr;
  if (!text) {
    PyErr_Clear();
    throw BIRError(std::string("emit_trace: ") + what + " must be a string");
  }
  return std::string(text, static_cast<size_t>(length));
}

std::vector<int64_t> shapeOf(PyObject* o) {
  auto [items, n] = itemsOf(o, "a shape");
  std::vector<int64_t> shape;
  for (Py_ssize_t i = 0; i < n; ++i) shape.push_back(intOf(items[i], "a dimension"));
  return shape;
}

MemoryLocation* tensorFrom(Function& fn, PyObject* t) {
  tupleOf(t, 9,
          "a tensor is (name, memory type, dtype, shape, kind, partitions, bytes per partition, start partition, "
          "address)");
  const std::string name = stringOf(PyTuple_GET_ITEM(t, 0), "a tensor name");
  const auto type = enumOf<MemoryType>(PyTuple_GET_ITEM(t, 1), "a memory type");
  const auto dtype = enumOf<DType>(PyTuple_GET_ITEM(t, 2), "a dtype");
  std::vector<int64_t> shape = shapeOf(PyTuple_GET_ITEM(t, 3));
  if (type == MemoryType::SB || type == MemoryType::PSUM)
    return fn.createOnChipTensor(name, type, dtype, intOf(PyTuple_GET_ITEM(t, 5), "partitions"),
                                 intOf(PyTuple_GET_ITEM(t, 6), "bytes per partition"),
                                 intOf(PyTuple_GET_ITEM(t, 7), "a start partition"),
                                 intOf(PyTuple_GET_ITEM(t, 8), "an address"), shape);
  return fn.createDramTensor(name, type, dtype, shape, enumOf<TensorKind>(PyTuple_GET_ITEM(t, 4), "a tensor kind"));
}

void appendRecord(BasicBlock& bb, PyObject* r, const std::vector<MemoryLocation*>& tensors) {
  tupleOf(r, 6, "a record is (opcode, engine, source, fields, ins, outs)");
  const Opcode opcode = opcodeOf(PyTuple_GET_ITEM(r, 0));
  const auto engine = enumOf<Engine>(PyTuple_GET_ITEM(r, 1), "engine");
  std::string source = stringOf(PyTuple_GET_ITEM(r, 2), "a source");
  PyObject* fields = PyTuple_GET_ITEM(r, 3);
  if (fields != Py_None && !PyDict_Check(fields)) throw BIRError("emit_trace: fields are None or a dict");
  Instruction* I = bb.addInstruction(opcode);
  I->engine = engine;
  I->source = std::move(source);
  if (fields != Py_None) setFieldsOf(*I, fields);
  appendOperands(PyTuple_GET_ITEM(r, 4), tensors, I->ins);
  appendOperands(PyTuple_GET_ITEM(r, 5), tensors, I->outs);
}

void emitTrace(Function& fn, py::list tensor_records, py::list records) {
  std::vector<MemoryLocation*> tensors;
  tensors.reserve(tensor_records.size());
  for (py::handle t : tensor_records) tensors.push_back(tensorFrom(fn, t.ptr()));
  BasicBlock& bb = *fn.addBlock();
  for (py::handle r : records) appendRecord(bb, r.ptr(), tensors);
}

void bindIsaEmit(py::module_& m) {
  m.def("emit_trace", &emitTrace, py::arg("function"), py::arg("tensors"), py::arg("records"),
        "Creates a function's tensors from (name, memory type, dtype, shape, kind, partitions, "
        "bytes per partition, start partition, address) tuples and appends a block of ISA nodes from (opcode, "
        "engine, source, fields, ins, outs) records; operands are (tensor index, offset, pairs) "
        "or numbers.");
}

NXS_REGISTER_SUBMODULE(bir, 11, "libBIR: opcodes, node classes, modules, BIR JSON", bindIsaEmit);

}  // namespace
}  // namespace nxs::py_bind
