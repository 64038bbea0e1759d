// bir::PatternShape, made once per operand by the verifier and read again by the simulator's
// operand decode (sim::decodeFootprint) and the latency model (Hwm::getLatency(I, shapes)): each
// reader agrees with reading the pattern itself, over every node class and many patterns.
#include <random>

#include "TestModules.h"
#include "bir/Hwm.h"
#include "bir/Verifier.h"
#include "sim/Operand.h"
#include "test_sim_kit.h"
#include "walrus/TrainiumHwm.h"

using namespace sim_test;

namespace {

// DMAs, matmuls and copies of varied patterns: partition ranges, offsets, strides, unit dims,
// reversed walks, indirect and transposing DMAs, accumulations, fp32 / bf16 / fp8 matmuls.
std::unique_ptr<Module> pricingModule() {
  Kit k;
  auto* x = k.dram("x", MemoryType::Input, {256, 512}, DType::bfloat16);
  auto* y = k.dram("y", MemoryType::Output, {256, 512}, DType::bfloat16);
  auto* idx = k.dram("idx", MemoryType::Input, {128, 1}, DType::int32);
  auto* s = k.sbuf("s", 128, 512, DType::bfloat16);
  auto* s32 = k.sbuf("s32", 128, 256, DType::float32);
  auto* s8 = k.sbuf("s8", 128, 256, DType::float8e4);
  auto* p = k.psum("p", 128, 512);
  int q = 0;
  for (int64_t parts : {1, 8, 17, 64, 128})
    for (int64_t p0 : {0, 32, 64}) {
      if (p0 + parts > 128) continue;
      k.dma(Kit::tile(s, parts, 100, p0, 7), Instruction::createAP(x, 3, {{512, parts}, {1, 100}}, {}, -1), q++ % 16);
      k.dma(Instruction::createAP(y, 512 * 2, {{512, parts}, {2, 50}}, {}, -1), Kit::tile(s, parts, 50, p0), q++ % 16);
      // a reversed inner walk and a unit dim
      k.dma(Instruction::createAP(s, p0 * 512 + 99, {{512, parts}, {1, 1}, {-1, 100}}, {}, -1),
            Instruction::createAP(x, 0, {{512, parts}, {100, 1}, {1, 100}}, {}, -1), q++ % 16);
    }
  k.dma(Instruction::createAP(y, 0, {{512, 256}, {1, 512}}, {}, -1), Instruction::createAP(x, 0, {{512, 256}, {1, 512}}, {}, -1));
  auto* acc = k.dma(Kit::tile(s, 128, 64), Instruction::createAP(x, 0, {{512, 128}, {1, 64}}, {}, -1), 3);
  acc->dst_rmw_op = AluOp::add;
  auto* tr = k.dma(Kit::tile(s, 64, 128), Instruction::createAP(x, 0, {{1, 128}, {512, 64}}, {}, -1), 4);
  tr->mode = DmaMode::Transpose;
  auto* gather = k.add<InstDMA>(InstructionType::DMA,
                                {Instruction::createAP(x, 0, {{512, 256}, {1, 512}}, {}, -1),
                                 Instruction::createAP(idx, 0, {{1, 128}, {1, 1}}, {}, -1)},
                                {Kit::tile(s, 128, 512)});
  gather->queue = 5;
  auto* scatter = k.add<InstDMA>(InstructionType::IndirectSave,
                                 {Kit::tile(s, 128, 512), Instruction::createAP(idx, 0, {{1, 128}, {1, 1}}, {}, -1)},
                                 {Instruction::createAP(y, 0, {{512, 256}, {1, 512}}, {}, -1)});
  scatter->queue = 6;
  for (auto [st, mv] : {std::pair{s, s}, std::pair{s32, s32}, std::pair{s8, s8}})
    for (auto [kk, m, n] : {std::tuple{128, 128, 512}, std::tuple{64, 32, 8}, std::tuple{128, 64, 40}}) {
      auto* mm = k.add<InstMatmult>(InstructionType::Matmult, {Kit::tile(st, kk, m), Kit::tile(mv, kk, n)},
                                    {Kit::tile(p, m, n)});
      if (st == s8) mm->perf_mode = PerfMode::DoubleRow;
    }
  k.add(InstructionType::TensorCopy, {Kit::tile(s, 128, 256)}, {Instruction::createAP(s, 256, {{512, 128}, {2, 128}}, {}, -1)});
  return std::move(k.m);
}

void expectSameLatency(const Latency& a, const Latency& b, const std::string& what) {
  EXPECT_EQ(a.engine, b.engine) << what;
  EXPECT_EQ(a.cycles, b.cycles) << what;
  EXPECT_EQ(a.busy_ns, b.busy_ns) << what;
  EXPECT_EQ(a.access_ns, b.access_ns) << what;
  EXPECT_EQ(a.dma_queue, b.dma_queue) << what;
  EXPECT_EQ(a.dma_latency_ns, b.dma_latency_ns) << what;
  EXPECT_EQ(a.dma_dge_ns, b.dma_dge_ns) << what;
  EXPECT_EQ(a.dma_transfer_ns, b.dma_transfer_ns) << what;
  EXPECT_EQ(a.dma_hbm_ns, b.dma_hbm_ns) << what;
  EXPECT_EQ(a.dma_descriptors, b.dma_descriptors) << what;
  EXPECT_EQ(a.dma_engine_mask, b.dma_engine_mask) << what;
  EXPECT_EQ(a.bytes, b.bytes) << what;
  EXPECT_EQ(a.flops, b.flops) << what;
  EXPECT_EQ(a.whole_core, b.whole_core) << what;
}

// Every instruction of `m` that verifies: its shapes as verifyInstruction hands them on, checked
// against the pattern, and both pricing entry points of each model.
int checkModule(const Module& m) {
  TrainiumHwm trn1;
  Trainium2Hwm trn2;
  int priced = 0;
  for (const auto& fn : m.functions())
    for (const auto& bb : fn->blocks())
      for (size_t i = 0; i < bb->size(); ++i) {
        const Instruction& I = *bb->at(i);
        std::vector<PatternShape> shapes(I.ins.size() + I.outs.size());
        try {
          verifyInstruction(I, 0, 0, i, shapes.data());
        } catch (const BIRError&) {
          continue;
        }
        for (size_t k = 0; k < shapes.size(); ++k) {
          const AccessPattern& ap = k < I.ins.size() ? I.ins[k] : I.outs[k - I.ins.size()];
          EXPECT_EQ(shapes[k].partitions, ap.partitions()) << I.name;
          EXPECT_EQ(shapes[k].freeElements, ap.freeElements()) << I.name;
          EXPECT_EQ(shapes[k].numElements(), ap.numElements()) << I.name;
        }
        for (const Hwm* hwm : {static_cast<const Hwm*>(&trn1), static_cast<const Hwm*>(&trn2)}) {
          Latency plain;
          try {
            plain = hwm->getLatency(I);
          } catch (const std::exception&) {
            continue;  // opcodes without a model, kernel nodes whose expansion refuses them
          }
          expectSameLatency(plain, hwm->getLatency(I, shapes.data()), I.opcodeName() + " '" + I.name + "'");
          ++priced;
        }
      }
  return priced;
}

}  // namespace

