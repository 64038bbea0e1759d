// Tile: a view of on-chip memory (SBUF or PSUM) as [partitions, free dims...].
//
// A tile addresses one SB/PSUM location the way the engines do: a partition range (no partition
// stride, docs/isa-semantics.md section 1) and up to four free dims, each a [step, num] pair in
// elements of the tile's dtype within a partition's row. Tiles are values: slicing, reshaping
// and reinterpreting make new views of the same bytes; they never allocate (see OnChipMemory.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bir/AccessPattern.h"

namespace walrus::kernels {

class Tile {
 public:
  Tile() = default;
  // The whole row range [0, free...) of `partitions` partitions of `loc`, contiguous free dims.
  Tile(bir::MemoryLocation* loc, bir::DType dtype, int64_t partitions, const std::vector<int64_t>& free);

  bir::MemoryLocation* location() const { return loc_; }
  bir::DType dtype() const { return dtype_; }
  bool inPsum() const;
  int64_t partitions() const { return partitions_; }
  size_t rank() const { return free_.size(); }  // free dims
  int64_t dim(size_t d) const;                   // free dim d
  std::vector<int64_t> freeShape() const;
  int64_t freeSize() const;                      // elements per partition
  // Elements of the tile's dtype per partition row of its location.
  int64_t rowElements() const;

  // Partitions [p0, p0 + n).
  Tile rows(int64_t p0, int64_t n) const;
  // Elements [start, start + n) of free dim d.
  Tile slice(size_t d, int64_t start, int64_t n) const;
  // Element i of free dim d; the dim is dropped.
  Tile at(size_t d, int64_t i) const;
  // Columns [start, start + n) of a one-free-dim tile.
  Tile cols(int64_t start, int64_t n) const { return slice(rank() - 1, start, n); }
  // All free dims as one (they must nest).
  Tile flat() const;
  // Free dim d split into [num / inner, inner].
  Tile split(size_t d, int64_t inner) const;
  // Free dims reordered: result dim i is dim order[i].
  Tile permute(const std::vector<size_t>& order) const;
  // A new free dim of n elements at position d repeating the same elements (step 0): a [P, 1]
  // column read as [P, n].
  Tile broadcast(size_t d, int64_t n) const;
  // The same bytes as `dtype` elements (one contiguous free dim, aligned).
  Tile bitcast(bir::DType dtype) const;

  bir::AccessPattern ap() const;
  std::string str() const;

 private:
  void checkDim(size_t d, const char* op) const;
  bir::MemoryLocation* loc_ = nullptr;
  bir::DType dtype_ = bir::DType::float32;
  int64_t offset_ = 0;  // elements of dtype_ from the location's start (partition-major)
  int64_t partitions_ = 0;
  std::vector<bir::APPair> free_;
};

}  // namespace walrus::kernels
