// The IT56 resolver (libwalrus's TranslateNKIASTToBIR::lowerKernelInst, seed 000 section 4):
// an InstNKIKLIRKernel node carries its traced kernel in one of two forms, chosen by
// kernel_format (+0x110):
//   Form A, kernel_format != "bir" (beta2, the default): klir_binary (+0xF0) is the path of a KLR
//     file, read by KLRFile_des / KLRMetaData_des / Contents_des (klr/KernelFile.h);
//   Form B, kernel_format == "bir" (beta3): klir_binary is BIR JSON text, or the path of a BIR
//     JSON file; lowerFromBirJson parses it and picks functions[NeuronCoreId].
// Either way the kernel is spliced in place of the node (SpliceKernelNode.h), its tensors bound to
// the node's operands by func_args / func_outs. Paths are file references inside the module's
// files folder (FileReference.h).
#pragma once

#include <memory>
#include <string>

#include "bir/Module.h"
#include "walrus/FileReference.h"

namespace walrus {

class TranslateNKIASTToBIR {
 public:
  // klir_binary paths resolve inside `files` only (FileReference.h): relative ones against its
  // base_dir, the module's files folder ("" = the working directory).
  explicit TranslateNKIASTToBIR(FileScope files = {}) : files_(std::move(files)) {}

  // Lowers the node with the form its kernel_format names; returns the number of instructions
  // now in its place. Errors name the node: KLRError (Form A file), BIRError (Form B JSON),
  // KernelError (the kernel does not fit the node, or a path leaves the files folder).
  size_t lowerKernelInst(bir::InstNKIKLIRKernel& node) const;

  // Form B: `blob` is BIR JSON text (it starts with '{') or the path of a BIR JSON file.
  size_t lowerFromBirJson(bir::InstNKIKLIRKernel& node, const std::string& blob) const;
  // Form A: `path` names a KLR file holding a traced kernel.
  size_t lowerFromKlrFile(bir::InstNKIKLIRKernel& node, const std::string& path) const;

  // The kernel the node's carrier holds (either form), read but not spliced; lowerKernelInst's
  // errors.
  std::unique_ptr<bir::Module> loadKernel(const bir::InstNKIKLIRKernel& node) const;

 private:
  std::unique_ptr<bir::Module> kernelFromBirJson(const bir::InstNKIKLIRKernel& node, const std::string& blob) const;
  std::unique_ptr<bir::Module> kernelFromKlrFile(const bir::InstNKIKLIRKernel& node, const std::string& path) const;
  std::string filePath(const bir::InstNKIKLIRKernel& node, const std::string& reference, const std::string& form) const;
  FileScope files_;
};

}  // namespace walrus
