// What the trace shows, derived from a run's records (SimResult::timeline): every instruction
// as a slice on its track in integer nanoseconds, a sub-track where it overlaps the slice before
// (pipelining), the memory dependencies that delayed instructions (flows), and counters (SBUF and
// PSUM in use, DMA rates). Trace.cpp writes it as Chrome trace JSON; the Python timeline picture
// draws the same slices (neuronxsim/report/timeline.py).
//
// Clock: integer nanoseconds of simulated time, each instant rounded once to the nearest (the
// simulator keeps fractional ns: cycles / clock). A slice's duration is the difference of two
// rounded instants, so slices that touch or nest in the simulator still do: rounding is monotonic.
//
// Tracks: slice [start, end) runs from the instruction's start until its results are visible;
// the engine is busy for [start, busyEnd) and may start the next instruction then, before `end`.
// Such an overlap goes to a sub-track ("ACT (pipelined)"): each slice takes the lowest lane of
// its track that is free at its start, so the slices of every lane are disjoint.
//
// Flows: for each instruction that a memory dependency delayed (Record::waited), one flow from
// the instruction whose access it waited for: RAW/WAW: a write, whose results visible, WAR: a
// read, whose reads done, plus the semaphore wait, is the waiting instruction's start
// (sim::hazardReleases). A DMA waits with its trigger, so its flow ends on the trigger slice.
//
// Counters, per core:
//   "SBUF in use" / "PSUM in use" (bytes): each on-chip tensor the instructions address (a BIR
//     memory location, partitions x bytes per partition, as the allocator placed it) counts from
//     the start of the first instruction that accesses it to the release of its last access (as
//     the hazards see it: a read when done, a write when visible).
//   "<queue> rate" (GB/s = bytes/ns): while a DMA of the queue moves its payload (after the fixed
//     cost and the wait for DMA engines), its bytes / its time on the queue (start to end: the
//     payload time of the cost model, or longer where HBM held it back); 0 in between. (Over the
//     rounded instants, a transfer's integral is its bytes within 1 ns x rate.)
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "Program.h"

namespace sim {

struct SimResult;

inline int64_t traceNs(double ns) { return std::llround(ns); }

struct Slice {
  int64_t start = 0, end = 0;  // traceNs
  int64_t busyEnd = 0;         // start <= busyEnd <= end: the track's own time
  uint32_t record = 0;         // index in SimResult::records
  uint16_t core = 0;
  uint8_t track = 0;
  uint8_t lane = 0;       // 0: the track itself; k: its k-th sub-track
  bool trigger = false;   // a DMA's trigger on its issuing engine (else the instruction itself)
  bool descriptors = false;  // a software-DGE DMA's descriptors, made on GpSimd
  bool wholeCore = false; // a kernel node timed as a whole: it occupies every track of its core
};

enum class Dependency : uint8_t { RAW, WAR, WAW };
const char* dependencyName(Dependency d);

struct Flow {
  uint32_t from = 0, to = 0;  // slices: the instruction waited for, and the one that waited
  Dependency kind = Dependency::RAW;
};

struct CounterSample {
  int64_t t = 0;  // traceNs
  double value = 0;
};

struct Counter {
  uint16_t core = 0;
  std::string name;  // "SBUF in use", "PSUM in use", "DMA3 rate"
  std::string unit;  // "bytes", "GB/s"
  std::vector<CounterSample> samples;  // strictly increasing t, the first at 0
};

// One track of a core that has slices, with its number of lanes.
struct TimelineTrack {
  uint16_t core = 0;
  uint8_t track = 0;
  uint8_t lanes = 1;
};

struct Timeline {
  std::vector<Slice> slices;          // in record order, a DMA's trigger right after it
  std::vector<TimelineTrack> tracks;  // by core, then track
  std::vector<Flow> flows;            // by the waiting instruction's record
  std::vector<Counter> counters;      // by core: SBUF, PSUM, then the queues
};

Timeline buildTimeline(const SimResult& r);

// "ACT", "ACT (pipelined)", "ACT (pipelined 3)"
std::string laneName(int track, int lane);
// The trace's thread id of a lane: the track itself for lane 0 (trackName order).
inline int laneTid(int track, int lane) { return track + kMaxTracks * lane; }

}  // namespace sim
