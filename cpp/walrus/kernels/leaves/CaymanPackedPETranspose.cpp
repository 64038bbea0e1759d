// CaymanPackedPETranspose: out[g] = x[g]^T on the PE, small matrices packed onto the partitions.
//
//   srcs  x [M, N] or [G, M, N]      dsts  out [N, M] or [G, N, M] (any dtype: converted on the way)
//   attrs none
//
// A PE transpose takes up to 128 rows at once. Matrices with M <= 64 rows are packed: 128 / M of
// them are loaded into one [128, N] tile (one DMA: their rows are consecutive in x), so each
// transpose of 128 columns turns all of them at once, and their transposes land side by side in
// PSUM ([128 columns, pack * M]); a block of columns leaves in one DMA per matrix. Taller matrices
// go 128 rows at a time.
// The transposes are exact (PE transpose mode, in x's dtype); the kernel is DMA bound.
#include <algorithm>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {
namespace {

using namespace bir;

void expandCaymanPackedPETranspose(KernelBuilder& kb) {
  DramView x = kb.input("x"), out = kb.output("out");
  KernelBuilder::require(x.rank() == 2 || x.rank() == 3, "x must be [M, N] or [G, M, N]");
  if (x.rank() == 2) x = x.broadcast(0, 1), out = out.broadcast(0, 1);
  const int64_t G = x.dim(0), M = x.dim(1), N = x.dim(2);
  KernelBuilder::require(out.shape() == std::vector<int64_t>{G, N, M}, "out must be x transposed: [.., N, M]");
  // Matrices per pack: packing needs each matrix's rows to follow the previous one's in x.
  const bool rowsNest = G == 1 || x.dims()[0].step == x.dims()[1].step * M;
  const int64_t pack = (M <= kPartitions / 2 && rowsNest) ? kPartitions / M : 1;
  const int64_t rowTile = std::min(M, kPartitions);

  TilePool ins = kb.sbufPool("x", x.dtype(), {std::min(N, 4 * kMaxMoving)}, 3);
  TilePool outs = kb.sbufPool("xT", out.dtype(), {ceilDiv(std::min(N, 4 * kMaxMoving), kPartitions), pack * rowTile}, 2);
  PsumPool ps = kb.psumPool("transpose", 4);
  EvacuationEngines evac;
  const int64_t colBlock = std::min(N, 4 * kMaxMoving);
  // The column blocks of every pack of matrices, in order; each is loaded one block ahead of its
  // transposes (the DMA engines serve transfers in program order, so a load emitted after the
  // previous block's stores would wait for them).
  struct Block {
    int64_t g0, np, m0, mr, n0, nb;
    Tile in;
  };
  std::vector<Block> blocks;
  for (int64_t g0 = 0; g0 < G; g0 += pack)
    for (int64_t m0 = 0; m0 < M; m0 += rowTile)
      for (int64_t n0 = 0; n0 < N; n0 += colBlock)
        blocks.push_back({g0, std::min(pack, G - g0), m0, std::min(rowTile, M - m0), n0, std::min(colBlock, N - n0), Tile()});
  auto load = [&](Block& b) {
    b.in = ins.next().rows(0, b.np * b.mr).cols(0, b.nb);
    if (pack > 1)
      kb.load(b.in, x.slice(0, b.g0, b.np).merge(0).slice(1, b.n0, b.nb));
    else
      kb.load(b.in, x.at(0, b.g0).slice(0, b.m0, b.mr).slice(1, b.n0, b.nb));
  };
  load(blocks[0]);
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i + 1 < blocks.size()) load(blocks[i + 1]);
    const Block& b = blocks[i];
    const int64_t rows = b.np * b.mr, chunks = ceilDiv(b.nb, kPartitions);
    // The block's transposes side by side, [128 columns, chunk, rows], then one store per matrix:
    // stores of different matrices touch disjoint bytes of out, so they run in parallel.
    const Tile o = outs.next().slice(0, 0, chunks).slice(1, 0, rows);
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t w = std::min(kPartitions, b.nb - c * kPartitions);
      const Tile pt = ps.next(x.dtype(), {rows}).rows(0, w);
      kb.transpose(pt, b.in.cols(c * kPartitions, w));
      evacuate(kb, o.at(0, c).rows(0, w), pt, evac.next());
    }
    for (int64_t j = 0; j < b.np; ++j) {
      // out[g, n0 + 128 c + p, m0 + m] <- o[p, c, j * mr + m]
      const DramView dst = out.at(0, b.g0 + j).slice(0, b.n0, b.nb).slice(1, b.m0, b.mr);
      const Tile src = o.slice(1, j * b.mr, b.mr);
      if (b.nb % kPartitions == 0)
        kb.store(dst.split(0, kPartitions).permute({1, 0, 2}), src);
      else
        for (int64_t c = 0; c < chunks; ++c) {
          const int64_t w = std::min(kPartitions, b.nb - c * kPartitions);
          kb.store(dst.slice(0, c * kPartitions, w), src.at(0, c).rows(0, w));
        }
    }
  }
}

}  // namespace

// x is [M, N] or [G, M, N]; out likewise with M and N swapped.
const LeafSignature kCaymanPackedPETransposeSignature{{}, {{"x", {"...", "M", "N"}}}, {{"out", {"...", "N", "M"}}}};

WALRUS_REGISTER_LEAF("CaymanPackedPETranspose", expandCaymanPackedPETranspose,
                     "out[g] = x[g]^T on the PE, matrices of <= 64 rows packed 128 / M to a transpose",
                     kCaymanPackedPETransposeSignature);

}  // namespace walrus::kernels
