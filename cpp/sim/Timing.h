// The time side of the simulator: each engine runs its instruction stream in order, each DMA
// queue its transfers in order, and cross-engine order comes from the hazards on memory ranges.
//
// Scheduling in program order gives each instruction the earliest start its engine and its
// dependencies allow (an instruction only depends on earlier ones; an engine's stream is program
// order), i.e. the as-soon-as-possible schedule the semaphores produce on the device. The hazards
// see an access released `semaphore_wait_ns` after the access is done: an instruction that waits
// for it starts then (the semaphore round trip). A write's WAR and WAW on its own engine's or DMA
// queue's accesses are not waited for: the track's order keeps them (Hazards.h).
//   compute:  start = max(engine free, hazards, the SRAM ports it shares with another engine:
//             v2's SBUF port of DVE and Pool, DVE and ACT's PSUM port (v2) or the PSUM banks it
//             accesses (v3), each granted first come first served in program order);  the
//             engine (and the ports) is busy
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
// instruction of a kernel an earlier core also ran issues no earlier than that kernel's first
// instruction issued there (Simulator::run passes it as `notBefore`, which bounds the issue: a
// DMA's trigger, any other instruction's start).
// Reads release their ranges when the engine is done with them (start + busy; DMA: the transfer's
// end), writes when the data is visible (end; DMA: end + access_ns), each plus the semaphore wait
// (hazardReleases).
#pragma once

#include <cstdint>
#include <vector>

#include "Hazards.h"
#include "Program.h"

namespace sim {

// One executed instruction.
struct Record {
  double start_ns = 0, end_ns = 0;         // on its track (DMA: its queue's data transfer); end:
                                           // results visible (DMA: the data moved)
  double issue_ns = 0, issue_end_ns = 0;   // DMA: the trigger on the issuing engine; else start and
                                           // the end of its busy time (when its reads are done)
  uint32_t inst = 0;                       // index in its CoreProgram
  uint16_t core = 0;
  uint8_t track = 0;
  uint8_t issueTrack : 5 = 0;
  // A v2 SRAM port it shares with another engine (kPortSbufDvePool or kPortPsumDveAct), not its
  // engine nor a dependency nor `notBefore`, set its start: the trace's slice names the port.
  uint8_t portWait : 2 = 0;
  // A memory dependency (a hazard), not its engine (a DMA: its issuing engine) nor `notBefore`,
  // set its start: the trace draws a flow into it. (A bit of the record, not a list: a branch on
  // it per instruction made the run loop take 14% more CPU time in benchmarks/bench_timing.py.)
  uint8_t waited : 1 = 0;

  // Writes visible (a DMA: its data moved; the completion semaphore follows), reads done.
  double writesDone_ns() const { return end_ns; }
  double readsDone_ns() const { return track >= kFirstQueueTrack ? end_ns : issue_end_ns; }
  // How long it kept its track busy, the trace's busy_ns: its cost, not the wait for its results
  // (a DMA: its transfer on its queue; the trigger is its issuing engine's). The scheduler's
  // per-track sums (Scheduler::busy_ns) add the same.
  double busy_ns() const { return readsDone_ns() - start_ns; }
};

static_assert(sizeof(Record) == 40, "a long stream keeps one Record per instruction");
static_assert(kMaxTracks <= 32, "Record::issueTrack has 5 bits");

// When the hazards see an instruction's accesses released, i.e. when an instruction that waits
// for them starts: reads when done, writes when visible (a DMA's after its completion semaphore),
// each plus the semaphore wait; except the PE's PSUM writes, near-memory accumulations the next
// matmul of a group follows at the initiation interval (ours: a reader on another engine is not
// charged the wait either).
struct HazardReleases {
  double reads = 0, writes = 0;
};
inline HazardReleases hazardReleases(const Record& r, const DecodedInst& d, const bir::MachineConfig& cfg) {
  const double sem = cfg.semaphore_wait_ns;
  if (r.track >= kFirstQueueTrack && !d.wholeCore) return {r.end_ns + sem, r.end_ns + d.access_ns + sem};
  return {r.readsDone_ns() + sem, r.writesDone_ns() + (r.track == kTrackPE ? 0.0 : sem)};
}

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
  // The instruction just scheduled, a software-DGE DMA: when GpSimd started its descriptors (they
  // take its dma_dge_ns and count in GpSimd's busy_ns); else -1.
  double poolDescriptorsStart_ns = -1;

 private:
  const bir::MachineConfig& cfg_;
  double ready_[kMaxTracks] = {};
  static constexpr int kDmaEngines = 32;  // >= MachineConfig::dma_engines (masks are 32 bits)
  double dmaEngineFree_[kDmaEngines] = {};
  double dgeFree_[2] = {};
  double sbufPortFree_ = 0;      // kPortSbufDvePool
  double psumPortFree_[8] = {};  // kPortPsumDveAct: DecodedInst::psumPorts
  double hbmFree_ = 0;
  int tracks_ = kMaxTracks;
  HazardTracker hazards_;
  std::vector<uint32_t> hints_;  // per access of the program: its segment last time (RangeTimes)
};

}  // namespace sim
