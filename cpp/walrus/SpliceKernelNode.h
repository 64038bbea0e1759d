// Replacing one IT55/IT56 node with the code of its traced kernel module.
//
// NeuronCoreId. A host module holds one function per NeuronCore, so the node's NeuronCoreId is the
// index of its function in the module. The kernel function spliced is kernel.functions[NeuronCoreId]
// (seed 000: lowerFromBirJson picks j["functions"][NeuronCoreId]); a kernel with one function
// serves every core.
//
// Multi-core kernels (IT56 grid > 1, one kernel function per logical core). The node's own core c
// gets kernel function c in place of the node. Every other core i < grid gets kernel function i in
// host function i: if that function holds its own copy of the node (same name) it is left to be
// resolved there; otherwise the function is created when missing, the node's DRAM tensors are
// declared in it by name (DRAM is shared by the cores) and the kernel code is appended to its last
// block.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bir/Module.h"

namespace walrus {

struct KernelNodeInterface {
  std::vector<std::string> func_args;  // kernel tensors bound to the node's ins, in order
  std::vector<std::string> func_outs;  // kernel tensors bound to the node's outs, in order
  // IT56: the logical cores the kernel was traced for, one kernel function each (so grid 1 with
  // several functions is refused, not half spliced). IT55 has none: a node takes
  // kernel.functions[NeuronCoreId], or the one function of a one-function kernel.
  std::optional<int64_t> grid;
  // The on-chip memory the node reserves for its kernel (walrus/NodeBuffers.h); the kernel's SBUF
  // and PSUM tensors must lie inside it.
  std::vector<int64_t> sb_buf_shape;
  std::vector<int64_t> psum_buf_shape;
};

// Replaces `node` with `kernel`'s code; returns the number of instructions now in its place.
// Throws walrus::KernelError when the kernel does not fit the node (its operands, or the on-chip
// memory the node reserves).
size_t spliceKernelNode(bir::Instruction& node, const bir::Module& kernel,
                        const KernelNodeInterface& interface);

// "functions[0].blocks[1].instructions[4] (NKIKLIRKernel 'conv0')": where a node sits in the
// module as it was given (BasicBlock::inputIndexOf: not shifted by nodes expanded before it).
std::string describeNode(const bir::Instruction& node);

// Refuses (KernelError, prefixed with `where`) an operand shared by several NeuronCores of a logical
// core (lnc_size > 1) or one the kernel may reduce along its partition dim (reduce): no expander
// here splits or reduces an operand, so such a node is not expanded rather than expanded wrongly.
void requireOneCoreOperands(const bir::Instruction& node, const std::string& where);

}  // namespace walrus