TEST(PrepShapes, PricingFromShapesAgreesOnEveryNodeClass) {
  EXPECT_GT(checkModule(*nxs_test::buildEveryNodeModule()), 40);
}

TEST(PrepShapes, PricingFromShapesAgreesOnDmaAndMatmulVariety) {
  EXPECT_GT(checkModule(*pricingModule()), 80);
}

// The footprint decoded from the shape (no dims) is the one decodeOperand gives, and its extent is
// that of the elements the pattern enumerates, for random patterns that verify (reused operand
// storage included).
TEST(PrepShapes, FootprintIsTheElementsExtent) {
  Kit k;
  auto* d = k.dram("d", MemoryType::Input, {4096}, DType::float16);
  auto* sb = k.sbuf("sb", 128, 256, DType::float16);
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  sim::Operand reused;
  int checked = 0;
  for (int trial = 0; trial < 4000 && checked < 600; ++trial) {
    const bool onChip = trial % 2 == 0;
    std::vector<APPair> pairs;
    pairs.push_back(onChip ? APPair{256, pick(1, 4)} : APPair{pick(-64, 64), pick(1, 4)});
    const int nFree = pick(0, 4);
    for (int i = 0; i < nFree; ++i) pairs.push_back({pick(-12, 12), pick(1, 4)});
    if (trial % 5 == 0 && nFree >= 1) pairs[1] = {pairs.back().step * pairs.back().num, pick(1, 3)};  // mergeable
    const AccessPattern ap = Instruction::createAP(onChip ? sb : d, onChip ? pick(0, 8) * 256 + pick(0, 255) : pick(0, 4095),
                                                   pairs, {}, -1);
    try {
      verifyAccessPattern(ap, false, "ap");
    } catch (const BIRError&) {
      continue;
    }
    sim::Operand whole;
    sim::decodeOperand(ap, 0, whole);
    // The elements' byte offsets, walked one by one (the lane dim too, for DRAM).
    const int64_t es = 2;
    int64_t lo = INT64_MAX, hi = INT64_MIN, count = 0;
    std::vector<int64_t> idx(pairs.size(), 0);
    for (bool more = true; more;) {
      int64_t e = ap.offset;
      for (size_t i = onChip ? 1 : 0; i < pairs.size(); ++i) e += idx[i] * pairs[i].step;
      if (onChip) e = e % 256;  // the column in its partition (verified to stay in the row)
      lo = std::min(lo, e * es);
      hi = std::max(hi, e * es + es);
      count += idx[0] == 0 ? 1 : 0;
      more = false;
      for (size_t i = pairs.size(); i-- > 0;)
        if (++idx[i] < pairs[i].num) {
          more = true;
          break;
        } else {
          idx[i] = 0;
        }
    }
    EXPECT_EQ(whole.lo - (onChip ? sb->addr : 0), lo) << trial;
    EXPECT_EQ(whole.hi - (onChip ? sb->addr : 0), hi) << trial;
    EXPECT_EQ(whole.freeElems, count) << trial;
    sim::decodeFootprint(ap, patternShape(ap), 0, reused);
    EXPECT_EQ(reused.nfree, 0);
    for (auto [a, b] : {std::pair{reused.lo, whole.lo}, std::pair{reused.hi, whole.hi}, std::pair{reused.base, whole.base},
                        std::pair<int64_t, int64_t>{reused.lanes, whole.lanes}, std::pair<int64_t, int64_t>{reused.p0, whole.p0},
                        std::pair{reused.laneStride, whole.laneStride}, std::pair{reused.freeElems, whole.freeElems},
                        std::pair<int64_t, int64_t>{reused.tensor, whole.tensor}})
      EXPECT_EQ(a, b) << trial;
    EXPECT_EQ(reused.space, whole.space);
    ++checked;
  }
  EXPECT_GT(checked, 300);
}

