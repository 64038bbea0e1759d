// InlineBIRKernel and BIRKernelWrapper: the pass over a module, all or nothing, and the wrapper
// API (createInstance reads kernel_name at +0xF0 and stages the expansion; inlineInPlace rewrites).
#include <sstream>

#include "bir/Error.h"
#include "bir/Json.h"
#include "bir/Verifier.h"
#include "test_leaf_kit.h"
#include "walrus/BIRKernelWrapper.h"
#include "walrus/kernels/LeafRegistry.h"

namespace nxs_leaf_test {
namespace {

using namespace bir;

std::unique_ptr<Module> matmulModule(const std::string& kernel = "RowTiledMM") {
  return kernelModule(kernel, {{"a", {64, 96}}, {"b", {96, 80}}}, {{"o", {64, 80}}});
}

TEST(InlineBIRKernel, ExpandsEveryIT54NodeAndLeavesOtherKernelNodes) {
  auto m = matmulModule();
  Function* f = m->function(0);
  BasicBlock* bb = f->blocks()[0].get();
  auto* second = cast<InstBIRKernel>(bb->addInstruction(InstructionType::BIRKernel, "node1"));
  second->kernel_name = "CaymanPackedPETranspose";
  second->addSeqAccess(f->findLocation("o"), false);
  second->addSeqAccess(f->createDramTensor("t", MemoryType::Output, DType::bfloat16, {80, 64}), true);
  bb->addInstruction(InstructionType::NKIKernel, "user0");
  walrus::Logger log;
  walrus::InlineBIRKernel pass(log);
  EXPECT_EQ(pass.run(*m), 2u);
  ASSERT_EQ(pass.expansions().size(), 2u);
  EXPECT_EQ(pass.expansions()[0].node, "node0");
  EXPECT_EQ(pass.expansions()[1].kernel_name, "CaymanPackedPETranspose");
  EXPECT_EQ(bb->size(), pass.expansions()[0].instructions + pass.expansions()[1].instructions + 1);
  EXPECT_EQ(bb->at(bb->size() - 1)->name, "user0");  // IT55 left alone: KernelNodeResolver's
  for (const auto& I : bb->instructions()) EXPECT_FALSE(isa<InstBIRKernel>(I.get()));
  EXPECT_EQ(log.entries().size(), 2u);
  EXPECT_NE(log.entries()[0].message.find("InstBIRKernel 'node0' (kernel 'RowTiledMM'): "), std::string::npos);
  EXPECT_NO_THROW(verifyModule(*m));
}

TEST(InlineBIRKernel, AnUnknownKernelListsTheKnownOnesAndChangesNothing) {
  auto m = matmulModule();
  BasicBlock* bb = m->function(0)->blocks()[0].get();
  auto* bad = cast<InstBIRKernel>(bb->addInstruction(InstructionType::BIRKernel, "mystery"));
  bad->kernel_name = "NoSuchKernel";
  bad->addSeqAccess(m->function(0)->findLocation("a"), false);
  const std::string before = moduleToJson(*m, 1);
  walrus::Logger log;
  walrus::InlineBIRKernel pass(log);
  try {
    pass.run(*m);
    FAIL() << "expected a KernelError";
  } catch (const walrus::KernelError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("functions[0].blocks[0].instructions[1] InstBIRKernel 'mystery' (kernel 'NoSuchKernel'): "
                        "unknown kernel_name 'NoSuchKernel'; known: ", 0), 0u) << msg;
    EXPECT_EQ(msg.substr(msg.find("known: ") + 7), walrus::kernels::knownLeafNames());
  }
  EXPECT_EQ(moduleToJson(*m, 1), before);
}

TEST(BIRKernelWrapper, StagesTheExpansionUntilInlineInPlace) {
  auto m = matmulModule();
  Function* f = m->function(0);
  BasicBlock* bb = f->blocks()[0].get();
  auto* node = cast<InstBIRKernel>(bb->at(0));
  const size_t tensors = f->allocations().size();
  walrus::Logger log;
  auto w = walrus::BIRKernelWrapper::createInstance(log, node, bb, true);
  EXPECT_EQ(bb->size(), 1u);                      // nothing changed yet
  EXPECT_EQ(f->allocations().size(), tensors);
  EXPECT_GT(w->stats().instructions, 0u);
  EXPECT_GT(w->stats().per_engine[static_cast<size_t>(Engine::PE)], 0u);
  EXPECT_GT(w->stats().dmas, 0u);
  const size_t n = w->inlineInPlace();
  EXPECT_EQ(n, w->stats().instructions);
  EXPECT_EQ(bb->size(), n);
  EXPECT_EQ(f->allocations().size(), tensors + w->stats().tensors);
  EXPECT_THROW(w->inlineInPlace(), walrus::KernelError);
}

TEST(BIRKernelWrapper, RefusesANodeOutsideTheBlock) {
  auto m = matmulModule();
  InstBIRKernel stray("stray");
  stray.kernel_name = "RowTiledMM";
  walrus::Logger log;
  EXPECT_THROW(walrus::BIRKernelWrapper::createInstance(log, &stray, m->function(0)->blocks()[0].get(), true),
               walrus::KernelError);
  EXPECT_THROW(walrus::BIRKernelWrapper::createInstance(log, nullptr, nullptr, true), walrus::KernelError);
}

TEST(InlineBIRKernel, SubTensorOperandsAreAddressedThroughTheirPatterns) {
  // a is rows 10..209, every other column from 20, of A [300, 700], marshalled as createAP does
  // (partition dim 1: its pair first).
  Module m;
  Function* f = m.addFunction();
  auto* A = f->createDramTensor("A", MemoryType::Input, DType::float32, {300, 700});
  auto* B = f->createDramTensor("B", MemoryType::Input, DType::float32, {300, 520});
  auto* O = f->createDramTensor("O", MemoryType::Output, DType::float32, {230, 600});
  auto* node = cast<InstBIRKernel>(f->addBlock()->addInstruction(InstructionType::BIRKernel, "mm"));
  node->kernel_name = "ColumnTiledMM";
  node->addArgumentOrOutput(Instruction::createAP(A, 10 * 700 + 20, {{2, 300}, {700, 200}}, {200, 300}, 1), false);
  node->addSeqAccess(B, false);
  node->addArgumentOrOutput(Instruction::createAP(O, 5 * 600 + 40, {{600, 200}, {1, 520}}, {200, 520}, 0), true);
  walrus::Logger log;
  walrus::InlineBIRKernel pass(log);
  ASSERT_EQ(pass.run(m), 1u);
  // Every DRAM access of the expansion stays inside the operand regions.
  for (const auto& I : f->blocks()[0]->instructions()) {
    if (I->nodeClass() != NodeClass::DMA) continue;
    for (const auto* side : {&I->ins, &I->outs})
      for (const auto& ap : *side) {
        if (!ap.loc->isDram() || ap.loc->name == "B") continue;
        const int64_t cols = ap.loc->name == "A" ? 700 : 600;
        const int64_t row = ap.offset / cols, col = ap.offset % cols;
        if (ap.loc->name == "A") {
          EXPECT_GE(row, 10);
          EXPECT_GE(col, 20);
        } else {
          EXPECT_GE(row, 5);
          EXPECT_GE(col, 40);
        }
      }
  }
}

}  // namespace
}  // namespace nxs_leaf_test
