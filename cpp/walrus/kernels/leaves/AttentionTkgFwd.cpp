// AttentionTkgFwd: token-generation (decode) attention of a few new tokens over the prior KV cache
// plus their own keys and values.
//
//   out[h][:, i] = sum_j softmax_j(scale q[h][:, i] . key_j) value_j over the keys
//                  prior[0 : prior_len] and active[0 : Sa] (active j only for j <= i when
//                  causal_active), kv head g = h / (BH / BKV)
//
//   Operands and attrs: the signature at the bottom of this file.
//
// Decode is bound by reading the KV cache, so each kv head's prior keys and values are read once
// for its whole group: the queries of every head of the group are stacked on partitions
// (G heads x Sa tokens <= 128 rows per item), and the item runs flash attention over the prior in
// blocks of 1024 keys and then the active block. FlashAttention.h interleaves the items of a chunk
// of kv heads while the next chunk's cache loads. The active
// block's mask hides key j from row (head, i) when j > i; since i = row mod Sa that is not affine
// in the row, so it is built once with iota and DVE (mod, compare, scale) rather than
// affine_select.
#include <algorithm>

#include "walrus/kernels/FlashAttention.h"
#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"

namespace walrus::kernels {
namespace {

using namespace bir;

void expandAttentionTkgFwd(KernelBuilder& kb) {
  KernelAttrs& attrs = kb.attrs();
  const double scale = attrs.number("scale");
  const bool causal = attrs.flag("causal_active");
  const DramView q = kb.input("q", 3), kp = kb.input("k_prior", 3), vp = kb.input("v_prior", 3);
  const DramView ka = kb.input("k_active", 3), va = kb.input("v_active", 3), out = kb.output("out", 3);
  const int64_t BH = q.dim(0), d = q.dim(1), Sa = q.dim(2), BKV = kp.dim(0), Sp = kp.dim(2);
  const int64_t priorLenAttr = attrs.integer("prior_len");
  const int64_t priorLen = priorLenAttr < 0 ? Sp : priorLenAttr;
  KernelBuilder::require(BKV >= 1 && BH % BKV == 0, "k_prior has " + std::to_string(BKV) +
                                                        " heads, which do not divide q's " + std::to_string(BH));
  KernelBuilder::require(kp.dim(1) == d && vp.shape() == std::vector<int64_t>{BKV, Sp, d},
                         "k_prior must be [BKV, d, Sp] and v_prior [BKV, Sp, d]");
  KernelBuilder::require(ka.shape() == std::vector<int64_t>{BKV, d, Sa} && va.shape() == std::vector<int64_t>{BKV, Sa, d},
                         "k_active must be [BKV, d, Sa] and v_active [BKV, Sa, d]");
  KernelBuilder::require(out.shape() == q.shape(), "out must be [BH, d, Sa] like q");
  KernelBuilder::require(0 <= priorLen && priorLen <= Sp, "prior_len " + std::to_string(priorLen) + " is not in 0.." +
                                                              std::to_string(Sp));
  KernelBuilder::require(Sa <= kPartitions && d <= kMaxMoving, "at most 128 active tokens and d <= 512");
  const bool fp32 = q.dtype() == DType::float32 || kp.dtype() == DType::float32;
  const DType mm = fp32 ? kb.matmulDtype(DType::float32) : q.dtype();
  const int64_t group = BH / BKV, DT = ceilDiv(d, kPartitions);
  const int64_t headsPerPass = std::max<int64_t>(1, std::min(group, kPartitions / Sa));

  // mask[row, j] = -1e30 where j > row mod Sa (active keys after the row's own token).
  Tile mask;
  if (causal) {
    auto sec = kb.section("mask");
    const Tile token = kb.sbufTile("row_token", DType::float32, {1});
    const Tile keyIds = kb.sbufTile("active_key_ids", DType::float32, {Sa});
    mask = kb.sbufTile("active_mask", kFlashMaskDtype, {Sa});
    kb.iota(token, 0, {{1, 1}}, 1);
    kb.tensorScalar(token, token, AluOp::mod, static_cast<double>(Sa));
    kb.iota(keyIds, 0, {{1, Sa}}, 0);
    kb.tensorScalarPtr(mask, keyIds, AluOp::is_gt, token, AluOp::mult, std::nullopt, kFlashMasked);
  }
  // As many kv heads resident as fit three quarters of SBUF (at least two): the items of half of
  // them run while the other half loads.
  const int64_t es = dtypeSize(mm), priorTiles = std::max<int64_t>(ceilDiv(priorLen, kPartitions), 1);
  const int64_t perHead = (DT * std::max<int64_t>(priorLen, 1) + priorTiles * d + DT * Sa + d) * es;
  const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>((BKV + 1) / 2, kb.sbufBytes() * 3 / 4 / perHead / 2));
  const int bufs = static_cast<int>(2 * chunk);
  TilePool kPrior = kb.sbufPool("k_prior", mm, {DT, std::max<int64_t>(priorLen, 1)}, bufs);
  TilePool vPrior = kb.sbufPool("v_prior", mm, {priorTiles, d}, bufs);
  TilePool kAct = kb.sbufPool("k_active", mm, {DT, Sa}, bufs);
  TilePool vAct = kb.sbufPool("v_active", mm, {1, d}, bufs);
  FlashAttention flash(kb, mm, out.dtype(), d, scale, FlashAttention::lanesFor(kb, d, 6));

