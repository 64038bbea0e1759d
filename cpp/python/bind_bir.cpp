// Bindings of libBIR: opcode table, enums, operands, node classes (fields and set_<field> setters
// generated from each class's fields()), Module/Function/BasicBlock and BIR JSON.
#include <pybind11/operators.h>
#include <pybind11/typing.h>

#include "bindings.h"
#include "bir/Binary.h"
#include "bir/Error.h"
#include "bir/Json.h"
#include "bir/Layout.h"
#include "bir/MachineConfig.h"
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

// BIR names an operand's memory location within the instruction's function (the JSON reader
// resolves "memref" among that function's allocations alone), so an operand added through Python
// must view one of them: a location of another function or module would be written as a name the
// function does not declare, and one of another module dangles once that module is freed.
void requireOwnLocation(const Instruction& I, const MemoryLocation* loc, const char* call) {
  if (!loc) return;
  const Function& f = *I.parent()->parent();
  if (f.findLocation(loc->name) != loc)
    throw py::value_error(std::string(call) + ": memory location '" + loc->name + "' is not one of function '" +
                          f.name + "''s allocations (an operand views a tensor of its own instruction's function)");
}

void requireOwnLocations(const Instruction& I, const std::vector<AccessPattern>& aps, const char* call) {
  for (const AccessPattern& ap : aps) requireOwnLocation(I, ap.loc, call);
}

// A field of some node class, as a member of the Instruction it belongs to: `F T::*` converted to
// `F Instruction::*` (T derives from Instruction alone, not virtually), which is applied only to
// instances of T (the attribute is T's).
template <class F>
using FieldRef = F Instruction::*;

// One field: a read/write attribute and a set_<name>(value) method (the setters seed 000 names,
// e.g. set_kernel_name, set_klir_binary), as def_readwrite would make them. A template of the
// field type alone, its accessors capturing only the member pointer: pybind11 instantiates them
// once per field type, not once per (node class, field), which was most of this file's compile
// time.
template <class F>
void bindField(py::handle cls, const char* className, const char* key, FieldRef<F> field) {
  const std::string setName = std::string("set_") + key;
  py::cpp_function get([field](Instruction& self) -> const F& { return self.*field; }, py::is_method(cls),
                       py::return_value_policy::reference_internal);
  const auto setter = [field](Instruction& self, F v) { self.*field = std::move(v); };
  py::cpp_function set(setter, py::is_method(cls));
  const std::string doc = std::string(className) + "." + key + ": the node's \"" + key + "\" field (BIR JSON).";
  py::setattr(cls, key, py::module_::import("builtins").attr("property")(get, set, py::none(), doc));
  py::setattr(cls, setName.c_str(),
              py::cpp_function(setter, py::name(setName.c_str()), py::is_method(cls),
                               py::doc(("Sets " + std::string(className) + "." + key + ".").c_str())));
}

template <class T>
void bindFields(py::handle cls, const char* className) {
  py::list names;
  T::fields([&](const char* key, auto member) {
    using F = std::remove_reference_t<decltype(std::declval<T&>().*member)>;
    bindField<F>(cls, className, key, static_cast<FieldRef<F>>(member));
    names.append(key);
  });
  cls.attr("field_names") = py::tuple(names);
}

