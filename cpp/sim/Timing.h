// The time side of the simulator: each engine runs its instruction stream in order, each DMA
// queue its transfers in order, and cross-engine order comes from the hazards on memory ranges.
//
// Scheduling in program order gives each instruction the earliest start its engine and its
// dependencies allow (an instruction only depends on earlier ones; an engine's stream is program
// order), i.e. the as-soon-as-possible schedule the semaphores produce on the device. An
// instruction that has to wait for a dependency starts `semaphore_wait_ns` after it is met.
//   compute:  start = max(engine free, hazards, the v2 SRAM port it shares with another engine:
//             SBUF for DVE and Pool, PSUM for DVE and ACT);  the engine (and the port) is busy
//             for busy_ns; results are visible at end = start + busy_ns + access_ns.
//   DMA:      the issuing engine (SP unless the instruction names another) spends busy_ns on the
//             trigger once the hazards allow; the transfer may start dma_latency_ns later (and
//             once its DGE, if any, has made the descriptors: DGE[0] for ScalarE, DGE[1] for the
//             Sync engine, GpSimd for software DGE), once its queue's previous transfer is done
//             and once every DMA engine it spreads over is free (the 16 DMA engines are shared by
//             all queues, served in program order); it moves its data in dma_transfer_ns, and no
//             faster than the core's HBM allows (dma_hbm_ns, HBM shared by all transfers); its
//             writes are visible access_ns (the completion semaphore) after it ends.
//   kernel node (timing mode): waits for every engine and queue and occupies them all.
// Multi-core modules: the cores of a multi-core kernel launch together, so on a later core an
// instruction of a kernel an earlier core also ran starts no earlier than that kernel's first
// instruction there (Simulator::run passes it as `notBefore`).
// Reads release their ranges when the engine is done with them (start + busy; DMA: the transfer's
// end), writes when the data is visible (end).
#pragma once

#include <cstdint>
#include <vector>

#include "Hazards.h"
#include "Program.h"

namespace sim {

// One executed instruction.
struct Record {
  double start_ns = 0, end_ns = 0;         // on its track (DMA: its queue's data transfer)
  double issue_ns = 0, issue_end_ns = 0;   // DMA: the trigger on the issuing engine
  uint32_t inst = 0;                       // index in its CoreProgram
  uint16_t core = 0;
  uint8_t track = 0, issueTrack = 0;
};

class Scheduler {
 public:
  Scheduler(const bir::MachineConfig& cfg, const std::vector<TensorSpec>& tensors);
  // Before a core's program: `accesses` is its CoreProgram::accesses.size().
  void reset(size_t accesses);
  // Times one instruction, starting no earlier than `notBefore`; returns its record.
  Record schedule(const CoreProgram& p, const DecodedInst& d, double notBefore = 0);

  double busy_ns[kMaxTracks] = {};
  int64_t count[kMaxTracks] = {};
  double end_ns = 0;  // when the last instruction ends (a DMA: its transfer)

 private:
  // The start of an instruction free to go at `free` whose dependencies are met at `deps`.
  double gate(double free, double deps) const { return deps > free ? deps + semaphoreNs_ : free; }

  double ready_[kMaxTracks] = {};
  static constexpr int kDmaEngines = 32;  // >= MachineConfig::dma_engines (masks are 32 bits)
  double dmaEngineFree_[kDmaEngines] = {};
  double dgeFree_[2] = {};
  double portFree_[2] = {};  // kPortSbufDvePool, kPortPsumDveAct
  double hbmFree_ = 0;
  int tracks_ = kMaxTracks;
  double semaphoreNs_ = 0;
  HazardTracker hazards_;
  std::vector<uint32_t> hints_;  // per access of the program: its segment last time (RangeTimes)
};

}  // namespace sim
