// libFuzzer harness for the BIR JSON reader. Any input must either be rejected with BIRError or
// read into a module whose JSON round trip is stable; anything else (a crash, a sanitizer report,
// another exception type, an unstable round trip) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bir/Error.h"
#include "bir/Json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto m = bir::moduleFromJson(text);
    const std::string once = bir::moduleToJson(*m, -1);
    const std::string twice = bir::moduleToJson(*bir::moduleFromJson(once), -1);
    if (once != twice) __builtin_trap();
  } catch (const bir::BIRError&) {
  }
  return 0;
}
