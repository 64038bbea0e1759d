#include "walrus/kernels/TokenPrologue.h"

namespace walrus::kernels {

using namespace bir;

TokenPrologue::TokenPrologue(KernelBuilder& kb, Config config) : kb_(kb), cfg_(std::move(config)) {
  if (!hasGamma(cfg_.norm) || !cfg_.gamma) return;
  auto s = kb.section("load_gamma");
  gammaT_ = loadColumnChunks(kb, "gammaT", *cfg_.gamma);
}

int64_t TokenPrologue::stagingBytes() const {
  const int64_t H = cfg_.H, xn = H * dtypeSize(cfg_.xTdtype);
  if (!needsFp32()) return 0;
  const int64_t x = 2 * H * 4, addend = 2 * cfg_.addends * H * dtypeSize(cfg_.hiddenDtype);
  return x + addend + xn + normStatsColumns(H) * 4 + 4 * 64;
}

void TokenPrologue::transposedTokens(const TokenRowsIn& in, const Tile& xT, int64_t col0, int64_t t0, int64_t n) {
  auto scope = kb_.scope();
  auto section = kb_.section("prologue");
  const int64_t H = cfg_.H;
  const bool fp32 = needsFp32();
  if (!fp32) {
    // Nothing to compute on the rows: DMA transposes bring x^T straight from DRAM (converted to
    // the matmul dtype on the way), with no PE or evacuation work.
    for (int64_t r0 = 0; r0 < n; r0 += kPartitions) {
      const int64_t rows = std::min(kPartitions, n - r0);
      for (int64_t j = 0; j * kPartitions < H; ++j) {
        const int64_t w = std::min(kPartitions, H - j * kPartitions);
        kb_.loadTransposed(xT.at(0, j).rows(0, w).cols(col0 + r0, rows),
                           in.hidden.slice(0, t0 + r0, rows).slice(1, j * kPartitions, w));
      }
    }
    return;
  }
  TilePool xs = kb_.sbufPool("x", DType::float32, {H}, 2);
  TilePool adds = cfg_.addends ? kb_.sbufPool("addend", cfg_.hiddenDtype, {H}, 2 * cfg_.addends) : TilePool();
  TilePool xns = kb_.sbufPool("x_norm", cfg_.xTdtype, {H}, 1);
  const Tile stats = cfg_.norm == NormType::None ? Tile() : kb_.sbufTile("norm_stats", DType::float32, {normStatsColumns(H)});
  PsumPool psum = kb_.psumPool("transpose", 2);
  EvacuationEngines evac;
  // Row tiles are loaded one ahead in program order (the DMA engines serve transfers in program
  // order: a load emitted after this tile's stores would wait for its work).
  struct Loaded {
    Tile x;
    std::vector<Tile> addends;
  };
  auto loadRows = [&](int64_t r0) {
    const int64_t rows = std::min(kPartitions, n - r0);
    Loaded l{xs.next().rows(0, rows), {}};
    kb_.load(l.x, in.hidden.slice(0, t0 + r0, rows));
    for (const DramView& addend : in.addends) {
      l.addends.push_back(adds.next().rows(0, rows));
      kb_.load(l.addends.back(), addend.slice(0, t0 + r0, rows));
    }
    return l;
  };
  Loaded next = loadRows(0);
  for (int64_t r0 = 0; r0 < n; r0 += kPartitions) {
    const int64_t rows = std::min(kPartitions, n - r0);
    const Loaded cur = next;
    if (r0 + kPartitions < n) next = loadRows(r0 + kPartitions);
    const Tile& x = cur.x;
    for (const Tile& a : cur.addends) kb_.tensorTensor(x, x, a, AluOp::add);
    if (in.sumOut) kb_.store(in.sumOut->slice(0, t0 + r0, rows), x);
    const Tile xn = xns.next().rows(0, rows);
    normalizeRows(kb_, cfg_.norm, cfg_.eps, xn, x, stats.location() ? stats.rows(0, rows) : Tile(), xn);
    transposeInto(kb_, psum, xT.slice(1, col0 + r0, rows), xn, evac.next(), gammaT_.location() ? &gammaT_ : nullptr);
  }
}

}  // namespace walrus::kernels