// Not a template of T beyond this: one `classof` function type (capturing T::classof) and the
// field accessors per field type serve every node class.
template <class T>
void bindNode(py::module_& m, const char* name) {
  const std::string doc = std::string("bir::") + name + ": a BIR node class (its fields: field_names; "
                          "its operand counts: operand_rule).";
  py::class_<T, Instruction> cls(m, name, doc.c_str());
  bool (*classof)(const Instruction*) = &T::classof;
  cls.def_static("classof", [classof](const Instruction* I) { return classof(I); }, py::arg("instruction"),
                 "Whether `instruction` is of this node class (LLVM-style classof).");
  cls.attr("operand_rule") = py::make_tuple(T::kOperands.min_ins, T::kOperands.max_ins,
                                            T::kOperands.min_outs, T::kOperands.max_outs);
  bindFields<T>(cls, name);
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
  m.def("check_start_partition", &checkStartPartition, py::arg("start"), py::arg("partitions"),
        "The start-partition rule for a compute-engine access of `partitions` partitions from `start`: "
        "\"\" when it holds, else the reason.");

  // ---- enums ----
#define BIR_BIND_ENUM(E) bindEnum<E>(m);
  BIR_ENUMS(BIR_BIND_ENUM)
#undef BIR_BIND_ENUM
  bindEnum<DType>(m);
  m.def("dtype_size", [](DType t) { return dtypeSize(t); }, py::arg("dtype"), "The size of one `dtype` element in bytes.");

  // ---- operands and memory ----
  py::class_<APPair>(m, "APPair", "One [step, num] dimension of an access pattern (step in elements).")
      .def(py::init([](int64_t step, int64_t num) { return APPair{step, num}; }), py::arg("step"),
           py::arg("num"), "The pair [step, num].")
      .def(py::init([](py::sequence s) {
        if (py::len(s) != 2) throw py::value_error("an APPair is a [step, num] pair");
        return APPair{s[0].cast<int64_t>(), s[1].cast<int64_t>()};
      }), py::arg("pair"), "The pair from a [step, num] sequence.")
      .def_readwrite("step", &APPair::step, "The stride, in elements.")
      .def_readwrite("num", &APPair::num, "How many elements.")
      .def(py::self == py::self)
      .def("__repr__", [](const APPair& p) {
        return "[" + std::to_string(p.step) + ", " + std::to_string(p.num) + "]";
      });
  py::implicitly_convertible<py::tuple, APPair>();
  py::implicitly_convertible<py::list, APPair>();

  py::class_<MemoryLocationSet> locationSet(m, "MemoryLocationSet", "bir::MemoryLocationSet: a tensor (name, dtype, shape, kind) and its memory location.");
  locationSet.def_readonly("name", &MemoryLocationSet::name, "The tensor's name.")
      .def_readonly("dtype", &MemoryLocationSet::dtype, "The tensor's element type.")
      .def_readonly("tensor_shape", &MemoryLocationSet::tensor_shape, "The tensor's shape.")
      .def_readwrite("kind", &MemoryLocationSet::kind, "What the tensor is to the kernel (input, output, internal, ...).");

  py::class_<MemoryLocation>(m, "MemoryLocation", "bir::MemoryLocation: where a tensor lives (memory type, partitions, bytes, address).")
      .def_readonly("name", &MemoryLocation::name, "The location's name.")
      .def_readonly("type", &MemoryLocation::type, "The memory it is in (DRAM, SB, PSUM, ...).")
      .def_readonly("addr", &MemoryLocation::addr, "Its byte address (within each partition on chip).")
      .def_readonly("partitions", &MemoryLocation::partitions, "How many partitions it spans.")
      .def_readonly("bytes_per_partition", &MemoryLocation::bytes_per_partition, "Its size in each partition, in bytes.")
      .def_readonly("base_partition", &MemoryLocation::base_partition, "Its first partition.")
      .def_readonly("bank", &MemoryLocation::bank, "Its PSUM bank (PSUM locations).")
      .def_property_readonly("dtype", [](const MemoryLocation& l) { return l.set->dtype; }, "The tensor's element type.")
      .def_property_readonly("shape", [](const MemoryLocation& l) { return l.set->tensor_shape; }, "The tensor's shape.")
      .def_property_readonly("kind", [](const MemoryLocation& l) { return l.set->kind; }, "The tensor's kind.")
      .def_property_readonly("set_name", [](const MemoryLocation& l) { return l.set->name; }, "The tensor's name.")
      .def("__repr__", [](const MemoryLocation& l) {
        return "<MemoryLocation " + l.name + " " + std::string(enumName(l.type)) + ">";
      });
  locationSet.def_property_readonly("location", [](MemoryLocationSet& set) { return set.location(); },
                                    py::return_value_policy::reference_internal, "The set's memory location.");

  // An AccessPattern refers to its MemoryLocation by pointer; Python copies of operands keep the
  // owning module alive through the instruction that returned them, and a new one (the constructor,
  // Instruction.createAP) through the location it was made over.
  py::class_<AccessPattern>(m, "AccessPattern", "bir::AccessPattern: an instruction operand, a strided view of a memory location or an immediate.")
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
           py::arg("location"), py::arg("offset"), py::arg("pattern"), py::arg("dtype") = py::none(), py::keep_alive<1, 2>(),
           "A plain (ISA) operand: `pattern` over `location` from element `offset`, in `dtype` (default: the tensor's).")
      .def_static("immediate", &AccessPattern::immediate, py::arg("value"), py::arg("dtype") = DType::float32,
                  "An immediate operand of `value`.")
      .def_readwrite("flavour", &AccessPattern::flavour, "How the operand addresses its tensor (BIR JSON \"flavour\").")
      .def_readwrite("dtype", &AccessPattern::dtype, "The element type it is read or written in.")
      .def_readwrite("offset", &AccessPattern::offset, "Its first element's offset, in elements.")
      .def_readwrite("pattern", &AccessPattern::pattern, "Its [step, num] dimensions, partition dimension first.")
      .def_readwrite("imm", &AccessPattern::imm, "The value of an immediate operand.")
      .def_property("access_shape", &AccessPattern::accessShape, &AccessPattern::setAccessShape,
                    "The shape a kernel-node operand is accessed as.")
      .def_property("partition_dim", &AccessPattern::partitionDim, &AccessPattern::setPartitionDim,
                    "Which dimension of access_shape is the partition dimension.")
      .def_property("lnc_size", [](const AccessPattern& a) { return int64_t{a.lnc_size}; },
                    [](AccessPattern& a, int64_t n) { a.lnc_size = narrowLncSize(n, [] { return std::string(); }); },
                    "The logical NeuronCore size a kernel-node operand is split over.")
      .def_readwrite("reduce", &AccessPattern::reduce, "Whether an output operand accumulates into its destination.")
      .def_property_readonly("is_immediate", &AccessPattern::isImmediate, "Whether it is an immediate.")
      .def_property_readonly("location", [](const AccessPattern& a) { return a.loc; },
                             py::return_value_policy::reference_internal, "The memory location it views (None for an immediate).")
      .def_property_readonly("memref", [](const AccessPattern& a) { return a.loc ? a.loc->name : std::string(); },
                             "The memory location's name (\"\" for an immediate).")
      .def_property_readonly("partitions", &AccessPattern::partitions, "How many partitions it spans.")
      .def_property_readonly("free_shape", &AccessPattern::freeShape, "The shape of its free (non-partition) dimensions.")
      .def_property_readonly("num_elements", &AccessPattern::numElements, "How many elements it addresses.")
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
  py::class_<Instruction> inst(m, "Instruction", "bir::Instruction: the base of every BIR node class (opcode, engine, operands).");
  inst.def_property_readonly("opcode", [](const Instruction& I) { return static_cast<int>(I.opcode()); },
                             "Its InstructionType ordinal.")
      .def_property_readonly("opcode_name", &Instruction::opcodeName, "Its InstructionType name.")
      .def_property_readonly("node_class", [](const Instruction& I) { return nodeClassName(I.nodeClass()); },
                             "The name of its node class (\"InstMatmult\", ...).")
      .def_readwrite("name", &Instruction::name, "Its name.")
      .def_readwrite("engine", &Instruction::engine, "The engine it runs on.")
      .def_property("ins", [](Instruction& I) -> const std::vector<AccessPattern>& { return I.ins; },
                    [](Instruction& I, std::vector<AccessPattern> aps) {
                      requireOwnLocations(I, aps, "Instruction.ins");
                      I.ins = std::move(aps);
                    },
                    py::return_value_policy::reference_internal, "Its input operands.")
      .def_property("outs", [](Instruction& I) -> const std::vector<AccessPattern>& { return I.outs; },
                    [](Instruction& I, std::vector<AccessPattern> aps) {
                      requireOwnLocations(I, aps, "Instruction.outs");
                      I.outs = std::move(aps);
                    },
                    py::return_value_policy::reference_internal, "Its output operands.")
      .def_readwrite("source", &Instruction::source, "Where it came from (file:line of the traced kernel), or \"\".")
      .def_readwrite("kernel", &Instruction::kernel, "The kernel instance it was expanded from, or \"\".")
      .def_readwrite("extra_json", &Instruction::extra_json, "Unknown BIR JSON fields it was read with, kept verbatim (\"{...}\" or \"\").")
      .def_readonly("id", &Instruction::id, "Its position-independent id, unique within its module.")
      .def("addSeqAccess",
           [](Instruction& I, MemoryLocation* t, bool isOutput) {
             requireOwnLocation(I, t, "addSeqAccess");
             I.addSeqAccess(t, isOutput);
           },
           py::arg("tensor"), py::arg("isOutput"), "Adds a kernel-node operand reading or writing all of `tensor` in order.")
      .def("addOpaqueAP",
           [](Instruction& I, MemoryLocation* t, bool isOutput) {
             requireOwnLocation(I, t, "addOpaqueAP");
             I.addOpaqueAP(t, isOutput);
           },
           py::arg("tensor"), py::arg("isOutput"), "Adds an opaque operand naming `tensor` (no pattern).")
      .def("addAP",
           [](Instruction& I, const AccessPattern& ap, bool isOutput) {
             requireOwnLocation(I, ap.loc, "addAP");
             I.addAP(ap, isOutput);
           },
           py::arg("ap"), py::arg("isOutput"), "Adds `ap` as an input or an output operand.")
      .def("addArgumentOrOutput",
           [](Instruction& I, const AccessPattern& ap, bool isOutput, bool reduce) {
             requireOwnLocation(I, ap.loc, "addArgumentOrOutput");
             I.addArgumentOrOutput(ap, isOutput, reduce);
           },
           py::arg("ap"), py::arg("isOutput"), py::arg("reduce") = false,
           "Adds a kernel-node argument (input) or output operand; `reduce`: the output accumulates.")
      .def_static("createAP", &Instruction::createAP, py::arg("tensor"), py::arg("offset"),
                  py::arg("pattern"), py::arg("access_shape"), py::arg("partition_dim"), py::arg("lnc_size") = 1,
                  py::keep_alive<0, 1>(),
                  "A kernel-node operand: `pattern` over `tensor` from `offset`, accessed as `access_shape`.")
      .def("__repr__", [](const Instruction& I) {
        return "<" + std::string(nodeClassName(I.nodeClass())) + " " + I.opcodeName() + " '" + I.name + "'>";
      });
