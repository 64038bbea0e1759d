// Attention forward: CausalAttentionMMSoftmaxMMWithoutSwap and AttentionMMSoftmaxMMWithoutSwap.
//
//   out[h] = (softmax(scale * q[h]^T k[g] + mask) v[g])^T,   g = h / (BH / BKV)
//
//   Operands and attrs: attentionSignature at the bottom of this file.
//
// Heads are folded into the batch dim (NxDI's attention_isa_kernel layouts); BKV < BH is
// grouped-query attention, query head h reading kv head h / (BH / BKV) (repeat_interleave). The
// causal mask hides key j from query i when j > i (both counted from 0). d <= 512.
//
// Flash-attention tiling: per kv head, k and v stay resident in SBUF (loaded while the previous
// head computes) and serve every query head of the group; each tile of 128 queries of each head
// of the group is a work item whose keys go by in blocks of 512 (causal: only up to the tile's
// last query; the diagonal block gets the triangle of -1e30 as an additive mask). FlashAttention.h
// runs the items four at a time, interleaved, so PE, ACT, DVE and the DMA transposes overlap;
// each item's out = (O / l)^T leaves by a DMA in transpose mode.
#include <algorithm>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/FlashAttention.h"

namespace walrus::kernels {
namespace {

using namespace bir;

struct AttentionSpec {
  DramView q, k, v, out;
  int64_t BH = 0, BKV = 0, d = 0, Sq = 0, Sk = 0;
  bool causal = false;
  double scale = 1.0;
  DType mm = DType::bfloat16;
};

AttentionSpec readAttentionSpec(KernelBuilder& kb, bool causalKernel) {
  AttentionSpec s;
  s.causal = kb.attrs().flag("is_causal");
  KernelBuilder::require(s.causal == causalKernel,
                         std::string("is_causal is ") + (s.causal ? "true" : "false") + " but kernel '" +
                             kb.node().kernel_name + "' is " + (causalKernel ? "causal" : "not causal"));
  s.scale = kb.attrs().number("scale");
  s.q = kb.input("q", 3);
  s.k = kb.input("k", 3);
  s.v = kb.input("v", 3);
  s.out = kb.output("out", 3);
  s.BH = s.q.dim(0);
  s.d = s.q.dim(1);
  s.Sq = s.q.dim(2);
  s.BKV = s.k.dim(0);
  s.Sk = s.k.dim(2);
  KernelBuilder::require(s.k.dim(1) == s.d, "k must be [BKV, d, Sk] with q's d = " + std::to_string(s.d));
  KernelBuilder::require(s.BH % s.BKV == 0, "k has " + std::to_string(s.BKV) + " heads, which do not divide q's " +
                                                std::to_string(s.BH) + " (grouped-query attention)");
  KernelBuilder::require(s.v.shape() == std::vector<int64_t>{s.BKV, s.Sk, s.d}, "v must be [BKV, Sk, d]");
  KernelBuilder::require(s.out.shape() == s.q.shape(), "out must be [BH, d, Sq] like q");
  KernelBuilder::require(s.d <= kMaxMoving, "d = " + std::to_string(s.d) + " exceeds 512");
  const bool fp32 = s.q.dtype() == DType::float32 || s.k.dtype() == DType::float32 || s.v.dtype() == DType::float32;
  s.mm = fp32 ? kb.matmulDtype(DType::float32) : s.q.dtype();
  return s;
}

void expandAttention(KernelBuilder& kb, bool causalKernel) {
  const AttentionSpec s = readAttentionSpec(kb, causalKernel);
  const int64_t DT = ceilDiv(s.d, kPartitions), ST = ceilDiv(s.Sk, kPartitions), group = s.BH / s.BKV;
  KernelBuilder::require(s.Sq >= 1 && s.Sk >= 1, "empty sequence");
  const int64_t es = dtypeSize(s.mm);
  KernelBuilder::require(2 * (DT * s.Sk + ST * s.d) * es <= kb.sbufBytes() / 2,
                         "k and v of one head (Sk = " + std::to_string(s.Sk) + ", d = " + std::to_string(s.d) +
                             ") do not fit half of SBUF twice over");

  // The causal triangle: mask[p, j] = 0 where j <= p, -1e30 where j > p.
  Tile mask;
  if (s.causal) {
    auto sec = kb.section("mask");
    mask = kb.sbufTile("causal_mask", kFlashMaskDtype, {kPartitions});
    kb.memset(mask, 0.0);
    kb.affineSelect(mask, mask, 0, {{-1, kPartitions}}, 1, AluOp::is_ge, kFlashMasked);
  }
  TilePool ks = kb.sbufPool("k", s.mm, {DT, s.Sk}, 2);
  TilePool vs = kb.sbufPool("v", s.mm, {ST, s.d}, 2);
  FlashAttention flash(kb, s.mm, s.out.dtype(), s.d, s.scale, FlashAttention::lanesFor(kb, s.d, 6));

  for (int64_t g = 0; g < s.BKV; ++g) {
    const Tile kT = ks.next(), vT = vs.next();
    {
      auto sec = kb.section("load_kv");
      loadRowTiles(kb, kT, s.k.at(0, g));
      loadRowTiles(kb, vT, s.v.at(0, g));
    }
    std::vector<FlashItem> items;
    for (int64_t h = g * group; h < (g + 1) * group; ++h)
      for (int64_t q0 = 0; q0 < s.Sq; q0 += kPartitions) {
        FlashItem item;
        item.rows = std::min(kPartitions, s.Sq - q0);
        const int64_t qw = item.rows;
        item.loadQ = [&kb, &s, h, q0, qw](const Tile& qT) { loadRowTiles(kb, qT, s.q.at(0, h).slice(1, q0, qw)); };
        // Causal: keys beyond the tile's last query are never seen; only the last block can hold a
        // key after one of the tile's queries, and the triangle covers its keys [q0, keys).
        const int64_t keys = s.causal ? std::min(s.Sk, q0 + qw) : s.Sk;
        for (int64_t k0 = 0; k0 < keys; k0 += kFlashBlockKeys) {
          FlashBlock b{kT, vT, k0, std::min(kFlashBlockKeys, keys - k0), std::nullopt};
          if (s.causal && b.k0 + b.kw > q0 + 1) b.mask = BlockMask{mask, q0 - k0, keys - q0};
          item.blocks.push_back(b);
        }
        item.store = [&kb, &s, h, q0, qw, DT](const Tile& o) {
          for (int64_t dc = 0; dc < DT; ++dc) {
            const int64_t dr = std::min(kPartitions, s.d - dc * kPartitions);
            kb.storeTransposed(s.out.at(0, h).slice(0, dc * kPartitions, dr).slice(1, q0, qw), o.cols(dc * kPartitions, dr));
          }
        };
        items.push_back(std::move(item));
      }
    flash.run(items);
  }
}

void expandCausal(KernelBuilder& kb) { expandAttention(kb, true); }
void expandNonCausal(KernelBuilder& kb) { expandAttention(kb, false); }

}  // namespace

// The two kernels differ only in is_causal's default (which must agree with the name).
LeafSignature attentionSignature(bool causal) {
  return {{boolAttr("is_causal", causal, "the causal mask (must agree with the kernel name)"),
           floatAttr("scale", "1.0", "the logits' scale (> 0; NxDI pre-scales q and passes 1)")},
          {{"q", {"BH", "d", "Sq"}}, {"k", {"BKV", "d", "Sk"}}, {"v", {"BKV", "Sk", "d"}}},
          {{"out", {"BH", "d", "Sq"}}}};
}

WALRUS_REGISTER_LEAF("CausalAttentionMMSoftmaxMMWithoutSwap", expandCausal,
                     "out = (softmax(scale q^T k + causal mask) v)^T, flash tiling, GQA", attentionSignature(true));
WALRUS_REGISTER_LEAF("AttentionMMSoftmaxMMWithoutSwap", expandNonCausal,
                     "out = (softmax(scale q^T k) v)^T, flash tiling, GQA", attentionSignature(false));

}  // namespace walrus::kernels