// Timing mode decodes no dims but still refuses a pattern whose dims would not fit, in the words
// of a full run, and accepts one whose extra pairs merge.
TEST(PrepShapes, TimingModeKeepsTheDimsRefusal) {
  for (sim::Mode mode : {sim::Mode::Timing, sim::Mode::Full}) {
    Kit k;
    auto* a = k.dram("a", MemoryType::Input, {30000}, DType::float32);
    auto* b = k.dram("b", MemoryType::Output, {30000}, DType::float32);
    std::vector<APPair> pairs;  // 1 + 9 pairs of 2, steps 3^9 .. 1: nothing merges
    for (int64_t step = 19683; step >= 1; step /= 3) pairs.push_back({step, 2});
    k.dma(Instruction::createAP(b, 0, pairs, {}, -1), Instruction::createAP(a, 0, pairs, {}, -1), 0, "wide");
    expectRefused(k, "DMA 'wide': ins[0]: access pattern has 9 free dims after merging contiguous ones; the "
                     "simulator takes at most 7", mode);
  }
  Kit k;
  auto* a = k.dram("a", MemoryType::Input, {30000}, DType::float32);
  auto* b = k.dram("b", MemoryType::Output, {30000}, DType::float32);
  // 1 + 9 pairs; the last four merge into one: 6 free dims after merging.
  const std::vector<APPair> pairs = {{10000, 2}, {2187, 2}, {729, 2}, {243, 2}, {81, 2},
                                     {27, 2},    {8, 2},    {4, 2},   {2, 2},   {1, 2}};
  k.dma(Instruction::createAP(b, 0, pairs, {}, -1), Instruction::createAP(a, 0, pairs, {}, -1), 0, "merges");
  EXPECT_NO_THROW(k.run(sim::Mode::Timing));
}
