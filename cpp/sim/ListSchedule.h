// Compiler-like instruction scheduling: reorders each block of a function so that every engine's
// in-order stream interleaves independent work, as the NKI compiler's scheduler does for the
// iterations of affine_range loops, instead of issuing instructions in source order (where an
// engine idles while its next instruction waits for another engine or for its own latency).
//
// The reordering is a topological order of the block's dependency graph, so it never changes what
// the block computes:
//   * memory: an instruction follows every earlier one whose accesses it conflicts with (RAW, WAR,
//     WAW on exact byte ranges per partition quadrant, the simulator's own footprints, with the
//     addresses the allocator gave, so reused buffers stay ordered);
//   * engine state the accesses do not show: the ScalarE accumulator registers (activations that
//     reduce into them and ReadActivationAccumulator keep their order), the Vector Engine's
//     (EngineOrder below), DevicePrint output order;
//   * a block holding an instruction whose result depends on its position (a random memset, seeded
//     by its ordinal) or a kernel node is left as it is.
// Among the instructions whose predecessors are placed, list scheduling picks the one that could
// start first on its engine (ties: source order), estimating start and release times with the
// cost model's own latencies (bir::Hwm, MachineConfig): engine streams, DMA triggers, queues and
// engines, the semaphore wait and the DMA latencies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Program.h"

namespace sim {

// The orders beside memory an instruction keeps with the others of the same order (bits): the
// ScalarE accumulator registers (activations that reduce into them, ReadActivationAccumulator),
// DevicePrint output, the Vector Engine's accumulation registers (TensorScalarReduce, SelectReduce,
// RangeSelect, which read, set or may change them) and the engines' random generators. kOrderWholeBlock: its result depends on its position in the block (a
// random memset, seeded by its ordinal): nothing around it may move (as around a kernel node the
// simulator times as a whole, which its latencies tell, not its class).
// `accumulates`: an Activation whose acc is not Idle; `randomMemset`: a Memset in Random mode.
// (The scheduling here and the tracer's reordering to fit memory, neuronxsim/nki/pressure.py,
// both read it.)
enum EngineOrder : uint32_t {
  kOrderAccumulator = 1,
  kOrderPrint = 2,
  kOrderVectorRegister = 4,
  kOrderGenerator = 8,
  kOrderWholeBlock = 16,
};
// (inline: the scheduler asks it of every instruction)
inline uint32_t engineOrders(bir::NodeClass cls, bool accumulates, bool randomMemset) {
  using NC = bir::NodeClass;
  switch (cls) {
    case NC::Activation: return accumulates ? uint32_t{kOrderAccumulator} : 0;
    case NC::ReadActivationAccumulator: return kOrderAccumulator;
    case NC::DevicePrint: return kOrderPrint;
    case NC::TensorScalarReduce:
    case NC::SelectReduce:
    case NC::RangeSelect: return kOrderVectorRegister;
    case NC::Rand:
    case NC::Dropout:
    case NC::SetRandState:
    case NC::GetRandState: return kOrderGenerator;
    case NC::Memset: return randomMemset ? uint32_t{kOrderWholeBlock} : 0;
    default: return 0;
  }
}

// The new order of one block's instructions: `order[k]` is the index (in the block) of the k-th.
// `tensors`: the program's DRAM tensors (Program::tensors).
std::vector<uint32_t> listScheduleBlock(const CoreProgram& cp, const std::vector<TensorSpec>& tensors, uint32_t block,
                                       const bir::MachineConfig& cfg);

struct ScheduleStats {
  size_t blocks = 0;         // blocks reordered
  size_t kept = 0;           // blocks left in source order (see the header comment)
  size_t moved = 0;          // instructions not at their source position
  bool refused = false;      // the simulator refuses the function (kept as it is)
};

// Reorders every block of functions[function] of `m` (arch: "trn1" / "trn2"). A function the
// simulator refuses (Program's checks, the verifier's among them) keeps its order: simulating it
// says why.
ScheduleStats scheduleFunction(bir::Module& m, size_t function, const std::string& arch);

// scheduleFunction for every function of `m`, in order (the same reorderings and stats), from
// one decoding of the module when the simulator accepts it whole.
//
// `prepared` (when not null) receives that decoding, its instructions reordered in step with the
// blocks: the timing-mode Program a Simulator of `m` (arch, every function) would build from the
// reordered module, for PreparedProgram to hand to one (Simulator.h). Null when the simulator
// refuses some function (each was then decoded on its own, and a function's decoding is not the
// whole module's).
std::vector<ScheduleStats> scheduleModule(bir::Module& m, const std::string& arch,
                                          std::shared_ptr<Program>* prepared = nullptr);

}  // namespace sim
