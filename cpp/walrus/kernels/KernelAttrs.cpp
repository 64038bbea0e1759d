#include "walrus/kernels/KernelAttrs.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <algorithm>

#include "bir/Error.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/LeafSignature.h"

namespace walrus::kernels {

namespace {

// The named node field of an attr, if the public schema has one of that name.
template <class T>
std::optional<T> namedField(const bir::InstBIRKernel& n, const std::string& key);

template <>
std::optional<bool> namedField<bool>(const bir::InstBIRKernel& n, const std::string& key) {
  if (key == "is_causal") return n.is_causal;
  if (key == "fused_rmsnorm") return n.fused_rmsnorm;
  if (key == "store_add") return n.store_add;
  if (key == "quant_kernel") return n.quant_kernel;
  if (key == "skip_gate") return n.skip_gate;
  if (key == "up_bias") return n.up_bias;
  if (key == "down_bias") return n.down_bias;
  if (key == "is_tkg") return n.is_tkg;
  return std::nullopt;
}

template <>
std::optional<int64_t> namedField<int64_t>(const bir::InstBIRKernel& n, const std::string& key) {
  if (key == "norm_type") return n.norm_type;
  if (key == "act_fn") return n.act_fn;
  if (key == "lnc_size") return n.lnc_size;
  if (key == "output_layout") return n.output_layout;
  return std::nullopt;
}

template <>
std::optional<double> namedField<double>(const bir::InstBIRKernel& n, const std::string& key) {
  if (key == "lower_bound") return n.lower_bound;
  return std::nullopt;
}

std::optional<int64_t> parseInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parseNumber(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string text(bool v) { return v ? "true" : "false"; }
std::string text(int64_t v) { return std::to_string(v); }
std::string text(double v) { return std::to_string(v); }

}  // namespace

KernelAttrs::KernelAttrs(const bir::InstBIRKernel& node) : node_(node), signature_(nullptr) {
  if (const Leaf* leaf = findLeaf(node.kernel_name)) signature_ = &leaf->signature;
}

std::string KernelAttrs::leaf() const { return "leaf '" + node_.kernel_name + "'"; }

namespace {

const AttrSig& declared(const LeafSignature* sig, const std::string& leaf, const std::string& key, AttrType type) {
  const AttrSig* a = sig ? sig->attr(key) : nullptr;
  if (!a) throw KernelError(leaf + " reads attr '" + key + "', which its signature does not declare");
  if (a->type != type) throw KernelError(leaf + " reads attr '" + key + "' as another type than its signature's");
  return *a;
}

// The signature's fallback, parsed (it is declared in BIR's string form).
template <class T>
std::optional<T> fallbackOf(const AttrSig& a, std::optional<T> (*parse)(const std::string&)) {
  if (a.required()) return std::nullopt;
  std::optional<T> v = parse(a.fallback);
  if (!v) throw KernelError("attr '" + a.name + "': the signature's default '" + a.fallback + "' does not parse");
  return v;
}

std::optional<bool> parseBool(const std::string& s) {
  if (s == "true" || s == "1") return true;
  if (s == "false" || s == "0") return false;
  return std::nullopt;
}

}  // namespace

const std::string* KernelAttrs::raw(const std::string& key) { return node_.attr(key); }

void KernelAttrs::bad(const std::string& key, const std::string& value, const std::string& expected) const {
  throw KernelError("attr '" + key + "' is '" + value + "'; expected " + expected);
}

template <class T>
T KernelAttrs::agree(const std::string& key, std::optional<T> bag, const std::optional<T>& field,
                     std::optional<T> fallback) const {
  if (bag && field && *bag != *field)
    throw KernelError("attr '" + key + "' is " + text(*bag) + " in kernel_attrs but " + text(*field) +
                      " in the node's " + key + " field");
  if (bag) return *bag;
  if (field) return *field;
  if (fallback) return *fallback;
  throw KernelError(leaf() + ": attr '" + key + "' is missing; its signature requires it");
}

bool KernelAttrs::flag(const std::string& key) {
  const AttrSig& a = declared(signature_, leaf(), key, AttrType::Bool);
  std::optional<bool> bag;
  if (const std::string* s = raw(key)) {
    bag = parseBool(*s);
    if (!bag) bad(key, *s, "true or false");
  }
  return agree<bool>(key, bag, namedField<bool>(node_, key), fallbackOf<bool>(a, parseBool));
}

int64_t KernelAttrs::integer(const std::string& key) {
  const AttrSig& a = declared(signature_, leaf(), key, AttrType::Int);
  const std::string expected = "an integer" + (a.has_minimum ? " >= " + std::to_string(a.minimum) : std::string());
  std::optional<int64_t> bag;
  if (const std::string* s = raw(key)) {
    bag = parseInt(*s);
    if (!bag) bad(key, *s, expected);
  }
  const int64_t v = agree<int64_t>(key, bag, namedField<int64_t>(node_, key), fallbackOf<int64_t>(a, parseInt));
  if (a.has_minimum && v < a.minimum) bad(key, std::to_string(v), expected);
  return v;
}

double KernelAttrs::number(const std::string& key) {
  const AttrSig& a = declared(signature_, leaf(), key, AttrType::Float);
  std::optional<double> bag;
  if (const std::string* s = raw(key)) {
    bag = parseNumber(*s);
    if (!bag) bad(key, *s, "a finite number");
  }
  return agree<double>(key, bag, namedField<double>(node_, key), fallbackOf<double>(a, parseNumber));
}

int64_t KernelAttrs::choice(const std::string& key) {
  const AttrSig& a = declared(signature_, leaf(), key, AttrType::Enum);
  const std::vector<std::string>& names = a.members;
  const std::vector<std::string>& allowed = a.allowed.empty() ? names : a.allowed;
  std::string expected = "one of";
  for (size_t i = 0; i < allowed.size(); ++i) {
    const auto value = std::find(names.begin(), names.end(), allowed[i]) - names.begin();
    expected += (i ? ", " : " ") + allowed[i] + " (" + std::to_string(value) + ")";
  }
  std::optional<int64_t> bag;
  if (const std::string* s = raw(key)) {
    bag = parseInt(*s);
    for (size_t i = 0; !bag && i < names.size(); ++i)
      if (*s == names[i]) bag = static_cast<int64_t>(i);
    if (!bag || *bag < 0 || *bag >= static_cast<int64_t>(names.size())) bad(key, *s, expected);
  }
  const int64_t v = agree<int64_t>(key, bag, namedField<int64_t>(node_, key), fallbackOf<int64_t>(a, parseInt));
  if (v < 0 || v >= static_cast<int64_t>(names.size()) ||
      std::find(allowed.begin(), allowed.end(), names[static_cast<size_t>(v)]) == allowed.end())
    bad(key, v >= 0 && v < static_cast<int64_t>(names.size()) ? names[static_cast<size_t>(v)] : std::to_string(v),
        expected);
  return v;
}

void KernelAttrs::finish() const {
  std::string unknown;
  for (const auto& [k, v] : node_.kernel_attrs)
    if (!signature_ || !signature_->attr(k)) unknown += (unknown.empty() ? "'" : ", '") + k + "'";
  if (unknown.empty()) return;
  std::string known;
  if (signature_)
    for (const AttrSig& a : signature_->attrs) known += (known.empty() ? "" : ", ") + a.name;
  throw KernelError(leaf() + ": unknown attr(s) " + unknown + " in kernel_attrs; its signature declares: " +
                    (known.empty() ? "none" : known));
}

}  // namespace walrus::kernels
