// Helpers of the IT54 leaf tests: a module holding one InstBIRKernel node over fresh DRAM tensors,
// the pass, and the rules every expansion must keep.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bir/Module.h"
#include "walrus/InlineBIRKernel.h"

namespace nxs_leaf_test {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  bir::DType dtype = bir::DType::bfloat16;
};

// A module with one function and one IT54 node `node0` of `kernel` over the tensors (inputs are
// Input tensors, outputs Output tensors, each addSeqAccess'd), with the bag `attrs` and the
// buffers BirCodeGenLoop gives gen2 nodes.
std::unique_ptr<bir::Module> kernelModule(const std::string& kernel, const std::vector<TensorSpec>& ins,
                                          const std::vector<TensorSpec>& outs, bir::KernelAttrs attrs = {});

// The node of kernelModule.
bir::InstBIRKernel& nodeOf(bir::Module& m);

// Runs InlineBIRKernel; returns its one expansion's stats.
walrus::ExpansionStats expand(bir::Module& m);

// What every expansion keeps: engines assigned (PE matmuls, ACT activations, Pool iota and
// affine_select, DMAs triggered from SP or Pool on queues 0..15); `kernel` = the node's name and
// `source` = "<kernel_name>:..."; matmuls read SBUF and write one PSUM bank with K, M <= 128 and
// N <= 512; the identity of every PE transpose built on chip before it; the module verifies.
void expectLegalExpansion(const bir::Module& m, const std::string& node, const std::string& kernel);

// How many instructions of the function have opcode `op` (and, for Matmult, is_transpose == t).
size_t count(const bir::Module& m, bir::Opcode op);
size_t countMatmuls(const bir::Module& m, bool transposes);

}  // namespace nxs_leaf_test
