// RowTiledMM: out[M, N] = a[M, K] @ b[K, N] (+ bias[1, N]), tiled by rows of out.
//
//   srcs  a [M, K], b [K, N], bias [1, N] (optional)      dsts  out [M, N]
//   attrs none
//
// For each tile of 128 rows of a: load it, transpose it on the PE into aT [K, 128] (the
// stationary operand, K on partitions), then for each block of 512 columns accumulate
// sum_k aT[k]^T @ b[k, block] in one PSUM bank and store the block. b is the moving operand; it
// stays resident in SBUF when it fits in half of it (loaded once, reused by every row tile), else
// it streams through a 4-deep pool. Any M, K, N (partial tiles at the edges).
#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/TileOps.h"
#include "walrus/kernels/leaves/MatmulOperands.h"

namespace walrus::kernels {
namespace {

using namespace bir;

void expandRowTiledMM(KernelBuilder& kb) {
  const MatmulOperands mm(kb);
  const int64_t M = mm.M, K = mm.K, N = mm.N, KT = ceilDiv(K, kPartitions);
  auto phase = kb.scope();

  const Tile bias = mm.loadBiasRows(kb);  // [128, N] (or empty)
  const bool resident = KT * N * dtypeSize(mm.dtype) <= kb.sbufBytes() / 2;
  Tile bAll;
  if (resident) {
    auto s = kb.section("load_b");
    bAll = kb.sbufTile("b", mm.dtype, {KT, N});
    for (int64_t kt = 0; kt < KT; ++kt) {
      const int64_t kr = std::min(kPartitions, K - kt * kPartitions);
      kb.load(bAll.at(0, kt).rows(0, kr), mm.b.slice(0, kt * kPartitions, kr));
    }
  }
  TilePool bStream = resident ? TilePool() : kb.sbufPool("b", mm.dtype, {kMaxMoving}, 4);
  TilePool aRows = kb.sbufPool("a_rows", mm.dtype, {K}, 2);
  TilePool aT = kb.sbufPool("aT", mm.dtype, {KT, kPartitions}, 2);
  TilePool outTiles = kb.sbufPool("out", mm.out.dtype(), {kMaxMoving}, 3);
  PsumPool tpsum = kb.psumPool("transpose", 2);
  PsumPool acc = kb.psumPool("acc", 4);
  EvacuationEngines evac;

  for (int64_t m0 = 0; m0 < M; m0 += kPartitions) {
    const int64_t mr = std::min(kPartitions, M - m0);
    const Tile at = aT.next();
    {
      auto s = kb.section("transpose_a");
      const Tile rows = aRows.next().rows(0, mr);
      kb.load(rows, mm.a.slice(0, m0, mr));
      transposeInto(kb, tpsum, at, rows, evac.next());
    }
    auto s = kb.section("matmul");
    for (int64_t n0 = 0; n0 < N; n0 += kMaxMoving) {
      const int64_t nw = std::min(kMaxMoving, N - n0);
      const Tile ps = acc.next(DType::float32, {nw}).rows(0, mr);
      for (int64_t kt = 0; kt < KT; ++kt) {
        const int64_t kr = std::min(kPartitions, K - kt * kPartitions);
        Tile moving;
        if (resident) {
          moving = bAll.at(0, kt).rows(0, kr).cols(n0, nw);
        } else {
          moving = bStream.next().rows(0, kr).cols(0, nw);
          kb.load(moving, mm.b.slice(0, kt * kPartitions, kr).slice(1, n0, nw));
        }
        kb.matmul(ps, at.at(0, kt).rows(0, kr).cols(0, mr), moving, kt == 0, kt == KT - 1);
      }
      const Tile o = outTiles.next().rows(0, mr).cols(0, nw);
      if (bias.location())
        kb.tensorTensor(o, ps, bias.rows(0, mr).cols(n0, nw), AluOp::add);
      else
        evacuate(kb, o, ps, evac.next());
      kb.store(mm.out.slice(0, m0, mr).slice(1, n0, nw), o);
    }
  }
}

}  // namespace

WALRUS_REGISTER_LEAF("RowTiledMM", expandRowTiledMM, "out[M,N] = a[M,K] @ b[K,N] (+ bias[1,N]), tiled by rows of out");

}  // namespace walrus::kernels
