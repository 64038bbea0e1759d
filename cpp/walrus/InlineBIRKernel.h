// InlineBIRKernel: the walrus pass that expands every IT54 library-kernel node of a module.
//
// run() scans each function's blocks for InstBIRKernel nodes, reads each node's kernel_name and
// expands it through BIRKernelWrapper::createInstance(logger, node, block, verify), which
// rewrites the node in place into the leaf's ISA instructions (seed 000 section 2). Every node is
// expanded before the module changes: if any node cannot be expanded (unknown kernel_name, attrs
// or shapes its leaf cannot take) run() throws walrus::KernelError and the module is as it was.
//
// IT55 and IT56 nodes are left alone: KernelNodeResolver resolves them (one pass per node kind).
#pragma once

#include <vector>

#include "bir/Module.h"
#include "walrus/BIRKernelWrapper.h"

namespace walrus {

struct InlineOptions {
  bool verify = true;  // check each emitted operand, and the whole module after the rewrite
  size_t max_instructions = kDefaultMaxInstructions;  // per node's expansion (BIRKernelWrapper.h)
};

class InlineBIRKernel {
 public:
  explicit InlineBIRKernel(Logger& logger, InlineOptions options = {}) : logger_(logger), options_(options) {}
  // Expands every IT54 node of `m`; returns how many.
  size_t run(bir::Module& m);
  // One entry per node expanded by the last run, in module order.
  const std::vector<ExpansionStats>& expansions() const { return expansions_; }

 private:
  Logger& logger_;
  InlineOptions options_;
  std::vector<ExpansionStats> expansions_;
};

}  // namespace walrus
