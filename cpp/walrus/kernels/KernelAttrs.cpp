#include "walrus/kernels/KernelAttrs.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "bir/Error.h"

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

const std::string* KernelAttrs::raw(const std::string& key) {
  read_.insert(key);
  return node_.attr(key);
}

void KernelAttrs::bad(const std::string& key, const std::string& value, const std::string& expected) const {
  throw KernelError("attr '" + key + "' is '" + value + "'; expected " + expected);
}

template <class T>
T KernelAttrs::agree(const std::string& key, std::optional<T> bag, const std::optional<T>& field, T fallback) const {
  if (bag && field && *bag != *field)
    throw KernelError("attr '" + key + "' is " + text(*bag) + " in kernel_attrs but " + text(*field) +
                      " in the node's " + key + " field");
  if (bag) return *bag;
  if (field) return *field;
  return fallback;
}

bool KernelAttrs::flag(const std::string& key, bool fallback) {
  std::optional<bool> bag;
  if (const std::string* s = raw(key)) {
    if (*s == "true" || *s == "1") bag = true;
    else if (*s == "false" || *s == "0") bag = false;
    else bad(key, *s, "true or false");
  }
  return agree<bool>(key, bag, namedField<bool>(node_, key), fallback);
}

int64_t KernelAttrs::integer(const std::string& key, int64_t fallback) {
  std::optional<int64_t> bag;
  if (const std::string* s = raw(key)) {
    bag = parseInt(*s);
    if (!bag) bad(key, *s, "an integer");
  }
  return agree<int64_t>(key, bag, namedField<int64_t>(node_, key), fallback);
}

int64_t KernelAttrs::integer(const std::string& key) {
  const bool present = node_.attr(key) != nullptr || namedField<int64_t>(node_, key).has_value();
  if (!present) throw KernelError("attr '" + key + "' is missing; expected an integer");
  return integer(key, 0);
}

double KernelAttrs::number(const std::string& key, double fallback) {
  std::optional<double> bag;
  if (const std::string* s = raw(key)) {
    bag = parseNumber(*s);
    if (!bag) bad(key, *s, "a finite number");
  }
  return agree<double>(key, bag, namedField<double>(node_, key), fallback);
}

int64_t KernelAttrs::choice(const std::string& key, const std::vector<std::string>& names, int64_t fallback) {
  std::string expected = "one of";
  for (size_t i = 0; i < names.size(); ++i) expected += (i ? ", " : " ") + names[i] + " (" + std::to_string(i) + ")";
  std::optional<int64_t> bag;
  if (const std::string* s = raw(key)) {
    bag = parseInt(*s);
    for (size_t i = 0; !bag && i < names.size(); ++i)
      if (*s == names[i]) bag = static_cast<int64_t>(i);
    if (!bag || *bag < 0 || *bag >= static_cast<int64_t>(names.size())) bad(key, *s, expected);
  }
  const int64_t v = agree<int64_t>(key, bag, namedField<int64_t>(node_, key), fallback);
  if (v < 0 || v >= static_cast<int64_t>(names.size())) bad(key, std::to_string(v), expected);
  return v;
}

void KernelAttrs::finish() const {
  std::string unknown;
  for (const auto& [k, v] : node_.kernel_attrs)
    if (!read_.count(k)) unknown += (unknown.empty() ? "'" : ", '") + k + "'";
  if (unknown.empty()) return;
  std::string known;
  for (const auto& k : read_) known += (known.empty() ? "" : ", ") + k;
  throw KernelError("unknown attr(s) " + unknown + " in kernel_attrs; this kernel takes: " + known);
}

}  // namespace walrus::kernels
