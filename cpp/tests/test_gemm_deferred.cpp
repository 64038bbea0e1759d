// Deferred matmul parts (GemmEngine::run with `deferrable`): the helper's columns of an instruction
// may still be in progress when run() returns. Checked here: the posted-task queue of Workers, and
// that a stream of matmuls of changing shapes, over overlapping and identical outputs, with kept
// and evicted stationary panels, gives exactly the bits the one-thread kernel gives.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <vector>

#include "sim/Gemm.h"

namespace {

// Posted tasks run once each, in the order posted, and a job run() starts only after every task
// posted before it has finished.
TEST(GemmDeferred, PostedTasksRunInOrderAndBeforeTheNextJob) {
  sim::Workers workers(2);
  struct State {
    std::atomic<uint64_t> ran{0};
    std::atomic<int> outOfOrder{0};
    uint64_t expected[sim::Workers::kPostedSlots] = {};
  } st;
  struct Task {
    State* st;
    uint64_t number;
  } tasks[sim::Workers::kPostedSlots];
  uint64_t posted = 0;
  for (int round = 0; round < 20000; ++round) {
    const int n = 1 + round % 6;  // more than the slots, at times: post() waits for a free one
    for (int i = 0; i < n; ++i, ++posted) {
      Task& t = tasks[posted % sim::Workers::kPostedSlots];
      if (posted >= sim::Workers::kPostedSlots) workers.waitPosted(posted + 1 - sim::Workers::kPostedSlots);
      t = {&st, posted};
      const uint64_t number = workers.post(
          [](void* p) {
            auto& task = *static_cast<Task*>(p);
            if (task.st->ran.load(std::memory_order_relaxed) != task.number) task.st->outOfOrder.fetch_add(1);
            task.st->ran.fetch_add(1, std::memory_order_relaxed);
          },
          &t);
      ASSERT_EQ(number, posted);
    }
    if (round % 3 == 0) {
      struct Check {
        State* st;
        uint64_t posted;
        std::atomic<int> early{0};
      } check{&st, posted};
      workers.run(
          4,
          [](void* p, int, int) {
            auto& c = *static_cast<Check*>(p);
            if (c.st->ran.load(std::memory_order_relaxed) != c.posted) c.early.fetch_add(1);
          },
          &check);
      ASSERT_EQ(check.early.load(), 0) << "a job started before the tasks posted earlier had finished";
    }
  }
  workers.drainPosted();
  EXPECT_EQ(st.ran.load(), posted);
  EXPECT_EQ(workers.finished(), posted);
  EXPECT_EQ(st.outOfOrder.load(), 0);
}

struct Instruction {
  int K, M, N;
  int64_t aOffset, bOffset, cOffset;  // A and B: byte offsets in the "SBUF" rows; C: floats
  bool accumulate, cacheA;
};

// bf16 operand rows a "partition" apart, like SBUF's; C rows ldc floats apart, like PSUM's.
struct Machine {
  static constexpr int64_t kPitch = 8192, kRows = 128, kLdc = 1100;
  std::vector<uint8_t> sbuf = std::vector<uint8_t>(kPitch * kRows);
  std::vector<float> psum = std::vector<float>(kLdc * 170, 0.0f);

