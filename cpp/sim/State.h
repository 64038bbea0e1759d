// The machine state the functional side of the simulator reads and writes: SBUF and PSUM bytes with
// initialisation tracking, the PSUM accumulation-group marks, the activation engine's accumulator
// registers and the DRAM tensors (bound to the caller's arrays, or owned for internal tensors).
//
// Memory cost: one bit of initialisation state per byte (1/8 of the tracked memory) and one bit of
// accumulation-group state per fp32 word of PSUM. Large buffers come from calloc/new so that pages
// nobody touches are never committed.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "HostMemory.h"
#include "Xorwow.h"
#include "bir/Enums.h"

namespace bir {
class Instruction;
}

namespace sim {

// One bit per tracked unit, initially clear. reset() clears only the 512-byte chunks of the bitmap
// that set() touched since the last reset, so re-arming a 24 MiB SBUF costs what the last run used.
// Threads may set() and clear() concurrently only bits of different 64-bit words.
class BitSet {
 public:
  BitSet() = default;
  explicit BitSet(int64_t bits);
  void reset();
  // First clear (set) bit in [first, first + n), or -1.
  int64_t firstClear(int64_t first, int64_t n) const { return firstWith<false>(first, n); }
  int64_t firstSet(int64_t first, int64_t n) const { return firstWith<true>(first, n); }
  bool all(int64_t first, int64_t n) const { return firstClear(first, n) < 0; }
  void set(int64_t first, int64_t n) {
    if (n <= 0) return;
    const int64_t end = first + n;
    for (int64_t c = first >> kChunkBits; c <= (end - 1) >> kChunkBits; ++c) dirty_[c].store(1, std::memory_order_relaxed);
    for (int64_t i = first; i < end;) {
      const int64_t w = i >> 6, lo = i & 63, hi = std::min<int64_t>(64, lo + (end - i));
      words_[w] |= wordMask(lo, hi);
      i += hi - lo;
    }
  }
  void clear(int64_t first, int64_t n) {
    const int64_t end = first + n;
    for (int64_t i = first; i < end;) {
      const int64_t w = i >> 6, lo = i & 63, hi = std::min<int64_t>(64, lo + (end - i));
      words_[w] &= ~wordMask(lo, hi);
      i += hi - lo;
    }
  }
  void prefetch(int64_t i) const { __builtin_prefetch(&words_[i >> 6]); }

 private:
  template <bool Set>
  int64_t firstWith(int64_t first, int64_t n) const {
    const int64_t end = first + n;
    for (int64_t i = first; i < end;) {
      const int64_t w = i >> 6, lo = i & 63, hi = std::min<int64_t>(64, lo + (end - i));
      const uint64_t found = (Set ? words_[w] : ~words_[w]) & wordMask(lo, hi);
      if (found) return (w << 6) + __builtin_ctzll(found);
      i += hi - lo;
    }
    return -1;
  }
  static constexpr int kChunkBits = 12;  // one dirty flag per 4096 bits (512 bytes of bitmap)
  // Bits [lo, hi) of one word (0 <= lo < hi <= 64).
  static uint64_t wordMask(int64_t lo, int64_t hi) {
    const uint64_t upper = hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
    return upper & ~((uint64_t{1} << lo) - 1);
  }
  LargeBuffer buf_;
  uint64_t* words_ = nullptr;
  int64_t nwords_ = 0;
  // Atomic because lane-parallel instructions set bits of disjoint words that can share a chunk.
  std::vector<std::atomic<uint8_t>> dirty_;
};

// Tiles (the same `bytes` at `offset` in `lanes` consecutive partitions) known to have some
// property in full, in a direct-mapped table of 2^kSlotBits entries: a lookup that misses only
// means the caller checks the bits itself.
template <int kSlotBits>
class TileSet {
 public:
  bool contains(int64_t offset, int64_t lanes, int64_t bytes) const {
    const Tile& t = slots_[slot(offset)];
    return t.offset == offset && t.lanes >= lanes && t.bytes >= bytes;
  }
  void insert(int64_t offset, int64_t lanes, int64_t bytes) {
    slots_[slot(offset)] = {offset, lanes, bytes};
    empty_ = false;
  }
  void clear() {
    if (empty_) return;
    slots_.fill(Tile{});
    empty_ = true;
  }

