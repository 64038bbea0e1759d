#include "walrus/kernels/AttentionBlock.h"

namespace walrus::kernels {

using namespace bir;

AttentionBuffers::AttentionBuffers(KernelBuilder& kb, DType mm_, int64_t d_)
    : p(kb.sbufPool("p", mm_, {kMaxMoving}, 2)),
      pT(kb.sbufPool("pT", mm_, {kMaxMoving / kPartitions, kPartitions}, 2)),
      scores(kb.psumPool("scores", 2)),
      pTps(kb.psumPool("pT", 2)),
      pv(kb.psumPool("pv", 2)),
      mm(mm_),
      d(d_) {}

void attendBlock(KernelBuilder& kb, AttentionBuffers& buf, OnlineSoftmax& softmax, const Tile& qT, int64_t rows,
                 const Tile& kT, int64_t k0, int64_t kw, const Tile& v, const std::optional<BlockMask>& mask) {
  const int64_t d = buf.d, DT = ceilDiv(d, kPartitions);
  const Tile S = buf.scores.next(DType::float32, {kw}).rows(0, rows);
  {
    auto sec = kb.section("qk");
    for (int64_t dc = 0; dc < DT; ++dc) {
      const int64_t dr = std::min(kPartitions, d - dc * kPartitions);
      kb.matmul(S, qT.at(0, dc).rows(0, dr).cols(0, rows), kT.at(0, dc).rows(0, dr).cols(k0, kw), dc == 0,
                dc == DT - 1 && !mask);
    }
    if (mask) {
      const Tile id = kb.identity(buf.mm).rows(0, rows).cols(0, rows);
      kb.matmul(S.cols(mask->col0, mask->width), id, mask->mask.rows(0, rows).cols(0, mask->width), false, true);
    }
  }
  const Tile P = buf.p.next().rows(0, rows).cols(0, kw);
  softmax.block(S, P);
  auto sec = kb.section("pv");
  const int64_t chunks = ceilDiv(kw, kPartitions);
  const Tile pT = buf.pT.next();
  transposeInto(kb, buf.pTps, pT.slice(0, 0, chunks).slice(1, 0, rows), P, buf.evac.next());
  const Tile O = buf.pv.next(DType::float32, {d}).rows(0, rows);
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t kr = std::min(kPartitions, kw - c * kPartitions), kt = k0 / kPartitions + c;
    kb.matmul(O, pT.at(0, c).rows(0, kr).cols(0, rows), v.at(0, kt).rows(0, kr), c == 0, c == chunks - 1);
  }
  softmax.accumulate(O);
}

}  // namespace walrus::kernels
