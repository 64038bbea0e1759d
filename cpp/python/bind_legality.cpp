// Bindings of the legality rules (bir/Legality.h) into `_core.bir`; neuronxsim.bir.legality is the
// facade. Each check returns None when the instruction is legal, else the Violation it commits.
#include <optional>

#include "bindings.h"
#include "bir/Error.h"
#include "bir/Legality.h"

namespace nxs::py_bind {
namespace {

namespace lg = bir::legality;

bir::Opcode opcodeOf(int ordinal) {
  if (!bir::isValidOpcode(ordinal)) throw bir::BIRError("opcode " + std::to_string(ordinal) + " is not an InstructionType");
  return static_cast<bir::Opcode>(ordinal);
}

void bindLegality(py::module_& m) {
  static constexpr std::string_view kSpaces[] = {"SBUF", "PSUM", "DRAM", "Immediate"};  // lg::Space's order
  bindEnum<lg::Space>(m, "LegalitySpace", kSpaces, std::size(kSpaces));
  py::class_<lg::RuleInfo>(m, "LegalityRule")
      .def_property_readonly("id", [](const lg::RuleInfo& r) { return std::string(r.id); })
      .def_property_readonly("requires", [](const lg::RuleInfo& r) { return std::string(r.requires_); })
      .def("__repr__", [](const lg::RuleInfo& r) { return "<rule " + std::string(r.id) + ">"; });
  py::class_<lg::Violation>(m, "LegalityViolation")
      .def_property_readonly("rule", [](const lg::Violation& v) { return std::string(lg::info(v.rule).id); })
      .def_readonly("message", &lg::Violation::message)
      .def("__repr__", [](const lg::Violation& v) { return "<" + std::string(lg::info(v.rule).id) + ": " + v.message + ">"; });
  py::class_<lg::Operand>(m, "LegalityOperand")
      .def(py::init([](lg::Space space, bir::DType dtype, int64_t partitions, int64_t free_elements,
                       std::optional<std::tuple<int64_t, int64_t, int64_t>> placed) {
             lg::Operand o;
             o.space = space;
             o.dtype = dtype;
             o.partitions = partitions;
             o.free_elements = free_elements;
             if (placed) {
               const auto [start, lo, hi] = *placed;
               if (lo < 0 || hi <= lo || start < lo || start >= hi)
                 throw bir::BIRError("placed (" + std::to_string(start) + ", " + std::to_string(lo) + ", " +
                                     std::to_string(hi) + ") is not (start byte, lo, hi) of a non-empty byte range");
               o.placed = true;
               o.start_byte = start;
               o.byte_lo = lo;
               o.byte_hi = hi;
             }
             return o;
           }),
           py::arg("space"), py::arg("dtype"), py::arg("partitions"), py::arg("free_elements"),
           py::arg("placed") = py::none())
      .def_readonly("space", &lg::Operand::space)
      .def_readonly("dtype", &lg::Operand::dtype)
      .def_readonly("partitions", &lg::Operand::partitions)
      .def_readonly("free_elements", &lg::Operand::free_elements);

  m.def("legality_pe_input_dtypes", [](const std::string& arch) {
    const bir::MachineConfig& cfg = bir::machineConfig(arch);
    std::vector<bir::DType> out;
    for (size_t i = 0; i < bir::EnumTraits<bir::DType>::kNames.size(); ++i)
      if (lg::isPeInputDtype(static_cast<bir::DType>(i), cfg)) out.push_back(static_cast<bir::DType>(i));
    return out;
  }, py::arg("arch"));
  m.def("legality_rules", [] { return lg::rules(); }, py::return_value_policy::copy);
  m.def(
      "legality_matmul",
      [](const lg::Operand& st, const lg::Operand& mv, const lg::Operand& out, const std::string& arch, bool is_transpose,
         bool start, bir::PerfMode perf_mode, std::vector<int64_t> tile_size, std::vector<int64_t> tile_position) {
        lg::Matmul mm{st, mv, out, is_transpose, start, perf_mode, tile_size, tile_position};
        return lg::matmul(mm, bir::machineConfig(arch));
      },
      py::arg("stationary"), py::arg("moving"), py::arg("out"), py::arg("arch"), py::arg("is_transpose"), py::arg("start"),
      py::arg("perf_mode"), py::arg("tile_size"), py::arg("tile_position"));
  m.def(
      "legality_engine_operand",
      [](int opcode, bir::Engine engine, const lg::Operand& op, bool output, const std::string& arch) {
        return lg::engineOperand(opcodeOf(opcode), engine, op, output, bir::machineConfig(arch));
      },
      py::arg("opcode"), py::arg("engine"), py::arg("operand"), py::arg("output"), py::arg("arch"));
  m.def(
      "legality_psum_inputs",
      [](int opcode, const lg::Operand& a, const lg::Operand& b) { return lg::psumInputs(opcodeOf(opcode), a, b); },
      py::arg("opcode"), py::arg("a"), py::arg("b"));
  m.def("legality_is_bitvec_op", &lg::isBitvecOp, py::arg("op"));
  m.def(
      "legality_alu_ops",
      [](int opcode, bir::Engine engine, bir::AluOp op0, bir::AluOp op1) {
        return lg::aluOps(opcodeOf(opcode), engine, op0, op1);
      },
      py::arg("opcode"), py::arg("engine"), py::arg("op0"), py::arg("op1"));
  m.def(
      "legality_bitvec_dtypes",
      [](int opcode, bir::AluOp op0, bir::AluOp op1, const std::vector<bir::DType>& ins,
         const std::vector<bir::DType>& outs) { return lg::bitvecDtypes(opcodeOf(opcode), op0, op1, ins, outs); },
      py::arg("opcode"), py::arg("op0"), py::arg("op1"), py::arg("ins"), py::arg("outs"));
  m.def("legality_is_reduce_op", &lg::isReduceOp, py::arg("op"));
  m.def(
      "legality_reduce_op", [](int opcode, bir::AluOp reduce_op) { return lg::reduceOp(opcodeOf(opcode), reduce_op); },
      py::arg("opcode"), py::arg("reduce_op"));
  m.def("legality_partition_reduce_op", &lg::partitionReduceOp, py::arg("op"));
  m.def("legality_register_fold", &lg::registerFold, py::arg("reduce_op"), py::arg("cumulative"));
  m.def(
      "legality_activation_reduce",
      [](bir::AccumCmd acc, bir::AluOp acc_op, const std::string& arch) {
        return lg::activationReduce(acc, acc_op, bir::machineConfig(arch));
      },
      py::arg("acc"), py::arg("acc_op"), py::arg("arch"));
  m.def(
      "legality_dve_transpose",
      [](const lg::Operand& in, const lg::Operand& out, const std::string& arch) {
        return lg::dveTranspose(in, out, bir::machineConfig(arch));
      },
      py::arg("data"), py::arg("out"), py::arg("arch"));
  m.def(
      "legality_bn_stats", [](const lg::Operand& in, const std::string& arch) { return lg::bnStats(in, bir::machineConfig(arch)); },
      py::arg("data"), py::arg("arch"));
  m.def(
      "legality_max8_family",
      [](int opcode, const lg::Operand& in, const std::string& arch) {
        return lg::max8Family(opcodeOf(opcode), in, bir::machineConfig(arch));
      },
      py::arg("opcode"), py::arg("data"), py::arg("arch"));
  m.def(
      "legality_dma",
      [](int opcode, const lg::Operand& src, const lg::Operand& dst, std::optional<lg::Operand> index, bir::DmaMode mode,
         bir::AluOp dst_rmw_op, bir::DgeType dge_type, int64_t indirect_dim, bool src_2d, bir::Engine engine,
         const std::string& arch) {
        lg::Dma d{opcodeOf(opcode), engine, src, dst, index, mode, dst_rmw_op, dge_type, indirect_dim, src_2d};
        return lg::dma(d, bir::machineConfig(arch));
      },
      py::arg("opcode"), py::arg("src"), py::arg("dst"), py::arg("index"), py::arg("mode"), py::arg("dst_rmw_op"),
      py::arg("dge_type"), py::arg("indirect_dim"), py::arg("src_2d"), py::arg("engine"), py::arg("arch"));
  m.def(
      "legality_local_gather",
      [](const lg::Operand& src, const lg::Operand& index, int64_t num_elem_per_idx, int64_t num_valid_indices,
         const std::string& arch) {
        return lg::localGather(src, index, num_elem_per_idx, num_valid_indices, bir::machineConfig(arch));
      },
      py::arg("src"), py::arg("index"), py::arg("num_elem_per_idx"), py::arg("num_valid_indices"), py::arg("arch"));
  m.def(
      "legality_generation",
      [](int opcode, bir::Engine engine, const std::string& arch) {
        return lg::generation(opcodeOf(opcode), engine, bir::machineConfig(arch));
      },
      py::arg("opcode"), py::arg("engine"), py::arg("arch"));
  m.def(
      "legality_dma_trigger",
      [](int opcode, bir::DgeType dge_type, bir::Engine engine, bir::DType src, bir::DType dst, const std::string& arch) {
        return lg::dmaTrigger(opcodeOf(opcode), dge_type, engine, src, dst, bir::machineConfig(arch));
      },
      py::arg("opcode"), py::arg("dge_type"), py::arg("engine"), py::arg("src"), py::arg("dst"), py::arg("arch"));
}

}  // namespace
NXS_REGISTER_SUBMODULE(bir, 13, "libBIR: opcodes, node classes, modules, BIR JSON", bindLegality);
}  // namespace nxs::py_bind
