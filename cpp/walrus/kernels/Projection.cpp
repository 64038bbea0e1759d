#include "walrus/kernels/Projection.h"

#include "bir/Error.h"

namespace walrus::kernels {

namespace {
template <class Multiply>
void project(KernelBuilder& kb, TilePool& pieces, const DramView& w, int64_t c0, int64_t cols, Multiply&& multiply) {
  const int64_t K = w.dim(0), kTiles = ceilDiv(K, kPartitions);
  int64_t perPiece = 0;
  for (int64_t k0 = 0; k0 < kTiles; k0 += perPiece) {
    const Tile piece = pieces.next();
    perPiece = piece.dim(0);
    const int64_t n = std::min(perPiece, kTiles - k0);
    const int64_t rows = std::min(n * kPartitions, K - k0 * kPartitions);
    loadRowTiles(kb, piece, w.slice(0, k0 * kPartitions, rows).slice(1, c0, cols));
    for (int64_t j = 0; j < n; ++j) {
      const int64_t kt = k0 + j, kr = std::min(kPartitions, K - kt * kPartitions);
      multiply(kt, kr, piece.at(0, j).rows(0, kr).cols(0, cols), kt == 0, kt == kTiles - 1);
    }
  }
}
}  // namespace

void projectWeightsStationary(KernelBuilder& kb, const Tile& acc, TilePool& pieces, const DramView& w, int64_t c0,
                              int64_t cols, const Tile& xT, int64_t tn, bool open, bool close) {
  project(kb, pieces, w, c0, cols, [&](int64_t kt, int64_t kr, const Tile& wt, bool start, bool stop) {
    kb.matmul(acc, wt, xT.at(0, kt).rows(0, kr).cols(0, tn), start && open, stop && close);
  });
}

void projectWeightsMoving(KernelBuilder& kb, const Tile& acc, TilePool& pieces, const DramView& w, int64_t c0,
                          int64_t cols, const Tile& xT, int64_t tn) {
  project(kb, pieces, w, c0, cols, [&](int64_t kt, int64_t kr, const Tile& wt, bool start, bool stop) {
    kb.matmul(acc, xT.at(0, kt).rows(0, kr).cols(0, tn), wt, start, stop);
  });
}

int64_t tokenBlock(const KernelBuilder& kb, int64_t tokens, int64_t residentPerToken, int64_t phaseBytes) {
  const int64_t most = std::min(kMaxMoving, ceilDiv(tokens, kPartitions) * kPartitions);
  for (int64_t tb = most; tb >= kPartitions; tb -= kPartitions)
    if (residentPerToken * tb + phaseBytes <= kb.sbufBytes() - 4096) return tb;
  throw KernelError("no room for even a 128-token block: " + std::to_string(residentPerToken) +
                    " bytes per partition per token plus " + std::to_string(phaseBytes) + " exceed the " +
                    std::to_string(kb.sbufBytes()) + " bytes of SBUF per partition");
}

}  // namespace walrus::kernels
