#include "walrus/FileReference.h"

#include <filesystem>
#include <regex>
#include <system_error>

#include "bir/Error.h"
#include "walrus/klr/KernelFile.h"

namespace walrus {
namespace {

namespace fs = std::filesystem;

// The real path, symbolic links followed as far as the path exists, ".." folded.
fs::path realPath(const fs::path& p, const std::string& what, const std::string& reference) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(p, ec);
  if (ec) throw KernelError(what + " '" + reference + "': not a usable path (" + ec.message() + ")");
  return r;
}

fs::path absoluteFrom(const std::string& dir) {
  std::error_code ec;
  fs::path p = dir.empty() ? fs::current_path(ec) : fs::absolute(dir, ec);
  return ec ? fs::path(dir) : p;
}

// The real path of an allowed folder; empty when it is not a folder (then it allows nothing).
fs::path realDir(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::canonical(absoluteFrom(dir), ec);
  return ec || !fs::is_directory(p, ec) ? fs::path() : p;
}

bool inside(const fs::path& path, const fs::path& dir) {
  if (dir.empty()) return false;
  const fs::path rel = path.lexically_relative(dir);
  return !rel.empty() && rel != "." && *rel.begin() != "..";
}

}  // namespace

std::string resolveFileReference(const FileScope& scope, const std::string& reference, const std::string& what) {
  if (reference.empty()) throw KernelError(what + " is empty: it names no file");
  if (reference.find('\0') != std::string::npos) throw KernelError(what + " holds a NUL byte: it is not a path");
  const fs::path target = realPath(absoluteFrom(scope.base_dir) / fs::path(reference), what, reference);
  const fs::path root = realDir(scope.base_dir);
  if (inside(target, root)) return target.string();
  std::string others;
  for (const std::string& dir : scope.allowed_dirs) {
    const fs::path allowed = realDir(dir);
    if (inside(target, allowed)) return target.string();
    others += (others.empty() ? "" : ", ") + ("'" + (allowed.empty() ? dir : allowed.string()) + "'");
  }
  throw KernelError(what + " '" + reference + "' is outside the files folder '" +
                    (root.empty() ? scope.base_dir : root.string()) + "'" +
                    (others.empty() ? std::string() : " and the folders allowed (" + others + ")") +
                    " (a module's file references stay in the folder it was lowered into or loaded from)");
}

std::string readFileReference(const FileScope& scope, const std::string& reference, const std::string& what) {
  return klr::readFileBytes(resolveFileReference(scope, reference, what));
}

std::string withoutFileContents(const std::string& message) {
  static const std::regex lastRead(R"(; last read: '[\s\S]*$)");
  static const std::regex parsing(R"( parsing '[\s\S]*$)");
  std::string m = std::regex_replace(message, lastRead, "");
  m = std::regex_replace(m, parsing, " parsing a number");
  // Schema errors ("functions[0].blocks[1].instructions[2].opcode: unknown opcode 'x'") keep their
  // JSON path and say what was expected, not what the file holds.
  static const std::regex schema(R"(^((?:functions|attributes|arch|version|neuronxsim_format)[\w\[\].]*): [\s\S]*$)");
  std::smatch match;
  if (std::regex_match(m, match, schema)) return match[1].str() + ": does not fit the BIR JSON schema";
  return m;
}

}  // namespace walrus
