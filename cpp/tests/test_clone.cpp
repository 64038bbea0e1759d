// walrus::cloneModule: the copy every pipeline stage makes before it changes a module.
#include <gtest/gtest.h>

#include "TestModules.h"
#include "bir/Json.h"
#include "bir/Verifier.h"
#include "walrus/Clone.h"

namespace {

TEST(CloneModule, CopyHasIdenticalJsonAndSharesNothing) {
  auto m = nxs_test::buildEveryNodeModule();
  m->arch = "gen3";
  m->neuron_core_id = 0;
  m->extra_json = R"({"producer":"test"})";
  auto copy = walrus::cloneModule(*m);
  EXPECT_EQ(bir::moduleToJson(*copy, 1), bir::moduleToJson(*m, 1));
  bir::verifyModule(*copy);

  const bir::Function& f = *m->functions()[0];
  const bir::Function& g = *copy->functions()[0];
  ASSERT_EQ(f.allocations().size(), g.allocations().size());
  for (size_t i = 0; i < f.allocations().size(); ++i) {
    EXPECT_NE(f.allocations()[i].get(), g.allocations()[i].get());
    EXPECT_EQ(g.allocations()[i]->location()->set, g.allocations()[i].get());
  }
  size_t operands = 0;
  for (size_t b = 0; b < f.blocks().size(); ++b)
    for (size_t i = 0; i < f.blocks()[b]->size(); ++i) {
      const bir::Instruction& a = *f.blocks()[b]->at(i);
      const bir::Instruction& c = *g.blocks()[b]->at(i);
      EXPECT_EQ(a.id, c.id);
      EXPECT_EQ(c.parent(), g.blocks()[b].get());
      for (const auto* side : {&c.ins, &c.outs})
        for (const bir::AccessPattern& ap : *side) {
          if (!ap.loc) continue;
          ++operands;
          EXPECT_EQ(g.findLocation(ap.loc->name), ap.loc) << c.name;  // the copy's own location
        }
    }
  EXPECT_GT(operands, 50u);

  // Changing the copy leaves the original as it was.
  const std::string before = bir::moduleToJson(*m, -1);
  copy->functions()[0]->blocks()[0]->at(0)->ins.clear();
  copy->functions()[0]->allocations()[0]->location()->addr += 64;
  copy->addFunction("extra");
  EXPECT_EQ(bir::moduleToJson(*m, -1), before);
}

TEST(CloneModule, NewInstructionsInTheCopyGetFreshIdsAndNames) {
  auto m = nxs_test::buildEveryNodeModule();
  auto copy = walrus::cloneModule(*m);
  bir::BasicBlock& bb = *copy->functions()[0]->blocks()[0];
  const std::string taken = bb.at(0)->name;
  bir::Instruction* added = bb.addInstruction(bb.at(0)->opcode(), taken);
  EXPECT_NE(added->name, taken);
  for (size_t i = 0; i + 1 < bb.size(); ++i) EXPECT_NE(bb.at(i)->id, added->id);
}

}  // namespace
