// OnlineSoftmax: flash attention's running softmax for one tile of <= 128 query rows.
//
// The logits arrive a block of keys at a time (S [rows, kw] in PSUM), already scaled: the caller
// folds the softmax scale into q once per tile instead of into every block. With the running
// maximum kept negated (nm = -m, so that it is the exp's bias as it stands), each block does
//   nm' = min(nm, -rowmax S)                 DVE reads the PSUM block (one max pass)
//   P   = exp(S + nm')                       ACT, straight from PSUM; the row sums land in the
//                                            ACT accumulator (l_blk) in the same pass
//   a   = exp(nm' - nm)                      the correction of everything summed so far
//   l   = a l + l_blk,  O = a O + P V        (the caller multiplies P V on the PE)
// and at the end out = O / l. The first block initialises nm, l and O instead of correcting them,
// so nothing ever reads an unset accumulator. The row updates run on ACT and the O add on DVE:
// the max pass makes DVE the busier of the two. The corrections of two consecutive blocks are
// kept apart, so a caller may fold block j + 1 before accumulating block j's P V (a software
// pipeline that keeps the DVE from waiting on the PE).
#pragma once

#include "walrus/kernels/KernelBuilder.h"

namespace walrus::kernels {

class OnlineSoftmax {
 public:
  // `state` is [>= rows, 8 + d] fp32 scratch for this query tile (stats columns + O).
  OnlineSoftmax(KernelBuilder& kb, const Tile& state, int64_t rows, int64_t d);

  // Folds the block S [rows, kw] into the running max and sum; writes P (exp'd, in p's dtype).
  void block(const Tile& S, const Tile& p);
  // O = a O + oBlk for the oldest block not yet accumulated (oBlk [rows, d] in PSUM: its P V).
  void accumulate(const Tile& oBlk);
  // out [rows, d] = O / l.
  void finish(const Tile& out);

 private:
  KernelBuilder& kb_;
  Tile nm_[2], nmBlk_, l_, lBlk_, alpha_[2], o_;
  int64_t blocks_ = 0;       // blocks folded
  int64_t accumulated_ = 0;  // blocks whose P V is in O
};

}  // namespace walrus::kernels
