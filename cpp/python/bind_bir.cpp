// Bindings of libBIR: opcode table, enums, operands, node classes (fields and set_<field> setters
// generated from each class's fields()), Module/Function/BasicBlock and BIR JSON.
#include <pybind11/operators.h>

#include "bindings.h"
#include "bir/Error.h"
#include "bir/Json.h"
#include "bir/Layout.h"
#include "bir/Module.h"
#include "bir/Verifier.h"

namespace nxs::py_bind {
namespace {

using namespace bir;

Opcode toOpcode(int64_t ordinal) {
  if (!isValidOpcode(ordinal))
    throw BIRError("InstructionType ordinal " + std::to_string(ordinal) + " is out of range 0.." +
                   std::to_string(InstructionType::kCount - 1));
  return static_cast<Opcode>(ordinal);
}

// Each field: a read/write attribute and a set_<name>(value) method (the setters seed 000 names,
// e.g. set_kernel_name, set_klir_binary).
template <class T, class PyClass>
void bindFields(PyClass& cls) {
  T::fields([&](const char* key, auto member) {
    using F = std::remove_reference_t<decltype(std::declval<T&>().*member)>;
    cls.def_readwrite(key, member);
    cls.def((std::string("set_") + key).c_str(), [member](T& self, F v) { self.*member = std::move(v); });
  });
  py::list names;
  T::fields([&](const char* key, auto) { names.append(key); });
  cls.attr("field_names") = py::tuple(names);
}

template <class T>
void bindNode(py::module_& m, const char* name) {
  py::class_<T, Instruction> cls(m, name);
  cls.def_static("classof", [](const Instruction* I) { return T::classof(I); });
  cls.attr("operand_rule") = py::make_tuple(T::kOperands.min_ins, T::kOperands.max_ins,
                                            T::kOperands.min_outs, T::kOperands.max_outs);
  bindFields<T>(cls);
}

void bindBir(py::module_& m) {
  // ---- the opcode table ----
  m.def("opcode_names", [] {
    py::list names;
    for (int i = 0; i < InstructionType::kCount; ++i)
      names.append(InstructionType::string(static_cast<Opcode>(i)));
    return names;
  });
  m.def("opcode_origins", [] {
    py::list out;
    static const char* kOrigin[] = {"SEED", "PUBLIC", "OURS"};
    for (int i = 0; i < InstructionType::kCount; ++i)
      out.append(kOrigin[static_cast<int>(InstructionType::origin(static_cast<Opcode>(i)))]);
    return out;
  });
  m.def("opcode_categories", [] {
    py::list out;
    for (int i = 0; i < InstructionType::kCount; ++i)
      out.append(InstructionType::categoryName(InstructionType::category(static_cast<Opcode>(i))));
    return out;
  });
  m.def("opcode_node_classes", [] {
    py::list out;
    for (int i = 0; i < InstructionType::kCount; ++i)
      out.append(nodeClassName(nodeClassOf(static_cast<Opcode>(i))));
    return out;
  });
  m.def("instruction_type_string", [](int64_t t) { return InstructionType::string(toOpcode(t)); });
  m.def("string2InstructionType",
        [](const std::string& s) { return static_cast<int>(string2InstructionType(s)); });
  m.def("field_offsets", [] {
    py::dict d;
    for (const auto& [k, v] : fieldOffsets()) d[py::str(k)] = v;
    return d;
  });
  m.def("check_start_partition", &checkStartPartition, py::arg("start"), py::arg("partitions"));

  // ---- enums ----
#define BIR_BIND_ENUM(E) bindEnum<E>(m);
  BIR_ENUMS(BIR_BIND_ENUM)
#undef BIR_BIND_ENUM
  bindEnum<DType>(m);
  m.def("dtype_size", [](DType t) { return dtypeSize(t); });

  // ---- operands and memory ----
  py::class_<APPair>(m, "APPair")
      .def(py::init([](int64_t step, int64_t num) { return APPair{step, num}; }), py::arg("step"),
           py::arg("num"))
      .def(py::init([](py::sequence s) {
        if (py::len(s) != 2) throw py::value_error("an APPair is a [step, num] pair");
        return APPair{s[0].cast<int64_t>(), s[1].cast<int64_t>()};
      }))
      .def_readwrite("step", &APPair::step)
      .def_readwrite("num", &APPair::num)
      .def(py::self == py::self)
      .def("__repr__", [](const APPair& p) {
        return "[" + std::to_string(p.step) + ", " + std::to_string(p.num) + "]";
      });
  py::implicitly_convertible<py::tuple, APPair>();
  py::implicitly_convertible<py::list, APPair>();

  py::class_<MemoryLocationSet>(m, "MemoryLocationSet")
      .def_readonly("name", &MemoryLocationSet::name)
      .def_readonly("dtype", &MemoryLocationSet::dtype)
      .def_readonly("tensor_shape", &MemoryLocationSet::tensor_shape)
      .def_readwrite("kind", &MemoryLocationSet::kind)
      .def_property_readonly("location", [](py::object self) {
        return borrowed(self.cast<MemoryLocationSet&>().location(), self);
      });

  py::class_<MemoryLocation>(m, "MemoryLocation")
      .def_readonly("name", &MemoryLocation::name)
      .def_readonly("type", &MemoryLocation::type)
      .def_readonly("addr", &MemoryLocation::addr)
      .def_readonly("partitions", &MemoryLocation::partitions)
      .def_readonly("bytes_per_partition", &MemoryLocation::bytes_per_partition)
      .def_readonly("base_partition", &MemoryLocation::base_partition)
      .def_readonly("bank", &MemoryLocation::bank)
      .def_property_readonly("dtype", [](const MemoryLocation& l) { return l.set->dtype; })
      .def_property_readonly("shape", [](const MemoryLocation& l) { return l.set->tensor_shape; })
      .def_property_readonly("kind", [](const MemoryLocation& l) { return l.set->kind; })
      .def_property_readonly("set_name", [](const MemoryLocation& l) { return l.set->name; })
      .def("__repr__", [](const MemoryLocation& l) {
        return "<MemoryLocation " + l.name + " " + std::string(enumName(l.type)) + ">";
      });

  // An AccessPattern refers to its MemoryLocation by pointer; Python copies of operands keep the
  // owning module alive through the instruction that returned them.
  py::class_<AccessPattern>(m, "AccessPattern")
      // A plain (ISA) operand: `pattern` over `location` from `offset`, in `dtype` (default: the
      // tensor's). Kernel-node operands are made with Instruction.createAP / addSeqAccess instead.
      .def(py::init([](MemoryLocation* loc, int64_t offset, std::vector<APPair> pattern,
                       std::optional<DType> dtype) {
             if (!loc || !loc->set) throw BIRError("AccessPattern: no memory location");
             AccessPattern ap;
             ap.loc = loc;
             ap.offset = offset;
             ap.pattern = std::move(pattern);
             ap.dtype = dtype.value_or(loc->set->dtype);
             return ap;
           }),
           py::arg("location"), py::arg("offset"), py::arg("pattern"), py::arg("dtype") = py::none())
      .def_static("immediate", &AccessPattern::immediate, py::arg("value"),
                  py::arg("dtype") = DType::float32)
      .def_readwrite("flavour", &AccessPattern::flavour)
      .def_readwrite("dtype", &AccessPattern::dtype)
      .def_readwrite("offset", &AccessPattern::offset)
      .def_readwrite("pattern", &AccessPattern::pattern)
      .def_readwrite("imm", &AccessPattern::imm)
      .def_readwrite("access_shape", &AccessPattern::access_shape)
      .def_readwrite("partition_dim", &AccessPattern::partition_dim)
      .def_readwrite("lnc_size", &AccessPattern::lnc_size)
      .def_readwrite("reduce", &AccessPattern::reduce)
      .def_property_readonly("is_immediate", &AccessPattern::isImmediate)
      .def_property_readonly("location", [](const AccessPattern& a) { return a.loc; },
                             py::return_value_policy::reference)
      .def_property_readonly("memref", [](const AccessPattern& a) { return a.loc ? a.loc->name : std::string(); })
      .def_property_readonly("partitions", &AccessPattern::partitions)
      .def_property_readonly("free_shape", &AccessPattern::freeShape)
      .def_property_readonly("num_elements", &AccessPattern::numElements)
      .def("__repr__", [](const AccessPattern& a) {
        if (a.isImmediate()) return "<imm " + std::to_string(a.imm) + ">";
        std::string s = "<ap " + (a.loc ? a.loc->name : std::string("?")) + "@" +
                        std::to_string(a.offset) + " [";
        for (size_t i = 0; i < a.pattern.size(); ++i)
          s += (i ? ", [" : "[") + std::to_string(a.pattern[i].step) + ", " +
               std::to_string(a.pattern[i].num) + "]";
        return s + "] " + std::string(enumName(a.dtype)) + " " + std::string(enumName(a.flavour)) + ">";
      });

  // ---- instructions ----
  py::class_<Instruction> inst(m, "Instruction");
  inst.def_property_readonly("opcode", [](const Instruction& I) { return static_cast<int>(I.opcode()); })
      .def_property_readonly("opcode_name", &Instruction::opcodeName)
      .def_property_readonly("node_class", [](const Instruction& I) { return nodeClassName(I.nodeClass()); })
      .def_readwrite("name", &Instruction::name)
      .def_readwrite("engine", &Instruction::engine)
      .def_readwrite("ins", &Instruction::ins)
      .def_readwrite("outs", &Instruction::outs)
      .def_readwrite("source", &Instruction::source)
      .def_readwrite("kernel", &Instruction::kernel)
      .def_readwrite("extra_json", &Instruction::extra_json)
      .def_readonly("id", &Instruction::id)
      .def("addSeqAccess", [](Instruction& I, MemoryLocation* t, bool isOutput) { I.addSeqAccess(t, isOutput); },
           py::arg("tensor"), py::arg("isOutput"))
      .def("addOpaqueAP", [](Instruction& I, MemoryLocation* t, bool isOutput) { I.addOpaqueAP(t, isOutput); },
           py::arg("tensor"), py::arg("isOutput"))
      .def("addAP", [](Instruction& I, const AccessPattern& ap, bool isOutput) { I.addAP(ap, isOutput); },
           py::arg("ap"), py::arg("isOutput"))
      .def("addArgumentOrOutput",
           [](Instruction& I, const AccessPattern& ap, bool isOutput, bool reduce) {
             I.addArgumentOrOutput(ap, isOutput, reduce);
           },
           py::arg("ap"), py::arg("isOutput"), py::arg("reduce") = false)
      .def_static("createAP", &Instruction::createAP, py::arg("tensor"), py::arg("offset"),
                  py::arg("pattern"), py::arg("access_shape"), py::arg("partition_dim"), py::arg("lnc_size") = 1)
      .def("__repr__", [](const Instruction& I) {
        return "<" + std::string(nodeClassName(I.nodeClass())) + " " + I.opcodeName() + " '" + I.name + "'>";
      });
#define BIR_NODE_CLASS(C) bindNode<Inst##C>(m, "Inst" #C);
#include "bir/NodeClasses.def"
#undef BIR_NODE_CLASS

  // ---- containers ----
  py::class_<BasicBlock>(m, "BasicBlock")
      .def_readwrite("name", &BasicBlock::name)
      .def("addInstruction",
           [](py::object self, int64_t op, std::string name) {
             return borrowed(self.cast<BasicBlock&>().addInstruction(toOpcode(op), std::move(name)), self);
           },
           py::arg("opcode"), py::arg("name") = "")
      .def("__len__", &BasicBlock::size)
      .def("__getitem__",
           [](py::object self, int64_t i) {
             auto& bb = self.cast<BasicBlock&>();
             const int64_t n = static_cast<int64_t>(bb.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("instruction index out of range");
             return borrowed(bb.at(static_cast<size_t>(i)), self);
           })
      .def_property_readonly("instructions", [](py::object self) {
        py::list out;
        for (const auto& I : self.cast<BasicBlock&>().instructions()) out.append(borrowed(I.get(), self));
        return out;
      });

  py::class_<Function>(m, "Function")
      .def_readwrite("name", &Function::name)
      .def_readwrite("attributes", &Function::attributes)
      .def("addBlock", [](py::object self, std::string n) { return borrowed(self.cast<Function&>().addBlock(std::move(n)), self); },
           py::arg("name") = "")
      .def_property_readonly("blocks", [](py::object self) {
        py::list out;
        for (const auto& b : self.cast<Function&>().blocks()) out.append(borrowed(b.get(), self));
        return out;
      })
      .def_property_readonly("allocations", [](py::object self) {
        py::list out;
        for (const auto& a : self.cast<Function&>().allocations()) out.append(borrowed(a.get(), self));
        return out;
      })
      .def("createDramTensor",
           [](py::object self, const std::string& n, MemoryType type, DType dtype,
              const std::vector<int64_t>& shape, TensorKind kind) {
             return borrowed(self.cast<Function&>().createDramTensor(n, type, dtype, shape, kind), self);
           },
           py::arg("name"), py::arg("type"), py::arg("dtype"), py::arg("shape"),
           py::arg("kind") = TensorKind::Internal)
      .def("createOnChipTensor",
           [](py::object self, const std::string& n, MemoryType type, DType dtype, int64_t partitions,
              int64_t bytes, int64_t base, int64_t addr, const std::vector<int64_t>& shape) {
             return borrowed(self.cast<Function&>().createOnChipTensor(n, type, dtype, partitions, bytes, base, addr, shape),
                             self);
           },
           py::arg("name"), py::arg("type"), py::arg("dtype"), py::arg("partitions"),
           py::arg("bytes_per_partition"), py::arg("base_partition") = 0, py::arg("addr") = 0,
           py::arg("shape") = std::vector<int64_t>{})
      .def("findLocation", [](py::object self, const std::string& n) { return borrowed(self.cast<Function&>().findLocation(n), self); })
      .def("uniqueTensorName", &Function::uniqueTensorName)
      .def_property_readonly("instruction_count", &Function::instructionCount);

  py::class_<Module>(m, "Module")
      .def(py::init<>())
      .def_readwrite("neuron_core_id", &Module::neuron_core_id)
      .def_readwrite("arch", &Module::arch)
      .def_readwrite("files_dir", &Module::files_dir,
                     "The folder the module's file references (IT55 compiled kernels, IT56 KLR files) resolve "
                     "in: where it was loaded from or lowered into; \"\" = the working directory. Not saved.")
      .def("addFunction", [](py::object self, std::string n) { return borrowed(self.cast<Module&>().addFunction(std::move(n)), self); },
           py::arg("name") = "")
      .def("function", [](py::object self, int64_t core) { return borrowed(self.cast<Module&>().function(core), self); },
           py::arg("neuron_core_id") = 0)
      .def_property_readonly("functions", [](py::object self) {
        py::list out;
        for (const auto& f : self.cast<Module&>().functions()) out.append(borrowed(f.get(), self));
        return out;
      })
      .def("to_json", [](const Module& mod, int indent) { return moduleToJson(mod, indent); }, py::arg("indent") = 1)
      .def_static("from_json",
                  [](const std::string& text, bool verify) {
                    JsonReadOptions opts;
                    opts.verify = verify;
                    return moduleFromJson(text, opts);
                  },
                  py::arg("text"), py::arg("verify") = true)
      .def("verify", [](const Module& mod) { verifyModule(mod); });
  m.attr("BIR_VERSION") = Module::kBirVersion;
  m.attr("FORMAT_VERSION") = Module::kFormatVersion;
}

NXS_REGISTER_SUBMODULE(bir, 10, "libBIR: opcodes, node classes, modules, BIR JSON", bindBir);

}  // namespace
}  // namespace nxs::py_bind