  void run(sim::GemmEngine& g, const Instruction& in, bool deferrable) {
    const sim::MatrixRows a{sbuf.data() + in.aOffset, kPitch, bir::DType::bfloat16};
    const sim::MatrixRows b{sbuf.data() + in.bOffset, kPitch, bir::DType::bfloat16};
    const sim::SbufTile tile{0xf, in.aOffset, in.aOffset + 2 * in.M};
    ASSERT_TRUE(g.run(in.K, in.M, in.N, a, b, psum.data() + in.cOffset, kLdc, in.accumulate, nullptr, nullptr,
                      in.cacheA ? &tile : nullptr, deferrable));
  }
};

// Matmuls over a few outputs: runs of one output (an accumulation group, whose parts the caller
// and the helper split anew each time), outputs that overlap another's rows and columns in other
// shapes (a part in progress must finish first), small instructions (run at once, after the parts
// in progress), stationaries kept in a cache too small for all of them (panels a part in progress
// reads must not be reused). Every C element must have the one-thread kernel's bits.
TEST(GemmDeferred, StreamOfMatmulsGivesTheOneThreadBits) {
  std::mt19937 gen(11);
  Machine one, two;
  for (size_t i = 0; i < one.sbuf.size() / 2; ++i) {
    const float v = std::normal_distribution<float>()(gen);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    const uint16_t h = static_cast<uint16_t>(bits >> 16);
    std::memcpy(one.sbuf.data() + 2 * i, &h, 2);
  }
  two.sbuf = one.sbuf;

  const std::array<std::array<int, 3>, 6> shapes{
      {{128, 128, 512}, {128, 128, 512}, {64, 128, 256}, {128, 100, 200}, {100, 128, 93}, {16, 8, 40}}};
  const std::array<int64_t, 4> outputs{0, 24 * Machine::kLdc + 64, 300, 40 * Machine::kLdc + 17};
  std::vector<std::vector<Instruction>> groups;
  for (int group = 0; group < 120; ++group) {
    auto& stream = groups.emplace_back();
    const auto [K, M, N] = shapes[gen() % shapes.size()];
    const int64_t c = outputs[gen() % outputs.size()];
    const int length = 1 + static_cast<int>(gen() % 10);
    for (int i = 0; i < length; ++i) {
      const int64_t aOffset = 2 * static_cast<int64_t>(gen() % 3) * 128;  // 3 stationaries
      const int64_t bOffset = 2 * static_cast<int64_t>(gen() % (Machine::kPitch / 2 - N));
      stream.push_back({K, M, N, aOffset, bOffset, c, i > 0, gen() % 4 != 0});
    }
  }

  sim::GemmEngine sync(1), deferred(2);
  deferred.delayHelperForTesting(100);
  // Room for one 128 x 128 stationary (22 panels of 128 x 6 floats): each admission evicts the
  // last one, which a part in progress may be reading.
  for (sim::GemmEngine* g : {&sync, &deferred}) g->panels().setBudget(int64_t{22} * 128 * 6 * 4);
  // Compared after every second group, before a later group overwrites what went wrong.
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const Instruction& in : groups[g]) {
      one.run(sync, in, false);
      two.run(deferred, in, true);
    }
    if (g % 2 == 0) continue;
    deferred.drain();
    for (size_t i = 0; i < one.psum.size(); ++i)
      ASSERT_EQ(std::memcmp(&one.psum[i], &two.psum[i], 4), 0)
          << "after group " << g << ", C element " << i << ": " << one.psum[i] << " vs " << two.psum[i];
  }
}

// A deferred instruction its row check refuses leaves its C alone, while another one's part may
// still be in progress; that one completes.
TEST(GemmDeferred, RefusedInstructionLeavesItsOutputWhileAnotherCompletes) {
  const int K = 128, M = 128, N = 512;
  std::vector<float> a(size_t(K) * M, 1.0f), b(size_t(K) * N, 1.0f), c1(size_t(M) * N, 7.0f), c2 = c1;
  const sim::MatrixRows A{reinterpret_cast<const uint8_t*>(a.data()), int64_t{M} * 4, bir::DType::float32};
  const sim::MatrixRows B{reinterpret_cast<const uint8_t*>(b.data()), int64_t{N} * 4, bir::DType::float32};
  sim::GemmEngine g(2);
  auto acceptAll = [](void*, int, int) { return true; };
  auto refuseAll = [](void*, int, int) { return false; };
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(g.run(K, M, N, A, B, c1.data(), N, i > 0, acceptAll, nullptr, nullptr, true));
    ASSERT_FALSE(g.run(K, M, N, A, B, c2.data(), N, false, refuseAll, nullptr, nullptr, true));
  }
  g.drain();
  for (size_t i = 0; i < c1.size(); ++i) {
    ASSERT_EQ(c1[i], 50.0f * K) << i;
    ASSERT_EQ(c2[i], 7.0f) << i;
  }
}

}  // namespace
