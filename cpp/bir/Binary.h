// BIR binary: a module in a compact form of neuronxsim's own (what the sweep's trace cache keeps),
// holding exactly what its BIR JSON holds, field for field: writing the module read back from it
// as JSON gives the original's JSON byte for byte. Not a compiler format: BIR JSON (Json.h) stays
// the exchange format. Why: a traced kernel's JSON is ~750 bytes an instruction and reads at about
// 52,000 machine instructions per BIR instruction, as much as tracing the kernel again costs; its
// binary is ~120 bytes an instruction and reads at about 7,000 (freeing the module included).
//
// Layout (little-endian): the 8 bytes "NXSBIR\0\1", the binary format, BIR version and
// neuronxsim_format revision (varints), then the module as its JSON writer walks it, each value
// in order with no keys: integers as zigzag LEB128 varints, doubles as their 8 bytes, booleans as
// one byte, enums as varints of their ordinal, strings and lists as a varint count then the
// contents, optionals as a presence byte then the value. An access pattern starts with whether it
// is an immediate and names its memory location by its index among the function's locations
// (allocation by allocation). Strings are checked to be UTF-8 and kept unknown fields to be JSON
// objects, so that every module read writes as JSON.
//
// Reading never crashes and never returns a half-built module: truncated or malformed bytes throw
// BIRError naming the byte offset and what was being read.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "Module.h"

namespace bir {

inline constexpr int64_t kBinaryFormat = 1;

std::string moduleToBinary(const Module& m);
std::unique_ptr<Module> moduleFromBinary(std::string_view bytes, bool verify = true);

}  // namespace bir
