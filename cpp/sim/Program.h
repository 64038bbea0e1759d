// A module decoded for simulation: every instruction checked once against the machine (the
// refusals of the simulator) and turned into a compact DecodedInst with its operands, its hazard
// footprints and its cost, so that the run loops never look at strings or allocate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "HostMemory.h"
#include "Operand.h"
#include "bir/Hwm.h"
#include "bir/Module.h"

namespace sim {

enum class Mode : uint8_t { Full, Timing };

// The timelines of one core: the five engines, then the DMA queues.
enum Track : uint8_t { kTrackPE = 0, kTrackACT, kTrackDVE, kTrackPool, kTrackSP, kFirstQueueTrack };
inline constexpr int kNumEngines = 5;
inline constexpr int kMaxTracks = kNumEngines + 16;
const char* trackName(int track);  // "PE", "ACT", "DVE", "Pool", "SP", "DMA0".."DMA15"
// Inline: the decoder asks it of every instruction.
inline int trackOfEngine(bir::Engine e) {
  switch (e) {
    case bir::Engine::PE: return kTrackPE;
    case bir::Engine::Activation: return kTrackACT;
    case bir::Engine::Pool: return kTrackPool;
    case bir::Engine::SP:
    case bir::Engine::DMA: return kTrackSP;
    case bir::Engine::DVE:
    case bir::Engine::Unassigned: return kTrackDVE;
  }
  return kTrackDVE;
}

// One hazard footprint: bytes [lo, hi) of a memory, in the partition quadrants of `quadrants`
// (bit q = partitions [32q, 32q + 32); DRAM tensors use bit 0).
struct Access {
  uint32_t mem = 0;  // 0 SBUF, 1 PSUM, 2 + t for DRAM tensor t
  uint8_t quadrants = 0;
  bool write = false;
  int64_t lo = 0, hi = 0;
};
inline constexpr uint32_t kMemSbuf = 0, kMemPsum = 1, kMemFirstDram = 2;
// Access::quadrants of partitions [p0, p0 + n).
uint8_t quadrantsOfAny(int64_t p0, int64_t n);  // any p0 and n, by counting
inline uint8_t quadrantsOf(int64_t p0, int64_t n) {
  if (p0 < 0 || n < 1) return quadrantsOfAny(p0, n);
  // Shifts, not divisions: both are >= 0 here, where they agree, and a signed division by 32 costs
  // a rounding fix-up (two operands of every instruction a module is prepared with).
  const int64_t lo = p0 >> 5, hi = std::min<int64_t>((p0 + n - 1) >> 5, 3);
  return lo > hi ? 0 : static_cast<uint8_t>((2u << hi) - (1u << lo));  // bits lo..hi
}

inline constexpr int8_t kDgePool = 2;  // software DGE: descriptors made on GpSimd
// The SRAM ports two engines share: v2's SBUF port of DVE and Pool (MachineConfig::
// dve_pool_share_sbuf), and DVE and ACT's PSUM port (v2, dve_act_share_psum) or, on v3, each PSUM
// bank (dve_act_share_psum_banks).
inline constexpr uint8_t kPortSbufDvePool = 1, kPortPsumDveAct = 2;

struct DecodedInst {
  // Provided, so that the decoder's emplace_back() makes the fields below with their initialisers
  // only: value-initialising an implicit constructor first zeroes the whole object (a `rep stos`,
  // slow to start), then assigns the initialisers that are not zero.
  DecodedInst() {}
  const bir::Instruction* inst = nullptr;
  bir::NodeClass cls = bir::NodeClass::NoOp;
  bir::Engine engine = bir::Engine::Unassigned;
  uint8_t track = 0;       // where it runs: an engine, or for DMA its queue
  uint8_t issueTrack = 0;  // DMA: the engine that triggers it; else == track
  bool wholeCore = false;  // analytic kernel node: occupies every engine and queue
  bool stage = false;      // full mode: an input overlaps the output elsewhere: read everything first
  uint8_t nIns = 0, nOuts = 0;
  uint32_t firstOperand = 0;  // ins then outs, in CoreProgram::operands
  uint32_t firstAccess = 0;
  uint8_t nAccess = 0;
  // cost (bir::Hwm)
  double cycles = 0;
  double busy_ns = 0;
  double access_ns = 0;
  double dma_latency_ns = 0;
  double dma_dge_ns = 0;
  double dma_transfer_ns = 0;
  double dma_hbm_ns = 0;
  uint32_t dma_engine_mask = 0;
  int8_t dgeUnit = -1;  // DMA with generated descriptors: DGE instance 0 or 1, or kDgePool
  uint8_t ports = 0;    // kPortSbufDvePool: it needs the SBUF port DVE and Pool share (v2)
  // The PSUM ports DVE and ACT share that it holds (kPortPsumDveAct): bit b for bank b (v3), bit 0
  // for the one port (v2).
  uint8_t psumPorts = 0;
  static_assert(bir::UniformConfig::kPsumBanks <= 8, "psumPorts has a bit per PSUM bank");
  int64_t bytes = 0;
  int64_t flops = 0;
  double adjusted_flops = 0;  // the PE's flops as MFU counts them (bir::Latency::adjusted_flops)
  // where it sits, for messages and seeds
  uint32_t block = 0, index = 0, ordinal = 0;
};

// Whether `d` is a Vector Engine accumulation instruction (TensorScalarReduce, SelectReduce,
// RangeSelect): one that, even idle, may change the engine's accumulation registers
// (docs/isa-semantics.md §5). Other Vector Engine instructions leave them: the public
// range_select example chains reductions across nl.add.
inline bool accumulatesOnVectorEngine(const DecodedInst& d) {
  return d.cls == bir::NodeClass::TensorScalarReduce || d.cls == bir::NodeClass::SelectReduce ||
         d.cls == bir::NodeClass::RangeSelect;
}

// The vectors are reserved once and then filled: on huge pages, and reusing the blocks a previous
// program released, a long stream's program costs no page faults (HostMemory.h).
struct CoreProgram {
  int core = 0;
  const bir::Function* fn = nullptr;
  std::vector<DecodedInst, LargePageAllocator<DecodedInst>> insts;
  std::vector<Operand, LargePageAllocator<Operand>> operands;  // full mode only (timing mode keeps none)
  std::vector<Access, LargePageAllocator<Access>> accesses;
};

// A write of an Output tensor: its DRAM pattern (in elements of `esize` bytes: pairs [first,
// first + count) of TensorSpec::write_pairs), or the whole tensor (an analytic kernel node, or an
// address known only at run time).
struct OutputWrite {
  bool whole = false;
  int esize = 0;
  int64_t offset = 0;
  uint32_t first = 0, count = 0;
};

// A DRAM tensor the module names (shared by name across its functions).
struct TensorSpec {
  std::string name;
  bir::MemoryType type = bir::MemoryType::DRAM;
  bir::DType dtype = bir::DType::float32;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
  bool written_by_module = false;
  // Output tensors in timing mode: the elements each write addresses, in decoding order, so that
  // timing mode, which keeps no data, can tell the elements no instruction writes (Simulator::run). The
  // patterns' pairs lie in one array (no allocation per write once grown).
  std::vector<OutputWrite> writes;
  std::vector<bir::APPair> write_pairs;
};

class Program {
 public:
  // Verifies the module (bir::verifyModule), then checks and decodes the functions to run: every
  // function (neuron_core_id empty) or only functions[*neuron_core_id]. Throws SimulationError
  // naming the instruction for anything the machine cannot run, and for DRAM accesses of two cores
  // that nothing orders (CrossCoreOrder.h).
  Program(const bir::Module& m, const bir::Hwm& hwm, Mode mode, std::optional<int64_t> neuronCoreId);
  Program(const Program&) = delete;  // `config` points into this object
  Program& operator=(const Program&) = delete;

  Mode mode;
  // The Hwm's machine, copied: a SimResult keeps its Program after the Simulator and its Hwm are
  // gone (the trace reads the semaphore wait from it).
  const bir::MachineConfig* config;
  std::vector<CoreProgram> cores;
  std::vector<TensorSpec> tensors;
  size_t instructionCount() const;

 private:
  bir::MachineConfig ownConfig_;
  void decodeModule(const bir::Module& m, const bir::Hwm& hwm, std::optional<int64_t> neuronCoreId);
};

// "functions[0].blocks[1].instructions[7] TensorCopy 'copy_7'"
std::string instructionWhere(int core, uint32_t block, uint32_t index, const bir::Instruction& I);

}  // namespace sim
