#include "InstructionType.h"

#include <array>
#include <unordered_map>

#include "Error.h"

namespace bir {
namespace {

const std::array<std::string, InstructionType::kCount> kNames = {
#define BIR_OPCODE(Name, NodeClass, Cat, Src) #Name,
#include "InstructionType.def"
#undef BIR_OPCODE
};

constexpr std::array<InstructionType::Origin, InstructionType::kCount> kOrigins = {
#define BIR_OPCODE(Name, NodeClass, Cat, Src) InstructionType::Origin::Src,
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

const char* InstructionType::categoryName(Category c) {
  switch (c) {
    case Category::Comp: return "Comp";
    case Category::DMA: return "DMA";
    case Category::Sync: return "Sync";
    case Category::Ctrl: return "Ctrl";
    case Category::Coll: return "Coll";
    case Category::Sym: return "Sym";
    case Category::Cust: return "Cust";
  }
  return "?";
}

Opcode string2InstructionType(const std::string& name) {
  const auto& index = nameIndex();
  auto it = index.find(name);
  if (it == index.end()) throw BIRError("unknown opcode '" + name + "'");
  return it->second;
}

}  // namespace bir
