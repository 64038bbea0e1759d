// The simulator's entry point: prepare a module once (verify, check, decode, cost), bind the DRAM
// tensors to caller memory, run.
//
//   bir::Module m = ...;
//   sim::Simulator s(m, {.arch = "trn1", .mode = sim::Mode::Full});
//   s.bind("x", xData, xBytes);          // every Input; Outputs optionally (else owned)
//   sim::SimResult r = s.run();          // outputs in the bound buffers (or r.outputs)
//
// NeuronCores: every function of the module runs as its own NeuronCore (or only
// functions[neuron_core_id]); they share DRAM tensors by name and run in parallel in time (the
// total is the slowest core). Functionally they run one after another in function order; there
// is no cross-core synchronisation to honour, so cores that race on a DRAM tensor see the
// function-order result.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "Gemm.h"
#include "HostMemory.h"
#include "Program.h"
#include "Semantics.h"
#include "Timing.h"

namespace sim {

struct SimOptions {
  std::string arch = "trn1";
  Mode mode = Mode::Full;
  std::optional<int64_t> neuron_core_id;  // empty: every function, each its own NeuronCore
  int threads = 0;                        // matmul worker threads; 0: min(2, hardware threads)
  bool records = true;                    // keep one Record per instruction
};

struct TrackStats {
  double busy_ns = 0;
  int64_t instructions = 0;
};

struct CoreResult {
  int core = 0;
  double end_ns = 0;
  int64_t pe_flops = 0;
  double pe_adjusted_flops = 0;  // what MFU counts (bir::Latency::adjusted_flops)
  TrackStats tracks[kMaxTracks];
};

// An Output tensor that the run left partly (or wholly) unwritten: those elements read as NaN
// (floats) or 0 (integers). Not an error: a kernel may leave part of an output alone. Full mode
// records every byte written; timing mode, which keeps no data, marks the elements each write's
// pattern addresses (Simulator::run): the same elements.
struct UnwrittenOutput {
  std::string name;
  bir::DType dtype = bir::DType::float32;
  std::vector<int64_t> shape;
  int64_t elements = 0;  // elements with a byte no instruction wrote
  int64_t first = -1;    // the first such element's flat (row-major) index
};

struct SimResult {
  SimResult() = default;
  SimResult(SimResult&&) = default;
  SimResult& operator=(SimResult&&) = default;
  SimResult(const SimResult&) = delete;  // owns tensors; move it

  std::string arch;
  Mode mode = Mode::Full;
  double total_ns = 0;
  std::vector<CoreResult> cores;
  // In execution order: core by core, program order within. Huge pages: see HostMemory.h.
  std::vector<Record, LargePageAllocator<Record>> records;
  std::vector<DevicePrintRecord> prints;
  // Software-DGE DMAs, by record index (ascending): when GpSimd started making their descriptors,
  // which take their DecodedInst::dma_dge_ns there (its busy time counts them; the trace shows them).
  std::vector<std::pair<uint32_t, double>> pool_descriptors;
  int64_t pe_flops = 0;  // multiply-add work of the PE (2 per MAC)
  // The PE's flops weighted by their input dtypes as the profiler's `adjusted_flops` [R2]
  // (bir::Latency::adjusted_flops), and MFU: pe_adjusted_flops / (bf16 PE peak x total time x
  // cores), never above the PE's busy share.
  double pe_adjusted_flops = 0;
  double pe_mfu = 0;
  size_t instructions = 0;
  // Host time, for throughput figures: wall clock, and the simulating thread's CPU time (which a
  // shared host does not inflate).
  double prepare_seconds = 0, run_seconds = 0, run_cpu_seconds = 0;
  std::shared_ptr<const Program> program;       // resolves records to instructions
  std::vector<std::unique_ptr<DramTensor>> tensors;  // owned DRAM (outputs not bound by the caller)
  std::vector<UnwrittenOutput> unwritten_outputs;   // in the module's tensor order

  const DecodedInst& decoded(const Record& r) const;
  const bir::Instruction& instruction(const Record& r) const { return *decoded(r).inst; }
  // Chrome trace-event JSON (Perfetto, chrome://tracing) of timeline(): see Trace.cpp.
  void writeTrace(const std::string& path) const;
  // The bytes of a DRAM tensor after the run (bound or owned), or null.
  const DramTensor* tensor(const std::string& name) const;
};

// A timing-mode Program of `module` that a pass which decoded it anyway made (the scheduling
// pass, scheduleModule in ListSchedule.h), for the Simulator of that module to start from instead
// of decoding it again. It points into the module: valid only while nothing has changed the module
// since, which its maker must guarantee (the library keeps it inside its own trace-then-simulate
// paths). Every function of the module, on `arch`'s default machine (bir::makeHwm).
struct PreparedProgram {
  std::shared_ptr<Program> program;
  const bir::Module* module = nullptr;
  std::string arch;
};

class Simulator {
 public:
  Simulator(const bir::Module& m, SimOptions opts);
  // Starts from `prepared` (its module must be `m`) instead of preparing `m`: refuses, with
  // SimulationError, a mode, arch or core selection it was not prepared for, and a module whose
  // instructions are no longer those it decoded, in that order.
  Simulator(const bir::Module& m, SimOptions opts, const PreparedProgram& prepared);
  ~Simulator();

  const bir::MachineConfig& config() const { return hwm_->config(); }
  const bir::Hwm& hwm() const { return *hwm_; }
  const Program& program() const { return *program_; }
  const std::vector<TensorSpec>& tensors() const { return program_->tensors; }
  // The caller's buffer for an Input or Output tensor (exactly its bytes). An Input the module
  // writes is copied on run, so the caller's array is never modified.
  void bind(const std::string& name, void* data, int64_t bytes);
  SimResult run();
  // Instructions run so far by the run in progress (updated every kProgressStride instructions,
  // readable from another thread): what a progress bar shows.
  uint64_t instructionsDone() const { return done_.load(std::memory_order_relaxed); }
  static constexpr uint32_t kProgressStride = 1024;

 private:
  SimOptions opts_;
  std::unique_ptr<bir::Hwm> hwm_;
  std::shared_ptr<Program> program_;
  std::vector<void*> bound_;
  double prepare_seconds_ = 0;
  std::atomic<uint64_t> done_{0};
};

}  // namespace sim
