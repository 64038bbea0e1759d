// The scheduler: exact byte-range hazards, in-order engines, the two required hazard cases,
// determinism, refusals and the Chrome trace.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "sim/Hazards.h"
#include "sim/ListSchedule.h"
#include "test_sim_kit.h"

using namespace sim_test;

TEST(SimHazards, RangeTimesAreExactOnBytesAndQuadrants) {
  sim::RangeTimes r(1024);
  uint32_t h = 0;  // one hint for every access: it is only ever a starting guess
  r.markWrite(100, 200, 0b0001, 5.0, h);
  EXPECT_EQ(r.readReady(0, 100, 0b1111, h), 0.0);
  EXPECT_EQ(r.readReady(200, 300, 0b1111, h), 0.0);
  EXPECT_EQ(r.readReady(199, 200, 0b0001, h), 5.0);
  EXPECT_EQ(r.readReady(150, 160, 0b0010, h), 0.0);  // another quadrant
  r.markRead(150, 400, 0b0011, 9.0, h);
  EXPECT_EQ(r.readReady(150, 400, 0b0011, h), 5.0);  // readers wait for writes only
  EXPECT_EQ(r.writeReady(300, 301, 0b0010, h), 9.0);  // writers wait for reads too
  EXPECT_EQ(r.writeReady(0, 100, 0b1111, h), 0.0);
  // Rewriting the same tile over and over keeps the segment array short.
  for (int i = 0; i < 1000; ++i) r.markWrite(512, 768, 0b1111, 10.0 + i, h);
  EXPECT_LE(r.segments(), 8u);
  EXPECT_EQ(r.writeReady(0, 1024, 0b1111, h), 1009.0);
}

// A write waits for the reads and writes of other tracks only: its own track (an in-order engine or
// DMA queue) keeps them. The latest read of another track is kept behind a later read of its own.
TEST(SimHazards, AWriteIsExemptFromItsOwnTracksAccessesOnly) {
  sim::RangeTimes r(1024);
  uint32_t h = 0;
  r.markWrite(0, 100, 0b0001, 5.0, h, /*track=*/1);
  EXPECT_EQ(r.writeReady(0, 100, 0b0001, h, 1), 0.0);  // WAW on its own track
  EXPECT_EQ(r.writeReady(0, 100, 0b0001, h, 2), 5.0);
  EXPECT_EQ(r.readReady(0, 100, 0b0001, h), 5.0);      // RAW is never exempt
  r.markRead(0, 100, 0b0001, 7.0, h, 2);                 // another track reads until 7
  r.markRead(0, 100, 0b0001, 9.0, h, 1);                 // its own until 9
  EXPECT_EQ(r.writeReady(0, 100, 0b0001, h, 1), 7.0);  // waits for track 2's read, not its own
  EXPECT_EQ(r.writeReady(0, 100, 0b0001, h, 2), 9.0);
  EXPECT_EQ(r.writeReady(0, 100, 0b0001, h, sim::kNoTrack), 9.0);
  r.markWrite(0, 100, 0b0001, 8.0, h, 1);                // released before its own read: kept at 9
  EXPECT_EQ(r.writeReady(0, 100, 0b0001, h, 2), 9.0);
  EXPECT_EQ(r.writeReady(0, 100, 0b0001, h, 1), 0.0);
}

