// The IT55 resolver: an InstNKIKernel (a user @nki.jit kernel) names, in `func`, the kernel the
// NKI front end compiled (CompiledNkiKernels.h); it is spliced in place of the node like an IT56
// kernel (SpliceKernelNode.h), binding func_args / func_outs to the node's operands.
#pragma once

#include <memory>
#include <string>

#include "bir/Module.h"
#include "walrus/FileReference.h"

namespace walrus {

// The compiled kernel `node` names: compiled in this process, else the file `func` names in
// `files` (FileReference.h). Errors name the node: KernelError
// when it is found neither way (or the reference leaves the folder), BIRError / KLRError when the
// artifact is malformed.
std::unique_ptr<bir::Module> loadNKIKernel(const bir::InstNKIKernel& node, const FileScope& files);

// Replaces the node with its compiled kernel; returns the number of instructions now in its place.
// KernelError when the kernel does not fit the node (and loadNKIKernel's errors).
size_t resolveNKIKernel(bir::InstNKIKernel& node, const FileScope& files);

}  // namespace walrus
