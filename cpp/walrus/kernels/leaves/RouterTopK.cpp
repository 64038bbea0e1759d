// RouterTopK: the MoE router (nkilib's router_topk math).
//
//   logits = x @ w [+ bias]                                   [T, E]
//   index  = the k experts of largest logit per token, best first (tied logits: in the order
//            nc_match_replace8 gives their positions, descending within a round; as torch.topk,
//            no order among ties is promised)
//   router_pre_norm (default):  a = act(logits) over all E; with norm_topk_prob, a keeps only the
//                               k selected experts and is renormalised to sum 1 per token
//   otherwise:                  a = act(the k selected logits), scattered into zeros
//   act: SOFTMAX (0) or SIGMOID (1)
//
//   Operands and attrs: the signature at the bottom of this file (tokens = the leading dims of x;
//   expert_index holds integers).
//
// Per tile of 128 tokens: x^T on the PE (TokenPrologue), the logits with the tokens stationary
// and w (resident) moving; then, tokens on partitions, the DVE's max8 / match_replace8 pick 8
// experts per round (match_replace8 returns the index of each value's first not yet taken
// occurrence, so equal logits get distinct experts), ACT does exp / sigmoid with the row sums in
// its accumulator, and the selected experts' one-hot masks come from comparing an iota row with
// each index.
#include <algorithm>
#include <limits>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/TileOps.h"
#include "walrus/kernels/TokenPrologue.h"

