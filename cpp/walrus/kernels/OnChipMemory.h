// On-chip memory of one kernel expansion: where its SBUF and PSUM tiles live.
//
// The expansion is straight-line code, so memory is planned statically, the way the NKI compiler
// does it for a traced kernel: a stack of scopes over each memory. A leaf opens a scope for a
// phase (norm, projections, ...), allocates pools in it, and everything is released when the
// scope ends, so later phases reuse the bytes (the simulator orders the reuse by its read/write
// hazards, as the hardware's semaphores would). Allocations beyond the node's sb_buf_shape or
// psum_buf_shape are a KernelError naming the pool (walrus/NodeBuffers.h, the rule's one home).
//
//   TilePool  `bufs` rotating SBUF buffers of one [128, free...] shape: next() hands out the
//             buffers in turn, so a loop that loads into pool.next() overlaps its DMAs with the
//             compute on the previous bufs-1 buffers (explicit multi-buffering).
//   PsumPool  `bufs` rotating buffers of whole PSUM banks (2 KiB per partition each): every PSUM
//             tile starts on a bank boundary, so an accumulation group of up to 512 fp32 columns
//             never straddles two banks (wider buffers hold one group per bank).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "walrus/kernels/Tile.h"

namespace walrus::kernels {

// A bump allocator over [0, capacity) bytes of every partition, with marks to release to.
class Arena {
 public:
  Arena(std::string memory, int64_t capacity, int64_t align) : memory_(std::move(memory)), capacity_(capacity), align_(align) {}
  // The byte address of `bytes` new bytes per partition; KernelError (naming `what`) when they
  // do not fit.
  int64_t allocate(int64_t bytes, const std::string& what);
  int64_t mark() const { return top_; }
  void release(int64_t mark) { top_ = mark; }
  // Takes [newCapacity, capacity) away for the rest of the kernel (tiles that outlive every
  // scope); KernelError naming `what` if that memory is in use.
  void shrink(int64_t newCapacity, const std::string& what);
  int64_t capacity() const { return capacity_; }
  int64_t highWater() const { return high_; }

 private:
  std::string memory_;
  int64_t capacity_;
  int64_t align_;
  int64_t top_ = 0;
  int64_t high_ = 0;
};

class TilePool {
 public:
  TilePool() = default;
  TilePool(std::string name, std::vector<Tile> buffers) : name_(std::move(name)), buffers_(std::move(buffers)) {}
  // The next buffer in rotation, as the pool's whole [128, free...] tile.
  Tile next();
  // A buffer as a [128, free...] tile, for its shape (does not rotate).
  const Tile& shape() const { return buffers_.at(0); }
  int bufs() const { return static_cast<int>(buffers_.size()); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<Tile> buffers_;
  size_t turn_ = 0;
};

class PsumPool {
 public:
  PsumPool() = default;
  PsumPool(std::string name, std::vector<bir::MemoryLocation*> banks, int64_t bufferBytes)
      : name_(std::move(name)), banks_(std::move(banks)), bankBytes_(bufferBytes) {}
  // The next buffer in rotation viewed as a [128, free...] tile of `dtype` from its start.
  Tile next(bir::DType dtype, const std::vector<int64_t>& free);
  int bufs() const { return static_cast<int>(banks_.size()); }

 private:
  std::string name_;
  std::vector<bir::MemoryLocation*> banks_;
  int64_t bankBytes_ = 0;
  size_t turn_ = 0;
};

}  // namespace walrus::kernels