// The scheduler keeps one segment hint per access across the whole run, while other accesses
// split and merge segments under it: a stale hint must only cost a search, never change a time.
TEST(SimHazards, KeptHintsGiveTheSameTimesAsFreshLookups) {
  sim::RangeTimes kept(4096), fresh(4096);
  struct Acc {
    int64_t lo, hi;
    uint8_t quadrants;
    bool write;
    uint8_t track;  // the engine or queue it runs on: a write is exempt from its own track's accesses
  };
  std::vector<Acc> accs;
  uint64_t seed = 12345;
  auto next = [&] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull, seed >> 33; };
  for (int i = 0; i < 40; ++i) {  // tiles, sub-ranges and ranges straddling tiles
    const int64_t lo = static_cast<int64_t>(next() % 4000), len = 1 + static_cast<int64_t>(next() % 700);
    const auto quadrants = static_cast<uint8_t>(1 + next() % 15);
    const bool write = next() % 3 == 0;
    accs.push_back({lo, lo + len, quadrants, write, static_cast<uint8_t>(next() % 3)});
  }
  std::vector<uint32_t> hints(accs.size(), 0);
  uint32_t scratch = 0;
  auto fresh0 = [&]() -> uint32_t& { return scratch = 0; };  // a lookup from no hint
  for (int step = 0; step < 20000; ++step) {
    const size_t a = next() % accs.size();
    const Acc& x = accs[a];
    const double t = step;
    if (x.write) {
      ASSERT_EQ(kept.writeReady(x.lo, x.hi, x.quadrants, hints[a], x.track),
                fresh.writeReady(x.lo, x.hi, x.quadrants, fresh0(), x.track));
      kept.markWrite(x.lo, x.hi, x.quadrants, t, hints[a], x.track);
      fresh.markWrite(x.lo, x.hi, x.quadrants, t, fresh0(), x.track);
    } else {
      ASSERT_EQ(kept.readReady(x.lo, x.hi, x.quadrants, hints[a]),
                fresh.readReady(x.lo, x.hi, x.quadrants, fresh0()));
      kept.markRead(x.lo, x.hi, x.quadrants, t, hints[a], x.track);
      fresh.markRead(x.lo, x.hi, x.quadrants, t, fresh0(), x.track);
    }
    ASSERT_EQ(kept.segments(), fresh.segments());
  }
  EXPECT_EQ(kept.writeReady(0, 4096, 0b1111, hints[0]), fresh.writeReady(0, 4096, 0b1111, fresh0()));
}

namespace {
// x (DMA) -> t; u = t * 2 on DVE; independent v on ACT; matmul waits for its stationary load.
Kit hazardModule() {
  Kit k;
  auto* x = k.dram("x", MemoryType::Input, {128, 512}, DType::bfloat16);
  auto* w = k.dram("w", MemoryType::Input, {128, 128}, DType::bfloat16);
  auto* y = k.dram("y", MemoryType::Output, {128, 512}, DType::float32);
  auto* t = k.sbuf("t", 128, 512, DType::bfloat16);
  auto* u = k.sbuf("u", 128, 512);
  auto* v = k.sbuf("v", 128, 512);
  auto* ws = k.sbuf("ws", 128, 128, DType::bfloat16);
  auto* acc = k.psum("acc", 128, 512);
  auto* ms = k.add<InstMemset>(InstructionType::Memset, {}, {Kit::tile(v)}, "init_v");
  ms->constant = 1.0;
  k.dma(Kit::tile(t), Kit::full(x), 0, "load_x");
  k.dma(Kit::tile(ws), Kit::full(w), 0, "load_w");  // queued behind load_x
  auto* ts = k.add<InstTensorScalar>(InstructionType::TensorScalar, {Kit::tile(t)}, {Kit::tile(u)}, "dve_use");
  ts->op0 = AluOp::mult;
  ts->const0 = 2.0;
  auto* indep = k.add<InstActivation>(InstructionType::Activation, {Kit::tile(v)}, {Kit::tile(v)}, "act_indep");
  indep->func = ActivationFunc::Exp;
  k.add(InstructionType::Matmult, {Kit::tile(ws), Kit::tile(t)}, {Kit::tile(acc)}, "mm");
  k.add(InstructionType::TensorTensor, {Kit::tile(acc), Kit::tile(u)}, {Kit::tile(u)}, "combine");
  k.dma(Kit::full(y), Kit::tile(u), 1, "store");
  std::vector<float> xv(128 * 512), wv(128 * 128);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = (i % 129 == 0) ? 1.0f : 0.0f;  // identity
  k.fill("x", toBf16(xv));
  k.fill("w", toBf16(wv));
  return k;
}
}  // namespace

