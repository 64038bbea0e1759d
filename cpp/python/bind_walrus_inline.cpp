// Bindings of the IT54 pass into `_core.walrus` (neuronxsim.walrus.inline is the facade): run
// InlineBIRKernel on a module, list the leaves.
#include "bindings.h"
#include "walrus/InlineBIRKernel.h"
#include "walrus/kernels/LeafRegistry.h"

namespace nxs::py_bind {
namespace {

py::dict statsDict(const walrus::ExpansionStats& s) {
  py::dict d;
  d["node"] = s.node;
  d["kernel_name"] = s.kernel_name;
  d["instructions"] = s.instructions;
  py::dict engines;
  for (size_t e = 0; e < s.per_engine.size(); ++e)
    if (s.per_engine[e]) engines[py::str(std::string(bir::enumName(static_cast<bir::Engine>(e))))] = s.per_engine[e];
  d["per_engine"] = engines;
  d["dmas"] = s.dmas;
  d["tensors"] = s.tensors;
  d["sbuf_bytes"] = s.sbuf_bytes;
  d["psum_banks"] = s.psum_banks;
  return d;
}

const char* attrTypeName(walrus::kernels::AttrType t) {
  switch (t) {
    case walrus::kernels::AttrType::Bool: return "bool";
    case walrus::kernels::AttrType::Int: return "int";
    case walrus::kernels::AttrType::Float: return "float";
    case walrus::kernels::AttrType::Enum: return "enum";
  }
  return "?";
}

py::list operandList(const std::vector<walrus::kernels::OperandSig>& roster) {
  py::list out;
  for (const auto& op : roster) {
    py::dict d;
    d["role"] = op.role;
    d["dims"] = op.dims;
    d["when"] = op.when;
    d["max_count"] = op.max_count;
    d["optional"] = op.optional;
    out.append(d);
  }
  return out;
}

// One leaf's signature as plain data (neuronxsim.walrus.signatures types it).
py::dict signatureDict(const walrus::kernels::Leaf& leaf) {
  py::list attrs;
  for (const auto& a : leaf.signature.attrs) {
    py::dict d;
    d["name"] = a.name;
    d["type"] = attrTypeName(a.type);
    d["default"] = a.required() ? py::object(py::none()) : py::object(py::str(a.fallback));
    d["enum_type"] = a.enum_type;
    d["members"] = a.members;
    d["allowed"] = a.allowed;
    d["minimum"] = a.has_minimum ? py::object(py::int_(a.minimum)) : py::object(py::none());
    d["from_codegen"] = a.from_codegen;
    d["only_when_set"] = a.only_when_set;
    d["doc"] = a.doc;
    attrs.append(d);
  }
  py::dict d;
  d["name"] = leaf.name;
  d["summary"] = leaf.summary;
  d["attrs"] = attrs;
  d["ins"] = operandList(leaf.signature.ins);
  d["outs"] = operandList(leaf.signature.outs);
  return d;
}

void bindWalrusInline(py::module_& m) {
  m.def(
      "inline_bir_kernels",
      [](bir::Module& module, bool verify, size_t maxInstructions) {
        walrus::Logger logger;
        walrus::InlineBIRKernel pass(logger, {.verify = verify, .max_instructions = maxInstructions});
        pass.run(module);
        py::list out;
        for (const auto& s : pass.expansions()) out.append(statsDict(s));
        return out;
      },
      py::arg("module"), py::arg("verify") = true, py::arg("max_instructions") = walrus::kDefaultMaxInstructions,
      "Expands every IT54 InstBIRKernel node of `module` in place; returns one dict of statistics per node.\n"
      "A node whose expansion has more than `max_instructions` instructions is refused (KernelError).");
  m.attr("DEFAULT_MAX_INSTRUCTIONS") = walrus::kDefaultMaxInstructions;
  m.def("bir_kernel_leaves", [] {
    py::dict out;
    for (const auto& leaf : walrus::kernels::leaves()) out[py::str(leaf.name)] = leaf.summary;
    return out;
  });
  m.def(
      "leaf_signatures",
      [] {
        py::list out;
        for (const auto& leaf : walrus::kernels::leaves()) out.append(signatureDict(leaf));
        return out;
      },
      "Every IT54 leaf's signature (operands by role with symbolic dims, typed attrs with defaults), by name.");
}

NXS_REGISTER_SUBMODULE(walrus, 30, "libwalrus: kernel-node resolvers and the IT54 leaves", bindWalrusInline);

}  // namespace
}  // namespace nxs::py_bind
