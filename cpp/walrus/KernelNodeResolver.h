// The walrus pass that resolves traced-kernel nodes: every IT55 (InstNKIKernel) and IT56
// (InstNKIKLIRKernel) node of a module is replaced by its kernel's ISA code, in place. IT54
// library nodes are InlineBIRKernel's. Kernel nodes inside a spliced kernel are copied as they are
// and left for another run.
//
// The module is verified before (kernel-node operands must be sound to rebase through) and after.
// On error the module may be partly resolved; neuronxsim.walrus resolves a copy.
#pragma once

#include <string>

#include "bir/Module.h"
#include "walrus/FileReference.h"

namespace walrus {

struct ResolveOptions {
  bool nki_kernels = true;   // IT55
  bool klir_kernels = true;  // IT56
  std::string base_dir;      // the files folder (FileReference.h); empty: the module's files_dir
  std::vector<std::string> allowed_dirs;  // further folders file references may point into
  bool verify = true;
};

class KernelNodeResolver {
 public:
  explicit KernelNodeResolver(bir::Module& m, ResolveOptions options = {})
      : m_(m), options_(std::move(options)) {}
  // Returns the number of nodes resolved.
  size_t run();

 private:
  bir::Module& m_;
  ResolveOptions options_;
};

}  // namespace walrus
