// The structural verifier: what must hold of any module before anything executes it.
//   * every tensor fits its memory (SB/PSUM: at most 128 partitions from its base partition,
//     PSUM rows within 16 KiB);
//   * every instruction has the operand counts its node class takes;
//   * every access pattern stays inside its memory location; on-chip patterns step exactly one
//     partition per partition-pair step, keep each free access inside its partition's row, use at
//     most 4 free dims (compute engines), and (compute engines) start where the start-partition
//     rule allows: 64 < P <= 128 at 0; 32 < P <= 64 at 0 or 64; P <= 32 at 0, 32, 64 or 96;
//   * kernel nodes (IT54/55/56) address DRAM tensors only.
// Dtype and enum names are checked by the JSON reader. Errors are BIRError with the JSON path.
#pragma once

#include <string>

#include "MachineConfig.h"
#include "Module.h"
#include "PatternShape.h"

namespace bir {

inline constexpr int64_t kNumPartitions = UniformConfig::kPartitions;
inline constexpr int64_t kPsumPartitionBytes = UniformConfig::kPsumBanks * UniformConfig::kPsumBankBytes;
inline constexpr int64_t kMaxFreeDims = UniformConfig::kApMaxFreeDims;

void verifyModule(const Module& m);

// The parts verifyModule checks in order, for a reader that checks an instruction as it reaches
// it: the tensors of functions[fi], and one instruction, functions[fi].blocks[bi].instructions[ii]
// (OperandCheck.h has the same checks one operand at a time, for the simulator's decoder).
void verifyAllocations(const Function& f, size_t fi);
// `shapes`, when given, receives patternShape of each operand, ins then outs (ins.size() +
// outs.size() of them), for a caller that reads the patterns' numbers again (the decoder).
void verifyInstruction(const Instruction& I, size_t fi, size_t bi, size_t ii, PatternShape* shapes = nullptr);

// The start-partition rule for a compute-engine access of `partitions` partitions starting at
// `start`; empty when it holds, else the reason.
std::string checkStartPartition(int64_t start, int64_t partitions);

// Checks one access pattern; `where` prefixes the message. Also used by the simulator and the
// builders, so an operand is held to the same rules wherever it was made.
void verifyAccessPattern(const AccessPattern& ap, bool computeEngine, const std::string& where);

}  // namespace bir
