// The operands RowTiledMM and ColumnTiledMM share: out[M, N] = a[M, K] @ b[K, N] (+ bias[1, N]).
#pragma once

#include "walrus/kernels/KernelBuilder.h"

namespace walrus::kernels {

struct MatmulOperands {
  explicit MatmulOperands(KernelBuilder& kb);

  DramView a, b, out;
  DramView bias;  // [N], or rank 0 when absent
  bool hasBias = false;
  int64_t M = 0, K = 0, N = 0;
  // The dtype both operands are multiplied in: fp32 if either is fp32 (subject to auto_cast),
  // else b's dtype (a is converted to it as it is loaded).
  bir::DType dtype = bir::DType::bfloat16;

  // bias broadcast to every partition: [128, N] fp32 (an empty Tile without a bias).
  Tile loadBiasRows(KernelBuilder& kb) const;
};

}  // namespace walrus::kernels
