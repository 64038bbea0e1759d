// A kernel node's reference to a file (IT56 klir_binary in Form A, or a BIR JSON path in Form B;
// the file an IT55 node will refer to): resolved only inside the folders a FileScope allows, so a
// module can name its own KLR files but nothing else on the machine.
//
// The one place this rule lives: every resolver that reads a file a node names goes through
// FileReference::resolve (or ::read). Errors name the reference and why it is refused, and never
// quote the file's contents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace walrus {

struct FileScope {
  // The module's folder: relative references resolve against it (empty: the working directory),
  // and references may point anywhere inside it.
  std::string base_dir;
  // Further folders references may point into (absolute paths, or relative to the working
  // directory), given explicitly by the caller.
  std::vector<std::string> allowed_dirs;
};

class FileReference {
 public:
  // The canonical path `ref` names in `scope` (symbolic links followed), or KernelError when it
  // is empty or lies outside base_dir and every allowed dir ("../", an absolute path elsewhere,
  // a link that leads out). `what` names the reference in messages ("klir_binary").
  static std::string resolve(const std::string& ref, const FileScope& scope, const std::string& what);

  // The bytes of the regular file `ref` names in `scope` (see resolve), at most 1 GiB; a
  // directory, pipe or device is refused without blocking on it (KLRError from the reader).
  static std::string read(const std::string& ref, const FileScope& scope, const std::string& what);

  // `message` of an error about a file's contents with anything quoted from the file removed:
  // nlohmann's "last read: '...'" and "parsing '...'" parts, and values after a JSON path.
  static std::string withoutContents(const std::string& message);
};

}  // namespace walrus
