// The machine state the functional side of the simulator reads and writes: SBUF and PSUM bytes with
// initialisation tracking, the PSUM accumulation-group marks, the activation engine's accumulator
// registers and the DRAM tensors (bound to the caller's arrays, or owned for internal tensors).
//
// Memory cost: one bit of initialisation state per byte (1/8 of the tracked memory) and one bit of
// accumulation-group state per fp32 word of PSUM. Large buffers come from calloc/new so that pages
// nobody touches are never committed.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bir/Enums.h"

namespace sim {

// A large zero-filled allocation: fresh pages (only what is touched is committed), on Linux
// backed by transparent huge pages. SBUF operand rows are a partition (192 KiB) apart, so with
// 4 KiB pages nearly every row access is a TLB miss; 2 MiB pages remove most of them.
class LargeBuffer {
 public:
  LargeBuffer() = default;
  explicit LargeBuffer(int64_t bytes);
  ~LargeBuffer();
  LargeBuffer(LargeBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  LargeBuffer& operator=(LargeBuffer&& o) noexcept;
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(p_); }
  void zero();  // back to all zero, releasing the pages

 private:
  void* p_ = nullptr;
  int64_t n_ = 0;
};

// One bit per tracked unit, initially clear.
class BitSet {
 public:
  BitSet() = default;
  explicit BitSet(int64_t bits);
  void reset();  // clears every bit
  bool all(int64_t first, int64_t n) const;
  // First clear bit in [first, first + n), or -1.
  int64_t firstClear(int64_t first, int64_t n) const;
  void set(int64_t first, int64_t n);
  void clear(int64_t first, int64_t n);
  bool test(int64_t i) const { return (words_[static_cast<size_t>(i >> 6)] >> (i & 63)) & 1u; }
  void prefetch(int64_t i) const { __builtin_prefetch(&words_[static_cast<size_t>(i >> 6)]); }
  int64_t bytes() const { return nwords_ * 8; }

 private:
  LargeBuffer buf_;
  uint64_t* words_ = nullptr;
  int64_t nwords_ = 0;
};

enum class Space : uint8_t { SBUF, PSUM, DRAM, Imm };
const char* spaceName(Space s);

// A flat byte range the simulator reads and writes: SBUF, PSUM (partition-major, `pitch` bytes per
// partition) or one DRAM tensor (pitch 0).
struct Memory {
  std::string name;
  Space space = Space::DRAM;
  uint8_t* data = nullptr;
  int64_t bytes = 0;
  int64_t pitch = 0;
  bool tracked = false;  // reads must hit written bytes (on-chip memory, internal/output tensors)
  BitSet written;        // per byte, when tracked

  // "partition 5 bytes [16, 20)" or "bytes [40, 44)", for messages.
  std::string describe(int64_t offset, int64_t n) const;
};

// A DRAM tensor of the run, shared by every NeuronCore that names it.
struct DramTensor {
  std::string name;
  bir::MemoryType type = bir::MemoryType::DRAM;  // Input, Output or DRAM (internal)
  bir::DType dtype = bir::DType::float32;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
  bool written_by_module = false;  // some instruction writes it (an Input then gets a private copy)
  std::unique_ptr<uint8_t[]> owned;
  Memory mem;
};

// SBUF, PSUM and the ACT accumulators of one NeuronCore.
class CoreState {
 public:
  CoreState(int64_t partitions, int64_t sbufBytesPerPartition, int64_t psumBytesPerPartition);
  void reset();  // a fresh core: nothing written, no accumulation groups, accumulators 0

  Memory sbuf;
  Memory psum;
  BitSet psumGroup;  // per fp32 word of PSUM: written by a matmul (an open accumulation group)
  std::vector<float> actAccumulator;  // one fp32 register per partition

 private:
  LargeBuffer sbufData_, psumData_;
};

}  // namespace sim
