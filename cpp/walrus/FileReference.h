// The files a module names: an IT55 node's compiled kernel (its `func`), an IT56 node's KLR file
// (Form A) or BIR JSON file (Form B). A module's file references resolve inside one folder, the
// module's files folder (the folder it was lowered into or loaded from; the working directory when
// none is given), and never outside it: a module read from elsewhere must not make the resolvers
// read arbitrary files of the machine.
#pragma once

#include <string>

namespace walrus {

// The path of the file `reference` names inside `folder` ("" = the working directory). A relative
// reference is taken from the folder; an absolute one is accepted when it lies inside it. Either
// way the real path (symbolic links followed) must stay inside the folder's real path. Throws
// walrus::KernelError "<what> '<reference>' ...: outside the files folder '<folder>'" otherwise,
// and for an empty reference. The file need not exist (its reader says so).
std::string resolveFileReference(const std::string& folder, const std::string& reference, const std::string& what);

}  // namespace walrus
