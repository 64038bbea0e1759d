// The structural verifier: partitions, start-partition rule, bounds, operand counts.
#include <gtest/gtest.h>

#include "bir/Error.h"
#include "bir/Verifier.h"

using namespace bir;

namespace {

struct Fixture {
  Module m;
  Function* f = m.addFunction();
  MemoryLocation* sb = f->createOnChipTensor("t", MemoryType::SB, DType::float32, 128, 1024, 0, 0);
  MemoryLocation* dram = f->createDramTensor("d", MemoryType::Input, DType::float32, {8, 16});
  BasicBlock* bb = f->addBlock();

  Instruction* copy(const AccessPattern& in, const AccessPattern& out) {
    Instruction* I = bb->addInstruction(InstructionType::TensorCopy);
    I->ins.push_back(in);
    I->outs.push_back(out);
    return I;
  }
  AccessPattern tile(int64_t offset, int64_t parts, int64_t free) {
    return Instruction::createAP(sb, offset, {{256, parts}, {1, free}}, {}, -1);
  }
};

void expectVerifyError(const Module& m, const std::string& needle) {
  try {
    verifyModule(m);
    ADD_FAILURE() << "verified";
  } catch (const BIRError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Verifier, StartPartitionRule) {
  EXPECT_EQ(checkStartPartition(0, 128), "");
  EXPECT_NE(checkStartPartition(64, 65), "");
  EXPECT_EQ(checkStartPartition(64, 64), "");
  EXPECT_NE(checkStartPartition(32, 64), "");
  EXPECT_EQ(checkStartPartition(96, 32), "");
  EXPECT_EQ(checkStartPartition(32, 1), "");
  EXPECT_NE(checkStartPartition(16, 16), "");
  EXPECT_NE(checkStartPartition(70, 64), "");
}

TEST(Verifier, AcceptsAWellFormedModule) {
  Fixture fx;
  fx.copy(fx.tile(0, 128, 256), fx.tile(0, 64, 16));
  fx.copy(fx.tile(64 * 256, 64, 16), fx.tile(96 * 256 + 200, 32, 56));
  EXPECT_NO_THROW(verifyModule(fx.m));
}

TEST(Verifier, RefusesBadPartitionStarts) {
  Fixture fx;
  fx.copy(fx.tile(0, 128, 16), fx.tile(70 * 256, 16, 16));
  expectVerifyError(fx.m, "functions[0].blocks[0].instructions[0].outs[0]: partition start 70 breaks the start-partition rule for 16 partitions");
}

TEST(Verifier, RefusesAccessOutsideItsLocation) {
  {
    Fixture fx;
    fx.copy(fx.tile(0, 128, 16), fx.tile(250, 1, 16));  // runs past the 256-element row
    expectVerifyError(fx.m, "outs[0]: free access [250, 265] is outside the 256 elements per partition of 't'");
  }
  {
    Fixture fx;
    fx.copy(fx.tile(100 * 256, 64, 16), fx.tile(0, 1, 1));
    expectVerifyError(fx.m, "ins[0]: partitions [100, 164) are outside tensor 't' of 128 partitions");
  }
  {
    Fixture fx;
    fx.copy(Instruction::createAP(fx.sb, 0, {{128, 2}, {1, 16}}, {}, -1), fx.tile(0, 1, 1));
    expectVerifyError(fx.m, "partition step 128 is not one partition (256 elements of float32)");
  }
  {
    Fixture fx;
    Instruction* load = fx.bb->addInstruction(InstructionType::Load);
    load->ins.push_back(Instruction::createAP(fx.dram, 8, {{16, 8}, {1, 16}}, {}, -1));
    load->outs.push_back(fx.tile(0, 8, 16));
    expectVerifyError(fx.m, "ins[0]: access [8, 135] is outside tensor 'd' of 128 float32 elements");
  }
  {
    Fixture fx;
    fx.copy(Instruction::createAP(fx.sb, 0, {{256, 1}, {1, 2}, {1, 2}, {1, 2}, {1, 2}, {1, 2}}, {}, -1),
            fx.tile(0, 1, 1));
    expectVerifyError(fx.m, "5 free dims exceed the 4");
  }
  {
    Fixture fx;
    fx.copy(Instruction::createAP(fx.sb, 0, {{256, 1}, {INT64_MAX / 2, 8}}, {}, -1), fx.tile(0, 1, 1));
    expectVerifyError(fx.m, "extent overflows");
  }
}

TEST(Verifier, RefusesWrongOperandCounts) {
  Fixture fx;
  Instruction* mm = fx.bb->addInstruction(InstructionType::Matmult);
  mm->ins.push_back(fx.tile(0, 128, 16));
  expectVerifyError(fx.m, "Matmult 'Matmult' takes 2..2 inputs and 1..1 outputs, got 1 and 0");
}

TEST(Verifier, KernelNodesTakeDramOperands) {
  Fixture fx;
  Instruction* k = fx.bb->addInstruction(InstructionType::BIRKernel);
  k->addSeqAccess(fx.dram, false);
  k->addSeqAccess(fx.sb, true);
  expectVerifyError(fx.m, "outs[0]: kernel node operands must be DRAM tensors; 't' is in SB");
}

TEST(Verifier, RefusesTensorsThatDoNotFitTheirMemory) {
  {
    Fixture fx;
    fx.f->createOnChipTensor("big", MemoryType::PSUM, DType::float32, 128, 4096, 0, 14 * 1024);
    expectVerifyError(fx.m, "functions[0].allocations[2].memorylocations[0] 'big': PSUM bytes [14336, 18432) exceed");
  }
  {
    Fixture fx;
    fx.f->createOnChipTensor("wide", MemoryType::SB, DType::float32, 64, 64, 96, 0);
    expectVerifyError(fx.m, "memorylocations[0] 'wide': partitions [96, 160) exceed the 128 partitions");
  }
  // Ends past int64 (hostile JSON) are worded exactly, not as overflowed negative numbers.
  {
    Fixture fx;
    fx.f->createOnChipTensor("far", MemoryType::SB, DType::float32, 1, 64, INT64_MAX, 0);
    expectVerifyError(fx.m, "'far': partitions [9223372036854775807, 9223372036854775808) exceed the 128");
  }
  {
    Fixture fx;
    fx.f->createOnChipTensor("far", MemoryType::PSUM, DType::float32, 1, 64, 0, INT64_MAX);
    expectVerifyError(fx.m, "'far': PSUM bytes [9223372036854775807, 9223372036854775871) exceed");
  }
}

TEST(Verifier, RefusesAccessWhoseEndPassesInt64) {
  {
    // One element per partition: the offset is the first partition, and adding the partitions
    // overflowed to a negative end that passed the bounds check.
    Fixture fx;
    MemoryLocation* column = fx.f->createOnChipTensor("col", MemoryType::SB, DType::float32, 128, 4, 0, 0);
    fx.copy(Instruction::createAP(column, INT64_MAX, {{1, 1}, {1, 1}}, {}, -1), fx.tile(0, 1, 1));
    expectVerifyError(fx.m, "ins[0]: partitions [9223372036854775807, 9223372036854775808) are outside tensor 'col'");
  }
  {
    Fixture fx;
    fx.copy(Instruction::createAP(fx.sb, 5, {{256, 1}, {INT64_MAX, 2}}, {}, -1), fx.tile(0, 1, 1));
    expectVerifyError(fx.m, "ins[0]: free access [5, 9223372036854775812] is outside the 256 elements");
  }
}

// A count past int64 wraps: [0, 2^61+1] x [1, 8] walks 2^64 + 8 elements per partition, which
// wrapped to 8 and matched an 8-element output. Free pairs of step 0 keep the extent in bounds,
// so only the count can refuse it.
TEST(Verifier, RefusesAnElementCountPastInt64) {
  const int64_t wraps = (int64_t{1} << 61) + 1;
  {
    Fixture fx;
    fx.copy(fx.tile(0, 8, 8), Instruction::createAP(fx.sb, 0, {{256, 8}, {0, wraps}, {1, 8}}, {}, -1));
    expectVerifyError(fx.m, "outs[0]: access pattern element count (the product of its nums) overflows");
  }
  {
    // The free count fits; times the 128 partitions it does not.
    Fixture fx;
    fx.copy(Instruction::createAP(fx.sb, 0, {{256, 128}, {0, int64_t{1} << 56}}, {}, -1), fx.tile(0, 1, 1));
    expectVerifyError(fx.m, "ins[0]: access pattern element count (the product of its nums) overflows");
  }
  {
    Fixture fx;
    fx.copy(Instruction::createAP(fx.dram, 0, {{0, int64_t{1} << 32}, {0, int64_t{1} << 32}}, {}, -1), fx.tile(0, 1, 1));
    expectVerifyError(fx.m, "ins[0]: access pattern element count (the product of its nums) overflows");
  }
}