#define BIR_NODE_CLASS(C) bindNode<Inst##C>(m, "Inst" #C);
#include "bir/NodeClasses.def"
#undef BIR_NODE_CLASS

  // ---- containers ----
  // Objects a container owns are returned as references that keep the container alive
  // (reference_internal), as lists typed by their element.
  py::class_<BasicBlock>(m, "BasicBlock", "bir::BasicBlock: a straight-line list of instructions it owns.")
      .def_readwrite("name", &BasicBlock::name, "The block's name.")
      .def("addInstruction",
           [](BasicBlock& bb, int64_t op, std::string name) { return bb.addInstruction(toOpcode(op), std::move(name)); },
           py::arg("opcode"), py::arg("name") = "", py::return_value_policy::reference_internal,
           "Appends a new instruction of `opcode` (an InstructionType ordinal), as its node class, and returns it.")
      .def("__len__", &BasicBlock::size, "How many instructions the block holds.")
      .def("__getitem__",
           [](BasicBlock& bb, int64_t i) {
             const int64_t n = static_cast<int64_t>(bb.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("instruction index out of range");
             return bb.at(static_cast<size_t>(i));
           },
           py::return_value_policy::reference_internal, "The instruction at index `i` (negative from the end).")
      .def_property_readonly("instructions", [](py::object self) {
        py::typing::List<Instruction> out;
        for (const auto& I : self.cast<BasicBlock&>().instructions()) out.append(borrowed(I.get(), self));
        return out;
      }, "The block's instructions, in order.");

  py::class_<Function>(m, "Function", "bir::Function: the basic blocks and the memory allocations of one NeuronCore's program.")
      .def_readwrite("name", &Function::name, "The function's name.")
      .def_readwrite("attributes", &Function::attributes, "The function's attributes (BIR JSON \"attributes\").")
      .def("addBlock", [](Function& f, std::string n) { return f.addBlock(std::move(n)); }, py::arg("name") = "",
           py::return_value_policy::reference_internal, "Appends a new, empty basic block and returns it.")
      .def_property_readonly("blocks", [](py::object self) {
        py::typing::List<BasicBlock> out;
        for (const auto& b : self.cast<Function&>().blocks()) out.append(borrowed(b.get(), self));
        return out;
      }, "The function's basic blocks, in order.")
      .def_property_readonly("allocations", [](py::object self) {
        py::typing::List<MemoryLocationSet> out;
        for (const auto& a : self.cast<Function&>().allocations()) out.append(borrowed(a.get(), self));
        return out;
      }, "The function's tensors (DRAM and on-chip), in allocation order.")
      .def("createDramTensor",
           [](Function& f, const std::string& n, MemoryType type, DType dtype, const std::vector<int64_t>& shape,
              TensorKind kind) { return f.createDramTensor(n, type, dtype, shape, kind); },
           py::arg("name"), py::arg("type"), py::arg("dtype"), py::arg("shape"),
           py::arg("kind") = TensorKind::Internal, py::return_value_policy::reference_internal,
           "Allocates a DRAM tensor of `shape` and returns its memory location.")
      .def("createOnChipTensor",
           [](Function& f, const std::string& n, MemoryType type, DType dtype, int64_t partitions, int64_t bytes,
              int64_t base, int64_t addr, const std::vector<int64_t>& shape) {
             return f.createOnChipTensor(n, type, dtype, partitions, bytes, base, addr, shape);
           },
           py::arg("name"), py::arg("type"), py::arg("dtype"), py::arg("partitions"),
           py::arg("bytes_per_partition"), py::arg("base_partition") = 0, py::arg("addr") = 0,
           py::arg("shape") = std::vector<int64_t>{}, py::return_value_policy::reference_internal,
           "Allocates an SBUF/PSUM tensor (`partitions` x `bytes_per_partition` from `base_partition`, byte "
           "address `addr`) and returns its memory location.")
      .def("findLocation", [](Function& f, const std::string& n) { return f.findLocation(n); }, py::arg("name"),
           py::return_value_policy::reference_internal, "The memory location named `name`, or None.")
      .def("uniqueTensorName", &Function::uniqueTensorName, py::arg("base"),
           "`base`, or `base` with a numeric suffix, that no tensor of the function is named yet.")
      .def_property_readonly("instruction_count", &Function::instructionCount,
                             "How many instructions the function's blocks hold.");

  py::class_<Module>(m, "Module", "bir::Module: one function per NeuronCore, saved and loaded as BIR JSON.")
      .def(py::init<>(), "An empty module.")
      .def_readwrite("neuron_core_id", &Module::neuron_core_id, "The NeuronCore the module's main function runs on.")
      .def_property("arch", [](const Module& mod) { return mod.arch; },
                    [](Module& mod, const std::string& arch) {
                      if (canonicalArch(arch).empty())
                        throw py::value_error("Module.arch: unknown arch '" + arch + "' (known: " + knownArchNames() + ")");
                      mod.arch = arch;
                    },
                    "The target generation's name (\"gen2\", \"gen3\", or another name of one: \"trn1\", ...).")
      .def_readwrite("files_dir", &Module::files_dir,
                     "The folder the module's file references (IT55 compiled kernels, IT56 KLR files) resolve "
                     "in: where it was loaded from or lowered into; \"\" = the working directory. Not saved.")
      .def("addFunction", [](Module& mod, std::string n) { return mod.addFunction(std::move(n)); }, py::arg("name") = "",
           py::return_value_policy::reference_internal, "Appends a new, empty function and returns it.")
      .def("function", [](Module& mod, int64_t core) { return mod.function(core); }, py::arg("neuron_core_id") = 0,
           py::return_value_policy::reference_internal, "The function of NeuronCore `neuron_core_id`.")
      .def_property_readonly("functions", [](py::object self) {
        py::typing::List<Function> out;
        for (const auto& f : self.cast<Module&>().functions()) out.append(borrowed(f.get(), self));
        return out;
      }, "The module's functions, in order.")
      .def("to_json", [](const Module& mod, int indent) { return moduleToJson(mod, indent); }, py::arg("indent") = 1,
           "The module as BIR JSON text (`indent` < 0: on one line).")
      .def_static("from_json",
                  [](const std::string& text, bool verify, bool plain_first) {
                    JsonReadOptions opts;
                    opts.verify = verify;
                    opts.plain_first = plain_first;
                    return moduleFromJson(text, opts);
                  },
                  py::arg("text"), py::arg("verify") = true, py::arg("plain_first") = true,
                  "A module read from BIR JSON text, verified unless `verify` is False (BIRError names the JSON "
                  "path of any problem). `plain_first` False skips the fast reader of plain text and reads "
                  "through nlohmann's JSON document only: the same module or error, several times slower "
                  "(for comparisons).")
      .def("to_binary", [](const Module& mod) { return py::bytes(moduleToBinary(mod)); },
           "The module as BIR binary (cpp/bir/Binary.h): what its BIR JSON holds, in a sixth of the bytes of a traced "
           "kernel's JSON, read about seven times faster; neuronxsim's own form (the sweep's trace cache), not a compiler's.")
      .def_static("from_binary",
                  [](const py::bytes& data, bool verify) {
                    char* p = nullptr;
                    Py_ssize_t n = 0;
                    if (PyBytes_AsStringAndSize(data.ptr(), &p, &n) != 0) throw py::error_already_set();
                    return moduleFromBinary(std::string_view(p, static_cast<size_t>(n)), verify);
                  },
                  py::arg("data"), py::arg("verify") = true,
                  "A module read from BIR binary (Module.to_binary), verified unless `verify` is False; BIRError "
                  "names the byte offset of any problem.")
      .def("verify", [](const Module& mod) { verifyModule(mod); }, "Checks the module; raises BIRError on the first problem.");
  m.attr("BIR_VERSION") = Module::kBirVersion;
  m.attr("FORMAT_VERSION") = Module::kFormatVersion;
}

NXS_REGISTER_SUBMODULE(bir, 10, "libBIR: opcodes, node classes, modules, BIR JSON", bindBir);

}  // namespace
}  // namespace nxs::py_bind
