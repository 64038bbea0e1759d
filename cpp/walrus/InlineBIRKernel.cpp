#include "walrus/InlineBIRKernel.h"

#include "bir/Error.h"
#include "bir/Verifier.h"

namespace walrus {

using namespace bir;

size_t InlineBIRKernel::run(Module& m) {
  expansions_.clear();
  std::vector<std::unique_ptr<BIRKernelWrapper>> staged;
  for (const auto& f : m.functions())
    for (const auto& bb : f->blocks())
      for (const auto& I : bb->instructions())
        if (auto* node = dyn_cast<InstBIRKernel>(I.get()))
          staged.push_back(BIRKernelWrapper::createInstance(logger_, node, bb.get(), options_.verify,
                                                                            options_.max_instructions));
  // Nothing can fail from here on: commit every expansion.
  for (auto& w : staged) {
    w->inlineInPlace();
    expansions_.push_back(w->stats());
  }
  if (options_.verify && !staged.empty()) {
    try {
      verifyModule(m);
    } catch (const BIRError& e) {
      throw KernelError(std::string("InlineBIRKernel: the expanded module does not verify: ") + e.what());
    }
  }
  return staged.size();
}

}  // namespace walrus
