// QKV: the fused (residual adds +) (norm +) QKV projection of the BirCodeGenLoop NormQKV family.
//
//   qkv = norm(hidden [+ residuals]) * gamma @ Wqkv [+ bias],   I = (nq + 2 nkv) * d
//
// Operands and attrs: the signature at the bottom of this file (N = nq + 2 nkv heads: q heads,
// then k, then v; the residuals are added to hidden first, as nkilib's mlp_prev / attention_prev).
//
// Tilings as the MLP's projections (see MLP.cpp): CTE keeps the weights stationary and streams
// blocks of up to 512 tokens, producing qkvT [I, tokens] (the bias a per-partition scalar of the
// evacuation); NBdS wants exactly that layout and is stored as is, BSD and NBSd are transposed
// back on the PE. TKG keeps up to 128 tokens stationary and streams the weights, producing
// token-major rows.
#include <algorithm>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/Projection.h"
#include "walrus/kernels/RowNorm.h"
#include "walrus/kernels/TokenPrologue.h"
#include "walrus/kernels/TokenRows.h"

namespace walrus::kernels {
namespace {

using namespace bir;

enum class Layout : int64_t { BSD = 0, NBSd = 1, NBdS = 2 };

struct QkvSpec {
  NormType norm = NormType::RMS;
  double eps = 1e-6;
  bool tkg = false;
  Layout layout = Layout::BSD;
  int64_t heads = 0, d = 0, H = 0, I = 0;
  DramView hidden, weights, gamma, bias, out;
  std::vector<DramView> residuals;
  DType mm = DType::bfloat16;
};

QkvSpec readQkvSpec(KernelBuilder& kb) {
  KernelAttrs& attrs = kb.attrs();
  QkvSpec s;
  const int64_t nq = attrs.integer("num_q_heads"), nkv = attrs.integer("num_kv_heads");
  s.d = attrs.integer("d_head");
  KernelBuilder::require(nq % nkv == 0, "num_kv_heads " + std::to_string(nkv) + " does not divide num_q_heads " +
                                            std::to_string(nq));
  s.heads = nq + 2 * nkv;
  s.norm = fusedNormType(attrs);
  s.eps = attrs.number("eps");
  s.tkg = attrs.flag("useTkgQKVKernel");
  s.layout = static_cast<Layout>(attrs.choice("output_layout"));
  const bool hasBias = attrs.flag("bias");

  s.hidden = kb.input("hidden", 3);
  for (int r = 0; kb.hasInput("residual" + std::to_string(r)); ++r) {
    s.residuals.push_back(kb.input("residual" + std::to_string(r), 3));
    KernelBuilder::require(s.residuals.back().shape() == s.hidden.shape(), "residuals must have hidden's shape");
  }
  s.weights = kb.input("qkv_w", 2);
  s.H = s.hidden.dim(2);
  s.I = s.heads * s.d;
  KernelBuilder::require(s.weights.shape() == std::vector<int64_t>{s.H, s.I},
                         "qkv_w must be [H, (nq + 2 nkv) * d] = [" + std::to_string(s.H) + ", " + std::to_string(s.I) + "]");
  const DramView normW = kb.input("norm_w", 2);
  KernelBuilder::require(normW.shape() == std::vector<int64_t>{1, s.H}, "norm_w must be [1, H]");
  s.gamma = normW.at(0, 0);
  if (hasBias) {
    const DramView b = kb.input("bias", 2);
    KernelBuilder::require(b.shape() == std::vector<int64_t>{1, s.I}, "bias must be [1, I]");
    s.bias = b.at(0, 0);
  }
  const int64_t B = s.hidden.dim(0), S = s.hidden.dim(1);
  s.out = kb.output("out");
  // The output as [B, S, N, d] whatever its layout.
  std::vector<int64_t> expected;
  switch (s.layout) {
    case Layout::BSD:
      expected = {B, S, s.I};
      KernelBuilder::require(s.out.shape() == expected, "out (BSD) must be [B, S, I]");
      s.out = s.out.split(2, s.d);
      break;
    case Layout::NBSd:
      expected = {s.heads, B, S, s.d};
      KernelBuilder::require(s.out.shape() == expected, "out (NBSd) must be [N, B, S, d]");
      s.out = s.out.permute({1, 2, 0, 3});
      break;
    case Layout::NBdS:
      expected = {s.heads, B, s.d, S};
      KernelBuilder::require(s.out.shape() == expected, "out (NBdS) must be [N, B, d, S]");
      s.out = s.out.permute({1, 3, 0, 2});
      break;
  }
  const DType w = s.weights.dtype();
  s.mm = kb.matmulDtype(w);
  return s;
}

// Stores columns [c0, c0 + cw) of the token rows [t0, t0 + rows) of one token segment of the
// output ([T, N, d]), one DMA per head the columns touch. `tile` is [rows, cw] (token-major) or,
// transposed, [cw, rows] (column-major, the CTE's natural layout).
void storeColumns(KernelBuilder& kb, const DramView& seg, int64_t d, int64_t t0, int64_t rows, int64_t c0, int64_t cw,
                  const Tile& tile, bool transposed) {
  for (int64_t c = c0; c < c0 + cw;) {
    const int64_t head = c / d, j = c % d, len = std::min(d - j, c0 + cw - c);
    const DramView dst = seg.slice(0, t0, rows).at(1, head).slice(1, j, len);
    if (transposed)
      kb.store(dst.permute({1, 0}), tile.rows(c - c0, len));
    else
      kb.store(dst, tile.cols(c - c0, len));
    c += len;
  }
}

// `bias`: [128, ceil(I / 128)] per-partition columns, or empty.
void runCte(KernelBuilder& kb, const QkvSpec& s, TokenPrologue& prologue, const TokenRowsIn& rows, const DramView& out,
            const Tile& bias) {
  const int64_t KT = ceilDiv(s.H, kPartitions), IT = ceilDiv(s.I, kPartitions), T = out.dim(0);
  const int64_t weightBytes = kWeightLoadsInFlight * std::min(KT, kWeightPieceTiles) * kPartitions * dtypeSize(s.mm);
  const int64_t tb = tokenBlock(kb, T, KT * dtypeSize(s.mm),
                                std::max(prologue.stagingBytes(), weightBytes + 4 * kMaxMoving * dtypeSize(s.out.dtype())));
  for (int64_t t0 = 0; t0 < T; t0 += tb) {
    const int64_t tn = std::min(tb, T - t0);
    auto block = kb.scope();
    const Tile xT = kb.sbufTile("xT", s.mm, {KT, tb});
    prologue.transposedTokens(rows, xT, 0, t0, tn);
    auto phase = kb.scope();
    auto sec = kb.section("qkv_proj");
    const int64_t pieceTiles = std::min(KT, kWeightPieceTiles);
    const WeightLoads loads{pieceTiles, ceilDiv(KT, pieceTiles), kPartitions, s.I};
    const int64_t cols = weightColumns(kb, s.mm, loads, 1, weightBudget(kb, 4 * kMaxMoving * dtypeSize(s.out.dtype())));
    WeightStream w(kb, kb.sbufPool("qkv_w", s.mm, {pieceTiles, cols}, weightBufs(loads, cols, kWeightLoadsInFlight)));
    w.plan({s.weights}, 0, s.I, kPartitions);
    TilePool outT = kb.sbufPool("qkvT", s.out.dtype(), {kMaxMoving}, 2);
    TilePool outRows = kb.sbufPool("qkv", s.out.dtype(), {kMaxMoving / kPartitions, kPartitions}, 2);
    PsumPool acc = kb.psumPool("acc", 2);
    PsumPool tps = kb.psumPool("transpose", 2);
    EvacuationEngines evac;
    for (int64_t it = 0; it < IT; ++it) {
      const int64_t c0 = it * kPartitions, cw = std::min(kPartitions, s.I - c0);
      const Tile ps = acc.next(DType::float32, {tn}).rows(0, cw);
      projectWeightsStationary(kb, ps, w, xT, tn);
      const Tile ot = outT.next().rows(0, cw).cols(0, tn);
      if (bias.location())
        kb.activation(ot, ps, ActivationFunc::Identity, Act().bias(bias.rows(0, cw).cols(it, 1)));
      else
        evacuate(kb, ot, ps, Engine::Activation);
      if (s.layout == Layout::NBdS) {
        storeColumns(kb, out, s.d, t0, tn, c0, cw, ot, true);
        continue;
      }
      const Tile o = outRows.next();
      transposeInto(kb, tps, o.slice(0, 0, ceilDiv(tn, kPartitions)).slice(1, 0, cw), ot, evac.next());
      for (int64_t r = 0; r < tn; r += kPartitions) {
        const int64_t rr = std::min(kPartitions, tn - r);
        storeColumns(kb, out, s.d, t0 + r, rr, c0, cw, o.at(0, r / kPartitions).rows(0, rr).cols(0, cw), false);
      }
    }
  }
}

// `bias`: [128, I] broadcast rows, or empty.
void runTkg(KernelBuilder& kb, const QkvSpec& s, TokenPrologue& prologue, const TokenRowsIn& rows, const DramView& out,
            const Tile& bias) {
  const int64_t KT = ceilDiv(s.H, kPartitions), T = out.dim(0);
  for (int64_t t0 = 0; t0 < T; t0 += kPartitions) {
    const int64_t tn = std::min(kPartitions, T - t0);
    auto block = kb.scope();
    const Tile xT = kb.sbufTile("xT", s.mm, {KT, kPartitions});
    prologue.transposedTokens(rows, xT, 0, t0, tn);
    auto sec = kb.section("qkv_proj");
    const WeightLoads loads{4, ceilDiv(KT, 4), kMaxMoving, s.I};
    const int64_t cols = weightColumns(kb, s.mm, loads, 1, weightBudget(kb, 3 * kMaxMoving * dtypeSize(s.out.dtype())));
    WeightStream w(kb, kb.sbufPool("qkv_w", s.mm, {4, cols}, weightBufs(loads, cols, 4)));
    w.plan({s.weights}, 0, s.I, kMaxMoving);
    TilePool os = kb.sbufPool("qkv", s.out.dtype(), {kMaxMoving}, 3);
    PsumPool acc = kb.psumPool("acc", 2);
    EvacuationEngines evac;
    for (int64_t c0 = 0; c0 < s.I; c0 += kMaxMoving) {
      const int64_t cw = std::min(kMaxMoving, s.I - c0);
      const Tile ps = acc.next(DType::float32, {cw}).rows(0, tn);
      projectWeightsMoving(kb, ps, w, xT, tn);
      const Tile o = os.next().rows(0, tn).cols(0, cw);
      if (bias.location())
        kb.tensorTensor(o, ps, bias.rows(0, tn).cols(c0, cw), AluOp::add);
      else
        evacuate(kb, o, ps, evac.next());
      storeColumns(kb, out, s.d, t0, tn, c0, cw, o, false);
    }
  }
}

void expandQKV(KernelBuilder& kb) {
  const QkvSpec s = readQkvSpec(kb);
  TokenPrologue::Config pc;
  pc.H = s.H;
  pc.hiddenDtype = s.hidden.dtype();
  pc.addends = static_cast<int>(s.residuals.size());
  pc.norm = s.norm;
  pc.eps = s.eps;
  pc.gamma = s.gamma;
  pc.xTdtype = s.mm;
  TokenPrologue prologue(kb, pc);
  Tile bias;
  if (s.bias.location() && s.tkg) {
    bias = kb.sbufTile("bias", DType::float32, {s.I});
    loadBroadcastRow(kb, bias, s.bias);
  } else if (s.bias.location()) {
    bias = loadColumnChunks(kb, "bias", s.bias);
  }
  std::vector<DramView> tokenViews{s.hidden, s.out};
  for (const auto& r : s.residuals) tokenViews.push_back(r);
  for (const auto& seg : tokenSegments(tokenViews)) {
    TokenRowsIn rows{seg[0], std::vector<DramView>(seg.begin() + 2, seg.end()), std::nullopt};
    if (s.tkg)
      runTkg(kb, s, prologue, rows, seg[1], bias);
    else
      runCte(kb, s, prologue, rows, seg[1], bias);
  }
}

}  // namespace

// The attrs in the order BirCodeGenLoop's NormQKV family emits them. The residuals are a variadic
// operand (the NormQKV family's residual_adds says how many it passes; the seed's attr roster has
// no such attr, so the node carries the count as its operands).
const LeafSignature kQkvSignature{
    {boolAttr("fused_rmsnorm", true, "NxDI's norm flag: true = RMS norm unless norm_type says otherwise"),
     enumAttr("norm_type", "NormType", normTypeNames(), "1", "the norm in front of the projection (RowNorm.h)"),
     enumAttr("output_layout", "QKVOutputLayout", {"BSD", "NBSd", "NBdS"}, "0", "how out is laid out"),
     intAttr("num_q_heads", "", "query heads", true, 1),
     intAttr("num_kv_heads", "", "key and value heads each; divides num_q_heads", true, 1),
     intAttr("d_head", "", "the head dim d", true, 1),
     boolAttr("bias", false, "bias is given"),
     floatAttr("eps", "1e-06", "the norm's epsilon"),
     [] {
       AttrSig a = boolAttr("useTkgQKVKernel", false, "the token-generation tiling: B*S < TKG_BS_SEQLEN_THRESHOLD");
       a.from_codegen = true;
       return a;
     }()},
    {{"hidden", {"B", "S", "H"}},
     {"residual", {"B", "S", "H"}, {}, 2},
     {"qkv_w", {"H", "I"}},
     {"norm_w", {"1", "H"}},
     {"bias", {"1", "I"}, {"bias"}}},
    {{"out", {"B", "S", "I"}, {"output_layout=BSD"}},
     {"out", {"N", "B", "S", "d"}, {"output_layout=NBSd"}},
     {"out", {"N", "B", "d", "S"}, {"output_layout=NBdS"}}}};

WALRUS_REGISTER_LEAF("QKV", expandQKV,
                     "qkv = norm(hidden [+ residuals]) @ Wqkv [+ bias] in layout BSD, NBSd or NBdS; CTE and TKG tilings",
                     kQkvSignature);

}  // namespace walrus::kernels
