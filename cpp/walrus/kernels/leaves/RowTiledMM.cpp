// RowTiledMM: out[M, N] = a[M, K] @ b[K, N] (+ bias[1, N]), tiled by rows of out.
//
//   srcs  a [M, K], b [K, N], bias [1, N] (optional)      dsts  out [M, N]
//   attrs transpose_a (a given as aT [K, M])
//
// Blocks of up to 4 x 128 rows of a: each is loaded, transposed on the PE into aT [K, rows] (the
// stationary operand, K on partitions), and then every block of 512 columns of out accumulates
// sum_k aT[k, tile]^T @ b[k, block] for the block's row tiles side by side, one PSUM bank each,
// so each tile of b (the moving operand) serves 4 row tiles. b stays resident in SBUF when it fits
// half of it (loaded once for every row block), else it streams in pieces of 4 row tiles x 512
// columns, planned and loaded ahead (WeightStream). Any M, K, N (partial tiles at the edges).
#include <algorithm>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/Projection.h"
#include "walrus/kernels/leaves/MatmulOperands.h"

namespace walrus::kernels {
namespace {

using namespace bir;

constexpr int64_t kRowTilesPerBlock = 4;

void expandRowTiledMM(KernelBuilder& kb) {
  const MatmulOperands mm(kb);
  const int64_t M = mm.M, K = mm.K, N = mm.N, KT = ceilDiv(K, kPartitions);
  const int64_t blockRows = std::min(kRowTilesPerBlock * kPartitions, ceilDiv(M, kPartitions) * kPartitions);
  auto phase = kb.scope();

  const Tile bias = mm.loadBiasRows(kb);  // [128, N] (or empty)
  const bool resident = KT * N * dtypeSize(mm.dtype) <= kb.sbufBytes() / 2;
  Tile bAll;
  std::optional<WeightStream> bStream;
  if (resident) {
    auto s = kb.section("load_b");
    bAll = kb.sbufTile("b", mm.dtype, {KT, N});
    loadRowTiles(kb, bAll, mm.b);
  } else {
    bStream.emplace(kb, kb.sbufPool("b", mm.dtype, {std::min<int64_t>(KT, 4), kMaxMoving}, 4));
    for (int64_t b0 = 0; b0 < M; b0 += blockRows)
      for (int64_t n0 = 0; n0 < N; n0 += kMaxMoving) bStream->plan(mm.b, n0, std::min(kMaxMoving, N - n0));
  }
  TilePool aRows = kb.sbufPool("a_rows", mm.dtype, {mm.aTransposed ? 1 : K}, 2);
  TilePool aT = kb.sbufPool("aT", mm.dtype, {KT, blockRows}, 2);
  TilePool outTiles = kb.sbufPool("out", mm.out.dtype(), {kMaxMoving}, 4);
  PsumPool tpsum = kb.psumPool("transpose", 2);
  PsumPool acc = kb.psumPool("acc", 6);
  EvacuationEngines evac;

  for (int64_t b0 = 0; b0 < M; b0 += blockRows) {
    const int64_t rows = std::min(blockRows, M - b0), tiles = ceilDiv(rows, kPartitions);
    const Tile at = aT.next();
    mm.loadTransposedRows(kb, at, b0, rows, aRows, tpsum, evac);
    for (int64_t n0 = 0; n0 < N; n0 += kMaxMoving) {
      const int64_t nw = std::min(kMaxMoving, N - n0);
      std::vector<Tile> ps;
      for (int64_t r = 0; r < tiles; ++r)
        ps.push_back(acc.next(DType::float32, {nw}).rows(0, std::min(kPartitions, rows - r * kPartitions)));
      {
        auto s = kb.section("matmul");
        // Each k tile of b multiplies every row tile of the block.
        auto multiply = [&](int64_t kt, const Tile& moving) {
          const int64_t kr = moving.partitions();
          for (int64_t r = 0; r < tiles; ++r)
            kb.matmul(ps[r], at.at(0, kt).rows(0, kr).cols(r * kPartitions, ps[r].partitions()), moving, kt == 0,
                      kt == KT - 1);
        };
        if (resident) {
          for (int64_t kt = 0; kt < KT; ++kt)
            multiply(kt, bAll.at(0, kt).rows(0, std::min(kPartitions, K - kt * kPartitions)).cols(n0, nw));
        } else {
          for (int64_t kt = 0; kt < KT;) {
            const WeightStream::Piece piece = bStream->take();
            for (int64_t j = 0; j < piece.tiles; ++j, ++kt)
              multiply(kt, piece.tile.at(0, j).rows(0, std::min(kPartitions, K - kt * kPartitions)).cols(0, nw));
          }
        }
      }
      auto s = kb.section("store");
      for (int64_t r = 0; r < tiles; ++r) {
        const int64_t mr = ps[r].partitions();
        const Tile o = outTiles.next().rows(0, mr).cols(0, nw);
        if (bias.location())
          kb.tensorTensor(o, ps[r], bias.rows(0, mr).cols(n0, nw), AluOp::add);
        else
          evacuate(kb, o, ps[r], evac.next());
        kb.store(mm.out.slice(0, b0 + r * kPartitions, mr).slice(1, n0, nw), o);
      }
    }
  }
}

}  // namespace

WALRUS_REGISTER_LEAF("RowTiledMM", expandRowTiledMM, "out[M,N] = a[M,K] @ b[K,N] (+ bias[1,N]), tiled by rows of out; transpose_a: a given as aT[K,M]",
                     matmulSignature());

}  // namespace walrus::kernels
