#include "walrus/TranslateNKIASTToBIR.h"

#include "bir/Error.h"
#include "bir/Json.h"
#include "walrus/FileReference.h"
#include "walrus/SpliceKernelNode.h"
#include "walrus/klr/KernelFile.h"

namespace walrus {
namespace {

KernelNodeInterface interfaceOf(const bir::InstNKIKLIRKernel& node) {
  return {node.func_args, node.func_outs, node.grid, node.sb_buf_shape, node.psum_buf_shape};
}

bool isJsonText(const std::string& blob) {
  const size_t first = blob.find_first_not_of(" \t\r\n");
  return first != std::string::npos && blob[first] == '{';
}

std::string formB() { return "Form B (kernel_format \"bir\")"; }
std::string formA(const bir::InstNKIKLIRKernel& node) { return "Form A (kernel_format \"" + node.kernel_format + "\")"; }

}  // namespace

std::string TranslateNKIASTToBIR::filePath(const bir::InstNKIKLIRKernel& node, const std::string& reference,
                                           const std::string& form) const {
  try {
    return resolveFileReference(files_, reference, "klir_binary");
  } catch (const KernelError& e) {
    throw KernelError(describeNode(node) + ": " + form + ": " + e.what());
  }
}

std::unique_ptr<bir::Module> TranslateNKIASTToBIR::loadKernel(const bir::InstNKIKLIRKernel& node) const {
  if (node.klir_binary.empty())
    throw KernelError(describeNode(node) + ": klir_binary is empty: the node carries no kernel");
  if (node.kernel_format == "bir") return kernelFromBirJson(node, node.klir_binary);
  return kernelFromKlrFile(node, node.klir_binary);
}

size_t TranslateNKIASTToBIR::lowerKernelInst(bir::InstNKIKLIRKernel& node) const {
  return spliceKernelNode(node, *loadKernel(node), interfaceOf(node));
}

size_t TranslateNKIASTToBIR::lowerFromBirJson(bir::InstNKIKLIRKernel& node, const std::string& blob) const {
  return spliceKernelNode(node, *kernelFromBirJson(node, blob), interfaceOf(node));
}

size_t TranslateNKIASTToBIR::lowerFromKlrFile(bir::InstNKIKLIRKernel& node, const std::string& path) const {
  return spliceKernelNode(node, *kernelFromKlrFile(node, path), interfaceOf(node));
}

std::unique_ptr<bir::Module> TranslateNKIASTToBIR::kernelFromBirJson(const bir::InstNKIKLIRKernel& node,
                                                                     const std::string& blob) const {
  const std::string where = describeNode(node);
  const bool embedded = isJsonText(blob);
  std::string text = blob, source = "klir_binary";
  if (!embedded) {
    source = filePath(node, blob, formB());
    try {
      text = klr::readFileBytes(source);
    } catch (const klr::KLRError& e) {  // the JSON file could not be read
      throw KernelError(where + ": " + formB() + ": " + e.what());
    }
  }
  try {
    return bir::moduleFromJson(text);
  } catch (const bir::BIRError& e) {
    if (embedded) throw bir::BIRError(where + ": " + formB() + " " + source + ": " + e.what());
    // About a file the module names: say where, quote nothing of it.
    throw bir::BIRError(where + ": " + formB() + " " + source + ": not a BIR JSON module: " +
                        withoutFileContents(e.what()));
  }
}

std::unique_ptr<bir::Module> TranslateNKIASTToBIR::kernelFromKlrFile(const bir::InstNKIKLIRKernel& node,
                                                                     const std::string& path) const {
  const std::string file = filePath(node, path, formA(node));
  klr::NamedKernel kernel;
  try {
    kernel = klr::readNamedKernelFile(file);
  } catch (const klr::KLRError& e) {
    throw klr::KLRError(describeNode(node) + ": " + formA(node) + ": " + e.what());
  }
  // The codegen names the file's kernel by the registry key it traced; another kernel's file
  // whose tensors happen to bind would run the wrong code silently.
  if (!node.func_name.empty() && kernel.kernel_name != node.func_name)
    throw KernelError(describeNode(node) + ": " + formA(node) + ": klir_binary " + path + " holds kernel '" +
                      kernel.kernel_name + "', not the node's func_name '" + node.func_name + "'");
  return std::move(kernel.module);
}

}  // namespace walrus