TEST(SimTiming, DveWaitsForItsDmaAndMatmulForItsStationary) {
  Kit k = hazardModule();
  const auto r = k.run();
  const auto &lx = k.record(r, "load_x"), &lw = k.record(r, "load_w"), &use = k.record(r, "dve_use"),
             &mm = k.record(r, "mm"), &indep = k.record(r, "act_indep"), &init = k.record(r, "init_v");
  // A waiter starts after the DMA's completion semaphore (dma_completion_ns) and its own wait.
  const bir::MachineConfig& c = bir::machineConfig("trn1");
  const double completion = c.dma_completion_ns + c.semaphore_wait_ns;
  EXPECT_DOUBLE_EQ(use.start_ns, lx.end_ns + completion);  // RAW on t through the DMA
  EXPECT_GE(lw.start_ns, lx.end_ns);                       // one queue runs in order
  EXPECT_DOUBLE_EQ(mm.start_ns, lw.end_ns + completion);   // the stationary's load is the last to land
  EXPECT_DOUBLE_EQ(indep.start_ns, init.end_ns + c.semaphore_wait_ns);  // waits for DVE, not for DMA
  EXPECT_LT(indep.start_ns, lx.end_ns);
  const auto y = k.read<float>("y");
  for (size_t i = 0; i < y.size(); i += 97) EXPECT_EQ(y[i], 3.0f * (static_cast<float>(i % 7) - 3)) << i;
}

TEST(SimTiming, DeterministicAndModeIndependent) {
  Kit a = hazardModule(), b = hazardModule();
  const auto ra = a.run(sim::Mode::Full, "trn1", 1);
  const auto rb = b.run(sim::Mode::Full, "trn1", 2);
  const auto rt = a.run(sim::Mode::Timing);
  EXPECT_EQ(a.read<float>("y"), b.read<float>("y"));
  ASSERT_EQ(ra.records.size(), rb.records.size());
  for (size_t i = 0; i < ra.records.size(); ++i) {
    EXPECT_EQ(ra.records[i].start_ns, rb.records[i].start_ns);
    EXPECT_EQ(ra.records[i].end_ns, rt.records[i].end_ns);
  }
  EXPECT_EQ(ra.total_ns, rt.total_ns);
  EXPECT_EQ(ra.cores[0].tracks[sim::kTrackPE].busy_ns, rb.cores[0].tracks[sim::kTrackPE].busy_ns);
}

TEST(SimTiming, TraceIsChromeTraceEventJson) {
  Kit k = hazardModule();
  const auto r = k.run(sim::Mode::Timing);
  const auto path = std::filesystem::temp_directory_path() / ("nxsim_trace_" + std::to_string(::getpid()) + ".json");
  r.writeTrace(path.string());
  std::ifstream in(path);
  const auto doc = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  ASSERT_TRUE(doc.at("traceEvents").is_array());
  size_t slices = 0;
  std::set<std::pair<int, int>> used, named;  // (pid, tid): tracks with slices, named tracks
  for (const auto& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name"));
    if (e["ph"] == "X") {
      ++slices;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_TRUE(e["args"].contains("source") && e["args"].contains("kernel") && e["args"].contains("busy_ns"));
      used.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    } else if (e["name"] == "thread_name") {
      named.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    }
  }
  EXPECT_EQ(named, used);  // every track with slices is named, and only those
  EXPECT_EQ(slices, r.records.size() + 3);  // + a trigger slice per DMA
}

