// bir::InstructionType: the 110-member opcode enum, generated from InstructionType.def.
//
// The shipped libBIR spells the forward map bir::InstructionType::string(InstructionType) and the
// inverse bir::string2InstructionType(std::string const&); we keep both names. The enum lives in
// namespace bir::InstructionType so that bir::InstructionType::BIRKernel reads as it does there.
#pragma once

#include <cstdint>
#include <string>

namespace bir {
namespace InstructionType {

enum InstructionType : uint16_t {
#define BIR_OPCODE(Name, NodeClass, Cat, Src) Name,
#include "InstructionType.def"
#undef BIR_OPCODE
};

inline constexpr int kCount = 0
#define BIR_OPCODE(Name, NodeClass, Cat, Src) +1
#include "InstructionType.def"
#undef BIR_OPCODE
    ;
static_assert(kCount == 110, "the shipped InstructionType enum has exactly 110 members");
static_assert(BIRKernel == 54 && NKIKernel == 55 && NKIKLIRKernel == 56,
              "seed 000 pins the kernel-node ordinals");
static_assert(CollectiveRecv == 50 && Select == 51 && CopyPredicated == 52 && CustomOp == 53 &&
                  DevicePrint == 57 && GetRandState == 58,
              "seed 000 pins slots 50..58");

// Where a slot's name and ordinal come from (see InstructionType.def).
enum class Origin : uint8_t { SEED, PUBLIC, OURS };

// What kind of instruction an opcode is (the Category column of InstructionType.def). Cust is seed
// 000's "Custom / Extension" band: opaque, latency-modelled boxes, never ISA instructions.
enum class Category : uint8_t { Comp, DMA, Sync, Ctrl, Coll, Sym, Cust };

namespace detail {
inline constexpr Category kCategories[] = {
#define BIR_OPCODE(Name, NodeClass, Cat, Src) Category::Cat,
#include "InstructionType.def"
#undef BIR_OPCODE
};
}  // namespace detail

// The opcode's category. `t` must be an opcode (0..109: every node's is; check others with
// isValidOpcode).
constexpr Category category(InstructionType t) { return detail::kCategories[t]; }
const char* categoryName(Category c);  // "Comp", "DMA", ..., "Cust"

static_assert(category(CustomOp) == Category::Cust && category(BIRKernel) == Category::Cust &&
                  category(NKIKernel) == Category::Cust && category(NKIKLIRKernel) == Category::Cust &&
                  category(DevicePrint) == Category::Cust,
              "seed 000: slots 53..57 are the Custom / Extension band, the kernel nodes tagged Cust");

// The opcode's name. Throws bir::BIRError for an ordinal outside 0..109.
const std::string& string(InstructionType t);
Origin origin(InstructionType t);

}  // namespace InstructionType

using Opcode = InstructionType::InstructionType;

// The exact inverse of InstructionType::string. Throws bir::BIRError for an unknown name. Takes
// `std::string const&`, as the shipped libBIR's does (its exported symbol is pinned by a test).
Opcode string2InstructionType(const std::string& name);

// True when `ordinal` names an opcode (0..109).
inline bool isValidOpcode(int64_t ordinal) {
  return ordinal >= 0 && ordinal < InstructionType::kCount;
}

}  // namespace bir
