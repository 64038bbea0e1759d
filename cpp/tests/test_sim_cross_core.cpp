// CrossCoreOrder: DRAM bytes one core writes and another reads or writes are refused unless the
// launch of a multi-core kernel orders them (cpp/sim/README.md, "Multi-core").
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bir/Error.h"
#include "bir/Module.h"
#include "sim/Simulator.h"

namespace {

using namespace bir;

// Two NeuronCores sharing DRAM tensors x (Input), t (internal) and y (Output), float32 [256, 64];
// each core moves blocks of 128 rows between them and its SBUF tile s, every instruction labelled
// with a kernel name.
struct TwoCores {
  struct Core {
    Function* f;
    BasicBlock* bb;
    MemoryLocation *x, *t, *y, *s;
  };
  std::unique_ptr<Module> m = std::make_unique<Module>();
  std::vector<Core> cores;
  std::vector<float> x = std::vector<float>(256 * 64, 1.0f), y = std::vector<float>(256 * 64, 0.0f);

  TwoCores() {
    for (int c = 0; c < 2; ++c) {
      Function* f = m->addFunction();
      Core k{f, f->addBlock(), nullptr, nullptr, nullptr, nullptr};
      k.x = f->createDramTensor("x", MemoryType::Input, DType::float32, {256, 64});
      k.t = f->createDramTensor("t", MemoryType::DRAM, DType::float32, {256, 64});
      k.y = f->createDramTensor("y", MemoryType::Output, DType::float32, {256, 64});
      k.s = f->createOnChipTensor("s", MemoryType::SB, DType::float32, 128, 256, 0, 0);
      cores.push_back(k);
    }
  }
  // Rows [r0, r0 + 128) of a DRAM tensor, or the SBUF tile (r0 0).
  static AccessPattern rows(MemoryLocation* l, int64_t r0) { return Instruction::createAP(l, r0 * 64, {{64, 128}, {1, 64}}, {}, -1); }
  void dma(int core, const std::string& kernel, const std::string& name, AccessPattern dst, AccessPattern src) {
    Instruction* I = cores[static_cast<size_t>(core)].bb->addInstruction(InstructionType::DMA, name);
    I->ins = {std::move(src)};
    I->outs = {std::move(dst)};
    I->kernel = kernel;
  }
  // The core's DRAM tensor 'x', 't' or 'y'.
  MemoryLocation* tensor(int core, char which) const {
    const Core& k = cores[static_cast<size_t>(core)];
    return which == 'x' ? k.x : which == 't' ? k.t : k.y;
  }
  // Rows [r0, r0 + 128) of a DRAM tensor into the core's tile, and back.
  void load(int core, const std::string& kernel, const std::string& name, char from, int64_t r0) {
    dma(core, kernel, name, rows(cores[static_cast<size_t>(core)].s, 0), rows(tensor(core, from), r0));
  }
  void store(int core, const std::string& kernel, const std::string& name, char to, int64_t r0) {
    dma(core, kernel, name, rows(tensor(core, to), r0), rows(cores[static_cast<size_t>(core)].s, 0));
  }
  // load, then store: `from` rows [r0, r0 + 128) to `to` rows [r1, r1 + 128) through the tile.
  void move(int core, const std::string& kernel, const std::string& loadName, char from, int64_t r0,
            const std::string& storeName, char to, int64_t r1) {
    load(core, kernel, loadName, from, r0);
    store(core, kernel, storeName, to, r1);
  }
  sim::SimResult run(sim::Mode mode) {
    sim::SimOptions o;
    o.mode = mode;
    sim::Simulator s(*m, o);
    if (mode == sim::Mode::Full) {
      s.bind("x", x.data(), static_cast<int64_t>(x.size() * 4));
      s.bind("y", y.data(), static_cast<int64_t>(y.size() * 4));
    }
    return s.run();
  }
  // Both modes refuse the module at preparation, with a message containing every one of `needles`.
  void expectRefused(const std::vector<std::string>& needles) {
    for (sim::Mode mode : {sim::Mode::Timing, sim::Mode::Full}) {
      try {
        sim::SimOptions o;
        o.mode = mode;
        sim::Simulator s(*m, o);
        ADD_FAILURE() << "not refused";
      } catch (const sim::SimulationError& e) {
        for (const std::string& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
      }
    }
  }
};

constexpr const char* kParallel = "nothing in the module orders them: the cores run in parallel";

// The registry transpose's pattern: a two-core kernel writes t, then core 0 alone reads it. The
// simulator runs core 0 first, so core 0 would read t before core 1 wrote its half.
TEST(SimCrossCore, AnEarlierCoreReadingWhatALaterCoreWroteIsRefused) {
  TwoCores k;
  for (int c = 0; c < 2; ++c) {
    k.move(c, "tp", "in", 'x', 128 * c, "out", 't', 128 * c);
  }
  k.move(0, "mm", "back", 't', 128, "result", 'y', 0);
  k.expectRefused({"DRAM tensor 't' bytes [32768, 65536): core 1's functions[1].blocks[0].instructions[1] DMA 'out' "
                   "writes them and core 0's functions[0].blocks[0].instructions[2] DMA 'back' reads them; ",
                   kParallel, "(the simulator runs core 0's function first)"});
}

// The built-in example's pattern: core 0 writes t, then a two-core kernel reads it on both cores.
// The kernel launches on core 1 when it starts on core 0, after the write.
TEST(SimCrossCore, AKernelOnLaterCoresReadingWhatAnEarlierCoreWroteBeforeItIsAccepted) {
  TwoCores k;
  for (int64_t r0 : {0, 128}) {
    k.move(0, "first", "in", 'x', r0, "out", 't', r0);
  }
  for (int c = 0; c < 2; ++c) {
    k.move(c, "tp", "back", 't', 128 * c, "result", 'y', 128 * c);
  }
  EXPECT_NO_THROW(k.run(sim::Mode::Timing));
  EXPECT_NO_THROW(k.run(sim::Mode::Full));
  EXPECT_EQ(k.y, k.x);
}

TEST(SimCrossCore, ReadsSharedByCoresAreAccepted) {
  TwoCores k;
  for (int c = 0; c < 2; ++c) {
    k.load(c, "", "in", 'x', 64);  // the same rows, and no kernel to order anything
    k.store(c, "", "out", 'y', 128 * c);
  }
  EXPECT_NO_THROW(k.run(sim::Mode::Timing));
  EXPECT_NO_THROW(k.run(sim::Mode::Full));
}

TEST(SimCrossCore, OverlappingWritesOfTwoCoresAreRefused) {
  TwoCores k;
  k.move(0, "tp", "in", 'x', 0, "out", 'y', 0);
  k.load(1, "tp", "in", 'x', 64);
  k.store(1, "tp", "out", 'y', 64);  // rows 64..191: half of it core 0's rows
  k.expectRefused({"DRAM tensor 'y' bytes [16384, 32768): core 1's functions[1].blocks[0].instructions[1] DMA 'out' "
                   "writes them and core 0's functions[0].blocks[0].instructions[1] DMA 'out' writes them; ",
                   kParallel});
}

// Core 0 writes t after the two-core kernel that core 1 reads it in has started on core 0: the
// launch orders only what comes before that start.
TEST(SimCrossCore, AWriteAfterTheLaunchPointIsRefused) {
  TwoCores k;
  k.move(0, "tp", "in", 'x', 0, "late", 't', 0);
  k.move(1, "tp", "back", 't', 0, "result", 'y', 128);
  k.expectRefused({"DRAM tensor 't' bytes [0, 32768): core 0's functions[0].blocks[0].instructions[1] DMA 'late' "
                   "writes them and core 1's functions[1].blocks[0].instructions[0] DMA 'back' reads them; ",
                   kParallel, "(kernel 'tp' launches on core 1 when it starts on core 0 "
                              "(functions[0].blocks[0].instructions[0] DMA 'in'), before that write)"});
}

// Only the writes to the bytes read count: core 0's write after the launch is to other rows, until
// core 1 reads rows that reach into them.
TEST(SimCrossCore, OnlyTheWritesOfTheBytesAccessedCount) {
  for (int64_t r0 : {0, 64}) {
    TwoCores k;
    k.move(0, "first", "in", 'x', 0, "early", 't', 0);
    k.store(0, "tp", "late", 't', 128);
    k.store(0, "tp", "again", 't', 128);
    k.move(1, "tp", "back", 't', r0, "result", 'y', 0);
    if (r0 == 0)
      EXPECT_NO_THROW(k.run(sim::Mode::Timing));
    else
      k.expectRefused({"DRAM tensor 't' bytes [32768, 49152): core 0's functions[0].blocks[0].instructions[3] DMA 'again' "
                       "writes them and core 1's functions[1].blocks[0].instructions[0] DMA 'back' reads them; "});
  }
}

// Without a kernel name, or with a kernel that core 0 does not run, nothing waits for core 0.
TEST(SimCrossCore, AnAccessOfNoKernelSharedByTheWriterIsRefused) {
  for (const char* kernel : {"", "other"}) {
    TwoCores k;
    k.move(0, "first", "in", 'x', 0, "out", 't', 0);
    k.move(1, kernel, "back", 't', 0, "result", 'y', 0);
    k.expectRefused({"core 0's functions[0].blocks[0].instructions[1] DMA 'out' writes them and core 1's "
                     "functions[1].blocks[0].instructions[0] DMA 'back' reads them; ",
                     *kernel ? "(kernel 'other' does not run on core 0, so its launch on core 1 waits for nothing there)"
                             : "(core 1's instruction belongs to no kernel, whose launch would wait for core 0)"});
  }
}

// One core run alone (neuron_core_id) has no other core to race with.
TEST(SimCrossCore, OneCoreOfARacingModuleRunsAlone) {
  TwoCores k;
  k.move(1, "tp", "in", 'x', 0, "out", 't', 0);
  k.move(0, "mm", "back", 't', 0, "result", 'y', 0);
  k.expectRefused({kParallel});
  sim::SimOptions o;
  o.mode = sim::Mode::Timing;
  o.neuron_core_id = 1;
  EXPECT_NO_THROW(sim::Simulator(*k.m, o).run());
}

// Columns [c0, c0 + n) of rows [0, 128) of a tensor of 64 columns (SBUF: its first n columns).
AccessPattern columns(MemoryLocation* l, int64_t c0, int64_t n) {
  return Instruction::createAP(l, c0, {{64, 128}, {1, n}}, {}, -1);
}

// The cores of a kernel splitting a tensor's columns: each lane (row) of a footprint is compared,
// not the bounding ranges, which overlap.
TEST(SimCrossCore, LanesOfTwoCoresAreComparedOneByOne) {
  for (int64_t second : {32, 16}) {
    TwoCores k;
    for (int c = 0; c < 2; ++c) {
      k.load(c, "tp", "in", 'x', 0);
      k.dma(c, "tp", "out", columns(k.cores[static_cast<size_t>(c)].y, c == 0 ? 0 : second, 32),
            columns(k.cores[static_cast<size_t>(c)].s, 0, 32));
    }
    if (second == 32) {
      EXPECT_NO_THROW(k.run(sim::Mode::Timing));
      EXPECT_NO_THROW(k.run(sim::Mode::Full));
    } else {
      k.expectRefused({"DRAM tensor 'y' bytes [64, 128): core 1's functions[1].blocks[0].instructions[1] DMA 'out' "
                       "writes them and core 0's functions[0].blocks[0].instructions[1] DMA 'out' writes them; "});
    }
  }
}

}  // namespace
