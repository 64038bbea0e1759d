// Node classes: the pinned layout, construction through the factory, classof / dyn_cast, the
// kernel-node operand API.
#include <gtest/gtest.h>

#include <map>

#include "bir/Error.h"
#include "bir/Layout.h"
#include "bir/Module.h"

using namespace bir;

namespace {
int64_t offsetOf(const void* base, const void* field) {
  return static_cast<const char*>(field) - static_cast<const char*>(base);
}
}  // namespace

TEST(Nodes, PinnedLayoutMeasuredOnLiveObjects) {
  EXPECT_EQ(sizeof(Instruction), 0xF0u);
  InstBIRKernel k;
  EXPECT_EQ(offsetOf(&k, &k.kernel_name), 0xF0);
  InstNKIKLIRKernel c;
  EXPECT_EQ(offsetOf(&c, &c.klir_binary), 0xF0);
  EXPECT_EQ(offsetOf(&c, &c.kernel_format), 0x110);
  EXPECT_EQ(offsetOf(&c, &c.nki_binary_version_identifier), 0x130);
  const auto offsets = fieldOffsets();
  std::map<std::string, int64_t> reported(offsets.begin(), offsets.end());
  EXPECT_EQ(reported.at("InstBIRKernel.kernel_name"), 0xF0);
  EXPECT_EQ(reported.at("InstNKIKLIRKernel.klir_binary"), 0xF0);
  EXPECT_EQ(reported.at("InstNKIKLIRKernel.kernel_format"), 0x110);
  EXPECT_EQ(reported.at("InstNKIKLIRKernel.nki_binary_version_identifier"), 0x130);
  EXPECT_EQ(reported.at("sizeof(Instruction)"), 0xF0);
}

TEST(Nodes, KernelNodesCarryTheirOrdinalAndDeriveDirectlyFromInstruction) {
  InstBIRKernel a;
  InstNKIKernel b;
  InstNKIKLIRKernel c;
  EXPECT_EQ(a.opcode(), 54);
  EXPECT_EQ(b.opcode(), 55);
  EXPECT_EQ(c.opcode(), 56);
  static_assert(std::is_base_of_v<Instruction, InstBIRKernel>);
  EXPECT_TRUE(InstBIRKernel::classof(&a));
  EXPECT_FALSE(InstBIRKernel::classof(&b));
  EXPECT_FALSE(InstNKIKLIRKernel::classof(&a));
}

// Seed 000: "All three are direct bir::Instruction subclasses (not InstCollective/InstMatmultBase
// subclasses)". is_base_of also holds through an intermediate base, so this checks that no other
// node class is a base of a kernel node and that the node's own fields start right after
// Instruction (no intermediate base holds data); tests/bir/test_nodes.py reads the declarations.
template <class T>
void expectDirectInstructionSubclass(const char* name, int64_t firstFieldOffset) {
  static_assert(std::is_base_of_v<Instruction, T> && std::is_final_v<T>);
  int otherBases = 0;
  forEachNodeClass([&](auto* tag) {
    using U = std::remove_pointer_t<decltype(tag)>;
    if constexpr (!std::is_same_v<U, T>) otherBases += std::is_base_of_v<U, T>;
  });
  EXPECT_EQ(otherBases, 0) << name;
  EXPECT_EQ(firstFieldOffset, static_cast<int64_t>(sizeof(Instruction))) << name;
}

TEST(Nodes, KernelNodesAreDirectSubclassesOfInstructionOnly) {
  InstBIRKernel a;
  InstNKIKernel b;
  InstNKIKLIRKernel c;
  expectDirectInstructionSubclass<InstBIRKernel>("InstBIRKernel", offsetOf(&a, &a.kernel_name));
  expectDirectInstructionSubclass<InstNKIKernel>("InstNKIKernel", offsetOf(&b, &b.func));
  expectDirectInstructionSubclass<InstNKIKLIRKernel>("InstNKIKLIRKernel", offsetOf(&c, &c.klir_binary));
}

// Seed 000 calls InstBIRKernel a "~704-byte object". Ours holds the seed's and the public schema's
// fields and no more, so it is smaller; the layout the seed pins (the 0xF0 base, kernel_name at
// +0xF0) is exact. docs/seed-conformance.md explains the choice; a change of size must update it.
TEST(Nodes, InstBIRKernelSizeIsTheDocumentedOne) { EXPECT_EQ(sizeof(InstBIRKernel), 568u); }

