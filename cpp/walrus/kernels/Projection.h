// Projections of token activations by a weight matrix streamed from DRAM, the inner loop of the
// MLP, QKV and ExpertMLPs leaves. The activations are xT [128, K tiles, tokens] (the contraction
// dim on partitions, TokenPrologue.h); w is a [K, C] DRAM view. The weights stream through
// `pieces`, a rotating pool of [128, tiles per piece, cols] buffers: one DMA per piece, and the
// pool's depth is the prefetch distance.
#pragma once

#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {

// Weights stationary (context encoding: many tokens):
//   acc[cols, :tn] = sum_k w[k, c0 : c0 + cols]^T @ xT[k, :tn]       (cols <= 128, tn <= 512)
// `open` / `close`: this call starts / ends acc's accumulation group (several projections can sum
// into one group).
void projectWeightsStationary(KernelBuilder& kb, const Tile& acc, TilePool& pieces, const DramView& w, int64_t c0,
                              int64_t cols, const Tile& xT, int64_t tn, bool open = true, bool close = true);

// Weights moving (token generation: few tokens):
//   acc[:tn, cols] = sum_k xT[k, :tn]^T @ w[k, c0 : c0 + cols]       (tn <= 128, cols <= 512)
void projectWeightsMoving(KernelBuilder& kb, const Tile& acc, TilePool& pieces, const DramView& w, int64_t c0,
                          int64_t cols, const Tile& xT, int64_t tn);

// The largest token block (a multiple of 128, at most 512, at most `tokens` rounded up) for which
// `residentPerToken` bytes per partition per token plus `phaseBytes` fit the node's SBUF.
int64_t tokenBlock(const KernelBuilder& kb, int64_t tokens, int64_t residentPerToken, int64_t phaseBytes);

}  // namespace walrus::kernels
