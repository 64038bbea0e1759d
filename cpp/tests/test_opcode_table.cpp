// The opcode table: 110 names, both directions, the seed-pinned slots, and the error paths.
#include <gtest/gtest.h>

#include <set>

#include "bir/Error.h"
#include "bir/Instruction.h"
#include "bir/InstructionType.h"

using namespace bir;

TEST(OpcodeTable, HasExactly110MembersAndNamesRoundTrip) {
  ASSERT_EQ(InstructionType::kCount, 110);
  std::set<std::string> seen;
  for (int i = 0; i < InstructionType::kCount; ++i) {
    const auto op = static_cast<Opcode>(i);
    const std::string& name = InstructionType::string(op);
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(seen.insert(name).second) << "duplicate name " << name;
    EXPECT_EQ(string2InstructionType(name), op) << name;
  }
  EXPECT_EQ(seen.size(), 110u);
}

TEST(OpcodeTable, SeedPinnedSlots) {
  const std::pair<int, const char*> pinned[] = {
      {50, "CollectiveRecv"}, {51, "Select"},        {52, "CopyPredicated"},
      {53, "CustomOp"},       {54, "BIRKernel"},     {55, "NKIKernel"},
      {56, "NKIKLIRKernel"},  {57, "DevicePrint"},   {58, "GetRandState"}};
  for (auto [ordinal, name] : pinned) {
    EXPECT_EQ(InstructionType::string(static_cast<Opcode>(ordinal)), name);
    EXPECT_EQ(string2InstructionType(name), ordinal);
    EXPECT_EQ(InstructionType::origin(static_cast<Opcode>(ordinal)), InstructionType::Origin::SEED);
  }
  int seedSlots = 0;
  for (int i = 0; i < InstructionType::kCount; ++i)
    seedSlots += InstructionType::origin(static_cast<Opcode>(i)) == InstructionType::Origin::SEED;
  EXPECT_EQ(seedSlots, 9);
  EXPECT_EQ(InstructionType::BIRKernel, 0x36);
  EXPECT_EQ(InstructionType::NKIKernel, 0x37);
  EXPECT_EQ(InstructionType::NKIKLIRKernel, 0x38);
}

TEST(OpcodeTable, KernelNodesMapToTheirClasses) {
  EXPECT_EQ(nodeClassOf(InstructionType::BIRKernel), NodeClass::BIRKernel);
  EXPECT_EQ(nodeClassOf(InstructionType::NKIKernel), NodeClass::NKIKernel);
  EXPECT_EQ(nodeClassOf(InstructionType::NKIKLIRKernel), NodeClass::NKIKLIRKernel);
  EXPECT_EQ(nodeClassOf(InstructionType::Matmult), NodeClass::Matmult);
  EXPECT_EQ(nodeClassOf(InstructionType::Load), NodeClass::DMA);
}

TEST(OpcodeTable, UnknownNameAndOutOfRangeOrdinalAreErrors) {
  EXPECT_THROW(string2InstructionType("NotAnOpcode"), BIRError);
  EXPECT_THROW(string2InstructionType(""), BIRError);
  EXPECT_THROW(string2InstructionType("birkernel"), BIRError);  // names are case-sensitive
  EXPECT_THROW(InstructionType::string(static_cast<Opcode>(110)), BIRError);
  EXPECT_THROW(InstructionType::string(static_cast<Opcode>(0xFFFF)), BIRError);
  try {
    InstructionType::string(static_cast<Opcode>(200));
    FAIL();
  } catch (const BIRError& e) {
    EXPECT_NE(std::string(e.what()).find("200"), std::string::npos);
  }
}

// Seed 000: the kernel nodes are "tagged category Cust in the BIR opcode table", and slots 53..57
// (CustomOp, BIRKernel, NKIKernel, NKIKLIRKernel, DevicePrint) are the Custom / Extension band.
TEST(OpcodeTable, CustomExtensionBandIsExactlySlots53To57) {
  for (int i = 0; i < InstructionType::kCount; ++i) {
    const auto op = static_cast<Opcode>(i);
    EXPECT_EQ(InstructionType::category(op) == InstructionType::Category::Cust, i >= 53 && i <= 57)
        << InstructionType::string(op);
  }
  EXPECT_STREQ(InstructionType::categoryName(InstructionType::category(InstructionType::BIRKernel)), "Cust");
  EXPECT_EQ(InstructionType::category(InstructionType::Matmult), InstructionType::Category::Comp);
  EXPECT_EQ(InstructionType::category(InstructionType::Load), InstructionType::Category::DMA);
}

// The shipped inverse map takes `std::string const&` (seed 000: string2InstructionType(string
// const&) @ 0x2da0b0); the exported symbol itself is checked in tests/bir/test_library_symbols.py.
static_assert(std::is_same_v<decltype(&string2InstructionType), Opcode (*)(const std::string&)>);
