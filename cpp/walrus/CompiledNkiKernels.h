// The user kernels the NKI front end compiled in this process: the artifacts IT55 nodes name.
//
// Seed 000: an InstNKIKernel carries func / func_args / func_outs "for a kernel the user wrote and
// the front end already AOT-compiled". Here the front end (neuronxsim.starfish.penguin.ir, when a
// Penguin program is built or loaded) compiles a user kernel for its operands into an artifact --
// the traced kernel as BIR JSON (".json") or as a KLR file (".klr", the KLIR path) -- named by a
// handle "nki/<kernel>.<content hash>.<json|klr>", which is the node's `func`. The handle is also
// a file reference relative to the module's files folder: saving a lowered module writes each
// artifact there, so another process finds it. The IT55 resolver looks a handle up here first,
// then as that file (FileReference.h).
#pragma once

#include <memory>
#include <string>

#include "bir/Module.h"

namespace walrus {

// Adds (or keeps: handles are content-addressed) the artifact `bytes` under `handle`.
void addCompiledNkiKernel(const std::string& handle, std::string bytes);
// The artifact of `handle` compiled in this process, or null.
std::shared_ptr<const std::string> findCompiledNkiKernel(const std::string& handle);

// The kernel an artifact holds, decoded by the handle's extension (".json": BIR JSON, ".klr": a KLR
// file). Throws BIRError / KLRError naming `what` for a bad artifact, KernelError for another
// extension.
std::unique_ptr<bir::Module> decodeCompiledNkiKernel(const std::string& handle, const std::string& bytes,
                                                     const std::string& what);

}  // namespace walrus
