#include "test_leaf_kit.h"

#include <set>

#include "bir/Verifier.h"

namespace nxs_leaf_test {

using namespace bir;

std::unique_ptr<Module> kernelModule(const std::string& kernel, const std::vector<TensorSpec>& ins,
                                     const std::vector<TensorSpec>& outs, KernelAttrs attrs) {
  auto m = std::make_unique<Module>();
  Function* f = m->addFunction();
  auto* node = cast<InstBIRKernel>(f->addBlock("main")->addInstruction(InstructionType::BIRKernel, "node0"));
  node->kernel_name = kernel;
  node->kernel_attrs = std::move(attrs);
  node->sb_buf_shape = {128, 192 * 1024};
  node->psum_buf_shape = {128, 8, 2048};
  node->auto_cast = "none";
  for (const auto& t : ins) {
    node->addSeqAccess(f->createDramTensor(t.name, MemoryType::Input, t.dtype, t.shape, TensorKind::ExternalInput), false);
    node->srcs_shape.push_back(t.shape);
  }
  for (const auto& t : outs) {
    node->addSeqAccess(f->createDramTensor(t.name, MemoryType::Output, t.dtype, t.shape, TensorKind::ExternalOutput), true);
    node->dsts_shape.push_back(t.shape);
  }
  return m;
}

InstBIRKernel& nodeOf(Module& m) { return *cast<InstBIRKernel>(m.function(0)->blocks()[0]->at(0)); }

walrus::ExpansionStats expand(Module& m) {
  walrus::Logger log;
  walrus::InlineBIRKernel pass(log);
  EXPECT_EQ(pass.run(m), 1u);
  return pass.expansions().at(0);
}

namespace {
bool onChip(const AccessPattern& ap, MemoryType t) { return !ap.isImmediate() && ap.loc && ap.loc->type == t; }
}  // namespace

void expectLegalExpansion(const Module& m, const std::string& node, const std::string& kernel) {
  EXPECT_NO_THROW(verifyModule(m));
  std::set<const MemoryLocation*> identitiesBuilt;
  for (const auto& I : m.function(0)->blocks()[0]->instructions()) {
    SCOPED_TRACE(I->name + " (" + I->opcodeName() + ")");
    EXPECT_NE(I->engine, Engine::Unassigned);
    EXPECT_EQ(I->kernel, node);
    EXPECT_EQ(I->source.rfind(kernel, 0), 0u) << I->source;
    switch (I->nodeClass()) {
      case NodeClass::Matmult: {
        const auto& mm = *cast<InstMatmult>(I.get());
        EXPECT_EQ(mm.engine, Engine::PE);
        ASSERT_TRUE(onChip(mm.ins[0], MemoryType::SB) && onChip(mm.ins[1], MemoryType::SB));
        ASSERT_TRUE(onChip(mm.outs[0], MemoryType::PSUM));
        EXPECT_LE(mm.ins[0].partitions(), 128);
        EXPECT_LE(mm.ins[0].freeElements(), 128);
        EXPECT_LE(mm.ins[1].freeElements(), 512);
        const AccessPattern& out = mm.outs[0];
        const int64_t first = out.loc->addr + (out.offset % out.rowElements()) * dtypeSize(out.dtype);
        const int64_t last = first + out.freeElements() * dtypeSize(out.dtype) - 1;
        EXPECT_EQ(first / 2048, last / 2048) << "an accumulation group crosses a PSUM bank";
        if (mm.is_transpose) {
          EXPECT_TRUE(identitiesBuilt.count(mm.ins[1].loc)) << "identity not built before use";
        }
        break;
      }
      case NodeClass::Activation:
      case NodeClass::ReadActivationAccumulator:
        EXPECT_EQ(I->engine, Engine::Activation);
        break;
      case NodeClass::Iota:
        EXPECT_EQ(I->engine, Engine::Pool);
        break;
      case NodeClass::AffineSelect:
        EXPECT_EQ(I->engine, Engine::Pool);
        identitiesBuilt.insert(I->outs[0].loc);
        break;
      case NodeClass::DMA: {
        const auto& d = *cast<InstDMA>(I.get());
        EXPECT_TRUE(d.engine == Engine::SP || d.engine == Engine::Pool);
        EXPECT_GE(d.queue, 0);
        EXPECT_LT(d.queue, 16);
        break;
      }
      default:
        break;
    }
  }
}

size_t count(const Module& m, Opcode op) {
  size_t n = 0;
  for (const auto& I : m.function(0)->blocks()[0]->instructions()) n += I->opcode() == op;
  return n;
}

size_t countMatmuls(const Module& m, bool transposes) {
  size_t n = 0;
  for (const auto& I : m.function(0)->blocks()[0]->instructions())
    if (auto* mm = dyn_cast<InstMatmult>(I.get())) n += mm->is_transpose == transposes;
  return n;
}

}  // namespace nxs_leaf_test
