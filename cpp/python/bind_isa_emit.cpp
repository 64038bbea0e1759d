// Bulk appending of ISA nodes: `_core.bir.append_isa(block, records)`.
//
// Emitters that produce thousands of instructions from Python (the NKI tracer, neuronxsim.nki)
// would otherwise pay one binding round trip per node, per operand and per field. A record is
//   (opcode, engine, source, fields, ins, outs)
// with `opcode` and `engine` as ints, `fields` None or a dict of the node's fields by their BIR
// names (unknown names are an error), and each operand either a number (an fp32 immediate) or
// (MemoryLocation, offset, ((step, num), ...)): a plain physical access pattern in the dtype of
// its location.
#include "bindings.h"
#include "bir/Error.h"
#include "bir/Module.h"

namespace nxs::py_bind {
namespace {

using namespace bir;

AccessPattern operandFrom(py::handle h) {
  if (py::isinstance<py::float_>(h) || py::isinstance<py::int_>(h))
    return AccessPattern::immediate(h.cast<double>());
  auto t = py::reinterpret_borrow<py::tuple>(h);
  if (!py::isinstance<py::tuple>(h) || t.size() != 3)
    throw BIRError("append_isa: an operand is a number or (location, offset, pairs)");
  if (!py::isinstance<MemoryLocation>(t[0]))
    throw BIRError("append_isa: an operand's location must be a MemoryLocation");
  AccessPattern ap;
  ap.loc = t[0].cast<MemoryLocation*>();
  if (!ap.loc || !ap.loc->set) throw BIRError("append_isa: operand without a memory location");
  ap.dtype = ap.loc->set->dtype;
  ap.offset = t[1].cast<int64_t>();
  for (auto pair : t[2]) {
    auto p = py::reinterpret_borrow<py::tuple>(pair);
    if (!py::isinstance<py::tuple>(pair) || p.size() != 2)
      throw BIRError("append_isa: an access-pattern pair is (step, num)");
    ap.pattern.push_back({p[0].cast<int64_t>(), p[1].cast<int64_t>()});
  }
  return ap;
}

template <class T>
void setFields(T& node, const py::dict& fields) {
  size_t used = 0;
  T::fields([&](const char* key, auto member) {
    using F = std::remove_reference_t<decltype(node.*member)>;
    if (!fields.contains(key)) return;
    ++used;
    if constexpr (std::is_same_v<F, RawJson>)
      (node.*member).text = fields[key].template cast<std::string>();
    else
      node.*member = fields[key].template cast<F>();
  });
  if (used != fields.size()) {
    std::string unknown;
    for (auto item : fields) {
      const auto key = item.first.cast<std::string>();
      bool known = false;
      T::fields([&](const char* k, auto) { known = known || key == k; });
      if (!known) unknown += (unknown.empty() ? "" : ", ") + key;
    }
    throw BIRError("append_isa: " + std::string(nodeClassName(node.nodeClass())) +
                   " has no field(s) " + unknown);
  }
}

void setFieldsOf(Instruction& I, const py::dict& fields) {
  switch (I.nodeClass()) {
#define BIR_NODE_CLASS(C)                                  \
  case NodeClass::C:                                       \
    setFields(static_cast<Inst##C&>(I), fields);           \
    break;
#include "bir/NodeClasses.def"
#undef BIR_NODE_CLASS
  }
}

void appendIsa(BasicBlock& bb, py::iterable records) {
  constexpr int kEngines = EnumTraits<Engine>::kCount;
  for (auto rec : records) {
    auto r = py::reinterpret_borrow<py::tuple>(rec);
    if (!py::isinstance<py::tuple>(rec) || r.size() != 6)
      throw BIRError("append_isa: a record is (opcode, engine, source, fields, ins, outs)");
    const auto opcode = r[0].cast<int64_t>();
    if (!isValidOpcode(opcode))
      throw BIRError("append_isa: opcode " + std::to_string(opcode) + " is out of range");
    const auto engine = r[1].cast<int64_t>();
    if (engine < 0 || engine >= kEngines)
      throw BIRError("append_isa: engine " + std::to_string(engine) + " is out of range");
    Instruction* I = bb.addInstruction(static_cast<Opcode>(opcode));
    I->engine = static_cast<Engine>(engine);
    I->source = r[2].cast<std::string>();
    if (!r[3].is_none()) setFieldsOf(*I, r[3].cast<py::dict>());
    for (auto h : r[4]) I->ins.push_back(operandFrom(h));
    for (auto h : r[5]) I->outs.push_back(operandFrom(h));
  }
}

void bindIsaEmit(py::module_& m) {
  m.def("append_isa", &appendIsa, py::arg("block"), py::arg("records"),
        "Appends ISA nodes in bulk: records of (opcode, engine, source, fields, ins, outs).");
}

NXS_REGISTER_SUBMODULE(bir, 11, "libBIR: opcodes, node classes, modules, BIR JSON", bindIsaEmit);

}  // namespace
}  // namespace nxs::py_bind
