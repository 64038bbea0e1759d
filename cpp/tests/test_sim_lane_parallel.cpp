// Large instructions run their lanes on the worker threads (Exec::forLanes): the results must be
// those of one thread, byte for byte, and a refusal must be the one the serial order raises.
#include <atomic>
#include <cmath>
#include <random>

#include "sim/Gemm.h"
#include "sim/Operand.h"
#include "test_sim_kit.h"

using namespace sim_test;

namespace {

constexpr int64_t P = 128, N = 1024;  // 512 KiB of fp32 per tile: above Exec::kParallelBytes

// x -> SBUF (DMA), exp (the in-place fp32 path), a copy (bytes), a cast to bf16 and back (through
// fp32 slots), a sum with the input, then out to DRAM: into y (row-aligned lanes) and into the
// columns [3, 3 + 1001) of z, whose lanes split mid-word, which forLanes must run serially.
Kit laneParallelModule() {
  Kit k;
  auto* x = k.dram("x", MemoryType::Input, {P, N}, DType::float32);
  auto* y = k.dram("y", MemoryType::Output, {P, N}, DType::float32);
  auto* z = k.dram("z", MemoryType::Output, {P - 28, 1009}, DType::float32);
  auto* a = k.sbuf("a", P, N);
  auto* e = k.sbuf("e", P, N);
  auto* c = k.sbuf("c", P, N);
  auto* h = k.sbuf("h", P, N, DType::bfloat16);
  auto* s = k.sbuf("s", P, N);
  k.dma(Kit::tile(a), Kit::full(x));
  k.add<InstActivation>(InstructionType::Activation, {Kit::tile(a)}, {Kit::tile(e)})->func = ActivationFunc::Exp;
  k.add(InstructionType::TensorCopy, {Kit::tile(e)}, {Kit::tile(c)});
  k.add(InstructionType::TensorCopy, {Kit::tile(c)}, {Kit::tile(h)});
  k.add<InstTensorTensor>(InstructionType::TensorTensor, {Kit::tile(h), Kit::tile(a)}, {Kit::tile(s)})->op = AluOp::add;
  k.dma(Kit::full(y), Kit::tile(s), 1);
  const int64_t rows = P - 28, cols = 1001;
  k.dma(Instruction::createAP(z, 3, {{1009, rows}, {1, cols}}, {}, -1), Kit::tile(s, rows, cols), 2);
  return k;
}

}  // namespace

TEST(SimLaneParallel, LargeInstructionsGiveTheOneThreadBytes) {
  std::vector<float> xv(static_cast<size_t>(P * N));
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> ud(-4, 4);
  for (auto& v : xv) v = ud(gen);
  std::vector<float> y[2], z[2];
  for (int threads : {1, 2}) {
    Kit k = laneParallelModule();
    k.fill("x", xv);
    k.run(sim::Mode::Full, "trn1", threads);
    y[threads - 1] = k.read<float>("y");
    z[threads - 1] = k.read<float>("z");
  }
  ASSERT_EQ(0, std::memcmp(y[0].data(), y[1].data(), y[0].size() * 4));
  ASSERT_EQ(0, std::memcmp(z[0].data(), z[1].data(), z[0].size() * 4));
  for (size_t i = 0; i < xv.size(); i += 997) {  // the math, on a sample: bf16(exp(x)) + x, to a bf16 step
    const float want = sim::bf16ToFloat(sim::floatToBf16(std::exp(xv[i]))) + xv[i];
    ASSERT_NEAR(y[1][i], want, std::exp(xv[i]) / 128 + 1e-6f) << i;
  }
  for (int64_t r = 0; r < P - 28; ++r)
    for (int64_t col = 0; col < 1001; col += 250)
      ASSERT_EQ(z[1][static_cast<size_t>(r * 1009 + 3 + col)], y[1][static_cast<size_t>(r * N + col)]);
}

