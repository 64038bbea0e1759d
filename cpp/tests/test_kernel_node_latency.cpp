// The kernel-node latency model's layering (seed 000 names bir::Hwm::getLatency for InstNKIKernel /
// InstNKIKLIRKernel and TrainiumHwm::getLatency(bir::InstBIRKernel const&), TrainiumHwm in
// libwalrus): libBIR's bir::Hwm prices IT55 / IT56 through the extension libwalrus registers,
// refuses IT54 (only the Trainium models know the library leaves), and makeHwm builds the Trainium
// models. The latencies themselves are checked against the expansions in
// tests/walrus/test_kernel_node_latency.py.
#include <gtest/gtest.h>

#include "bir/Error.h"
#include "sim/Simulator.h"
#include "test_leaf_kit.h"
#include "walrus/TrainiumHwm.h"

namespace nxs_leaf_test {
namespace {

TEST(KernelNodeLatency, MakeHwmBuildsTheTrainiumModels) {
  auto trn1 = bir::makeHwm("trn1");
  auto trn2 = bir::makeHwm("gen3");
  EXPECT_NE(dynamic_cast<TrainiumHwm*>(trn1.get()), nullptr);
  EXPECT_NE(dynamic_cast<Trainium2Hwm*>(trn2.get()), nullptr);
  EXPECT_NE(dynamic_cast<bir::NeuronCoreV3Hwm*>(trn2.get()), nullptr);  // the v3 ISA costs
  EXPECT_EQ(trn2->config().arch, "trn2");
}

TEST(KernelNodeLatency, TheBaseModelLeavesLibraryKernelsToTheTrainiumModels) {
  auto m = kernelModule("RowTiledMM", {{"a", {128, 256}}, {"b", {256, 512}}}, {{"o", {128, 512}}});
  const bir::Instruction& node = nodeOf(*m);
  const bir::Hwm base(bir::machineConfig("trn1"));
  try {
    base.getLatency(node);
    FAIL() << "expected a refusal";
  } catch (const sim::SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("InstBIRKernel 'node0' (kernel 'RowTiledMM'): library kernel nodes are "
                                         "priced by expanding their leaf, which only the Trainium models know"),
              std::string::npos)
        << e.what();
  }
  const TrainiumHwm trainium;
  const bir::Latency l = trainium.getLatency(node);
  EXPECT_TRUE(l.whole_core);
  EXPECT_GT(l.busy_ns, 0);
  EXPECT_EQ(l.flops, 2 * 128 * 256 * 512);
  // Expanded, the node's code takes exactly that long on its own.
  expand(*m);
  sim::SimOptions options;
  options.mode = sim::Mode::Timing;
  sim::Simulator s(*m, options);
  EXPECT_DOUBLE_EQ(s.run().total_ns, l.busy_ns);
}

}  // namespace
}  // namespace nxs_leaf_test
