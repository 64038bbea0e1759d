// libFuzzer harness for the BIR binary reader. Any input must either be rejected with BIRError or
// read into a module that writes as BIR JSON and as BIR binary, whose binary reads back to the
// same JSON; anything else (a crash, a sanitizer report, another exception type, an unstable round
// trip) is a bug. The verifier runs on what was read, too (its refusals are BIRError).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "bir/Binary.h"
#include "bir/Error.h"
#include "bir/Json.h"
#include "bir/Verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<bir::Module> m;
  try {
    m = bir::moduleFromBinary(std::string_view(reinterpret_cast<const char*>(data), size), false);
  } catch (const bir::BIRError&) {
    return 0;
  }
  const std::string json = bir::moduleToJson(*m, -1);
  if (bir::moduleToJson(*bir::moduleFromBinary(bir::moduleToBinary(*m), false), -1) != json) __builtin_trap();
  try {
    bir::verifyModule(*m);
  } catch (const bir::BIRError&) {
  }
  return 0;
}
