// BIRKernelWrapper: one IT54 node (InstBIRKernel) instantiated as its library leaf.
//
// createInstance(logger, node, block, verify) reads the node's kernel_name at +0xF0, finds the
// leaf (kernels/LeafRegistry.h) and runs its C++ generator for the node's shapes, attrs and
// operand access patterns (seed 000 section 2: natively, no JSON round trip, no tracing). The
// generated ISA code and its on-chip tensors are held by the wrapper until inlineInPlace()
// rewrites the node in its block, so a pass can expand every node before changing anything.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "bir/Module.h"

namespace walrus {

// Messages of the walrus passes: kept in order, and echoed to `sink` at or above `threshold`.
class Logger {
 public:
  enum class Level : uint8_t { Debug, Info, Warning };
  struct Entry {
    Level level;
    std::string message;
  };
  Logger() = default;
  explicit Logger(std::ostream* sink, Level threshold = Level::Info) : sink_(sink), threshold_(threshold) {}
  void log(Level level, std::string message);
  void info(std::string message) { log(Level::Info, std::move(message)); }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::ostream* sink_ = nullptr;
  Level threshold_ = Level::Info;
  std::vector<Entry> entries_;
};

// What one expansion emitted.
struct ExpansionStats {
  std::string node;         // the node's name
  std::string kernel_name;  // the leaf
  size_t instructions = 0;
  std::array<size_t, 7> per_engine{};  // compute instructions by bir::Engine ordinal
  size_t dmas = 0;                     // DMA transfers (on the 16 queues)
  size_t tensors = 0;                  // on-chip tensors added
  int64_t sbuf_bytes = 0;              // high water per partition
  int psum_banks = 0;
};

// The most instructions one kernel node's expansion may have unless told otherwise (a host holds
// about 1 KB per simulated instruction, so an expansion past it would exhaust memory rather than
// run). The NKI tracer's cap on a trace takes the same default (neuronxsim/nki/tracer.py), and
// both follow $NEURONXSIM_MAX_INSTRUCTIONS / --max-instructions.
inline constexpr size_t kDefaultMaxInstructions = 1'000'000;

class BIRKernelWrapper {
 public:
  // Instantiates and expands the leaf of `node` (which must sit in `bb`). `verify` checks every
  // emitted operand with the BIR verifier's rules as it is made. Throws walrus::KernelError naming
  // the node's position, name and kernel for an unknown kernel_name (listing the known ones), for
  // attrs or shapes the leaf cannot take, and for code the leaf could not make legal.
  static std::unique_ptr<BIRKernelWrapper> createInstance(Logger& logger, bir::InstBIRKernel* node,
                                                          bir::BasicBlock* bb, bool verify) {
    return createInstance(logger, node, bb, verify, kDefaultMaxInstructions);
  }
  // ... and refuses (KernelError, before memory runs out) an expansion of more than
  // `maxInstructions` instructions.
  static std::unique_ptr<BIRKernelWrapper> createInstance(Logger& logger, bir::InstBIRKernel* node,
                                                          bir::BasicBlock* bb, bool verify, size_t maxInstructions);
  ~BIRKernelWrapper();

  // Replaces the node in its block by the expansion (each instruction's `kernel` set to the
  // node's name) and adds the expansion's on-chip tensors to the function. Once only; returns the
  // number of instructions inserted.
  size_t inlineInPlace();

  const ExpansionStats& stats() const { return stats_; }
  // "functions[f].blocks[b].instructions[i] InstBIRKernel 'name' (kernel 'MLP')".
  static std::string describe(const bir::InstBIRKernel& node, const bir::BasicBlock* bb);

 private:
  BIRKernelWrapper() = default;
  bir::InstBIRKernel* node_ = nullptr;
  bir::BasicBlock* bb_ = nullptr;
  std::vector<std::unique_ptr<bir::Instruction>> code_;
  std::vector<std::unique_ptr<bir::MemoryLocationSet>> tensors_;
  ExpansionStats stats_;
  bool inlined_ = false;
};

}  // namespace walrus
