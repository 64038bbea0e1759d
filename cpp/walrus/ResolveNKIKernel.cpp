#include "walrus/ResolveNKIKernel.h"

#include "bir/Error.h"
#include "walrus/CompiledNkiKernels.h"
#include "walrus/FileReference.h"
#include "walrus/SpliceKernelNode.h"
#include "walrus/klr/KernelFile.h"

namespace walrus {

std::unique_ptr<bir::Module> loadNKIKernel(const bir::InstNKIKernel& node, const FileScope& files) {
  const std::string where = describeNode(node);
  if (node.func.empty()) throw KernelError(where + ": func is empty: the node names no compiled kernel");
  const std::string what = where + ": compiled kernel '" + node.func + "'";
  if (auto compiled = findCompiledNkiKernel(node.func)) return decodeCompiledNkiKernel(node.func, *compiled, what);
  std::string bytes;
  try {
    bytes = readFileReference(files, node.func, "func");
  } catch (const nxs::Error& e) {
    throw KernelError(what + " was not compiled in this process, and its file cannot be read: " + e.what());
  }
  return decodeCompiledNkiKernel(node.func, bytes, what);
}

size_t resolveNKIKernel(bir::InstNKIKernel& node, const FileScope& files) {
  const auto kernel = loadNKIKernel(node, files);
  return spliceKernelNode(node, *kernel, {node.func_args, node.func_outs, std::nullopt, node.sb_buf_shape, node.psum_buf_shape});
}

}  // namespace walrus
