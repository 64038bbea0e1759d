// libFuzzer harness for the BIR JSON reader. Any input must either be rejected with BIRError or
// read into a module whose JSON round trip is stable; anything else (a crash, a sanitizer report,
// another exception type, an unstable round trip) is a bug. The reader's fast plain-text path and
// nlohmann's alone must agree on every input: the same module, or the same error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "bir/Error.h"
#include "bir/Json.h"

namespace {
// The module's compact JSON, or the error's message after a marker no JSON text starts with.
std::string readAs(std::string_view text, bool plainFirst) {
  bir::JsonReadOptions opts;
  opts.plain_first = plainFirst;
  try {
    return bir::moduleToJson(*bir::moduleFromJson(text, opts), -1);
  } catch (const bir::BIRError& e) {
    return std::string("\x01") + e.what();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string once = readAs(text, true);
  if (once != readAs(text, false)) __builtin_trap();
  if (once.empty() || once[0] == '\x01') return 0;
  if (readAs(once, true) != once) __builtin_trap();
  return 0;
}
