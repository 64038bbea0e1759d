#include "walrus/kernels/GatedMlp.h"

#include <algorithm>

namespace walrus::kernels {

using namespace bir;

namespace {
int64_t pieceBytes(int64_t kTiles, DType mm) { return std::min(kTiles, kWeightPieceTiles) * kPartitions * dtypeSize(mm); }
}  // namespace

int64_t gatedActivationsBytes(const GatedMlpWeights& w, int64_t tb) {
  const int64_t KT = ceilDiv(w.up.dim(0), kPartitions);
  return (w.skipGate ? 1 : 2) * kWeightLoadsInFlight * pieceBytes(KT, w.mm) + 2 * tb * 4 * (w.upBias.location() ? 2 : 1);
}

void gatedActivationsT(KernelBuilder& kb, const GatedMlpWeights& w, const Tile& xT, const Tile& hT, int64_t tn) {
  auto phase = kb.scope();
  const int64_t H = w.up.dim(0), I = w.up.dim(1), KT = ceilDiv(H, kPartitions), IT = ceilDiv(I, kPartitions);
  const int64_t pieceTiles = std::min(KT, kWeightPieceTiles);
  const bool separateUp = w.upBias.location() && !w.skipGate;
  const WeightLoads loads{pieceTiles, ceilDiv(KT, pieceTiles), kPartitions, I};
  const int64_t actBytes = (separateUp ? 2 : 1) * 2 * kMaxMoving * dtypeSize(DType::float32);
  const int64_t cols = weightColumns(kb, w.mm, loads, w.skipGate ? 1 : 2, weightBudget(kb, actBytes));
  const int bufs = weightBufs(loads, cols, kWeightLoadsInFlight);
  WeightStream uw(kb, kb.sbufPool("up_w", w.mm, {pieceTiles, cols}, bufs));
  WeightStream gw(kb, w.skipGate ? TilePool() : kb.sbufPool("gate_w", w.mm, {pieceTiles, cols}, bufs));
  uw.plan({w.up}, 0, I, kPartitions);
  if (!w.skipGate) gw.plan({w.gate}, 0, I, kPartitions);
  TilePool gs = kb.sbufPool("gate_act", DType::float32, {kMaxMoving}, 2);
  TilePool us = separateUp ? kb.sbufPool("up", DType::float32, {kMaxMoving}, 2) : TilePool();
  PsumPool gps = w.skipGate ? PsumPool() : kb.psumPool("gate_acc", 2);
  PsumPool ups = kb.psumPool("up_acc", 2);
  for (int64_t it = 0; it < IT; ++it) {
    const int64_t i0 = it * kPartitions, iw = std::min(kPartitions, I - i0);
    const Tile h = hT.at(0, it).rows(0, iw).cols(0, tn);
    const Tile pu = ups.next(DType::float32, {tn}).rows(0, iw);
    {
      auto sec = kb.section("up_proj");
      projectWeightsStationary(kb, pu, uw, xT, tn);
    }
    const Act upBias = w.upBias.location() ? Act().bias(w.upBias.rows(0, iw).cols(it, 1)) : Act();
    if (w.skipGate) {
      auto sec = kb.section("act");
      kb.activation(h, pu, w.act, upBias);
      continue;
    }
    const Tile pg = gps.next(DType::float32, {tn}).rows(0, iw);
    {
      auto sec = kb.section("gate_proj");
      projectWeightsStationary(kb, pg, gw, xT, tn);
    }
    auto sec = kb.section("act");
    const Tile g = gs.next().rows(0, iw).cols(0, tn);
    kb.activation(g, pg, w.act, w.gateBias.location() ? Act().bias(w.gateBias.rows(0, iw).cols(it, 1)) : Act());
    if (w.upBias.location()) {
      const Tile u = us.next().rows(0, iw).cols(0, tn);
      kb.activation(u, pu, ActivationFunc::Identity, upBias);
      kb.tensorTensor(h, g, u, AluOp::mult);
    } else {
      kb.tensorTensor(h, pu, g, AluOp::mult);
    }
  }
}

int64_t downProjectBytes(DType mm, DType out, int64_t tb) {
  return kWeightLoadsInFlight * pieceBytes(kWeightPieceTiles, mm) + 4 * tb * dtypeSize(out);
}

void downProjectAndStore(KernelBuilder& kb, const std::vector<DownTerm>& terms, const Tile& biasCols,
                         const DramView& outRows, int64_t t0, int64_t tn, DType mm) {
  auto phase = kb.scope();
  const int64_t I = terms.front().down.dim(0), H = terms.front().down.dim(1);
  const int64_t IT = ceilDiv(I, kPartitions), KT = ceilDiv(H, kPartitions), chunks = ceilDiv(tn, kPartitions);
  const DType outType = outRows.dtype();
  const int64_t pieceTiles = std::min(IT, kWeightPieceTiles);
  const WeightLoads loads{pieceTiles, static_cast<int64_t>(terms.size()) * ceilDiv(IT, pieceTiles), kPartitions, H};
  const int64_t cols = weightColumns(kb, mm, loads, 1, weightBudget(kb, 4 * kMaxMoving * dtypeSize(outType)));
  WeightStream dw(kb, kb.sbufPool("down_w", mm, {pieceTiles, cols}, weightBufs(loads, cols, kWeightLoadsInFlight)));
  std::vector<DramView> downs;
  for (const auto& term : terms) downs.push_back(term.down);
  dw.plan(downs, 0, H, kPartitions);
  TilePool oTs = kb.sbufPool("outT", outType, {kMaxMoving}, 2);
  TilePool os = kb.sbufPool("out", outType, {kMaxMoving / kPartitions, kPartitions}, 2);
  PsumPool acc = kb.psumPool("down_acc", 2);
  PsumPool tps = kb.psumPool("transpose", 2);
  EvacuationEngines evac;
  for (int64_t ht = 0; ht < KT; ++ht) {
    const int64_t h0 = ht * kPartitions, hw = std::min(kPartitions, H - h0);
    const Tile po = acc.next(DType::float32, {tn}).rows(0, hw);
    {
      auto sec = kb.section("down_proj");
      for (size_t j = 0; j < terms.size(); ++j)
        projectWeightsStationary(kb, po, dw, terms[j].hT, tn, j == 0, j + 1 == terms.size());
    }
    auto sec = kb.section("store");
    const Tile oT = oTs.next().rows(0, hw).cols(0, tn);
    if (biasCols.location())
      kb.activation(oT, po, ActivationFunc::Identity, Act().bias(biasCols.rows(0, hw).cols(ht, 1)));
    else
      evacuate(kb, oT, po, Engine::Activation);
    const Tile o = os.next();
    transposeInto(kb, tps, o.slice(0, 0, chunks).slice(1, 0, hw), oT, evac.next());
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t rows = std::min(kPartitions, tn - c * kPartitions);
      kb.store(outRows.slice(0, t0 + c * kPartitions, rows).slice(1, h0, hw), o.at(0, c).rows(0, rows).cols(0, hw));
    }
  }
}

}  // namespace walrus::kernels