TEST(SimRefusals, RefusedWithTheInstructionNamed) {
  {
    Kit k;
    auto* st = k.sbuf("st", 128, 128, DType::bfloat16);
    auto* acc = k.f->createOnChipTensor("acc", MemoryType::PSUM, DType::float32, 128, 2048, 0, 1024);
    k.add(InstructionType::Matmult, {Kit::tile(st), Kit::tile(st)}, {Kit::tile(acc, -1, 128)}, "mm");
    auto* mv = k.sbuf("mv", 128, 512, DType::bfloat16);
    k.bb->instructions().back()->ins[1] = Kit::tile(mv);
    k.bb->instructions().back()->outs[0] = Kit::tile(acc, -1, 512);
    expectRefused(k, "instructions[0] Matmult 'mm': Matmult: the result covers PSUM bytes [1024, 3072)");
  }
  {
    Kit k;
    auto* st = k.sbuf("st", 128, 128, DType::bfloat16);
    auto* acc = k.psum("acc", 128, 128);
    auto* ms = k.add<InstMemset>(InstructionType::Memset, {}, {Kit::tile(st)});
    ms->constant = 1;
    auto* mm = k.add<InstMatmult>(InstructionType::Matmult, {Kit::tile(st), Kit::tile(st)}, {Kit::tile(acc)}, "mm");
    mm->start_tensor_calc = false;
    expectRefused(k, "instructions[1] Matmult 'mm': accumulates (start_tensor_calc false) into PSUM partition 0 "
                     "bytes [0, 4), where no matmul started an accumulation group", sim::Mode::Full);
  }
  {
    Kit k;
    auto* t = k.sbuf("t", 128, 64);
    k.add(InstructionType::TensorCopy, {Kit::tile(t)}, {Kit::tile(t, -1, 32)}, "cp");
    expectRefused(k, "instructions[0] TensorCopy 'cp': ins[0] has 64 elements per partition but outs[0] has 32");
  }
  {
    Kit k;
    auto* t = k.sbuf("t", 128, 64);
    auto* u = k.sbuf("u", 128, 64);
    k.add(InstructionType::TensorCopy, {Kit::tile(t)}, {Kit::tile(u)}, "cp");
    expectRefused(k, "instructions[0] TensorCopy 'cp': ins[0] reads SBUF partition 0 bytes [0, 1), which no "
                     "instruction has written", sim::Mode::Full);
  }
  {
    Kit k;
    auto* t = k.sbuf("t", 128, 64);
    auto* p = k.psum("p", 128, 64);
    auto* cp = k.add(InstructionType::TensorCopy, {Kit::tile(p)}, {Kit::tile(t)}, "cp");
    cp->engine = Engine::Pool;
    expectRefused(k, "TensorCopy 'cp': TensorCopy: an input is in PSUM, which GpSimd (Pool) cannot access");
  }
  {
    Kit k;
    auto* x = k.dram("x", MemoryType::Input, {4}, DType::float32);
    auto* kn = k.add<InstBIRKernel>(InstructionType::BIRKernel, {}, {}, "mlp");
    kn->addSeqAccess(x, false);
    expectRefused(k, "BIRKernel 'mlp': kernel nodes must be expanded", sim::Mode::Full);
    // Timing mode prices a kernel node by expanding it: a node naming no leaf cannot be priced.
    EXPECT_THROW(k.run(sim::Mode::Timing), walrus::KernelError);
  }
  {
    Kit k;
    auto* t = k.f->createOnChipTensor("t", MemoryType::SB, DType::float32, 128, 8192, 0, 190 * 1024);
    auto* ms = k.add<InstMemset>(InstructionType::Memset, {}, {Kit::tile(t)}, "m");
    ms->constant = 0;
    expectRefused(k, "Memset 'm': outs[0] tensor 't' occupies SBUF bytes [194560, 202752) per partition, beyond the "
                     "196608 bytes of a trn1 SBUF partition");
    EXPECT_GT(k.run(sim::Mode::Timing, "trn2").total_ns, 0);
  }
  {
    // An address whose end passes int64 (hostile JSON): refused with the exact end, in both modes
    // (the overflowed sum was negative, passed the check, and full mode wrote far outside SBUF).
    Kit k;
    auto* t = k.f->createOnChipTensor("t", MemoryType::SB, DType::float32, 128, 2048, 0, INT64_MAX);
    k.add<InstMemset>(InstructionType::Memset, {}, {Kit::tile(t)}, "m")->constant = 0;
    for (sim::Mode mode : {sim::Mode::Full, sim::Mode::Timing})
      expectRefused(k, "Memset 'm': outs[0] tensor 't' occupies SBUF bytes [9223372036854775807, "
                       "9223372036854777855) per partition, beyond the 196608 bytes", mode);
  }
}

// List scheduling (sim/ListSchedule.h): two independent VectorE chains written one after the other
// interleave, each chain keeps its order, and the block runs faster.
TEST(SimListSchedule, InterleavesIndependentChainsAndKeepsEachChainsOrder) {
  Kit k;
  auto* a = k.sbuf("a", 128, 256);
  auto* b = k.sbuf("b", 128, 256);
  auto* c = k.sbuf("c", 128, 256);
  auto* d = k.sbuf("d", 128, 256);
  auto chain = [&](MemoryLocation* x, MemoryLocation* y, const std::string& n) {
    k.add<InstMemset>(InstructionType::Memset, {}, {Kit::tile(x)}, n + "0")->constant = 1.0;
    k.add(InstructionType::TensorCopy, {Kit::tile(x)}, {Kit::tile(y)}, n + "1");  // RAW on x
    k.add(InstructionType::TensorCopy, {Kit::tile(y)}, {Kit::tile(x)}, n + "2");  // RAW on y, WAR on x
  };
  chain(a, b, "A");
  chain(c, d, "B");
  const double before = k.run(sim::Mode::Timing).total_ns;
  const sim::ScheduleStats s = sim::scheduleFunction(*k.m, 0, "trn1");
  EXPECT_EQ(s.blocks, 1u);
  std::vector<std::string> names;
  for (const auto& I : k.bb->instructions()) names.push_back(I->name);
  EXPECT_EQ(names, (std::vector<std::string>{"A0", "B0", "A1", "B1", "A2", "B2"}));
  EXPECT_LT(k.run(sim::Mode::Timing).total_ns, before);
}

