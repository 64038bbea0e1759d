// bir::NameTable, a Function's name tables: what a map does (find, insert once, erase), through
// erasures, names reused after erasure, rebuilds and long names; checked against std::map.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "bir/Error.h"
#include "bir/Module.h"
#include "bir/NameTable.h"

using namespace bir;

namespace {

std::string nameOf(int i) {
  // short (inside std::string) and long (on the heap) names, and names that differ by a suffix
  return i % 3 ? "t." + std::to_string(i) : "a_much_longer_tensor_name_" + std::to_string(i);
}

}  // namespace

TEST(NameTable, FindsWhatWasAddedOnceAndNothingElse) {
  NameTable<int> t;
  EXPECT_EQ(t.find("x"), nullptr);
  EXPECT_FALSE(t.erase("x"));
  auto [v, added] = t.tryEmplace("x", 1);
  EXPECT_TRUE(added);
  EXPECT_EQ(*v, 1);
  auto [w, again] = t.tryEmplace("x", 2);
  EXPECT_FALSE(again);
  EXPECT_EQ(*w, 1);  // the first value stays
  *w = 3;
  EXPECT_EQ(*t.find("x"), 3);
  EXPECT_EQ(t.find("x."), nullptr);
  EXPECT_EQ(t.find(""), nullptr);
  EXPECT_EQ(t.size(), 1u);
}

TEST(NameTable, AgreesWithAMapThroughInsertionsErasuresAndRebuilds) {
  NameTable<int> t;
  std::map<std::string, int> want;
  uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  for (int step = 0; step < 20000; ++step) {
    const std::string name = nameOf(static_cast<int>((next() >> 33) % 700));
    switch ((next() >> 40) % 4) {
      case 0:
      case 1: {
        auto [v, added] = t.tryEmplace(name, step);
        auto [it, inserted] = want.try_emplace(name, step);
        ASSERT_EQ(added, inserted) << name;
        ASSERT_EQ(*v, it->second) << name;
        break;
      }
      case 2:
        ASSERT_EQ(t.erase(name), want.erase(name) == 1) << name;
        break;
      default: {
        const int* v = t.find(name);
        auto it = want.find(name);
        ASSERT_EQ(v != nullptr, it != want.end()) << name;
        if (v) {
          ASSERT_EQ(*v, it->second) << name;
        }
      }
    }
    ASSERT_EQ(t.size(), want.size());
  }
  for (int i = 0; i < 700; ++i) {
    const int* v = t.find(nameOf(i));
    auto it = want.find(nameOf(i));
    ASSERT_EQ(v != nullptr, it != want.end()) << nameOf(i);
    if (v) {
      EXPECT_EQ(*v, it->second);
    }
  }
}

TEST(NameTable, ReserveKeepsEveryName) {
  NameTable<int> t;
  for (int i = 0; i < 100; ++i) t.tryEmplace(nameOf(i), i);
  for (int i = 0; i < 50; ++i) t.erase(nameOf(2 * i));
  t.reserve(5000);
  for (int i = 0; i < 100; ++i) {
    const int* v = t.find(nameOf(i));
    if (i % 2) {
      ASSERT_NE(v, nullptr) << i;
      EXPECT_EQ(*v, i);
    } else {
      EXPECT_EQ(v, nullptr) << i;
    }
  }
  EXPECT_EQ(t.size(), 50u);
}

TEST(NameTable, AFunctionsNamesStayUniqueThroughReplacement) {
  Module m;
  Function* f = m.addFunction();
  BasicBlock* bb = f->addBlock();
  Instruction* a = bb->addInstruction(InstructionType::Matmult, "mm");
  Instruction* b = bb->addInstruction(InstructionType::Matmult, "mm");
  EXPECT_EQ(a->name, "mm");
  EXPECT_EQ(b->name, "mm.1");
  EXPECT_THROW(f->registerInstructionName("mm.1"), BIRError);
  std::vector<std::unique_ptr<Instruction>> with;
  with.push_back(createInstruction(InstructionType::Matmult, "mm"));
  bb->replace(0, std::move(with));  // "mm" is forgotten, then taken again by its replacement
  EXPECT_EQ(bb->at(0)->name, "mm");
  EXPECT_TRUE(f->hasInstructionName("mm.1"));
  MemoryLocation* x = f->createDramTensor("x", MemoryType::DRAM, DType::float32, {4});
  EXPECT_EQ(f->findLocation("x"), x);
  EXPECT_EQ(f->findAllocation("x_set"), x->set);
  EXPECT_EQ(f->uniqueTensorName("x"), "x.1");
  EXPECT_THROW(f->createDramTensor("x", MemoryType::DRAM, DType::float32, {4}), BIRError);
  EXPECT_EQ(f->findLocation("x"), x);  // the failed definition took nothing back but its own
}

TEST(NameTable, AnUnnamedNodeTakesItsOpcodesNameAgainOnceForgotten) {
  Module m;
  Function* f = m.addFunction();
  BasicBlock* bb = f->addBlock();
  const std::string& base = InstructionType::string(InstructionType::Matmult);
  Instruction* a = bb->addInstruction(InstructionType::Matmult);
  Instruction* b = bb->addInstruction(InstructionType::Matmult);
  EXPECT_EQ(a->name, base);
  EXPECT_EQ(b->name, base + ".1");
  std::vector<std::unique_ptr<Instruction>> with;
  with.push_back(createInstruction(InstructionType::Matmult, base + ".1"));
  bb->replace(1, std::move(with));  // b's name is forgotten (and taken again by its replacement)
  with.clear();
  with.push_back(createInstruction(InstructionType::Matmult, "mm"));
  bb->replace(0, std::move(with));  // the opcode's own name is forgotten: free for the next node
  EXPECT_EQ(bb->addInstruction(InstructionType::Matmult)->name, base);
  EXPECT_EQ(bb->addInstruction(InstructionType::Matmult)->name, base + ".2");
}
