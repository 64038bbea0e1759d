#include "walrus/kernels/Projection.h"

#include "bir/Error.h"

namespace walrus::kernels {

void WeightStream::plan(const DramView& w, int64_t c0, int64_t cols) {
  const int64_t K = w.dim(0), kTiles = ceilDiv(K, kPartitions);
  const Tile& shape = pool_.shape();
  const int64_t perPiece = shape.dim(0);
  KernelBuilder::require(cols <= shape.dim(1), "WeightStream: " + std::to_string(cols) + " columns do not fit " + shape.str());
  for (int64_t k0 = 0; k0 < kTiles; k0 += perPiece) {
    const int64_t n = std::min(perPiece, kTiles - k0);
    const int64_t rows = std::min(n * kPartitions, K - k0 * kPartitions);
    planned_.emplace_back(w.slice(0, k0 * kPartitions, rows).slice(1, c0, cols), Piece{Tile(), k0, n, kTiles, K});
  }
}

void WeightStream::fill() {
  while (!planned_.empty() && static_cast<int>(loaded_.size()) < pool_.bufs()) {
    auto [rows, piece] = planned_.front();
    planned_.pop_front();
    piece.tile = pool_.next();
    loadRowTiles(kb_, piece.tile, rows);
    loaded_.push_back(piece);
  }
}

WeightStream::Piece WeightStream::take() {
  fill();
  KernelBuilder::require(!loaded_.empty(), "WeightStream: a projection was not planned");
  Piece p = loaded_.front();
  loaded_.pop_front();
  return p;
}

namespace {
template <class Multiply>
void project(WeightStream& w, Multiply&& multiply) {
  for (;;) {
    const WeightStream::Piece p = w.take();
    for (int64_t j = 0; j < p.tiles; ++j) {
      const int64_t kt = p.kt0 + j, kr = std::min(kPartitions, p.K - kt * kPartitions);
      multiply(kt, kr, p.tile.at(0, j).rows(0, kr), kt == 0, kt == p.kTiles - 1);
    }
    if (p.kt0 + p.tiles == p.kTiles) return;
  }
}
}  // namespace

void projectWeightsStationary(KernelBuilder& kb, const Tile& acc, WeightStream& w, const Tile& xT, int64_t tn,
                              bool open, bool close) {
  project(w, [&](int64_t kt, int64_t kr, const Tile& wt, bool start, bool stop) {
    kb.matmul(acc, wt.cols(0, acc.partitions()), xT.at(0, kt).rows(0, kr).cols(0, tn), start && open, stop && close);
  });
}

void projectWeightsMoving(KernelBuilder& kb, const Tile& acc, WeightStream& w, const Tile& xT, int64_t tn) {
  project(w, [&](int64_t kt, int64_t kr, const Tile& wt, bool start, bool stop) {
    kb.matmul(acc, xT.at(0, kt).rows(0, kr).cols(0, tn), wt.cols(0, acc.freeSize()), start, stop);
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
