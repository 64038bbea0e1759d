// The IT54 leaves by kernel_name: the library kernels BIRKernelWrapper instantiates.
//
// Each leaf file registers itself (WALRUS_REGISTER_LEAF) under the kernel_name the codegen emits
// (BirCodeGenLoop's MLP_KERNEL_NAME etc., or the generic macro's kernel_name), with its signature
// (LeafSignature.h), so adding a leaf touches no shared file.
#pragma once

#include <string>
#include <vector>

#include "walrus/kernels/LeafSignature.h"

namespace walrus::kernels {

class KernelBuilder;

struct Leaf {
  const char* name;     // the kernel_name
  void (*expand)(KernelBuilder&);
  const char* summary;  // one line: what it computes
  LeafSignature signature;
};

// The leaf named `kernel_name`, or null.
const Leaf* findLeaf(const std::string& kernel_name);
// Every leaf, sorted by name.
std::vector<Leaf> leaves();
// "A, B, C": the known names, for error messages.
std::string knownLeafNames();

bool registerLeaf(const Leaf& leaf);

}  // namespace walrus::kernels

#define WALRUS_LEAF_CONCAT2(a, b) a##b
#define WALRUS_LEAF_CONCAT(a, b) WALRUS_LEAF_CONCAT2(a, b)
#define WALRUS_REGISTER_LEAF(name, fn, summary, signature) \
  static const bool WALRUS_LEAF_CONCAT(walrus_leaf_registered_, __COUNTER__) = \
      ::walrus::kernels::registerLeaf({name, fn, summary, signature})
