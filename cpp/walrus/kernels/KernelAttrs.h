// KernelAttrs: an IT54 node's attrs, typed by its leaf's signature.
//
// The codegen puts every family attr in the node's kernel_attrs bag as strings (attr_to_str:
// true/false, decimal ints, enums by integer value, floats in round-tripping repr) and the
// public schema's named ones also in the node's named fields (norm_type, act_fn, ...). A leaf
// reads each attr it takes by name; its type, default, enum members and bounds come from the
// leaf's signature (LeafSignature.h), and a value in both places must agree. finish() refuses any
// bag key the signature does not declare, so a misspelt attr is an error naming the leaf and the
// attr, not a silent default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bir/KernelInstructions.h"

namespace walrus::kernels {

struct LeafSignature;

class KernelAttrs {
 public:
  // The attrs of `node`, typed by the signature of the leaf its kernel_name names (none: a node
  // of no registered leaf, whose every attr is unknown).
  explicit KernelAttrs(const bir::InstBIRKernel& node);

  bool flag(const std::string& key);
  int64_t integer(const std::string& key);
  double number(const std::string& key);
  // An enum attr: its integer value or a member's name (member i has value i).
  int64_t choice(const std::string& key);

  // KernelError for bag keys the signature does not declare.
  void finish() const;

  const LeafSignature* signature() const { return signature_; }

 private:
  const std::string* raw(const std::string& key);
  [[noreturn]] void bad(const std::string& key, const std::string& value, const std::string& expected) const;
  template <class T>
  T agree(const std::string& key, std::optional<T> bag, const std::optional<T>& field, std::optional<T> fallback) const;
  std::string leaf() const;

  const bir::InstBIRKernel& node_;
  const LeafSignature* signature_;
};

}  // namespace walrus::kernels
