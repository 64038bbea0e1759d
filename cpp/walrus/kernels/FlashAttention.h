// FlashAttention: a scheduler that runs many independent flash-attention work items interleaved,
// for the attention forward and token-generation leaves.
//
// An item is a tile of query rows (d on partitions) and the key blocks (up to 1024 keys each) it
// attends to. q is scaled once, by Pool, when the item starts. One block
//   S   = qT^T kT[:, block] (+ mask)    PE, one accumulation group per 512 keys, in two PSUM
//                                      banks; an additive mask (0 / -1e30) is added by a second
//                                      matmul into its group (identity^T @ mask, in float32r)
//   P   = online softmax of S          OnlineSoftmax: DVE max from PSUM, ACT exp from PSUM with
//                                      the row sums in its accumulator, ACT row updates
//   P^T                                DMA transposes, 128 keys each (SBUF to SBUF: no PE or
//                                      PSUM-evacuation work)
//   O  += P v_block                    PE, accumulated over the block's 128-key chunks
// is a chain through four engines; a single item leaves them idle in turn. The scheduler keeps
// `lanes` items in flight and emits each stage for every lane before the next stage, so each
// engine's in-order stream holds independent work from different lanes and the kernel runs at
// the rate of its busiest engine. Items go to the lanes in turn; a lane that finishes one stores
// it and starts its next, whose q it loaded meanwhile.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "walrus/kernels/OnlineSoftmax.h"
#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {

struct BlockMask {
  Tile mask;      // [>= rows, >= width] in kFlashMaskDtype
  int64_t col0;   // first masked column of the block
  int64_t width;  // col0 .. col0 + width - 1 must lie in one 512-key group
};

// The additive mask of a key a query row must not see (its softmax weight underflows to 0).
inline constexpr double kFlashMasked = -1e30;
// The mask tile's dtype, whatever the matmul dtype: fp16 and the fp8s do not hold -1e30 (it would
// become -inf, and the mask matmul's 0 * -inf NaN), fp32 does; float32r runs at the bf16 rate.
inline constexpr bir::DType kFlashMaskDtype = bir::DType::float32r;

// Keys per block: the softmax's per-block row updates are paid once per 1024 keys.
inline constexpr int64_t kFlashBlockKeys = 2 * kMaxMoving;

struct FlashBlock {
  Tile kT;  // [128, d tiles, keys]: keys [k0, k0 + kw) are this block (kw <= kFlashBlockKeys)
  Tile v;   // [128, key tiles, d]: keys on partitions; k0 must be a multiple of 128
  int64_t k0 = 0, kw = 0;
  std::optional<BlockMask> mask;
};

struct FlashItem {
  int64_t rows = 0;                                  // query rows (<= 128)
  std::function<void(const Tile& qT)> loadQ;         // fills qT [128, d tiles, >= rows]
  std::vector<FlashBlock> blocks;
  std::function<void(const Tile& o)> store;          // o [rows, d] = softmax(..) v, in the output dtype
};

class FlashAttention {
 public:
  // mm: the matmul dtype; out: the dtype of the o tiles handed to the items' store.
  FlashAttention(KernelBuilder& kb, bir::DType mm, bir::DType out, int64_t d, double scale, int lanes);
  ~FlashAttention();
  // Emits every item (in order of starting), interleaved over the lanes.
  void run(const std::vector<FlashItem>& items);
  // How many lanes the PSUM budget allows for head dim d (at most `most`).
  static int lanesFor(const KernelBuilder& kb, int64_t d, int most);

 private:
  struct Lane;
  Tile prepare(Lane& lane, const FlashItem& item);  // loads and scales its q
  void start(Lane& lane, const FlashItem& item, const Tile& qT);
  void scores(Lane& lane, size_t block);
  void softmax(Lane& lane);
  void transposeP(Lane& lane);
  void pv(Lane& lane);
  void accumulate(Lane& lane);
  void finish(Lane& lane);

  KernelBuilder& kb_;
  bir::DType mm_;
  int64_t d_, DT_;
  double scale_;
  std::vector<Lane> lanes_;
  TilePool os_;
  PsumPool pvBanks_;
  Tile pvTile_;  // lanes' PV accumulators side by side
};

}  // namespace walrus::kernels
