#include "walrus/kernels/TileOps.h"

#include <algorithm>

namespace walrus::kernels {

using namespace bir;

void evacuate(KernelBuilder& kb, const Tile& out, const Tile& in, Engine e) {
  if (e == Engine::Activation)
    kb.activation(out, in, ActivationFunc::Copy);
  else
    kb.copy(out, in, e);
}

void transposeInto(KernelBuilder& kb, PsumPool& psum, const Tile& out, const Tile& in, Engine evac,
                   const Tile* chunkScale) {
  const int64_t P = in.partitions(), F = in.freeSize();
  const int64_t chunks = ceilDiv(F, kPartitions);
  KernelBuilder::require(P <= kPartitions && out.rank() == 2 && out.dim(0) >= chunks && out.dim(1) >= P,
                         "transposeInto: " + in.str() + " does not fit " + out.str());
  const Tile src = in.flat();
  // Each chunk's transpose starts on a 4-byte PSUM word (the PE writes whole words).
  const int64_t es = dtypeSize(in.dtype()), stride = ceilDiv(P * es, 4) * 4 / es;
  const int64_t perBank = std::max<int64_t>(1, kb.psumBankBytes() / (stride * es));
  for (int64_t c0 = 0; c0 < chunks;) {
    // A group of full chunks, or the partial last chunk alone (it has fewer partitions).
    const bool partial = (c0 + 1) * kPartitions > F;
    int64_t g = 1;
    while (!partial && g < perBank && c0 + g < chunks && (c0 + g + 1) * kPartitions <= F) ++g;
    const int64_t width = partial ? F - c0 * kPartitions : kPartitions;
    const Tile pt = psum.next(in.dtype(), {g, stride}).rows(0, width).slice(1, 0, P);
    for (int64_t j = 0; j < g; ++j) kb.transpose(pt.at(0, j), src.cols((c0 + j) * kPartitions, width));
    const Tile dst = out.rows(0, width).slice(0, c0, g).slice(1, 0, P);
    if (chunkScale)
      kb.tensorTensor(dst, pt, chunkScale->rows(0, width).slice(0, c0, g).broadcast(1, P), AluOp::mult);
    else
      evacuate(kb, dst, pt, evac);
    c0 += g;
  }
}

void loadBroadcastRow(KernelBuilder& kb, const Tile& dst, const DramView& row) {
  kb.load(dst, row.broadcast(0, dst.partitions()));
}

void loadColumn(KernelBuilder& kb, const Tile& dst, const DramView& row) {
  kb.load(dst, row);
}

void loadRowTiles(KernelBuilder& kb, const Tile& dst, const DramView& src) {
  const int64_t R = src.dim(0), C = src.dim(1), tiles = ceilDiv(R, kPartitions);
  KernelBuilder::require(dst.rank() == 2 && dst.dim(0) >= tiles && dst.dim(1) >= C,
                         "loadRowTiles: " + src.str() + " does not fit " + dst.str());
  if (R % kPartitions == 0) {
    kb.load(dst.slice(0, 0, tiles).slice(1, 0, C), src.split(0, kPartitions).permute({1, 0, 2}));
    return;
  }
  for (int64_t j = 0; j < tiles; ++j) {
    const int64_t rows = std::min(kPartitions, R - j * kPartitions);
    kb.load(dst.at(0, j).rows(0, rows).cols(0, C), src.slice(0, j * kPartitions, rows));
  }
}

Tile loadColumnChunks(KernelBuilder& kb, const std::string& name, const DramView& v) {
  const int64_t N = v.dim(0), chunks = ceilDiv(N, kPartitions);
  const Tile t = kb.sbufTile(name, DType::float32, {chunks});
  if (N % kPartitions == 0) {
    kb.load(t, v.split(0, kPartitions).permute({1, 0}));
    return t;
  }
  for (int64_t j = 0; j < chunks; ++j) {
    const int64_t w = std::min(kPartitions, N - j * kPartitions);
    kb.load(t.rows(0, w).cols(j, 1), v.slice(0, j * kPartitions, w));
  }
  return t;
}

}  // namespace walrus::kernels
