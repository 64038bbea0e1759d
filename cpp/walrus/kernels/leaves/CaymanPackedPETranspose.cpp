// CaymanPackedPETranspose: out[g] = x[g]^T on the PE, small matrices packed onto the partitions.
//
//   srcs  x [M, N] or [G, M, N]      dsts  out [N, M] or [G, N, M] (any dtype: converted on the way)
//   attrs none
//
// A PE transpose takes up to 128 rows at once. Matrices with M <= 64 rows are packed: 128 / M of
// them are loaded into one [128, N] tile (one DMA: their rows are consecutive in x), so each
// transpose of 128 columns turns all of them at once, and their transposes land side by side in
// PSUM ([128 columns, pack * M]) and leave in one DMA. Taller matrices go 128 rows at a time.
// The transposes are exact (PE transpose mode, in x's dtype); the kernel is DMA bound.
#include <algorithm>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {
namespace {

using namespace bir;

void expandCaymanPackedPETranspose(KernelBuilder& kb) {
  kb.expectOperands(1, "x", 1, "out");
  DramView x = kb.input(0, "x"), out = kb.output(0, "out");
  KernelBuilder::require(x.rank() == 2 || x.rank() == 3, "x must be [M, N] or [G, M, N]");
  if (x.rank() == 2) x = x.broadcast(0, 1), out = out.broadcast(0, 1);
  const int64_t G = x.dim(0), M = x.dim(1), N = x.dim(2);
  KernelBuilder::require(out.shape() == std::vector<int64_t>{G, N, M}, "out must be x transposed: [.., N, M]");
  // Matrices per pack: packing needs each matrix's rows to follow the previous one's in x.
  const bool rowsNest = G == 1 || x.dims()[0].step == x.dims()[1].step * M;
  const int64_t pack = (M <= kPartitions / 2 && rowsNest) ? kPartitions / M : 1;
  const int64_t rowTile = std::min(M, kPartitions);

  TilePool ins = kb.sbufPool("x", x.dtype(), {std::min(N, 4 * kMaxMoving)}, 3);
  TilePool outs = kb.sbufPool("xT", out.dtype(), {pack * rowTile}, 3);
  PsumPool ps = kb.psumPool("transpose", 4);
  EvacuationEngines evac;
  const int64_t colBlock = std::min(N, 4 * kMaxMoving);
  for (int64_t g0 = 0; g0 < G; g0 += pack) {
    const int64_t np = std::min(pack, G - g0);
    for (int64_t m0 = 0; m0 < M; m0 += rowTile) {
      const int64_t mr = std::min(rowTile, M - m0), rows = np * mr;
      for (int64_t n0 = 0; n0 < N; n0 += colBlock) {
        const int64_t nb = std::min(colBlock, N - n0);
        const Tile in = ins.next().rows(0, rows).cols(0, nb);
        if (pack > 1)
          kb.load(in, x.slice(0, g0, np).merge(0).slice(1, n0, nb));
        else
          kb.load(in, x.at(0, g0).slice(0, m0, mr).slice(1, n0, nb));
        for (int64_t c0 = 0; c0 < nb; c0 += kPartitions) {
          const int64_t w = std::min(kPartitions, nb - c0);
          const Tile pt = ps.next(x.dtype(), {rows}).rows(0, w);
          kb.transpose(pt, in.cols(c0, w));
          const Tile o = outs.next().rows(0, w).cols(0, rows);
          evacuate(kb, o, pt, evac.next());
          // Column block n0 + c0 of matrices g0.. (each mr of its rows) -> out[g, n, m0 : m0 + mr].
          const DramView dst = out.slice(0, g0, np).slice(1, n0 + c0, w).slice(2, m0, mr).permute({1, 0, 2});
          kb.store(dst, o.split(0, mr));
        }
      }
    }
  }
}

}  // namespace

WALRUS_REGISTER_LEAF("CaymanPackedPETranspose", expandCaymanPackedPETranspose,
                     "out[g] = x[g]^T on the PE, matrices of <= 64 rows packed 128 / M to a transpose");

}  // namespace walrus::kernels
