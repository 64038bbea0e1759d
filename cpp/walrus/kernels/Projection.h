// Projections of token activations by a weight matrix streamed from DRAM, the inner loop of the
// MLP, QKV and ExpertMLPs leaves. The activations are xT [128, K tiles, tokens] (the contraction
// dim on partitions, TokenPrologue.h); a weight is a [K, C] DRAM view, streamed in pieces of
// several 128-row tiles (one DMA each) by a WeightStream.
#pragma once

#include <deque>

#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {

// A planned sequence of weight pieces through one rotating pool of [128, tiles, cols] buffers.
// The simulator's DMA engines serve transfers in program order (as the hardware's queues would if
// a stall blocked them), so a load emitted after a store that waits for compute waits too: the
// stream emits each piece's load as soon as a buffer is free, up to bufs - 1 pieces before the
// piece is used, ahead of the stores of the work in between.
class WeightStream {
 public:
  struct Piece {
    Tile tile;        // [128, tiles, cols]
    int64_t kt0 = 0;  // its first row tile of the projection
    int64_t tiles = 0;
    int64_t kTiles = 0;  // row tiles of the whole projection
    int64_t K = 0;       // rows of the whole projection
  };

  WeightStream(KernelBuilder& kb, TilePool pool) : kb_(kb), pool_(std::move(pool)) {}
  // Queues the pieces of one projection: w [K, C] restricted to columns [c0, c0 + cols).
  void plan(const DramView& w, int64_t c0, int64_t cols);
  // The next queued piece; its load has been emitted.
  Piece take();

 private:
  void fill();
  KernelBuilder& kb_;
  TilePool pool_;
  std::deque<std::pair<DramView, Piece>> planned_;  // (rows of w, piece) not yet loaded
  std::deque<Piece> loaded_;
};

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
