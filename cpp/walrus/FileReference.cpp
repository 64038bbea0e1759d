#include "walrus/FileReference.h"

#include <filesystem>
#include <system_error>

#include "bir/Error.h"

namespace walrus {

namespace fs = std::filesystem;

namespace {

// The real path, symbolic links followed as far as the path exists.
fs::path realPath(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(p, ec);
  if (ec) throw KernelError("cannot resolve the path '" + p.string() + "': " + ec.message());
  return r;
}

bool inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q) {
    if (r->empty()) continue;  // a trailing separator
    if (q == p.end() || *r != *q) return false;
  }
  return true;
}

}  // namespace

std::string resolveFileReference(const std::string& folder, const std::string& reference, const std::string& what) {
  if (reference.empty()) throw KernelError(what + " is empty: it names no file");
  std::error_code ec;
  const fs::path base = folder.empty() ? fs::current_path(ec) : fs::absolute(fs::path(folder), ec);
  if (ec) throw KernelError(what + " '" + reference + "': the files folder '" + folder + "': " + ec.message());
  const fs::path ref(reference);
  const fs::path path = ref.is_absolute() ? ref : base / ref;
  const fs::path root = realPath(base);
  if (!inside(root, realPath(path)))
    throw KernelError(what + " '" + reference + "' is outside the files folder '" + root.string() +
                      "' (a module's file references stay in the folder it was lowered into or loaded from)");
  return path.lexically_normal().string();
}

}  // namespace walrus
