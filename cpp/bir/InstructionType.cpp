#include "InstructionType.h"

#include <array>
#include <unordered_map>

#include "Error.h"

namespace bir {
namespace {

const std::array<std::string, InstructionType::kCount> kNames = {
#define BIR_OPCODE(Name, NodeClass, Src) #Name,
#include "InstructionType.def"
#undef BIR_OPCODE
};

constexpr std::array<InstructionType::Origin, InstructionType::kCount> kOrigins = {
#define BIR_OPCODE(Name, NodeClass, Src) InstructionType::Origin::Src,
#include "InstructionType.def"
#undef BIR_OPCODE
};

const std::unordered_map<std::string_view, Opcode>& nameIndex() {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, Opcode>();
    for (int i = 0; i < InstructionType::kCount; ++i) m->emplace(kNames[i], static_cast<Opcode>(i));
    return m;
  }();
  return *index;
}

}  // namespace

const std::string& InstructionType::string(InstructionType t) {
  const int i = static_cast<int>(t);
  if (i < 0 || i >= kCount)
    throw BIRError("InstructionType ordinal " + std::to_string(i) + " is out of range 0.." +
                   std::to_string(kCount - 1));
  return kNames[i];
}

InstructionType::Origin InstructionType::origin(InstructionType t) {
  (void)string(t);  // range check
  return kOrigins[static_cast<int>(t)];
}

Opcode string2InstructionType(std::string_view name) {
  const auto& index = nameIndex();
  auto it = index.find(name);
  if (it == index.end()) throw BIRError("unknown opcode '" + std::string(name) + "'");
  return it->second;
}

}  // namespace bir
