// The three BIR kernel nodes (seed 000): IT54 InstBIRKernel (name-inlined library kernel), IT55
// InstNKIKernel (user @nki.jit kernel), IT56 InstNKIKLIRKernel (registry kernel re-traced at
// codegen time, carrying its KLR or BIR-JSON binary). All three derive directly from Instruction
// and pass their ordinal to it as a constructor literal, as the shipped constructors do.
//
// Their operands are DRAM tensors marshalled by the codegen (addSeqAccess / addAP / createAP +
// addArgumentOrOutput / addOpaqueAP); the resolvers in libwalrus replace each node with ISA code.
#pragma once

#include <optional>
#include <utility>

#include "Instruction.h"

namespace bir {

using KernelAttrs = std::vector<std::pair<std::string, std::string>>;
using ShapeList = std::vector<std::vector<int64_t>>;

class InstBIRKernel final : public Instruction {
 public:
  explicit InstBIRKernel(std::string name = {}, BasicBlock* bb = nullptr)
      : Instruction(std::move(name), bb, /*InstructionType=*/static_cast<Opcode>(54)) {}
  static bool classof(const Instruction* I) { return I->opcode() == InstructionType::BIRKernel; }
  static constexpr OperandRule kOperands{0, 64, 0, 64};

  std::string kernel_name;  // +0xF0: the macro name; selects the library leaf
  KernelAttrs kernel_attrs;  // op-config bag, passed through verbatim
  ShapeList srcs_shape;
  ShapeList dsts_shape;
  std::vector<int64_t> sb_buf_shape;    // (partitions, bytes)
  std::vector<int64_t> psum_buf_shape;  // (partitions, banks, bytes)
  std::string auto_cast;
  std::string auto_cast_type;
  // The bespoke families' named attrs (public BIRKernel schema); unset ones are not written.
  std::optional<bool> is_causal;
  std::optional<bool> fused_rmsnorm;
  std::optional<int64_t> norm_type;
  std::optional<bool> store_add;
  std::optional<bool> quant_kernel;
  std::optional<double> lower_bound;
  std::optional<bool> skip_gate;
  std::optional<int64_t> act_fn;
  std::optional<bool> up_bias;
  std::optional<bool> down_bias;
  std::optional<bool> is_tkg;
  std::optional<int64_t> lnc_size;
  std::optional<int64_t> output_layout;

  // The attr's value, or null when the bag lacks it.
  const std::string* attr(const std::string& key) const;

  template <class V>
  static void fields(V&& v) {
    v("kernel_name", &InstBIRKernel::kernel_name);
    v("kernel_attrs", &InstBIRKernel::kernel_attrs);
    v("srcs_shape", &InstBIRKernel::srcs_shape);
    v("dsts_shape", &InstBIRKernel::dsts_shape);
    v("sb_buf_shape", &InstBIRKernel::sb_buf_shape);
    v("psum_buf_shape", &InstBIRKernel::psum_buf_shape);
    v("auto_cast", &InstBIRKernel::auto_cast);
    v("auto_cast_type", &InstBIRKernel::auto_cast_type);
    v("is_causal", &InstBIRKernel::is_causal);
    v("fused_rmsnorm", &InstBIRKernel::fused_rmsnorm);
    v("norm_type", &InstBIRKernel::norm_type);
    v("store_add", &InstBIRKernel::store_add);
    v("quant_kernel", &InstBIRKernel::quant_kernel);
    v("lower_bound", &InstBIRKernel::lower_bound);
    v("skip_gate", &InstBIRKernel::skip_gate);
    v("act_fn", &InstBIRKernel::act_fn);
    v("up_bias", &InstBIRKernel::up_bias);
    v("down_bias", &InstBIRKernel::down_bias);
    v("is_tkg", &InstBIRKernel::is_tkg);
    v("lnc_size", &InstBIRKernel::lnc_size);
    v("output_layout", &InstBIRKernel::output_layout);
  }
};

class InstNKIKernel final : public Instruction {
 public:
  explicit InstNKIKernel(std::string name = {}, BasicBlock* bb = nullptr)
      : Instruction(std::move(name), bb, /*InstructionType=*/static_cast<Opcode>(55)) {}
  static bool classof(const Instruction* I) { return I->opcode() == InstructionType::NKIKernel; }
  static constexpr OperandRule kOperands{0, 64, 0, 64};