// Partitions 40 and 100 of `a` are never written: the copy, split over threads, is refused for
// partition 40, as the serial order is; likewise the DMA of those rows to DRAM.
TEST(SimLaneParallel, RefusalIsTheFirstLaneInSerialOrder) {
  for (const bool viaDma : {false, true}) {
    for (int threads : {1, 2}) {
      Kit k;
      auto* x = k.dram("x", MemoryType::Input, {P, N}, DType::float32);
      auto* y = k.dram("y", MemoryType::Output, {P, N}, DType::float32);
      auto* a = k.sbuf("a", P, N);
      auto* b = k.sbuf("b", P, N);
      for (auto [p0, p1] : {std::pair<int64_t, int64_t>{0, 40}, {41, 100}, {101, P}})
        k.dma(Kit::tile(a, p1 - p0, -1, p0), Instruction::createAP(x, p0 * N, {{N, p1 - p0}, {1, N}}, {}, -1));
      if (viaDma)
        k.dma(Kit::full(y), Kit::tile(a), 1, "store");
      else
        k.add(InstructionType::TensorCopy, {Kit::tile(a)}, {Kit::tile(b)}, "copy");
      try {
        k.run(sim::Mode::Full, "trn1", threads);
        ADD_FAILURE() << "not refused";
      } catch (const sim::SimulationError& err) {
        const std::string msg = err.what();
        EXPECT_NE(msg.find(viaDma ? "store" : "copy"), std::string::npos) << msg;
        EXPECT_NE(msg.find("SBUF partition 40 bytes [0, 1)"), std::string::npos) << msg;
      }
    }
  }
}

// A cursor narrowed to [first, first + count) walks the same bytes as the whole cursor does there.
TEST(SimLaneParallel, CursorWindowWalksTheSameElements) {
  Kit k;
  auto* t = k.dram("t", MemoryType::Input, {4, 6, 10}, DType::float32);
  sim::Operand op;
  sim::decodeOperand(Instruction::createAP(t, 2, {{60, 4}, {10, 5}, {2, 4}}, {}, -1), 0, op);
  std::vector<uint8_t> mem(4 * 6 * 10 * 4);
  auto walk = [&](sim::RunCursor c) {
    std::vector<int64_t> offs;
    while (!c.done()) {
      offs.push_back(c.ptr() - mem.data());
      c.advance(1);
    }
    return offs;
  };
  const auto all = walk(sim::RunCursor::whole(op, mem.data() + op.base, op.laneStride));
  ASSERT_EQ(all.size(), 80u);
  for (int64_t first : {0, 1, 3, 4, 19, 20, 21, 79})
    for (int64_t count : {1, 5, 20, 100}) {
      auto c = sim::RunCursor::whole(op, mem.data() + op.base, op.laneStride);
      c.window(first, count);
      const auto part = walk(c);
      const auto want = std::vector<int64_t>(all.begin() + first, all.begin() + std::min<int64_t>(80, first + count));
      ASSERT_EQ(part, want) << first << "+" << count;
    }
}

// Back-to-back jobs of different sizes, claimed from one end or both: every chunk runs exactly
// once per job. (A helper that still held the previous job's claim word once claimed a chunk past
// that job's end after the caller had published the next job's size, ran it twice and counted it
// twice: the caller then waited forever for a done count it had passed.) With both ends, the
// chunks the caller runs are a prefix (possibly empty) and the helpers run the rest.
TEST(SimLaneParallel, WorkersRunEveryChunkOnceAcrossJobsOfChangingSize) {
  sim::Workers workers(3);
  struct Job {
    std::atomic<int> runs[16];
    std::atomic<int> thread[16];
  } job;
  for (int j = 0; j < 100000; ++j) {
    const int chunks = j % 2 ? 16 : 2 + j % 5;
    const bool twoEnded = j % 3 == 0;
    for (auto& r : job.runs) r.store(0, std::memory_order_relaxed);
    workers.run(
        chunks,
        [](void* p, int c, int t) {
          auto& jb = *static_cast<Job*>(p);
          jb.runs[c].fetch_add(1);
          jb.thread[c].store(t);
        },
        &job, twoEnded);
    for (int c = 0; c < 16; ++c) ASSERT_EQ(job.runs[c].load(), c < chunks ? 1 : 0) << "job " << j << " chunk " << c;
    if (!twoEnded) continue;
    for (int c = 1; c < chunks; ++c)
      ASSERT_FALSE(job.thread[c].load() == 0 && job.thread[c - 1].load() != 0) << "job " << j << " chunk " << c;
  }
}
