// InlineBIRKernel: the walrus pass that expands every IT54 library-kernel node of a module.
//
// run() scans each function's blocks for InstBIRKernel nodes, reads each node's kernel_name and
// expands it through BIRKernelWrapper::createInstance(logger, node, block, verify), which
// rewrites the node in place into the leaf's ISA instructions (seed 000 section 2). Every node is
// expanded before the module changes: if any node cannot be expanded (unknown kernel_name, attrs
// or shapes its leaf cannot take) run() throws walrus::KernelError and the module is as it was.
//
// IT55 nodes (InstNKIKernel, user @nki.jit kernels) are resolved by splicing their traced body,
// binding func_args / func_outs to the node's operands (resolveNKIKernel). They are spliced after
// every IT54 node has been expanded (staged) and before the expansions are committed, one node at
// a time: an IT55 body that does not fit its node stops the pass with the IT55 nodes before it
// already spliced and no IT54 node changed. IT56 nodes are lowerKernelInst's.
#pragma once

#include <vector>

#include "bir/Module.h"
#include "walrus/BIRKernelWrapper.h"

namespace walrus {

struct InlineOptions {
  bool verify = true;       // check each emitted operand, and the whole module after the rewrite
  bool nki_kernels = true;  // also splice IT55 nodes
};

class InlineBIRKernel {
 public:
  explicit InlineBIRKernel(Logger& logger, InlineOptions options = {}) : logger_(logger), options_(options) {}
  // Expands every IT54 node (and splices every IT55 node) of `m`; returns how many nodes.
  size_t run(bir::Module& m);
  // One entry per node expanded by the last run, in module order.
  const std::vector<ExpansionStats>& expansions() const { return expansions_; }

 private:
  Logger& logger_;
  InlineOptions options_;
  std::vector<ExpansionStats> expansions_;
};

}  // namespace walrus
