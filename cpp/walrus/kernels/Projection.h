// Projections of token activations by a weight matrix streamed from DRAM, the inner loop of the
// MLP, QKV and ExpertMLPs leaves. The activations are xT [128, K tiles, tokens] (the contraction
// dim on partitions, TokenPrologue.h); a weight is a [K, C] DRAM view, streamed by a WeightStream
// in loads of several 128-row tiles by a column range (one DMA each).
#pragma once

#include <deque>
#include <vector>

#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {

// A planned sequence of weight loads through one rotating pool of [128, tiles, cols] buffers.
// A load covers as many columns as a buffer holds: the DMA engines pay a floor per contiguous run
// (bir/MachineConfig.h, dma_descriptor_ns), so a [K, 128] bf16 column block loaded alone moves
// 256-byte rows at a fraction of the peak rate. Successive projections of a load's column range
// take their column slices of it, so every row tile of those columns stays loaded until the last
// of them (a column group); the matmuls and their accumulation order do not depend on the width.
// The simulator's DMA engines serve transfers in program order (as the hardware's queues would if
// a stall blocked them), so a load emitted after a store that waits for compute waits too: the
// stream emits each load as soon as a buffer is free, ahead of the stores of the work in between.
class WeightStream {
 public:
  struct Piece {
    Tile tile;        // [128, tiles, cols]: the projection's columns of one load
    int64_t kt0 = 0;  // its first row tile of the projection
    int64_t tiles = 0;
    int64_t kTiles = 0;  // row tiles of the whole projection
    int64_t K = 0;       // rows of the whole projection
  };

  WeightStream(KernelBuilder& kb, TilePool pool) : kb_(kb), pool_(std::move(pool)) {}
  // Queues the projections of columns [c0, c0 + cols) of every w in `ws` (each [K_w, C]), `step`
  // columns each, in the order (column block, w); loads span up to the pool's columns.
  void plan(const std::vector<DramView>& ws, int64_t c0, int64_t cols, int64_t step);
  // Queues one projection: w [K, C] restricted to columns [c0, c0 + cols).
  void plan(const DramView& w, int64_t c0, int64_t cols) { plan({w}, c0, cols, cols); }
  // The next queued piece; its load has been emitted.
  Piece take();

 private:
  struct Load {
    DramView rows;  // the DRAM rows and columns it moves
    Piece piece;    // its buffer and row tiles
    int uses = 0;   // pieces not yet taken
  };
  struct Use {
    int64_t load = 0;  // index into the plan's loads
    int64_t col0 = 0, cols = 0;  // the projection's columns within the load
  };
  void fill();
  KernelBuilder& kb_;
  TilePool pool_;
  std::deque<Load> loads_;  // live and planned loads, from index firstLoad_; the first emitted_ are loaded
  int64_t firstLoad_ = 0;
  size_t emitted_ = 0;
  std::deque<Use> uses_;
};

// Weight loads of the projection leaves (QKV, the gated MLP): at most this many row tiles of 128
// per load, and this many loads in flight when a load is narrower than a projection.
inline constexpr int64_t kWeightPieceTiles = 8;
inline constexpr int kWeightLoadsInFlight = 3;

// The loads a projection sequence needs per column group, for sizing its WeightStream's pool.
struct WeightLoads {
  int64_t tiles = 0;    // row tiles per load
  int64_t loads = 0;    // loads per column group (every row tile of every weight of the group)
  int64_t step = 0;     // columns per projection
  int64_t columns = 0;  // columns projected
};
// The columns of a pool buffer: the most multiples of step (no more than the columns projected, nor
// than the rows reaching the DMA's full rate need) for which `streams` pools of
// weightBufs(loads, columns) buffers fit `bytes` per partition; `step` if none wider fits.
int64_t weightColumns(const KernelBuilder& kb, bir::DType dtype, const WeightLoads& loads, int streams, int64_t bytes);
// SBUF bytes per partition left for weight pools by a phase that will allocate `reserved` more.
int64_t weightBudget(const KernelBuilder& kb, int64_t reserved);
// Buffers for that width: two column groups (one in use, the next loading) when loads are wider
// than a projection, else `narrowBufs` loads in flight.
int weightBufs(const WeightLoads& loads, int64_t columns, int narrowBufs);

// Weights stationary (context encoding: many tokens), the projection next in `w`'s plan:
//   acc[cols, :tn] = sum_k w[k, c0 : c0 + cols]^T @ xT[k, :tn]       (cols <= 128, tn <= 512)
// `open` / `close`: this call starts / ends acc's accumulation group (several projections can sum
// into one group).
void projectWeightsStationary(KernelBuilder& kb, const Tile& acc, WeightStream& w, const Tile& xT, int64_t tn,
                              bool open = true, bool close = true);

// Weights moving (token generation: few tokens), the projection next in `w`'s plan:
//   acc[:tn, cols] = sum_k xT[k, :tn]^T @ w[k, c0 : c0 + cols]       (tn <= 128, cols <= 512)
void projectWeightsMoving(KernelBuilder& kb, const Tile& acc, WeightStream& w, const Tile& xT, int64_t tn);

// The largest token block (a multiple of 128, at most 512, at most `tokens` rounded up) for which
// `residentPerToken` bytes per partition per token plus `phaseBytes` fit the node's SBUF.
int64_t tokenBlock(const KernelBuilder& kb, int64_t tokens, int64_t residentPerToken, int64_t phaseBytes);

}  // namespace walrus::kernels
