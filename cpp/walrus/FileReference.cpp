#include "walrus/FileReference.h"

#include <filesystem>
#include <regex>
#include <system_error>

#include "bir/Error.h"
#include "walrus/klr/KernelFile.h"

namespace walrus {
namespace {

namespace fs = std::filesystem;

fs::path absoluteFrom(const std::string& dir) {
  std::error_code ec;
  fs::path p = dir.empty() ? fs::current_path(ec) : fs::absolute(dir, ec);
  return ec ? fs::path(dir) : p;
}

// The canonical form of an allowed folder; empty when it does not exist (then it allows nothing).
fs::path canonicalDir(const std::string& dir) {
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

std::string FileReference::resolve(const std::string& ref, const FileScope& scope, const std::string& what) {
  if (ref.empty()) throw KernelError(what + " is empty: it names no file");
  if (ref.find('\0') != std::string::npos) throw KernelError(what + " holds a NUL byte: it is not a path");
  const fs::path base = absoluteFrom(scope.base_dir);
  std::error_code ec;
  // weakly_canonical follows every link of the part that exists and folds "..".
  const fs::path target = fs::weakly_canonical(base / fs::path(ref), ec);
  if (ec) throw KernelError(what + " '" + ref + "': not a usable path (" + ec.message() + ")");
  std::vector<fs::path> allowed{canonicalDir(scope.base_dir)};
  for (const std::string& dir : scope.allowed_dirs) allowed.push_back(canonicalDir(dir));
  for (const fs::path& dir : allowed)
    if (inside(target, dir)) return target.string();
  std::string folders;
  for (size_t i = 0; i < allowed.size(); ++i)
    folders += (i ? ", " : "") + (allowed[i].empty() ? std::string("(none)") : allowed[i].string());
  throw KernelError(what + " '" + ref + "' names a file outside the folder(s) a module's files may be in (" +
                    folders + "); pass the folder explicitly to allow it");
}

std::string FileReference::read(const std::string& ref, const FileScope& scope, const std::string& what) {
  return klr::readFileBytes(resolve(ref, scope, what));
}

std::string FileReference::withoutContents(const std::string& message) {
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
