#include "walrus/kernels/LeafSignature.h"

#include <algorithm>

#include "bir/Error.h"
#include "walrus/kernels/KernelAttrs.h"

namespace walrus::kernels {


const AttrSig* LeafSignature::attr(const std::string& name) const {
  for (const AttrSig& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

namespace {

AttrSig attrSig(std::string name, AttrType type, std::string fallback, std::string doc) {
  AttrSig a;
  a.name = std::move(name);
  a.type = type;
  a.fallback = std::move(fallback);
  a.doc = std::move(doc);
  return a;
}

}  // namespace

AttrSig boolAttr(std::string name, bool fallback, std::string doc) {
  return attrSig(std::move(name), AttrType::Bool, fallback ? "true" : "false", std::move(doc));
}

AttrSig intAttr(std::string name, std::string fallback, std::string doc, bool hasMinimum, int64_t minimum) {
  AttrSig a = attrSig(std::move(name), AttrType::Int, std::move(fallback), std::move(doc));
  a.has_minimum = hasMinimum;
  a.minimum = minimum;
  return a;
}

AttrSig floatAttr(std::string name, std::string fallback, std::string doc) {
  return attrSig(std::move(name), AttrType::Float, std::move(fallback), std::move(doc));
}

AttrSig enumAttr(std::string name, std::string enumType, std::vector<std::string> members, std::string fallback,
                 std::string doc, std::vector<std::string> allowed) {
  AttrSig a = attrSig(std::move(name), AttrType::Enum, std::move(fallback), std::move(doc));
  a.enum_type = std::move(enumType);
  a.members = std::move(members);
  a.allowed = std::move(allowed);
  return a;
}

namespace {

std::string operandText(const OperandSig& op) {
  std::string s = op.role + (op.max_count ? "0.." + std::to_string(op.max_count - 1) : "") + " [";
  for (size_t i = 0; i < op.dims.size(); ++i) s += (i ? ", " : "") + op.dims[i];
  s += "]";
  std::string when;
  for (const std::string& c : op.when) when += (when.empty() ? "" : ", ") + c;
  if (op.optional) when += (when.empty() ? "" : ", ") + std::string("optional");
  return when.empty() ? s : s + " (" + when + ")";
}

bool holds(const std::string& condition, const LeafSignature& sig, KernelAttrs& attrs) {
  if (condition.empty()) return true;
  if (condition[0] == '!') return !attrs.flag(condition.substr(1));
  const size_t eq = condition.find('=');
  if (eq == std::string::npos) return attrs.flag(condition);
  const std::string name = condition.substr(0, eq), member = condition.substr(eq + 1);
  const AttrSig* a = sig.attr(name);
  if (!a) throw KernelError("operand condition '" + condition + "' names no attr of the leaf's signature");
  const auto it = std::find(a->members.begin(), a->members.end(), member);
  return attrs.choice(name) == it - a->members.begin();
}

std::vector<std::string> roles(const std::vector<OperandSig>& roster, const LeafSignature& sig, KernelAttrs& attrs,
                               size_t numOnNode) {
  std::vector<const OperandSig*> present;
  size_t fixed = 0;
  for (const OperandSig& op : roster)
    if (std::all_of(op.when.begin(), op.when.end(), [&](const std::string& c) { return holds(c, sig, attrs); })) {
      present.push_back(&op);
      fixed += op.optional || op.max_count ? 0 : 1;
    }
  const size_t surplus = numOnNode > fixed ? numOnNode - fixed : 0;
  std::vector<std::string> out;
  for (const OperandSig* op : present) {
    if (op->optional) {
      if (surplus > 0) out.push_back(op->role);
    } else if (op->max_count) {
      for (size_t i = 0; i < std::min(surplus, static_cast<size_t>(op->max_count)); ++i)
        out.push_back(op->role + std::to_string(i));
    } else {
      out.push_back(op->role);
    }
  }
  return out;
}

void check(const std::string& kernelName, bool outputs, const std::vector<std::string>& bound, size_t onNode,
           const std::vector<OperandSig>& roster) {
  if (bound.size() == onNode) return;
  const std::string side = outputs ? "outputs" : "inputs";
  const std::string leaf = "leaf '" + kernelName + "': ";
  if (onNode < bound.size())
    throw KernelError(leaf + (outputs ? "outs[" : "ins[") + std::to_string(onNode) + "] '" + bound[onNode] +
                      "' is missing; the node has " + std::to_string(onNode) + " " + side + " of " +
                      rosterText(roster));
  throw KernelError(leaf + "the node has " + std::to_string(onNode) + " " + side + "; for its attrs the leaf takes " +
                    std::to_string(bound.size()) + " of " + rosterText(roster));
}

}  // namespace

std::string rosterText(const std::vector<OperandSig>& roster) {
  std::string s;
  for (const OperandSig& op : roster) s += (s.empty() ? "" : ", ") + operandText(op);
  return s;
}

OperandBinding bindOperands(const std::string& kernelName, const LeafSignature& sig, KernelAttrs& attrs,
                            size_t numIns, size_t numOuts) {
  OperandBinding b{roles(sig.ins, sig, attrs, numIns), roles(sig.outs, sig, attrs, numOuts)};
  check(kernelName, false, b.ins, numIns, sig.ins);
  check(kernelName, true, b.outs, numOuts, sig.outs);
  return b;
}

}  // namespace walrus::kernels