namespace walrus::kernels {
namespace {

using namespace bir;

constexpr double kLowest = -std::numeric_limits<float>::max();

void expandRouterTopK(KernelBuilder& kb) {
  KernelAttrs& attrs = kb.attrs();
  const int64_t k = attrs.integer("k");
  const bool sigmoid = attrs.choice("act_fn") == 1;
  const bool preNorm = attrs.flag("router_pre_norm"), normTopk = attrs.flag("norm_topk_prob");
  const bool hasBias = kb.hasInput("bias");  // an optional trailing input
  const DramView x = kb.input("x").rows(), w = kb.input("w", 2);
  const DramView logitsOut = kb.output("router_logits").rows(), indexOut = kb.output("expert_index").rows(),
                 affOut = kb.output("expert_affinities").rows();
  const int64_t T = x.dim(0), H = x.dim(1), E = w.dim(1);
  KernelBuilder::require(w.dim(0) == H, "w must be [H, E] with x's H = " + std::to_string(H));
  KernelBuilder::require(1 <= k && k <= E, "k = " + std::to_string(k) + "; expected 1 <= k <= E = " + std::to_string(E));
  KernelBuilder::require(E <= kMaxMoving, "E = " + std::to_string(E) + " experts exceed 512");
  KernelBuilder::require(logitsOut.shape() == std::vector<int64_t>{T, E} && affOut.shape() == logitsOut.shape(),
                         "router_logits and expert_affinities must be [tokens, E]");
  KernelBuilder::require(indexOut.shape() == std::vector<int64_t>{T, k}, "expert_index must be [tokens, k]");
  KernelBuilder::require(!isFloat(indexOut.dtype()), "expert_index must have an integer dtype");
  const int64_t KT = ceilDiv(H, kPartitions), Ew = std::max<int64_t>(E, 8), rounds = ceilDiv(k, 8);
  const DType mm = kb.matmulDtype(w.dtype() == DType::float32 || x.dtype() == DType::float32 ? DType::float32 : w.dtype());

  // Resident: w as [128, KT, E], the bias row, an iota row 0..E-1.
  const Tile wT = kb.sbufTile("w", mm, {KT, E});
  loadRowTiles(kb, wT, w);
  Tile bias;
  if (hasBias) {
    const DramView b = kb.input("bias", 2);
    KernelBuilder::require(b.shape() == std::vector<int64_t>{1, E}, "bias must be [1, E]");
    bias = kb.sbufTile("bias", DType::float32, {E});
    loadBroadcastRow(kb, bias, b.at(0, 0));
  }
  const Tile experts = kb.sbufTile("expert_ids", DType::float32, {E});
  kb.iota(experts, 0, {{1, E}}, 0);

  TokenPrologue::Config pc;
  pc.H = H;
  pc.hiddenDtype = x.dtype();
  pc.xTdtype = mm;
  TokenPrologue prologue(kb, pc);
  TilePool xTs = kb.sbufPool("xT", mm, {KT, kPartitions}, 2);
  TilePool logitsPool = kb.sbufPool("logits", DType::float32, {Ew}, 2);
  TilePool work = kb.sbufPool("work", DType::float32, {Ew}, 1);
  TilePool valsPool = kb.sbufPool("top_values", DType::float32, {rounds * 8}, 2);
  TilePool idxPool = kb.sbufPool("top_index", indexOut.dtype(), {rounds * 8}, 2);
  TilePool idxF = kb.sbufPool("top_index_f32", DType::float32, {rounds * 8}, 1);
  TilePool affPool = kb.sbufPool("affinities", DType::float32, {E}, 2);
  TilePool scratch = kb.sbufPool("scratch", DType::float32, {E}, 2);
  TilePool cols = kb.sbufPool("row_stats", DType::float32, {4}, 2);
  TilePool lOut = logitsOut.dtype() == DType::float32 ? TilePool() : kb.sbufPool("logits_out", logitsOut.dtype(), {E}, 2);
  TilePool aOut = affOut.dtype() == DType::float32 ? TilePool() : kb.sbufPool("aff_out", affOut.dtype(), {E}, 2);
  PsumPool ps = kb.psumPool("logits", 2);

  // Stores an fp32 [rows, E] result, converted by an engine copy unless the output is fp32.
  auto storeRows = [&](const DramView& dst, const Tile& src, TilePool& conv) {
    if (dst.dtype() == DType::float32) return kb.store(dst, src);
    const Tile c = conv.next().rows(0, src.partitions());
    kb.copy(c, src);
    kb.store(dst, c);
  };

  for (int64_t t0 = 0; t0 < T; t0 += kPartitions) {
    const int64_t tn = std::min(kPartitions, T - t0);
    const Tile xT = xTs.next();
    prologue.transposedTokens({x, {}, std::nullopt}, xT, 0, t0, tn);
    const Tile logits = logitsPool.next().rows(0, tn);
    {
      auto sec = kb.section("logits");
      const Tile acc = ps.next(DType::float32, {E}).rows(0, tn);
      for (int64_t kt = 0; kt < KT; ++kt) {
        const int64_t kr = std::min(kPartitions, H - kt * kPartitions);
        kb.matmul(acc, xT.at(0, kt).rows(0, kr).cols(0, tn), wT.at(0, kt).rows(0, kr), kt == 0, kt == KT - 1);
      }
      if (hasBias)
        kb.tensorTensor(logits.cols(0, E), acc, bias.rows(0, tn), AluOp::add);
      else
        kb.copy(logits.cols(0, E), acc);
      if (Ew > E) kb.memset(logits.cols(E, Ew - E), kLowest);
      storeRows(logitsOut.slice(0, t0, tn), logits.cols(0, E), lOut);
    }
    const Tile vals = valsPool.next().rows(0, tn), idx = idxPool.next().rows(0, tn);
    {
      auto sec = kb.section("top_k");
      const Tile rest = work.next().rows(0, tn);
      kb.copy(rest, logits);
      for (int64_t r = 0; r < rounds; ++r) {
        kb.max8(vals.cols(8 * r, 8), rest);
        kb.matchReplace8(rest, rest, vals.cols(8 * r, 8), kLowest, idx.cols(8 * r, 8));
      }
      kb.store(indexOut.slice(0, t0, tn), idx.cols(0, k));
    }
    auto sec = kb.section("affinities");
    const Tile idxf = idxF.next().rows(0, tn), stat = cols.next().rows(0, tn), aff = affPool.next().rows(0, tn);
    kb.copy(idxf, idx);
    const Tile negMax = stat.cols(0, 1), sum = stat.cols(1, 1), inv = stat.cols(2, 1);
    auto normalise = [&](const Tile& t) {  // t /= sum(t) per row
      kb.reduce(sum, t, AluOp::add);
      kb.reciprocal(inv, sum);
      kb.tensorScalarPtr(t, t, AluOp::mult, inv);
    };
    // onehot(j) = (expert id == index j), times `by` when given.
    auto oneHot = [&](const Tile& out, int64_t j, std::optional<Tile> by) {
      kb.tensorScalarPtr(out, experts.rows(0, tn), AluOp::is_equal, idxf.cols(j, 1), by ? AluOp::mult : AluOp::bypass, by);
    };
    if (preNorm) {
      if (sigmoid) {
        kb.activation(aff, logits.cols(0, E), ActivationFunc::Sigmoid);
      } else {
        kb.tensorScalar(negMax, vals.cols(0, 1), AluOp::mult, -1.0);
        kb.activation(aff, logits.cols(0, E), ActivationFunc::Exp, Act().bias(negMax).accumulate(AccumCmd::ZeroAccumulate));
        kb.readAccumulator(sum);
        kb.reciprocal(inv, sum);
        kb.tensorScalarPtr(aff, aff, AluOp::mult, inv);
      }
      if (normTopk) {
        const Tile mask = scratch.next().rows(0, tn), hot = scratch.next().rows(0, tn);
        oneHot(mask, 0, std::nullopt);
        for (int64_t j = 1; j < k; ++j) {
          oneHot(hot, j, std::nullopt);
          kb.tensorTensor(mask, mask, hot, AluOp::add);
        }
        kb.tensorTensor(aff, aff, mask, AluOp::mult);
        normalise(aff);
      }
    } else {
      // Activate the k selected logits, then scatter them to their experts.
      const Tile top = vals.cols(0, k);
      const Tile act = scratch.next().rows(0, tn).cols(0, k);
      if (sigmoid) {
        kb.activation(act, top, ActivationFunc::Sigmoid);
      } else {
        kb.tensorScalar(negMax, vals.cols(0, 1), AluOp::mult, -1.0);
        kb.activation(act, top, ActivationFunc::Exp, Act().bias(negMax));
        normalise(act);
      }
      const Tile hot = scratch.next().rows(0, tn);
      oneHot(aff, 0, act.cols(0, 1));
      for (int64_t j = 1; j < k; ++j) {
        oneHot(hot, j, act.cols(j, 1));
        kb.tensorTensor(aff, aff, hot, AluOp::add);
      }
    }
    storeRows(affOut.slice(0, t0, tn), aff, aOut);
  }
}

}  // namespace

const LeafSignature kRouterTopKSignature{
    {intAttr("k", "", "experts per token, 1 <= k <= E"),
     enumAttr("act_fn", "RouterActFnType", {"SOFTMAX", "SIGMOID"}, "0", "the affinity function"),
     boolAttr("router_pre_norm", true, "act over all E logits (else over the k selected)"),
     boolAttr("norm_topk_prob", false, "with router_pre_norm: renormalise the k selected to sum 1")},
    {{"x", {"...", "H"}}, {"w", {"H", "E"}}, {"bias", {"1", "E"}, {}, 0, true}},
    {{"router_logits", {"...", "E"}}, {"expert_index", {"...", "k"}}, {"expert_affinities", {"...", "E"}}}};

WALRUS_REGISTER_LEAF("RouterTopK", expandRouterTopK,
                     "MoE router: logits = x @ w [+ b], top-k experts per token, softmax/sigmoid affinities",
                     kRouterTopKSignature);

}  // namespace walrus::kernels
