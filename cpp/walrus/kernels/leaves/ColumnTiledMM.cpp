// ColumnTiledMM: out[M, N] = a[M, K] @ b[K, N] (+ bias[1, N]), tiled by columns of out.
//
//   srcs  a [M, K], b [K, N], bias [1, N] (optional)      dsts  out [M, N]
//   attrs transpose_a (a given as aT [K, M])
//
// The transpose of RowTiledMM's schedule: a block of rows of a is transposed once into aT
// [K, rows] and stays resident; each tile of 128 columns of b is the stationary operand and the
// block's rows stream through as the moving one (512 at a time), so
//   outT[n, m] = sum_k b[k, n]^T @ aT[k, m]
// lands with the columns of out on partitions. That makes the bias a per-partition scalar (free
// in the PSUM evacuation) and every weight tile is loaded once per row block. outT is transposed
// back on the PE and stored. Any M, K, N.
#include <algorithm>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/Projection.h"
#include "walrus/kernels/leaves/MatmulOperands.h"

namespace walrus::kernels {
namespace {

using namespace bir;

void expandColumnTiledMM(KernelBuilder& kb) {
  const MatmulOperands mm(kb);
  const int64_t M = mm.M, K = mm.K, N = mm.N, KT = ceilDiv(K, kPartitions);
  const int64_t esize = dtypeSize(mm.dtype);
  // Rows per resident block: as many 512-row chunks as fit in half of SBUF (at least 128 rows).
  int64_t blockRows = std::max<int64_t>(kPartitions, kb.sbufBytes() / 2 / (KT * esize) / kMaxMoving * kMaxMoving);
  blockRows = std::min(blockRows, ceilDiv(M, kPartitions) * kPartitions);
  auto phase = kb.scope();

  TilePool aT = kb.sbufPool("aT", mm.dtype, {KT, blockRows}, 1);
  TilePool aRows = kb.sbufPool("a_rows", mm.dtype, {mm.aTransposed ? 1 : K}, 2);
  // b's column tiles, planned for every row block and loaded two ahead (one DMA each).
  WeightStream bCols(kb, kb.sbufPool("b_cols", mm.dtype, {KT, kPartitions}, 3));
  for (int64_t b0 = 0; b0 < M; b0 += blockRows)
    for (int64_t n0 = 0; n0 < N; n0 += kPartitions) bCols.plan(mm.b, n0, std::min(kPartitions, N - n0));
  TilePool biasCols = kb.sbufPool("bias", DType::float32, {1}, 3);
  TilePool outT = kb.sbufPool("outT", mm.out.dtype(), {kMaxMoving}, 2);
  TilePool outRows = kb.sbufPool("out", mm.out.dtype(), {kMaxMoving / kPartitions, kPartitions}, 2);
  PsumPool tpsum = kb.psumPool("transpose", 2);
  PsumPool acc = kb.psumPool("acc", 4);
  EvacuationEngines evac;

  for (int64_t b0 = 0; b0 < M; b0 += blockRows) {
    const int64_t rowsInBlock = std::min(blockRows, M - b0);
    const Tile at = aT.next();
    mm.loadTransposedRows(kb, at, b0, rowsInBlock, aRows, tpsum, evac);
    for (int64_t n0 = 0; n0 < N; n0 += kPartitions) {
      const int64_t nw = std::min(kPartitions, N - n0);
      Tile bc;
      {
        auto s = kb.section("load_b");
        bc = bCols.take().tile;
      }
      Tile biasCol;
      if (mm.hasBias) {
        biasCol = biasCols.next().rows(0, nw);
        kb.load(biasCol, mm.bias.slice(0, n0, nw));
      }
      for (int64_t m0 = 0; m0 < rowsInBlock; m0 += kMaxMoving) {
        const int64_t mw = std::min(kMaxMoving, rowsInBlock - m0);
        const Tile ps = acc.next(DType::float32, {mw}).rows(0, nw);
        {
          auto s = kb.section("matmul");
          for (int64_t kt = 0; kt < KT; ++kt) {
            const int64_t kr = std::min(kPartitions, K - kt * kPartitions);
            kb.matmul(ps, bc.at(0, kt).rows(0, kr).cols(0, nw), at.at(0, kt).rows(0, kr).cols(m0, mw), kt == 0,
                      kt == KT - 1);
          }
        }
        auto s = kb.section("transpose_out");
        const Tile ot = outT.next().rows(0, nw).cols(0, mw);
        if (mm.hasBias)
          kb.activation(ot, ps, ActivationFunc::Identity, Act().bias(biasCol));
        else
          evacuate(kb, ot, ps, evac.next());
        const Tile o = outRows.next();
        transposeInto(kb, tpsum, o.slice(1, 0, nw), ot, evac.next());
        for (int64_t r0 = 0; r0 < mw; r0 += kPartitions) {
          const int64_t rr = std::min(kPartitions, mw - r0);
          kb.store(mm.out.slice(0, b0 + m0 + r0, rr).slice(1, n0, nw), o.at(0, r0 / kPartitions).rows(0, rr).cols(0, nw));
        }
      }
    }
  }
}

}  // namespace

WALRUS_REGISTER_LEAF("ColumnTiledMM", expandColumnTiledMM,
                     "out[M,N] = a[M,K] @ b[K,N] (+ bias[1,N]), tiled by columns of out", matmulSignature());

}  // namespace walrus::kernels
