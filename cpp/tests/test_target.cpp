// The target description (bir/MachineConfig.h): the generation names, and the compile-time
// constants that code without an arch uses agree with every generation's configuration.
#include <gtest/gtest.h>

#include "bir/MachineConfig.h"
#include "bir/Error.h"

using namespace bir;

TEST(Target, UniformConstantsHoldForEveryGeneration) {
  for (const std::string& arch : knownArchs()) {
    SCOPED_TRACE(arch);
    const MachineConfig& c = machineConfig(arch);
    EXPECT_EQ(c.num_partitions, UniformConfig::kPartitions);
    EXPECT_EQ(c.pe_rows, UniformConfig::kPartitions);
    EXPECT_EQ(c.pe_cols, UniformConfig::kPartitions);
    EXPECT_EQ(c.psum_bank_bytes, UniformConfig::kPsumBankBytes);
    EXPECT_EQ(c.psum_banks, UniformConfig::kPsumBanks);
    EXPECT_EQ(c.psum_bytes_per_partition, c.psum_banks * c.psum_bank_bytes);
    EXPECT_EQ(c.pe_max_moving_free_elements, UniformConfig::kPeMaxMoving);
    EXPECT_EQ(c.pe_max_moving_free_elements * 4, c.psum_bank_bytes);  // one fp32 bank
    EXPECT_EQ(c.dma_queues, UniformConfig::kDmaQueues);
    EXPECT_EQ(c.bn_stats_max_free_elements, UniformConfig::kBnStatsMaxFree);
    EXPECT_EQ(c.max8_max_free_elements, UniformConfig::kMax8MaxFree);
    EXPECT_EQ(c.dve_transpose_max, UniformConfig::kDveTransposeMax);
    EXPECT_EQ(c.ap_max_free_dims, UniformConfig::kApMaxFreeDims);
  }
}

TEST(Target, NamesOfEachGeneration) {
  EXPECT_EQ(knownArchs(), (std::vector<std::string>{"trn1", "trn2"}));
  for (const std::string& arch : knownArchs()) {
    const MachineConfig& c = machineConfig(arch);
    for (const std::string& name : archAliases(arch)) {
      EXPECT_EQ(canonicalArch(name), arch);
      EXPECT_EQ(&machineConfig(name), &c);
    }
    EXPECT_EQ(archAliases(arch).at(0), arch);
  }
  EXPECT_EQ(canonicalArch(kDefaultBirArch), "trn1");
  EXPECT_EQ(machineConfig("gen3").neuron_core, "NeuronCore-v3");
  EXPECT_EQ(canonicalArch("inf2"), "trn1");
  EXPECT_EQ(canonicalArch("gen9"), "");
  EXPECT_TRUE(archAliases("gen9").empty());
  EXPECT_THROW(machineConfig("gen9"), sim::SimulationError);
}
