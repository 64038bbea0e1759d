// libFuzzer harness for the KLR reader. Any input must either be refused with KLRError or, when it
// holds a traced kernel, read into a module that writes and reads back to the same BIR JSON.
// Anything else (a crash, a sanitizer report, another exception type, an unstable round trip) is a
// bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bir/Error.h"
#include "bir/Json.h"
#include "walrus/klr/KernelFile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    klr::inspectKlr(bytes);
  } catch (const klr::KLRError&) {
  }
  try {
    auto m = klr::decodeKernel(bytes);
    const std::string json = bir::moduleToJson(*m, -1);
    auto again = klr::decodeKernel(klr::encodeKernel(*m));
    if (bir::moduleToJson(*again, -1) != json) __builtin_trap();
  } catch (const klr::KLRError&) {
  }
  return 0;
}
