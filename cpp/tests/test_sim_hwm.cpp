// bir::Hwm: each latency against the formula it implements (../shared/reference/nki-isa-and-hw.md
// §3-§4), the trn1/trn2 configurations and the natural engines.
#include "bir/Hwm.h"
#include "walrus/TrainiumHwm.h"

#include <bit>

#include "test_sim_kit.h"

using namespace sim_test;

TEST(SimHwm, ConfigurationsPerGeneration) {
  const auto& c1 = machineConfig("trn1");
  const auto& c2 = machineConfig("gen3");
  EXPECT_EQ(c1.sbuf_bytes_per_partition, 192 * 1024);
  EXPECT_EQ(c2.sbuf_bytes_per_partition, 224 * 1024);
  EXPECT_EQ(c1.psum_bytes_per_partition, 16 * 1024);
  EXPECT_DOUBLE_EQ(c1.pe_clock_ghz, 2.8);
  EXPECT_DOUBLE_EQ(c2.pe_clock_ghz, 2.4);
  EXPECT_EQ(&machineConfig("NeuronCore-v2"), &c1);
  EXPECT_THROW(machineConfig("trn7"), sim::SimulationError);
  EXPECT_NEAR(c1.peBf16PeakFlopsPerNs() * 1e-3, 91.75, 0.01);  // "92 TFLOPS BF16" [A1]
}

TEST(SimHwm, NaturalEngines) {
  Kit k;
  auto* t = k.sbuf("t", 128, 64);
  EXPECT_EQ(Hwm::engineOf(*k.add(InstructionType::Matmult, {}, {})), Engine::PE);
  EXPECT_EQ(Hwm::engineOf(*k.add(InstructionType::Load, {}, {})), Engine::SP);
  EXPECT_EQ(Hwm::engineOf(*k.add(InstructionType::Iota, {}, {})), Engine::Pool);
  EXPECT_EQ(Hwm::engineOf(*k.add(InstructionType::TensorScalarAffineSelect, {}, {})), Engine::Pool);
  EXPECT_EQ(Hwm::engineOf(*k.add(InstructionType::Activation, {}, {})), Engine::Activation);
  EXPECT_EQ(Hwm::engineOf(*k.add(InstructionType::TensorTensor, {}, {})), Engine::DVE);
  auto* pinned = k.add(InstructionType::TensorCopy, {Kit::tile(t)}, {Kit::tile(t)});
  pinned->engine = Engine::Pool;
  EXPECT_EQ(Hwm::engineOf(*pinned), Engine::Pool);
}

TEST(SimHwm, MatmulFormula) {
  TrainiumHwm hwm;
  for (DType dt : {DType::bfloat16, DType::float32}) {
    for (auto [m, n] : {std::pair{128, 512}, std::pair{32, 8}, std::pair{128, 40}}) {
      Kit k;
      auto* st = k.sbuf("st", 128, m, dt);
      auto* mv = k.sbuf("mv", 128, n, dt);
      auto* acc = k.psum("acc", m, n);
      auto* mm = k.add(InstructionType::Matmult, {Kit::tile(st), Kit::tile(mv)}, {Kit::tile(acc)});
      const Latency l = hwm.getLatency(*mm);
      // max(min(64, N_stationary), N_moving), x4 for fp32 [I nc_matmul]
      const double want = std::max(std::min(64, m), n) * (dt == DType::float32 ? 4 : 1);
      EXPECT_DOUBLE_EQ(l.cycles, want);
      EXPECT_DOUBLE_EQ(l.busy_ns, want / 2.8);
      EXPECT_EQ(l.flops, int64_t{2} * 128 * m * n);
      EXPECT_EQ(l.engine, Engine::PE);
    }
  }
}

