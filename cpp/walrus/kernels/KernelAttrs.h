// KernelAttrs: an IT54 node's attrs, typed.
//
// The codegen puts every family attr in the node's kernel_attrs bag as strings (attr_to_str:
// true/false, decimal ints, enums by integer value, floats in round-tripping repr) and the
// public schema's named ones also in the node's named fields (norm_type, act_fn, ...). A leaf
// reads each attr it takes once, with its default; a value in both places must agree. finish()
// refuses any bag key the leaf did not read, so a misspelt attr is an error, not a silent
// default.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bir/KernelInstructions.h"

namespace walrus::kernels {

class KernelAttrs {
 public:
  explicit KernelAttrs(const bir::InstBIRKernel& node) : node_(node) {}

  bool flag(const std::string& key, bool fallback);
  int64_t integer(const std::string& key, int64_t fallback);
  int64_t integer(const std::string& key);  // required
  double number(const std::string& key, double fallback);
  // An enum attr: its integer value or one of `names` (name i has value i).
  int64_t choice(const std::string& key, const std::vector<std::string>& names, int64_t fallback);

  // KernelError for bag keys no accessor asked for.
  void finish() const;

 private:
  const std::string* raw(const std::string& key);
  [[noreturn]] void bad(const std::string& key, const std::string& value, const std::string& expected) const;
  template <class T>
  T agree(const std::string& key, std::optional<T> bag, const std::optional<T>& field, T fallback) const;

  const bir::InstBIRKernel& node_;
  std::set<std::string> read_;
};

}  // namespace walrus::kernels
