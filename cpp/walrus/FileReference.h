// The files a module names: an IT55 node's compiled kernel (its `func`), an IT56 node's KLR file
// (Form A) or BIR JSON file (Form B). A module's file references resolve inside its files folder
// (the folder it was lowered into or loaded from; the working directory when none is given) or a
// folder the caller allows explicitly, and never outside them: a module read from elsewhere must
// not make the resolvers read arbitrary files of the machine.
//
// The one place this rule lives: every resolver that reads a file a node names goes through
// resolveFileReference (or readFileReference). Errors name the reference and why it is refused,
// and never quote the file's contents.
#pragma once

#include <string>
#include <vector>

namespace walrus {

struct FileScope {
  // The module's files folder: relative references resolve against it ("" = the working
  // directory), and references may point anywhere inside it.
  std::string base_dir;
  // Further folders references may point into (absolute, or relative to the working directory),
  // given explicitly by the caller.
  std::vector<std::string> allowed_dirs;
};

// The real path (symbolic links followed) of the file `reference` names in `scope`. A relative
// reference is taken from base_dir; an absolute one is accepted when it lies inside an allowed
// folder. Throws walrus::KernelError "<what> '<reference>' is outside the files folder '<folder>'
// ..." when it leads out of every allowed folder ("../", an absolute path elsewhere, a link that
// leads out), and for an empty reference. The file need not exist (its reader says so).
std::string resolveFileReference(const FileScope& scope, const std::string& reference, const std::string& what);

// The bytes of the regular file `reference` names in `scope` (see resolveFileReference), at most
// 1 GiB; a directory, pipe or device is refused without blocking on it (klr::KLRError).
std::string readFileReference(const FileScope& scope, const std::string& reference, const std::string& what);

// `message` of an error about a file's contents with anything quoted from the file removed:
// nlohmann's "last read: '...'" and "parsing '...'" parts, and values after a JSON path.
std::string withoutFileContents(const std::string& message);

}  // namespace walrus
