// LeafSignature: the one declaration of an IT54 leaf's interface.
//
// Each leaf file declares its signature beside its expander and registers both
// (WALRUS_REGISTER_LEAF): the operands by role, in node order, with symbolic dims, each present
// always, when its attrs say so, or (a trailing one) when the node has it; and the attrs with
// their type and default. Everything else reads it:
//   * KernelAttrs takes each attr's type and default from it and refuses an attr it does not
//     declare, naming the leaf and the attr;
//   * KernelBuilder binds operands by role through bindOperands (a missing operand names its role);
//   * Python (neuronxsim.walrus.leaf_signature) builds the Penguin families' attrs and operand
//     rosters and the codegen's kernel_attrs lists from it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace walrus::kernels {

class KernelAttrs;

enum class AttrType { Bool, Int, Float, Enum };

struct AttrSig {
  std::string name;
  AttrType type = AttrType::Bool;
  // The value when the node does not carry the attr, in BIR's string form (attr_to_str: "true",
  // "1e-06", an enum's integer value); empty: required.
  std::string fallback;
  // Enum: the type's name (neuronxsim.starfish.penguin.ir.enums) and its members, member i having
  // value i; `allowed` narrows them for this leaf (empty: all).
  std::string enum_type;
  std::vector<std::string> members;
  std::vector<std::string> allowed;
  // Int: the least value (none when has_minimum is false).
  bool has_minimum = false;
  int64_t minimum = 0;
  // Who sets it: the macro's user (a family attr) or the codegen (a routing decision).
  bool from_codegen = false;
  // The codegen puts it in kernel_attrs only when it differs from the fallback: an attr beyond
  // the seed's roster of the family (MLP's gate_bias, QKV's residual_adds).
  bool only_when_set = false;
  std::string doc;

  bool required() const { return fallback.empty(); }
};

// When an operand is present: every condition holds. A condition is "attr" (a bool attr true),
// "!attr" (false) or "attr=MEMBER" (an enum attr has that member).
struct OperandSig {
  OperandSig(std::string role, std::vector<std::string> dims, std::vector<std::string> when = {},
             int maxCount = 0, bool optional = false)
      : role(std::move(role)), dims(std::move(dims)), when(std::move(when)), max_count(maxCount), optional(optional) {}

  std::string role;
  // Symbolic dims: a symbol ("H"), an integer ("1"), a symbol plus a constant ("H+4"),
  // "num_partitions" (the target's partitions) or "..." (any leading dims).
  std::vector<std::string> dims;
  std::vector<std::string> when;
  // Variadic (> 0): 0 to max_count operands role0, role1, ..., as many as the node has beyond the
  // others (at most one variadic operand per side, so the count is never ambiguous).
  int max_count = 0;
  // A trailing input the node may leave out (generic leaves whose attr bag cannot say).
  bool optional = false;
};

struct LeafSignature {
  std::vector<AttrSig> attrs;
  std::vector<OperandSig> ins, outs;

  const AttrSig* attr(const std::string& name) const;
};

// Shorthands for the declarations in the leaf files.
AttrSig boolAttr(std::string name, bool fallback, std::string doc);
AttrSig intAttr(std::string name, std::string fallback, std::string doc, bool hasMinimum = false, int64_t minimum = 0);
AttrSig floatAttr(std::string name, std::string fallback, std::string doc);
AttrSig enumAttr(std::string name, std::string enumType, std::vector<std::string> members, std::string fallback,
                 std::string doc, std::vector<std::string> allowed = {});

// The node's operands by role, in order, for `attrs`' values: `kernelName`'s roster evaluated and
// checked against the node's operand counts (KernelError naming the leaf and the missing or
// surplus operand).
struct OperandBinding {
  std::vector<std::string> ins, outs;
};
OperandBinding bindOperands(const std::string& kernelName, const LeafSignature& sig, KernelAttrs& attrs,
                            size_t numIns, size_t numOuts);

// "hidden [B, S, H], residual [B, S, H] (store_add), ...": a roster for messages.
std::string rosterText(const std::vector<OperandSig>& roster);

}  // namespace walrus::kernels
