// BIR JSON: reading and writing the compiler-compatible schema (KLR/BIR/*.lean, reference section
// 4) plus the fields the public schema lacks, written in the same style and versioned by the
// top-level "neuronxsim_format" number. Writing, reading and writing again gives identical bytes.
//
// Reading never crashes and never returns a half-built module: any problem throws BIRError whose
// message starts with the JSON path of the offending element.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "Module.h"

namespace bir {

// indent < 0 writes compact JSON.
std::string moduleToJson(const Module& m, int indent = 1);

struct JsonReadOptions {
  bool verify = true;  // run the verifier on the module read
};
std::unique_ptr<Module> moduleFromJson(std::string_view text, const JsonReadOptions& opts = {});

// Nesting deeper than this is refused before parsing (the schema needs about 12 levels; embedded
// kernel bodies about twice that).
inline constexpr int kMaxJsonDepth = 256;

}  // namespace bir
