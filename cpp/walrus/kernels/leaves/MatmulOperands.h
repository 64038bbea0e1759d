// The operands RowTiledMM and ColumnTiledMM share: out[M, N] = a[M, K] @ b[K, N] (+ bias[1, N]).
// With the attr transpose_a, a is given transposed, as aT [K, M] (e.g. attention's [heads * d, S]
// output feeding the output projection): the PE's stationary layout, loaded without transposes.
#pragma once

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafSignature.h"
#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {

// The signature of both leaves: a [M, K] (aT [K, M] with transpose_a), b [K, N], bias [1, N]
// (an optional trailing input); out [M, N].
LeafSignature matmulSignature();

struct MatmulOperands {
  explicit MatmulOperands(KernelBuilder& kb);

  DramView a, b, out;  // a is [M, K] (a view of the aT operand when aTransposed)
  DramView bias;  // [N], or rank 0 when absent
  bool hasBias = false;
  bool aTransposed = false;
  int64_t M = 0, K = 0, N = 0;
  // The dtype both operands are multiplied in: fp32 if either is fp32 (subject to auto_cast),
  // else b's dtype (a is converted to it as it is loaded).
  bir::DType dtype = bir::DType::bfloat16;

  // bias broadcast to every partition: [128, N] fp32 (an empty Tile without a bias).
  Tile loadBiasRows(KernelBuilder& kb) const;

  // at[:, 0:rows] (the [KT, >= rows] stationary tiles, K on partitions) = a[m0:m0+rows, :]^T: one
  // DMA per k tile when aTransposed, else row tiles of a loaded through `aRows` ([K] wide) and
  // transposed on the PE.
  void loadTransposedRows(KernelBuilder& kb, const Tile& at, int64_t m0, int64_t rows, TilePool& aRows,
                          PsumPool& tpsum, EvacuationEngines& evac) const;
};

}  // namespace walrus::kernels
