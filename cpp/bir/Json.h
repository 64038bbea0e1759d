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
#include <vector>

#include "Module.h"

namespace bir {

// indent < 0 writes compact JSON. The text is laid out as nlohmann's dump(indent) lays it out
// (JsonWriter.h), written directly as the module is walked.
std::string moduleToJson(const Module& m, int indent = 1);
// The same text through nlohmann's document (built, then dumped): the reference the tests compare
// moduleToJson with, byte for byte.
std::string moduleToJsonThroughDocument(const Module& m, int indent = 1);

struct JsonReadOptions {
  bool verify = true;  // run the verifier on the module read
  // Read plain text (JsonDocument.h) through the fast document first, falling back to nlohmann's
  // for anything else and for every error. false: nlohmann's only (tests and the fuzzer check
  // that the two read every text alike).
  bool plain_first = true;
};
std::unique_ptr<Module> moduleFromJson(std::string_view text, const JsonReadOptions& opts = {});

// The names of the unknown fields a node was read with (its extra_json, "{...}" or ""), in order.
std::vector<std::string> extraFieldNames(const std::string& extra_json);

// Nesting deeper than this is refused before parsing (the schema needs about 12 levels; embedded
// kernel bodies about twice that).
inline constexpr int kMaxJsonDepth = 256;

}  // namespace bir
