// The IT55 resolver: an InstNKIKernel (a user @nki.jit kernel) carries its traced kernel as a BIR
// JSON module in `body`; it is spliced in place of the node like an IT56 kernel
// (SpliceKernelNode.h), binding func_args / func_outs to the node's operands.
#pragma once

#include "bir/Module.h"

namespace walrus {

// Returns the number of instructions now in the node's place. BIRError (naming the node) when the
// body is not valid BIR JSON, KernelError when it does not fit the node.
size_t resolveNKIKernel(bir::InstNKIKernel& node);

}  // namespace walrus
