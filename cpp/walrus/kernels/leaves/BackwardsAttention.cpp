// BackwardsAttention: the gradients of attention forward (flash-attention backward).
//
// Per query head h (kv head g = h / (BH / BKV)), with logits S = scale q^T k (+ causal mask) and
// the forward's per-query log-sum-exp lse:
//   P  = exp(S - lse)                       the forward's probabilities, recomputed
//   dv = dy P              (d x Sk)         summed over the query heads of the group
//   dP = dy^T v,  Di = sum_d dy o,  dS = P (dP - Di)
//   dq = scale k dS^T      (d x Sq)
//   dk = scale q dS        (d x Sk)         summed over the group
//
//   Operands and attrs: the signature at the bottom of this file. d <= 128.
//
// Tiling: per kv head, k and v stay resident ([d, S] as the moving operands of S and dP) with k^T
// (DMA-transposed, the stationary operand of dq); per query head of the group, q, dy and their
// transposes are resident too. The keys go in blocks of 512; for each block every query tile of
// 128 contributes
//   S, dP      PE, [queries, keys] in PSUM
//   P, dP - Di ACT from PSUM (exp with the -lse bias; identity with the -Di bias)
//   dS         DVE
//   dv^T, dk^T PE, accumulated over the query tiles in PSUM ([d, keys]: the output layout)
//   dS^T, dq^T DMA transposes, then k^T dS^T accumulated over the block's key chunks; DVE adds it
//              into the head's dq accumulator
// Query tiles run two at a time, stage by stage, so one tile's chain overlaps the other's.
// Causal: query tiles wholly before a key block are skipped; on the diagonal Pool zeroes P above
// the diagonal (affine_select).
#include <algorithm>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {
namespace {

using namespace bir;

struct BwdSpec {
  DramView q, k, v, o, dy, lse, dq, dk, dv;
  int64_t BH = 0, BKV = 0, d = 0, S = 0;
  bool causal = false;
  double scale = 1.0;
  DType mm = DType::bfloat16;
};

BwdSpec readBwdSpec(KernelBuilder& kb) {
  BwdSpec s;
  s.causal = kb.attrs().flag("is_causal");
  s.scale = kb.attrs().number("scale");
  KernelBuilder::require(s.scale > 0, "scale " + std::to_string(s.scale) + "; expected a positive scale");
  s.q = kb.input("q", 3);
  s.k = kb.input("k", 3);
  s.v = kb.input("v", 3);
  s.o = kb.input("o", 3);
  s.dy = kb.input("dy", 3);
  s.lse = kb.input("lse", 2);
  s.dq = kb.output("dq", 3);
  s.dk = kb.output("dk", 3);
  s.dv = kb.output("dv", 3);
  s.BH = s.q.dim(0);
  s.d = s.q.dim(1);
  s.S = s.q.dim(2);
  s.BKV = s.k.dim(0);
  const std::vector<int64_t> qShape = s.q.shape(), kvShape{s.BKV, s.d, s.S};
  KernelBuilder::require(s.BH % s.BKV == 0, "k has " + std::to_string(s.BKV) + " heads, which do not divide q's " +
                                                std::to_string(s.BH) + " (grouped-query attention)");
  for (const auto* v : {&s.o, &s.dy, &s.dq}) KernelBuilder::require(v->shape() == qShape, "o, dy and dq must be [BH, d, S] like q");
  for (const auto* v : {&s.k, &s.v, &s.dk, &s.dv}) KernelBuilder::require(v->shape() == kvShape, "k, v, dk and dv must be [BKV, d, S]");
  KernelBuilder::require(s.lse.shape() == std::vector<int64_t>{s.BH, s.S}, "lse must be [BH, S]");
  KernelBuilder::require(s.d <= kPartitions, "d = " + std::to_string(s.d) + " exceeds 128");
  const bool fp32 = s.q.dtype() == DType::float32 || s.k.dtype() == DType::float32;
  s.mm = fp32 ? kb.matmulDtype(DType::float32) : s.q.dtype();
  return s;
}

// src [d, S] -> dst [128, S / 128, d]: the transposes of its 128-column tiles, by DMA.
void loadTransposedTiles(KernelBuilder& kb, const Tile& dst, const DramView& src) {
  const int64_t S = src.dim(1);
  for (int64_t t = 0; t * kPartitions < S; ++t) {
    const int64_t w = std::min(kPartitions, S - t * kPartitions);
    kb.loadTransposed(dst.at(0, t).rows(0, w), src.slice(1, t * kPartitions, w));
  }
}

constexpr int64_t kLanes = 2;  // query tiles in flight (PSUM: scores and dP per lane)

void expandBackwardsAttention(KernelBuilder& kb) {
  const BwdSpec s = readBwdSpec(kb);
  const int64_t d = s.d, S = s.S, ST = ceilDiv(S, kPartitions), group = s.BH / s.BKV;
  const DType mm = s.mm;

  // Per kv head.
  TilePool kvPool = kb.sbufPool("kv", mm, {2, S}, 1);          // k, v  [d, S]
  TilePool kTPool = kb.sbufPool("kT", mm, {ST, d}, 1);         // k^T   [128, ST, d]
  TilePool gradKV = kb.sbufPool("dkdv_acc", DType::float32, {2, S}, 1);
  // Per query head.
  TilePool qPool = kb.sbufPool("q_dy", mm, {2, S}, 1);         // q, dy [d, S]
  TilePool qTPool = kb.sbufPool("qT_dyT", mm, {2, ST, d}, 1);  // q^T, dy^T
  TilePool dqPool = kb.sbufPool("dq_acc", DType::float32, {S}, 1);
  TilePool colPool = kb.sbufPool("lse_di", DType::float32, {2, ST}, 1);  // -lse, -Di per query tile
  TilePool oTPool = kb.sbufPool("oT", mm, {d}, 2);
  TilePool prod = kb.sbufPool("dy_o", DType::float32, {d}, 2);
  // Per (key block, query tile).
  TilePool pPool = kb.sbufPool("p", mm, {kMaxMoving}, 2 * kLanes);
  TilePool tPool = kb.sbufPool("dp_minus_di", mm, {kMaxMoving}, 2);
  TilePool dsPool = kb.sbufPool("ds", mm, {kMaxMoving}, 2 * kLanes);
  TilePool dsTPool = kb.sbufPool("dsT", mm, {kMaxMoving / kPartitions, kPartitions}, 2 * kLanes);
  TilePool outPool = kb.sbufPool("grad_out", s.dq.dtype(), {S}, 2);
  PsumPool sPs = kb.psumPool("scores", kLanes);
  PsumPool dpPs = kb.psumPool("dp", kLanes);
  PsumPool dvPs = kb.psumPool("dv_acc", 1);
  PsumPool dkPs = kb.psumPool("dk_acc", 1);
  PsumPool dqPs = kb.psumPool("dq", 2);

  for (int64_t g = 0; g < s.BKV; ++g) {
    const Tile kv = kvPool.next(), kT = kTPool.next(), acc = gradKV.next();
    const Tile kg = kv.at(0, 0).rows(0, d), vg = kv.at(0, 1).rows(0, d);
    const Tile dkAcc = acc.at(0, 0).rows(0, d), dvAcc = acc.at(0, 1).rows(0, d);
    {
      auto sec = kb.section("load_kv");
      kb.load(kg, s.k.at(0, g));
      kb.load(vg, s.v.at(0, g));
      loadTransposedTiles(kb, kT, s.k.at(0, g));
    }
    for (int64_t h = g * group; h < (g + 1) * group; ++h) {
      const bool firstOfGroup = h == g * group;
      const Tile qdy = qPool.next(), qdyT = qTPool.next(), dqAcc = dqPool.next().rows(0, d), cols = colPool.next();
      const Tile qh = qdy.at(0, 0).rows(0, d), dyh = qdy.at(0, 1).rows(0, d);
      const Tile qT = qdyT.at(0, 0), dyT = qdyT.at(0, 1);
      const Tile negLse = cols.at(0, 0), negDi = cols.at(0, 1);
      {
        auto sec = kb.section("load_q");
        kb.load(qh, s.q.at(0, h));
        kb.load(dyh, s.dy.at(0, h));
        loadTransposedTiles(kb, qT, s.q.at(0, h));
        loadTransposedTiles(kb, dyT, s.dy.at(0, h));
        for (int64_t t = 0; t < ST; ++t) {
          const int64_t w = std::min(kPartitions, S - t * kPartitions);
          const Tile lse = negLse.rows(0, w).cols(t, 1);
          kb.load(lse, s.lse.at(0, h).slice(0, t * kPartitions, w));
          kb.tensorScalar(lse, lse, AluOp::mult, -1.0);
          // -Di = -sum_d dy o, query-major: o^T by DMA, the product on DVE, the sum on ACT.
          const Tile oT = oTPool.next().rows(0, w), p = prod.next().rows(0, w);
          kb.loadTransposed(oT, s.o.at(0, h).slice(1, t * kPartitions, w));
          kb.tensorTensor(p, oT, dyT.at(0, t).rows(0, w), AluOp::mult);
          kb.activation(p, p, ActivationFunc::Copy, Act().scale(-1.0).accumulate(AccumCmd::ZeroAccumulate));
          kb.readAccumulator(negDi.rows(0, w).cols(t, 1));
        }
      }
      for (int64_t k0 = 0; k0 < S; k0 += kMaxMoving) {
        const int64_t kw = std::min(kMaxMoving, S - k0), chunks = ceilDiv(kw, kPartitions);
        // Causal: query tiles that end before the block's first key see none of it.
        const int64_t firstTile = s.causal ? k0 / kPartitions : 0;
        const Tile dvT = dvPs.next(DType::float32, {kw}).rows(0, d);
        const Tile dkT = dkPs.next(DType::float32, {kw}).rows(0, d);
        // Query tiles go two at a time, each stage for both before the next, so the engines
        // overlap one tile's chain (S, P, dP, dS, dV/dK, dS^T, dQ) with the other's.
        for (int64_t t0 = firstTile; t0 < ST; t0 += kLanes) {
          struct Lane {
            int64_t t, q0, qw;
            Tile Sps, dP, P, dS, dsT;
          };
          std::vector<Lane> lanes;
          for (int64_t t = t0; t < std::min(ST, t0 + kLanes); ++t) {
            const int64_t q0 = t * kPartitions, qw = std::min(kPartitions, S - q0);
            lanes.push_back({t, q0, qw, sPs.next(DType::float32, {kw}).rows(0, qw),
                             dpPs.next(DType::float32, {kw}).rows(0, qw), pPool.next().rows(0, qw).cols(0, kw),
                             dsPool.next().rows(0, qw).cols(0, kw), dsTPool.next()});
          }
          {
            auto sec = kb.section("recompute_p");
            for (auto& l : lanes) kb.matmul(l.Sps, qh.cols(l.q0, l.qw), kg.cols(k0, kw), true, true);
            for (auto& l : lanes) {
              kb.activation(l.P, l.Sps, ActivationFunc::Exp, Act().scale(s.scale).bias(negLse.rows(0, l.qw).cols(l.t, 1)));
              if (s.causal && k0 + kw > l.q0 + 1)  // keep key j <= query i: (q0 + p) - (k0 + j) >= 0
                kb.affineSelect(l.P, l.P, l.q0 - k0, {{-1, kw}}, 1, AluOp::is_ge, 0.0);
            }
          }
          {
            auto sec = kb.section("ds");
            for (auto& l : lanes) kb.matmul(l.dP, dyh.cols(l.q0, l.qw), vg.cols(k0, kw), true, true);
            for (auto& l : lanes) {
              const Tile t1 = tPool.next().rows(0, l.qw).cols(0, kw);
              kb.activation(t1, l.dP, ActivationFunc::Identity, Act().bias(negDi.rows(0, l.qw).cols(l.t, 1)));
              kb.tensorTensor(l.dS, t1, l.P, AluOp::mult);
            }
          }
          {
            auto sec = kb.section("dk_dv");
            for (auto& l : lanes) {
              const bool first = l.t == firstTile, last = l.t == ST - 1;
              kb.matmul(dvT, dyT.at(0, l.t).rows(0, l.qw), l.P, first, last);
              kb.matmul(dkT, qT.at(0, l.t).rows(0, l.qw), l.dS, first, last);
            }
          }
          auto sec = kb.section("dq");
          for (auto& l : lanes)  // dS^T by DMA (issued from Pool), 128 keys at a time
            for (int64_t c = 0; c < chunks; ++c) {
              const int64_t kr = std::min(kPartitions, kw - c * kPartitions);
              kb.transposeOnChip(l.dsT.at(0, c).rows(0, kr).cols(0, l.qw), l.dS.cols(c * kPartitions, kr), Engine::Pool);
            }
          for (auto& l : lanes) {
            const Tile dqT = dqPs.next(DType::float32, {l.qw}).rows(0, d);
            for (int64_t c = 0; c < chunks; ++c) {
              const int64_t kr = std::min(kPartitions, kw - c * kPartitions), kt = k0 / kPartitions + c;
              kb.matmul(dqT, kT.at(0, kt).rows(0, kr), l.dsT.at(0, c).rows(0, kr).cols(0, l.qw), c == 0, c == chunks - 1);
            }
            const Tile dq = dqAcc.cols(l.q0, l.qw);
            if (k0 == 0)
              kb.copy(dq, dqT);
            else
              kb.tensorTensor(dq, dq, dqT, AluOp::add);
          }
        }
        auto sec = kb.section("dk_dv");
        if (firstOfGroup) {
          kb.copy(dvAcc.cols(k0, kw), dvT);
          kb.copy(dkAcc.cols(k0, kw), dkT);
        } else {
          kb.tensorTensor(dvAcc.cols(k0, kw), dvAcc.cols(k0, kw), dvT, AluOp::add);
          kb.tensorTensor(dkAcc.cols(k0, kw), dkAcc.cols(k0, kw), dkT, AluOp::add);
        }
      }
      auto sec = kb.section("store");
      const Tile dqOut = outPool.next().rows(0, d);
      kb.activation(dqOut, dqAcc, ActivationFunc::Copy, Act().scale(s.scale));
      kb.store(s.dq.at(0, h), dqOut);
    }
    auto sec = kb.section("store");
    const Tile dkOut = outPool.next().rows(0, d), dvOut = outPool.next().rows(0, d);
    kb.activation(dkOut, dkAcc, ActivationFunc::Copy, Act().scale(s.scale));
    kb.store(s.dk.at(0, g), dkOut);
    kb.activation(dvOut, dvAcc, ActivationFunc::Copy);
    kb.store(s.dv.at(0, g), dvOut);
  }
}

}  // namespace

const LeafSignature kBackwardsAttentionSignature{
    {boolAttr("is_causal", false, "key j hidden from query i when j > i"),
     floatAttr("scale", "1.0", "the logits' scale (> 0)")},
    {{"q", {"BH", "d", "S"}},
     {"k", {"BKV", "d", "S"}},
     {"v", {"BKV", "d", "S"}},
     {"o", {"BH", "d", "S"}},
     {"dy", {"BH", "d", "S"}},
     {"lse", {"BH", "S"}}},
    {{"dq", {"BH", "d", "S"}}, {"dk", {"BKV", "d", "S"}}, {"dv", {"BKV", "d", "S"}}}};

WALRUS_REGISTER_LEAF("BackwardsAttention", expandBackwardsAttention,
                     "dq, dk, dv of softmax(scale q^T k [+ causal mask]) v from o, dy and lse; GQA",
                     kBackwardsAttentionSignature);

}  // namespace walrus::kernels
