#include "walrus/ResolveNKIKernel.h"

#include "bir/Error.h"
#include "bir/Json.h"
#include "walrus/SpliceKernelNode.h"

namespace walrus {

size_t resolveNKIKernel(bir::InstNKIKernel& node) {
  if (node.body.empty())
    throw KernelError(describeNode(node) + ": body is empty: the node carries no traced kernel");
  std::unique_ptr<bir::Module> kernel;
  try {
    kernel = bir::moduleFromJson(node.body.text);
  } catch (const bir::BIRError& e) {
    throw bir::BIRError(describeNode(node) + ": body: " + e.what());
  }
  return spliceKernelNode(node, *kernel, {node.func_args, node.func_outs, 1});
}

}  // namespace walrus
