#include "walrus/TranslateNKIASTToBIR.h"

#include "bir/Error.h"
#include "bir/Json.h"
#include "walrus/SpliceKernelNode.h"
#include "walrus/klr/KernelFile.h"

namespace walrus {
namespace {

KernelNodeInterface interfaceOf(const bir::InstNKIKLIRKernel& node) {
  return {node.func_args, node.func_outs, node.grid};
}

bool isJsonText(const std::string& blob) {
  const size_t first = blob.find_first_not_of(" \t\r\n");
  return first != std::string::npos && blob[first] == '{';
}

}  // namespace

size_t TranslateNKIASTToBIR::lowerKernelInst(bir::InstNKIKLIRKernel& node) const {
  if (node.klir_binary.empty())
    throw KernelError(describeNode(node) + ": klir_binary is empty: the node carries no kernel");
  if (node.kernel_format == "bir") return lowerFromBirJson(node, node.klir_binary);
  return lowerFromKlrFile(node, node.klir_binary);
}

size_t TranslateNKIASTToBIR::lowerFromBirJson(bir::InstNKIKLIRKernel& node,
                                              const std::string& blob) const {
  const std::string where = describeNode(node);
  std::unique_ptr<bir::Module> kernel;
  if (isJsonText(blob)) {
    try {
      kernel = bir::moduleFromJson(blob);
    } catch (const bir::BIRError& e) {
      throw bir::BIRError(where + ": Form B (kernel_format \"bir\") klir_binary: " + e.what());
    }
    return spliceKernelNode(node, *kernel, interfaceOf(node));
  }
  std::string text;
  try {
    text = FileReference::read(blob, files_, "klir_binary");
  } catch (const klr::KLRError& e) {  // the JSON file could not be read
    throw KernelError(where + ": Form B (kernel_format \"bir\"): " + e.what());
  } catch (const KernelError& e) {
    throw KernelError(where + ": Form B (kernel_format \"bir\"): " + e.what());
  }
  try {
    kernel = bir::moduleFromJson(text);
  } catch (const bir::BIRError& e) {  // about a file the module names: say where, quote nothing
    throw bir::BIRError(where + ": Form B (kernel_format \"bir\") " + blob + ": not a BIR JSON module: " +
                        FileReference::withoutContents(e.what()));
  }
  return spliceKernelNode(node, *kernel, interfaceOf(node));
}

size_t TranslateNKIASTToBIR::lowerFromKlrFile(bir::InstNKIKLIRKernel& node,
                                              const std::string& path) const {
  const std::string form = describeNode(node) + ": Form A (kernel_format \"" + node.kernel_format + "\"): ";
  std::unique_ptr<bir::Module> kernel;
  try {
    kernel = klr::readKernelFile(FileReference::resolve(path, files_, "klir_binary"));
  } catch (const klr::KLRError& e) {
    throw klr::KLRError(form + e.what());
  } catch (const KernelError& e) {
    throw KernelError(form + e.what());
  }
  return spliceKernelNode(node, *kernel, interfaceOf(node));
}

}  // namespace walrus
