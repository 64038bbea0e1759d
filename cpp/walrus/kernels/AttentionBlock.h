// One block of keys of flash attention, shared by the attention forward and token-generation
// leaves: for a tile of query rows (qT [128, d tiles, rows], d on partitions) and the keys
// [k0, k0 + kw) of kT ([128, d tiles, keys]) and v ([128, key tiles, d], keys on partitions):
//   S  = qT^T kT[:, block]            PE, one PSUM bank; an optional additive mask (0 / -1e30,
//                                     [rows, width]) is added to columns [maskCol, +width) by a
//                                     second matmul into the same accumulation group
//                                     (identity^T @ mask), so masking costs no vector work
//   P  = online softmax of S          OnlineSoftmax
//   O += P v_block                    P^T by PE transposes, then accumulated over 128-key chunks
// k0 must be a multiple of 128 (v's key tiles).
#pragma once

#include <optional>

#include "walrus/kernels/OnlineSoftmax.h"
#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {

struct AttentionBuffers {
  AttentionBuffers(KernelBuilder& kb, bir::DType mm, int64_t d);
  TilePool p, pT;
  PsumPool scores, pTps, pv;
  EvacuationEngines evac;
  bir::DType mm;
  int64_t d;
};

struct BlockMask {
  Tile mask;      // [>= rows, >= width] in the matmul dtype
  int64_t col0;   // first masked column of the block
  int64_t width;
};

void attendBlock(KernelBuilder& kb, AttentionBuffers& buf, OnlineSoftmax& softmax, const Tile& qT, int64_t rows,
                 const Tile& kT, int64_t k0, int64_t kw, const Tile& v, const std::optional<BlockMask>& mask);

}  // namespace walrus::kernels
