// Tile: a view of on-chip memory (SBUF or PSUM) as [partitions, free dims...].
//
// A tile addresses one SB/PSUM location the way the engines do: a partition range (no partition
// stride, docs/isa-semantics.md section 1) and up to four free dims, each a [step, num] pair in
// elements of the tile's dtype within a partition's row. Tiles are values: slicing, reshaping
// and reinterpreting make new views of the same bytes; they never allocate (see OnChipMemory.h).
//
// The view algebra is bir::View's on-chip views (cpp/bir/View.h): dim indices are free dims, a
// tile keeps at least one free dim. Tile only keeps the type apart from DramViews.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bir/View.h"

namespace walrus::kernels {

class Tile : public bir::View {
 public:
  Tile() : View(nullptr, bir::DType::float32, 0, {}, "Tile") {}
  // The whole row range [0, free...) of `partitions` partitions of `loc`, contiguous free dims.
  Tile(bir::MemoryLocation* loc, bir::DType dtype, int64_t partitions, const std::vector<int64_t>& free)
      : View(View::onChip(loc, dtype, partitions, free, "Tile")) {}

  bool inPsum() const { return location() && location()->type == bir::MemoryType::PSUM; }
  std::vector<int64_t> freeShape() const { return shape(); }
  int64_t freeSize() const { return freeElements(); }  // elements per partition

  // Partitions [p0, p0 + n).
  Tile rows(int64_t p0, int64_t n) const { return Tile(partitionRange(p0, n)); }
  Tile slice(size_t d, int64_t start, int64_t n) const { return Tile(View::slice(d, start, n)); }
  Tile at(size_t d, int64_t i) const { return Tile(View::at(d, i)); }
  // Columns [start, start + n) of a one-free-dim tile.
  Tile cols(int64_t start, int64_t n) const { return slice(rank() - 1, start, n); }
  // All free dims as one (they must nest).
  Tile flat() const { return Tile(flatten()); }
  Tile split(size_t d, int64_t inner) const { return Tile(View::split(d, inner)); }
  Tile permute(const std::vector<size_t>& order) const { return Tile(View::permute(order)); }
  Tile broadcast(size_t d, int64_t n) const { return Tile(View::broadcast(d, n)); }
  Tile bitcast(bir::DType dtype) const { return Tile(View::bitcast(dtype)); }

 private:
  explicit Tile(View v) : View(std::move(v)) {}
};

}  // namespace walrus::kernels
