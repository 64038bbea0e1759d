// Packed stationary operands kept from one matmul to the next.
//
// Before it multiplies, the matmul kernel converts its operands' SBUF rows into fp32 panels
// (Gemm.cpp). Kernels multiply one stationary tile by several moving tiles in a row (the tiled
// GEMM, by the four moving tiles of its row of C), and packing a stationary is slow for its size:
// its 128 rows are a partition (192 KiB) apart, 256 bytes each, and every one is a cold miss. So
// the packed stationary is kept, and reused, for as long as no instruction writes its rows.
// Moving tiles are not kept: their fp32 panels are twice the bytes of their bf16 rows, and
// reading them back cost as much as packing again (an MLP's activations, measured).
//
// Correctness. An entry is keyed by everything its panels depend on: the rows' address and
// pitch, dtype and shape. Before an instruction executes, Exec::run drops every entry whose SBUF
// bytes one of the instruction's write footprints (its hazard accesses, the same ones the timing
// model orders by) overlaps; footprints are quadrant x byte range, so the drop errs towards
// dropping. A reused tile was checked to be written when it was packed, and nothing clears those
// bits during a run. clear() runs with every fresh core state. A matmul part still in progress
// (GemmEngine's deferred parts) may read an entry's panels: admit() neither reuses nor frees
// those, and the drops above come after Exec::run has waited for every such part.
//
// Budget and admission. The panels held stay within the budget the simulator gives (1/32 of
// the memory the run holds, within the 1.2x memory bound). A tile is kept when it comes back
// soon: on its second sighting, if tiles totalling at most the budget were seen in between (a
// tile LRU would keep); on its first, if most recent sightings came back that soon. An address
// whose entry was overwritten before any reuse (a weight tile reloaded into the same buffer) is
// not kept again. Entries beyond the budget are evicted least recently used first.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bir/Enums.h"

namespace sim {

// Where a matmul operand's rows sit in SBUF: partition quadrants (bit q = partitions
// [32q, 32q + 32), as in the hazard footprints) and bytes [lo, hi) of each partition.
struct SbufTile {
  uint8_t quadrants = 0;
  int64_t lo = 0, hi = 0;
};

class PanelCache {
 public:
  struct Key {
    const uint8_t* rows = nullptr;
    int64_t pitch = 0;
    bir::DType dtype = bir::DType::float32;
    int32_t k = 0, width = 0;  // rows and elements per row
    bool operator==(const Key&) const = default;
  };

  PanelCache();
  // Bytes the panels may hold from now on; frees entries beyond it.
  void setBudget(int64_t bytes);
  int64_t heldBytes() const { return held_; }

  // The packed panels of `key`, or null. Counts a sighting of the key.
  const float* find(const Key& key);
  // After a miss: storage for `floats` packed values that will be kept under `key` once filled,
  // or null when the key is not admitted (pack into scratch instead). The caller must fill it,
  // or drop(key) if it cannot.
  // Panels in `inUse` (read by matmul parts still in progress) are neither reused nor freed.
  float* admit(const Key& key, const SbufTile& where, int64_t floats, std::span<const float* const> inUse = {});
  void drop(const Key& key);
  // Drops every entry overlapping partitions `quadrants`, bytes [lo, hi) (an SBUF write).
  void invalidate(uint8_t quadrants, int64_t lo, int64_t hi) {
    if ((quadrants & quadrants_) && lo < hi_ && lo_ < hi) invalidateSlow(quadrants, lo, hi);
  }
  void clear();  // drops every entry, keeps the storage

  static constexpr size_t kMaxEntries = 128;
  static constexpr size_t kGhosts = 1024;  // keys seen recently, for admission

 private:
  struct Entry {
    Key key;
    SbufTile where;
    bool valid = false;
    uint64_t lastUse = 0;
    uint32_t hits = 0;
    std::vector<float> panels;
  };
  struct Ghost {
    Key key;
    uint64_t seenAt = 0;  // clock_ when last seen
    bool used = false;
    bool wasted = false;  // kept once, and overwritten before it was used again: not kept again
  };
  Entry* lookup(const Key& key);
  Ghost& ghost(const Key& key);
  void invalidateSlow(uint8_t quadrants, int64_t lo, int64_t hi);
  void recomputeBounds();
  // An unused entry, else the least recently used, not in `inUse`; entries_.size() if none.
  size_t leastUseful(std::span<const float* const> inUse = {}) const;
  void release(size_t i);      // frees entry i's storage and removes it

  std::vector<Entry> entries_;
  std::vector<Ghost> ghosts_;
  uint64_t tick_ = 0;   // sightings, for LRU
  uint64_t clock_ = 0;  // bytes of the tiles seen: the admission clock
  // The fraction of recent sightings that came back soon (of kOne), a moving average over about
  // kRateWindow sightings: long enough to carry the GEMM's stationary tiles through the first
  // sightings of a new row of tiles (16 in 64).
  int soonRate_ = 0;
  static constexpr int kOne = 1 << 16, kRateWindow = 64;
  bool admissible_ = false;  // the last find()'s miss may be admitted
  Key admissibleKey_;
  int64_t budget_ = 0, held_ = 0;
  // The union of the valid entries' footprints: a write outside it drops nothing.
  uint8_t quadrants_ = 0;
  int64_t lo_ = 0, hi_ = 0;
};

}  // namespace sim