  // The kernel the NKI front end compiled (walrus/CompiledNkiKernels.h): its handle,
  // "nki/<kernel>.<content hash>.<json|klr>", also the artifact's file in the module's folder.
  std::string func;
  std::vector<std::string> func_args;  // its parameters, bound in order to ins
  std::vector<std::string> func_outs;  // its outputs, bound in order to outs
  std::vector<int64_t> sb_buf_shape;
  std::vector<int64_t> psum_buf_shape;

  template <class V>
  static void fields(V&& v) {
    v("func", &InstNKIKernel::func);
    v("func_args", &InstNKIKernel::func_args);
    v("func_outs", &InstNKIKernel::func_outs);
    v("sb_buf_shape", &InstNKIKernel::sb_buf_shape);
    v("psum_buf_shape", &InstNKIKernel::psum_buf_shape);
  }
};

class InstNKIKLIRKernel final : public Instruction {
 public:
  explicit InstNKIKLIRKernel(std::string name = {}, BasicBlock* bb = nullptr)
      : Instruction(std::move(name), bb, /*InstructionType=*/static_cast<Opcode>(56)) {}
  static bool classof(const Instruction* I) {
    return I->opcode() == InstructionType::NKIKLIRKernel;
  }
  static constexpr OperandRule kOperands{0, 64, 0, 64};

  std::string klir_binary;                    // +0xF0: KLR file path (Form A) or BIR JSON (Form B)
  std::string kernel_format;                  // +0x110: "bir" => Form B, anything else => Form A
  std::string nki_binary_version_identifier;  // +0x130
  std::string func_name;                      // the registry key it was traced from
  std::vector<std::string> func_args;
  std::vector<std::string> func_outs;
  std::vector<int64_t> sb_buf_shape;
  std::vector<int64_t> psum_buf_shape;
  int64_t grid = 1;  // logical NeuronCores traced (one function per NeuronCoreId)

  template <class V>
  static void fields(V&& v) {
    v("klir_binary", &InstNKIKLIRKernel::klir_binary);
    v("kernel_format", &InstNKIKLIRKernel::kernel_format);
    v("nki_binary_version_identifier", &InstNKIKLIRKernel::nki_binary_version_identifier);
    v("func_name", &InstNKIKLIRKernel::func_name);
    v("func_args", &InstNKIKLIRKernel::func_args);
    v("func_outs", &InstNKIKLIRKernel::func_outs);
    v("sb_buf_shape", &InstNKIKLIRKernel::sb_buf_shape);
    v("psum_buf_shape", &InstNKIKLIRKernel::psum_buf_shape);
    v("grid", &InstNKIKLIRKernel::grid);
  }
};

// Visits every node class: f(static_cast<T*>(nullptr)) for T in NodeClasses.def.
template <class F>
void forEachNodeClass(F&& f);

}  // namespace bir

#include "Instructions.h"

namespace bir {
template <class F>
void forEachNodeClass(F&& f) {
#define BIR_NODE_CLASS(C) f(static_cast<Inst##C*>(nullptr));
#include "NodeClasses.def"
#undef BIR_NODE_CLASS
}

// Each node class's kOperands, by ordinal (NodeClass lists NodeClasses.def in order). Inline, here
// where every node class is complete: the verifier asks it of every instruction, and as a call
// across the library boundary it cost more than the four comparisons it feeds.
inline constexpr OperandRule kOperandRules[] = {
#define BIR_NODE_CLASS(C) Inst##C::kOperands,
#include "NodeClasses.def"
#undef BIR_NODE_CLASS
};
inline OperandRule operandRuleOf(NodeClass c) {
  const auto i = static_cast<size_t>(c);
  return i < std::size(kOperandRules) ? kOperandRules[i] : OperandRule{0, 0, 0, 0};
}
}  // namespace bir
