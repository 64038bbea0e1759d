// OnlineSoftmax: flash attention's running softmax for one tile of <= 128 query rows.
//
// The logits arrive a block of keys at a time (S [rows, kw] in PSUM, unscaled). For each block
//   m' = max(m, rowmax S)                    DVE reads the PSUM block
//   P  = exp(scale S - scale m')             ACT, straight from PSUM; its row sums land in the
//                                            ACT accumulator (l_blk) in the same pass
//   a  = exp(scale (m - m'))                 the correction of everything summed so far
//   l  = a l + l_blk,  O = a O + P V         (the caller multiplies P V on the PE)
// and at the end out = O / l. The first block initialises m, l and O instead of correcting them,
// so nothing ever reads an unset accumulator. scale must be positive (the max is taken of the
// unscaled logits).
#pragma once

#include "walrus/kernels/KernelBuilder.h"

namespace walrus::kernels {

class OnlineSoftmax {
 public:
  // `state` is [>= rows, 8 + d] fp32 scratch for this query tile (stats columns + O).
  OnlineSoftmax(KernelBuilder& kb, const Tile& state, int64_t rows, int64_t d, double scale);

  // Folds the block S [rows, kw] into the running max and sum; writes P (exp'd, in p's dtype).
  void block(const Tile& S, const Tile& p);
  // O = a O + oBlk (oBlk [rows, d] in PSUM: P V of the last block).
  void accumulate(const Tile& oBlk);
  // out [rows, d] = O / l.
  void finish(const Tile& out);
  // ln(l) + scale * m per row: the log-sum-exp of the scaled logits (what backward needs), into
  // lse [rows, 1] (after the last block).
  void logSumExp(const Tile& lse);

 private:
  KernelBuilder& kb_;
  int64_t rows_, d_;
  double scale_;
  Tile m_[2], mBlk_, negM_, l_, lBlk_, alpha_, o_;
  int cur_ = 0;      // which m_ holds the running max
  int64_t blocks_ = 0;
};

}  // namespace walrus::kernels