TEST(SimHwm, VectorFormulasAndAccessOverhead) {
  TrainiumHwm hwm;
  Kit k;
  auto* a = k.sbuf("a", 128, 1000);
  auto* b = k.sbuf("b", 128, 1000);
  auto* p = k.psum("p", 128, 1000);
  auto* small = k.sbuf("s", 128, 10);
  auto* act = k.add(InstructionType::Activation, {Kit::tile(small)}, {Kit::tile(small)});
  EXPECT_DOUBLE_EQ(hwm.getLatency(*act).cycles, 64);  // max(MIN_II, N)
  // visible after the static instruction overhead (100 cycles) and the SRAM access (60) [A1]
  EXPECT_DOUBLE_EQ(hwm.getLatency(*act).access_ns, (100 + 60) / 1.4);
  auto* tt = k.add(InstructionType::TensorTensor, {Kit::tile(a), Kit::tile(b)}, {Kit::tile(a)});
  EXPECT_DOUBLE_EQ(hwm.getLatency(*tt).cycles, 2000);  // fp32 SBUF + SBUF: max(MIN_II, 2N)
  auto* tp = k.add(InstructionType::TensorTensor, {Kit::tile(p), Kit::tile(b)}, {Kit::tile(a)});
  EXPECT_DOUBLE_EQ(hwm.getLatency(*tp).cycles, 1000);  // one input in PSUM: max(MIN_II, N)
  auto* rc = k.add(InstructionType::Reciprocal, {Kit::tile(a)}, {Kit::tile(b)});
  EXPECT_DOUBLE_EQ(hwm.getLatency(*rc).cycles, 8000);
  auto* io = k.add<InstIota>(InstructionType::Iota, {}, {Kit::tile(a)});
  EXPECT_DOUBLE_EQ(hwm.getLatency(*io).cycles, 150 + 1000);
  EXPECT_DOUBLE_EQ(hwm.getLatency(*io).busy_ns, 1150 / 1.4);
  auto* rd = k.add(InstructionType::ReadActivationAccumulator, {}, {Kit::tile(small, -1, 1)});
  EXPECT_DOUBLE_EQ(hwm.getLatency(*rd).cycles, 64);
}

TEST(SimHwm, Trainium2PerfModes) {
  Trainium2Hwm hwm;
  Kit k;
  auto* a = k.sbuf("a", 128, 2048, DType::bfloat16);
  auto* b = k.sbuf("b", 128, 2048, DType::bfloat16);
  auto* f = k.sbuf("f", 128, 2048);
  auto* cp = k.add(InstructionType::TensorCopy, {Kit::tile(a)}, {Kit::tile(b)});
  EXPECT_DOUBLE_EQ(hwm.getLatency(*cp).cycles, 512);  // 4x
  EXPECT_DOUBLE_EQ(hwm.getLatency(*cp).busy_ns, 512 / 0.96);
  auto* cf = k.add(InstructionType::TensorCopy, {Kit::tile(f)}, {Kit::tile(f)});
  EXPECT_DOUBLE_EQ(hwm.getLatency(*cf).cycles, 2048);
  auto* tt = k.add(InstructionType::TensorTensor, {Kit::tile(a), Kit::tile(b)}, {Kit::tile(a)});
  EXPECT_DOUBLE_EQ(hwm.getLatency(*tt).cycles, 2048);  // 2x mode: N instead of 2N
  EXPECT_DOUBLE_EQ(TrainiumHwm().getLatency(*cp).cycles, 2048);
}

TEST(SimHwm, Dma) {
  TrainiumHwm hwm;
  const bir::MachineConfig& c = hwm.config();
  Kit k;
  auto* x = k.dram("x", MemoryType::Input, {64, 4096}, DType::float32);
  auto* t = k.sbuf("t", 64, 4096);
  auto* d = k.dma(Kit::tile(t), Kit::full(x), 3);
  const Latency l = hwm.getLatency(*d);
  EXPECT_EQ(l.dma_queue, 3);
  EXPECT_EQ(std::popcount(l.dma_engine_mask), 8);  // 64 partitions / 8 per DMA engine
  EXPECT_DOUBLE_EQ(l.dma_latency_ns, c.dma_start_latency_ns);
  EXPECT_DOUBLE_EQ(l.dma_descriptors, 8);  // a 16 KiB row per partition, 8 partitions per engine
  // 17 B/ns per engine on trn1 [DMA bandwidth guide]; 16 KiB rows are far above the descriptor floor
  EXPECT_DOUBLE_EQ(l.dma_transfer_ns, 8.0 * 4096 * 4 / 17);
  EXPECT_DOUBLE_EQ(l.dma_hbm_ns, 64.0 * 4096 * 4 / c.hbm_core_bandwidth_gbps);
  EXPECT_DOUBLE_EQ(l.access_ns, c.dma_completion_ns);
  EXPECT_EQ(l.bytes, 64 * 4096 * 4);
  auto* un = k.add(InstructionType::Halt, {}, {}, "h");
  EXPECT_THROW(hwm.getLatency(*un), sim::SimulationError);
}