  // Decode has few query rows per item: the items of a chunk of kv heads run interleaved.
  std::vector<FlashItem> items;
  for (int64_t g = 0; g < BKV; ++g) {
    const Tile kpT = kPrior.next(), vpT = vPrior.next(), kaT = kAct.next(), vaT = vAct.next();
    {
      auto sec = kb.section("load_kv");
      if (priorLen > 0) {
        loadRowTiles(kb, kpT, kp.at(0, g).slice(1, 0, priorLen));
        loadRowTiles(kb, vpT, vp.at(0, g).slice(0, 0, priorLen));
      }
      loadRowTiles(kb, kaT, ka.at(0, g));
      loadRowTiles(kb, vaT, va.at(0, g));
    }
    for (int64_t h0 = g * group; h0 < (g + 1) * group; h0 += headsPerPass) {
      const int64_t heads = std::min(headsPerPass, (g + 1) * group - h0);
      FlashItem item;
      item.rows = heads * Sa;
      item.loadQ = [&kb, &q, h0, heads, Sa](const Tile& qT) {
        for (int64_t j = 0; j < heads; ++j) loadRowTiles(kb, qT.slice(1, j * Sa, Sa), q.at(0, h0 + j));
      };
      for (int64_t k0 = 0; k0 < priorLen; k0 += kFlashBlockKeys)
        item.blocks.push_back({kpT, vpT, k0, std::min(kFlashBlockKeys, priorLen - k0), std::nullopt});
      FlashBlock active{kaT, vaT, 0, Sa, std::nullopt};
      if (causal) active.mask = BlockMask{mask, 0, Sa};
      item.blocks.push_back(active);
      item.store = [&kb, &out, h0, heads, Sa, d, DT](const Tile& o) {
        for (int64_t j = 0; j < heads; ++j)
          for (int64_t dc = 0; dc < DT; ++dc) {
            const int64_t dr = std::min(kPartitions, d - dc * kPartitions);
            kb.storeTransposed(out.at(0, h0 + j).slice(0, dc * kPartitions, dr), o.rows(j * Sa, Sa).cols(dc * kPartitions, dr));
          }
      };
      items.push_back(std::move(item));
    }
    // The pools hold two chunks of kv heads: run a chunk once it is loaded (the next chunk loads
    // meanwhile).
    if ((g + 1) % chunk == 0 || g + 1 == BKV) {
      flash.run(items);
      items.clear();
    }
  }
}

}  // namespace

const LeafSignature kAttentionTkgFwdSignature{
    {floatAttr("scale", "1.0", "the logits' scale (> 0)"),
     boolAttr("causal_active", true, "active key j hidden from new token i when j > i"),
     intAttr("prior_len", "-1", "the prior keys attended to, 0..Sp; -1: all Sp", true, -1)},
    {{"q", {"BH", "d", "Sa"}},
     {"k_prior", {"BKV", "d", "Sp"}},
     {"v_prior", {"BKV", "Sp", "d"}},
     {"k_active", {"BKV", "d", "Sa"}},
     {"v_active", {"BKV", "Sa", "d"}}},
    {{"out", {"BH", "d", "Sa"}}}};

WALRUS_REGISTER_LEAF("AttentionTkgFwd", expandAttentionTkgFwd,
                     "decode attention of Sa new tokens over prior[:prior_len] + active KV, GQA heads stacked",
                     kAttentionTkgFwdSignature);

}  // namespace walrus::kernels
