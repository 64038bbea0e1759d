// The time side of the simulator: each engine runs its instruction stream in order, each DMA
// queue its transfers in order, and cross-engine order comes from the hazards on memory ranges.
//
// Scheduling in program order gives each instruction the earliest start its engine and its
// dependencies allow (an instruction only depends on earlier ones; an engine's stream is program
// order), i.e. the as-soon-as-possible schedule the semaphores produce on the device:
//   compute:  start = max(engine free, hazards);  the engine is busy for busy_ns;
//             results are visible at end = start + busy_ns + access_ns.
//   DMA:      the issuing engine (SP unless the instruction names another) spends busy_ns on the
//             trigger once the hazards allow; the queue then starts when it is free, spends the
//             fixed cost, and moves the payload once every DMA engine it spreads over is free
//             (the 16 DMA engines are shared by all queues, served in program order).
//   kernel node (timing mode): waits for every engine and queue and occupies them all.
// Multi-core modules: the cores of a multi-core kernel launch together, so on a later core an
// instruction of a kernel an earlier core also ran starts no earlier than that kernel's first
// instruction there (Simulator::run passes it as `notBefore`).
// Reads release their ranges when the engine is done with them (start + busy), writes when the
// data is visible (end).
#pragma once

#include <cstdint>
#include <vector>

#include "Hazards.h"
#include "Program.h"

namespace sim {

// One executed instruction.
struct Record {
  double start_ns = 0, end_ns = 0;         // on its track (DMA: its queue); end: results visible
  double issue_ns = 0, issue_end_ns = 0;   // DMA: the trigger on the issuing engine; else start and
                                           // the end of its busy time (when its reads are done)
  uint32_t inst = 0;                       // index in its CoreProgram
  uint16_t core = 0;
  uint8_t track = 0;
  uint8_t issueTrack : 7 = 0;
  // A memory dependency (a hazard), not its engine (a DMA: its issuing engine) nor `notBefore`,
  // set its start: the trace draws a flow into it. (A bit of the record, not a list: a branch on
  // it per instruction made the run loop take 14% more CPU time in benchmarks/bench_timing.py.)
  uint8_t waited : 1 = 0;

  // When the hazards see its accesses released: writes when visible, reads when done.
  double writesDone_ns() const { return end_ns; }
  double readsDone_ns() const { return track >= kFirstQueueTrack ? end_ns : issue_end_ns; }
};

static_assert(sizeof(Record) == 40, "a long stream keeps one Record per instruction");

class Scheduler {
 public:
  Scheduler(const bir::MachineConfig& cfg, const std::vector<TensorSpec>& tensors);
  // Before a core's program: `accesses` is its CoreProgram::accesses.size().
  void reset(size_t accesses);
  // Times one instruction, starting no earlier than `notBefore`; returns its record.
  Record schedule(const CoreProgram& p, const DecodedInst& d, double notBefore = 0);

  double busy_ns[kMaxTracks] = {};
  int64_t count[kMaxTracks] = {};
  double end_ns = 0;  // when the last result is visible

 private:
  double ready_[kMaxTracks] = {};
  static constexpr int kDmaEngines = 32;  // >= MachineConfig::dma_engines (masks are 32 bits)
  double dmaEngineFree_[kDmaEngines] = {};
  int tracks_ = kMaxTracks;
  HazardTracker hazards_;
  std::vector<uint32_t> hints_;  // per access of the program: its segment last time (RangeTimes)
};

}  // namespace sim