 private:
  struct Tile {
    int64_t offset = -1, lanes = 0, bytes = 0;
  };
  static size_t slot(int64_t offset) {
    return static_cast<size_t>((static_cast<uint64_t>(offset) * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits));
  }
  std::array<Tile, size_t{1} << kSlotBits> slots_{};
  bool empty_ = true;
};

// SBUF tiles known to be written in full. Within one run written bits of SBUF are only ever set,
// except by a copy of PSUM holes (SemanticsVector.cpp's copyWithHoles, which clears this set), so
// an entry stays true until clear(); a GEMM reads each operand tile many times and checks it once.
using WrittenTiles = TileSet<10>;

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

// SBUF, PSUM and the ACT and DVE accumulators of one NeuronCore.
class CoreState {
 public:
  CoreState(int64_t partitions, int64_t sbufBytesPerPartition, int64_t psumBytesPerPartition);
  bool hasShape(int64_t partitions, int64_t sbufBytesPerPartition, int64_t psumBytesPerPartition) const {
    return partitions_ == partitions && sbufBpp_ == sbufBytesPerPartition && psumBpp_ == psumBytesPerPartition;
  }
  // PSUM's partitions lie this far apart in host memory: 256 bytes more than a partition holds.
  // A matmul's C rows are a partition apart, and at 16 KiB they all fall in one L1 set (and a few
  // L2 sets), evicting each other and the operand panels on every micro-kernel store. 256 bytes
  // spread them over a quarter of the sets and keep one PSUM group bit word per 64 words from
  // spanning two partitions (lane-parallel writers stay on separate bit words).
  static int64_t psumPitch(int64_t psumBytesPerPartition) { return psumBytesPerPartition + 256; }
  void reset();  // a fresh core: nothing written, no accumulation groups, ACT accumulators 0, DVE ones unset, generators at their initial states
  // PSUM words [word, word + n) leave their accumulation groups (a non-matmul write).
  void endGroups(int64_t word, int64_t n) {
    psumGroup.clear(word, n);
    psumGroupTiles.clear();
  }

  Memory sbuf;
  Memory psum;
  // Per fp32 word of PSUM: written by a matmul (an open accumulation group). Marks are cleared
  // only through endGroups, which keeps psumGroupTiles true.
  BitSet psumGroup;
  // PSUM tiles whose every word has its group mark: an accumulating matmul into one need not
  // read a cold bitmap line per partition. Forgotten whenever any mark is cleared (endGroups).
  TileSet<6> psumGroupTiles;
  // Per fp32 word of PSUM: a matmul left it unwritten for the unwritten moving column it read
  // (SemanticsMatmul.cpp). Such a word (not written, marked here) is the only unwritten PSUM a
  // TensorCopy to SBUF copies, leaving its destination unwritten (SemanticsVector.cpp); a mark
  // on a written word means nothing (written bytes of PSUM are cleared only where marks are set).
  BitSet psumHoles;
  bool anyPsumHoles = false;  // some mark was set since reset() (else a copy need not look)
  WrittenTiles sbufWrittenTiles;  // matmul operand tiles already checked
  // The Activation engine's accumulation registers (activation's reduce_cmd), one fp32 per
  // partition, and whether an instruction has set each: reading an unset one is refused (what a
  // register holds before its first reset is whatever ran before the kernel).
  std::vector<float> actAccumulator;
  std::vector<uint8_t> actAccumulatorSet;
  // The Vector Engine's accumulation registers, one fp32 per partition, and whether an
  // instruction has set each: reading an unset one is refused. TensorScalarReduce (NKI's
  // tensor_scalar_reduce / _cumulative) and a reducing SelectReduce or RangeSelect set them; any
  // other Vector Engine instruction may change them (docs/isa-semantics.md §5), which unsets them
  // all (vectorRegistersMayChange).
  std::vector<float> dveAccumulator;
  std::vector<uint8_t> dveAccumulatorSet;
  bool dveAccumulatorAnySet = false;  // some register is set (else nothing need be unset)
  // The last instruction that unset them, which a refused read names (block and index in its
  // function; inst null: none since reset()).
  struct InstructionRef {
    uint32_t block = 0, index = 0;
    const bir::Instruction* inst = nullptr;
  } dveAccumulatorChangedBy;
  void vectorRegistersMayChange(const InstructionRef& by) {
    std::fill(dveAccumulatorSet.begin(), dveAccumulatorSet.end(), 0);
    dveAccumulatorAnySet = false;
    dveAccumulatorChangedBy = by;
  }
  // The pseudo-random generators of the Vector (kRngVector) and GpSimd (kRngPool) engines, one
  // per partition.
  static constexpr int kRngVector = 0, kRngPool = 1;
  std::array<std::vector<XorwowState>, 2> rng;
  // The state generator `g` of partition p starts in (ours).
  static XorwowState initialRng(int g, int64_t p) { return xorwowFromSeed((uint64_t(g + 1) << 32) | uint64_t(p)); }
  void resetRng();

 private:
  int64_t partitions_, sbufBpp_, psumBpp_;
  LargeBuffer sbufData_, psumData_;
};

}  // namespace sim
