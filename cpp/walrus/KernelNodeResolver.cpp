#include "walrus/KernelNodeResolver.h"

#include "bir/Verifier.h"
#include "walrus/ResolveNKIKernel.h"
#include "walrus/TranslateNKIASTToBIR.h"

namespace walrus {

size_t KernelNodeResolver::run() {
  if (options_.verify) bir::verifyModule(m_);
  const FileScope files{options_.base_dir.empty() ? m_.files_dir : options_.base_dir, options_.allowed_dirs};
  const TranslateNKIASTToBIR it56(files);
  size_t resolved = 0;
  // Indices, not iterators: resolving replaces instructions and may add functions.
  for (size_t fi = 0; fi < m_.functions().size(); ++fi) {
    bir::Function& f = *m_.functions()[fi];
    for (size_t bi = 0; bi < f.blocks().size(); ++bi) {
      bir::BasicBlock& bb = *f.blocks()[bi];
      for (size_t ii = 0; ii < bb.size();) {
        bir::Instruction* I = bb.at(ii);
        auto* nki = options_.nki_kernels ? bir::dyn_cast<bir::InstNKIKernel>(I) : nullptr;
        auto* klir = options_.klir_kernels ? bir::dyn_cast<bir::InstNKIKLIRKernel>(I) : nullptr;
        if (!nki && !klir) {
          ++ii;
          continue;
        }
        ii += nki ? resolveNKIKernel(*nki, files) : it56.lowerKernelInst(*klir);
        ++resolved;
      }
    }
  }
  if (options_.verify) bir::verifyModule(m_);
  return resolved;
}

}  // namespace walrus
