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
#include "bindings.h"
#include "bir/Error.h"
#include "bir/Module.h"

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
  const int64_t index = intOf(PyTuple_GET_ITEM(h, 0), "a location index");
  if (index < 0 || index >= static_cast<int64_t>(locations.size()))
    throw BIRError("append_isa: location index " + std::to_string(index) + " is out of range");
  AccessPattern ap;
  ap.loc = locations[static_cast<size_t>(index)];
  ap.dtype = ap.loc->set->dtype;
  ap.offset = intOf(PyTuple_GET_ITEM(h, 1), "an offset");
  PyObject* pairs = PySequence_Fast(PyTuple_GET_ITEM(h, 2), "append_isa: pairs must be a sequence");
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
      if constexpr (std::is_same_v<F, RawJson>)
        (node.*member).text = v.cast<std::string>();
      else
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

void appendIsa(BasicBlock& bb, const std::vector<MemoryLocation*>& locations,
               py::sequence records) {
  constexpr int kEngines = EnumTraits<Engine>::kCount;
  for (const MemoryLocation* loc : locations)
    if (!loc || !loc->set) throw BIRError("append_isa: a location without its allocation");
  const Py_ssize_t count = PySequence_Size(records.ptr());
  for (Py_ssize_t i = 0; i < count; ++i) {
    py::object rec = records[i];
    PyObject* r = tupleOf(rec.ptr(), 6, "a record is (opcode, engine, source, fields, ins, outs)");
    const int64_t opcode = intOf(PyTuple_GET_ITEM(r, 0), "an opcode");
    if (!isValidOpcode(opcode))
      throw BIRError("append_isa: opcode " + std::to_string(opcode) + " is out of range");
    const int64_t engine = intOf(PyTuple_GET_ITEM(r, 1), "an engine");
    if (engine < 0 || engine >= kEngines)
      throw BIRError("append_isa: engine " + std::to_string(engine) + " is out of range");
    PyObject* source = PyTuple_GET_ITEM(r, 2);
    Py_ssize_t length = 0;
    const char* text = PyUnicode_Check(source) ? PyUnicode_AsUTF8AndSize(source, &length) : nullptr;
    if (!text) {
      PyErr_Clear();
      throw BIRError("append_isa: a source is a string");
    }
    PyObject* fields = PyTuple_GET_ITEM(r, 3);
    if (fields != Py_None && !PyDict_Check(fields))
      throw BIRError("append_isa: fields are None or a dict");
    Instruction* I = bb.addInstruction(static_cast<Opcode>(opcode));
    I->engine = static_cast<Engine>(engine);
    I->source.assign(text, static_cast<size_t>(length));
    if (fields != Py_None) setFieldsOf(*I, fields);
    appendOperands(PyTuple_GET_ITEM(r, 4), locations, I->ins);
    appendOperands(PyTuple_GET_ITEM(r, 5), locations, I->outs);
  }
}

void bindIsaEmit(py::module_& m) {
  m.def("append_isa", &appendIsa, py::arg("block"), py::arg("locations"), py::arg("records"),
        "Appends ISA nodes in bulk: records of (opcode, engine, source, fields, ins, outs), "
        "operands (index into locations, offset, pairs) or numbers.");
}

NXS_REGISTER_SUBMODULE(bir, 11, "libBIR: opcodes, node classes, modules, BIR JSON", bindIsaEmit);

}  // namespace
}  // namespace nxs::py_bind