// The scheduling pass's decoding, reordered in step with the blocks (scheduleModule's `prepared`),
// is the decoding of the reordered module, field by field: two blocks reordered (the second's
// ordinals start after the first's), every decoded field the same, the hazard footprints the same
// ones (found through firstAccess, whose order the reordering need not keep).
TEST(SimListSchedule, ThePreparedDecodingIsTheReorderedModulesDecoding) {
  Kit k;
  auto chains = [&](const std::string& block) {
    auto* a = k.sbuf(block + "a", 128, 256);
    auto* b = k.sbuf(block + "b", 128, 256);
    auto* c = k.sbuf(block + "c", 128, 256);
    auto* d = k.sbuf(block + "d", 128, 256);
    for (auto [x, y, n] : {std::tuple{a, b, block + "A"}, std::tuple{c, d, block + "B"}}) {
      k.add<InstMemset>(InstructionType::Memset, {}, {Kit::tile(x)}, n + "0")->constant = 1.0;
      k.add(InstructionType::TensorCopy, {Kit::tile(x)}, {Kit::tile(y)}, n + "1");
      k.add(InstructionType::Activation, {Kit::tile(y)}, {Kit::tile(x)}, n + "2");
    }
  };
  chains("p");
  k.bb = k.f->addBlock();
  chains("q");
  std::shared_ptr<sim::Program> prepared;
  const std::vector<sim::ScheduleStats> stats = sim::scheduleModule(*k.m, "trn1", &prepared);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].blocks, 2u);
  ASSERT_TRUE(prepared);
  const auto hwm = bir::makeHwm("trn1");
  const sim::Program fresh(*k.m, *hwm, sim::Mode::Timing, std::nullopt);
  ASSERT_EQ(prepared->cores.size(), 1u);
  const sim::CoreProgram &p = prepared->cores[0], &q = fresh.cores[0];
  ASSERT_EQ(p.insts.size(), 12u);
  ASSERT_EQ(q.insts.size(), 12u);
  EXPECT_EQ(p.fn, q.fn);
  EXPECT_NE(p.insts[1].inst->name, "pA1");  // moved
  for (size_t i = 0; i < q.insts.size(); ++i) {
    const sim::DecodedInst& a = p.insts[i];
    const sim::DecodedInst& b = q.insts[i];
    for (int x = 0; x < b.nAccess; ++x) {
      const sim::Access &pa = p.accesses[a.firstAccess + x], &qa = q.accesses[b.firstAccess + x];
      EXPECT_TRUE(pa.mem == qa.mem && pa.quadrants == qa.quadrants && pa.write == qa.write && pa.lo == qa.lo &&
                  pa.hi == qa.hi)
          << i << " access " << x;
    }
    // Every field of DecodedInst but firstAccess.
    const auto fields = [](const sim::DecodedInst& d) {
      return std::tie(d.inst, d.cls, d.engine, d.track, d.issueTrack, d.wholeCore, d.stage, d.nIns, d.nOuts,
                      d.firstOperand, d.nAccess, d.cycles, d.busy_ns, d.access_ns, d.dma_latency_ns, d.dma_dge_ns,
                      d.dma_transfer_ns, d.dma_hbm_ns, d.dma_engine_mask, d.dgeUnit, d.ports, d.bytes, d.flops,
                      d.block, d.index, d.ordinal);
    };
    EXPECT_TRUE(fields(a) == fields(b)) << i << " " << b.inst->name;
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.ordinal, b.ordinal);
  }
  EXPECT_EQ(p.accesses.size(), q.accesses.size());
}