TEST(Nodes, FactoryBuildsTheTableClassForEveryOpcode) {
  for (int i = 0; i < InstructionType::kCount; ++i) {
    const auto op = static_cast<Opcode>(i);
    auto inst = createInstruction(op, "n");
    ASSERT_TRUE(inst);
    EXPECT_EQ(inst->opcode(), op);
    EXPECT_EQ(inst->nodeClass(), nodeClassOf(op));
  }
  auto mm = createInstruction(InstructionType::Matmult);
  EXPECT_NE(dyn_cast<InstMatmult>(mm.get()), nullptr);
  EXPECT_EQ(dyn_cast<InstActivation>(mm.get()), nullptr);
  auto load = createInstruction(InstructionType::Load);
  EXPECT_TRUE(isa<InstDMA>(load.get()));
  EXPECT_FALSE(isa<InstMatmult>(load.get()));
  EXPECT_THROW(InstDMA{InstructionType::Matmult}, BIRError);  // wrong class for the opcode
  EXPECT_THROW(createInstruction(static_cast<Opcode>(110)), BIRError);
}

TEST(Nodes, BlockAddInstructionNamesUniquelyAndKeepsOrder) {
  Module m;
  Function* f = m.addFunction();
  EXPECT_EQ(f->name, "sg0000");
  BasicBlock* bb = f->addBlock();
  Instruction* a = bb->addInstruction(InstructionType::BIRKernel);
  Instruction* b = bb->addInstruction(InstructionType::BIRKernel);
  Instruction* c = bb->addInstruction(InstructionType::NoOp, "x");
  EXPECT_NE(a->name, b->name);
  EXPECT_EQ(c->name, "x");
  EXPECT_EQ(bb->indexOf(b), 1);
  EXPECT_NE(dyn_cast<InstBIRKernel>(a), nullptr);
  std::vector<std::unique_ptr<Instruction>> repl;
  repl.push_back(createInstruction(InstructionType::NoOp, "x"));
  repl.push_back(createInstruction(InstructionType::NoOp));
  EXPECT_EQ(bb->replace(0, std::move(repl)), 2u);
  ASSERT_EQ(bb->size(), 4u);
  EXPECT_EQ(bb->at(0)->opcode(), InstructionType::NoOp);
  EXPECT_NE(bb->at(0)->name, "x");  // "x" was taken
  EXPECT_EQ(bb->at(2), b);
}

TEST(Nodes, KernelOperandApiRecordsFlavours) {
  Module m;
  Function* f = m.addFunction();
  auto* x = f->createDramTensor("x", MemoryType::Input, DType::bfloat16, {2, 3, 4});
  auto* y = f->createDramTensor("y", MemoryType::Output, DType::bfloat16, {2, 3, 4});
  auto* node = cast<InstBIRKernel>(f->addBlock()->addInstruction(InstructionType::BIRKernel));
  node->addSeqAccess(x, false);
  node->addOpaqueAP(x, false);
  AccessPattern tile = Instruction::createAP(x, 4, {{4, 3}, {1, 2}}, {3, 2}, 1);
  node->addArgumentOrOutput(tile, false);
  node->addAP(tile, true);
  node->addSeqAccess(y, true);
  ASSERT_EQ(node->ins.size(), 3u);
  ASSERT_EQ(node->outs.size(), 2u);
  EXPECT_EQ(node->ins[0].flavour, AccessFlavour::Seq);
  EXPECT_EQ(node->ins[0].pattern, (std::vector<APPair>{{12, 2}, {4, 3}, {1, 4}}));
  EXPECT_EQ(node->ins[1].flavour, AccessFlavour::Opaque);
  EXPECT_EQ(node->ins[2].flavour, AccessFlavour::AP);
  EXPECT_EQ(node->ins[2].partitionDim(), 1);
  EXPECT_EQ(node->outs[0].flavour, AccessFlavour::AP);
  EXPECT_EQ(node->outs[1].loc, y);
  EXPECT_THROW(node->addSeqAccess(nullptr, false), BIRError);
}
