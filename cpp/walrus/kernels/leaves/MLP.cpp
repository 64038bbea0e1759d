// MLP: the fused (residual add +) (norm +) gated MLP of the BirCodeGenLoop MLP family.
//
//   out = (act(x @ Wg [+ bg]) * (x @ Wu [+ bu])) @ Wd [+ bd],   x = norm(hidden [+ residual]) * gamma
//
// Operands and attrs: the signature at the bottom of this file.
//
// Two tilings, chosen by is_tkg:
//   CTE (context encoding, many tokens): blocks of up to 512 tokens. The weights are the
//     stationary operand, the block's tokens the moving one (N = 512 per matmul, the PE's full
//     rate), so each weight tile is loaded once per block:
//       gT[i, t] = sum_h Wg[h, i]^T xT[h, t]       (I on partitions: biases are per-partition)
//       hT = act(gT + bg) * (uT + bu)              (ACT activation from PSUM, DVE multiply)
//       outT[h, t] = sum_i Wd[i, h]^T hT[i, t]     (+ bd per partition), transposed back and stored.
//   TKG (token generation, few tokens): up to 128 tokens are the stationary operand and the weights
//     stream through as the moving one, 512 columns at a time, straight from DRAM rows:
//       g[t, i] = sum_h xT[h, t]^T Wg[h, i],  h = act(g + bg) * (u + bu),  out[t, :] = hT^T Wd
//     The output lands token-major, so nothing is transposed back; the kernel is weight-DMA bound
//     and keeps 16 queues busy with large transfers.
// Weights stream through rotating pools (prefetch depth = bufs - 1); PSUM accumulators rotate over
// banks so the PE starts the next group while ACT/DVE drain the last one.
//
// Quantized MLPs (quant_kernel: fp8 weights with per-row scales and dynamic input quantisation)
// are not implemented by this leaf and are refused with a KernelError.
#include <algorithm>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/RowNorm.h"
#include "walrus/kernels/GatedMlp.h"
#include "walrus/kernels/TokenPrologue.h"
#include "walrus/kernels/TokenRows.h"
#include "walrus/kernels/leaves/ActivationFunctions.h"

namespace walrus::kernels {
namespace {

using namespace bir;

struct MlpSpec {
  NormType norm = NormType::None;
  double eps = 1e-6;
  bool storeAdd = false, skipGate = false, gateBias = false, upBias = false, downBias = false, tkg = false;
  ActivationFunc act = ActivationFunc::Silu;
  // Operands ([tokens, H] token views come from tokenSegments).
  DramView hidden, residual, gamma, gate, up, down, gateB, upB, downB, out, addOut;
  int64_t H = 0, I = 0;
  DType mm = DType::bfloat16;  // the matmul dtype
};

MlpSpec readMlpSpec(KernelBuilder& kb) {
  KernelAttrs& attrs = kb.attrs();
  MlpSpec s;
  s.norm = fusedNormType(attrs);
  s.eps = attrs.number("eps");
  s.storeAdd = attrs.flag("store_add");
  s.skipGate = attrs.flag("skip_gate");
  s.gateBias = attrs.flag("gate_bias");
  s.upBias = attrs.flag("up_bias");
  s.downBias = attrs.flag("down_bias");
  s.tkg = attrs.flag("is_tkg");
  s.act = mlpActivation(attrs.choice("act_fn"));
  KernelBuilder::require(!attrs.flag("quant_kernel"),
                         "quant_kernel: quantized MLPs (fp8 weights with row scales) are not implemented by the MLP leaf");
  const double lowerBound = attrs.number("lower_bound");
  KernelBuilder::require(lowerBound == 0.0, "lower_bound " + std::to_string(lowerBound) +
                                                " clips quantized inputs; it needs quant_kernel, which this leaf does not take");
  KernelBuilder::require(!(s.skipGate && s.gateBias), "gate_bias with skip_gate: there is no gate projection");

  s.hidden = kb.input("hidden", 3);
  s.H = s.hidden.dim(2);
  const std::vector<int64_t> tokens = s.hidden.shape();
  auto sameAsHidden = [&](const DramView& v, const std::string& what) {
    KernelBuilder::require(v.shape() == tokens, what + " must have hidden's shape [B, S, H]");
  };
  if (s.storeAdd) sameAsHidden(s.residual = kb.input("residual", 3), "residual");
  const DramView lnw = kb.input("ln_w", 2);
  KernelBuilder::require(lnw.shape() == std::vector<int64_t>{1, s.H}, "ln_w must be [1, H] = [1, " + std::to_string(s.H) + "]");
  s.gamma = lnw.at(0, 0);
  if (!s.skipGate) s.gate = kb.input("gate_w", 2);
  s.up = kb.input("up_w", 2);
  s.down = kb.input("down_w", 2);
  s.I = s.up.dim(1);
  const std::vector<int64_t> hi{s.H, s.I};
  KernelBuilder::require(s.up.shape() == hi, "up_w must be [H, I]");
  KernelBuilder::require(s.skipGate || s.gate.shape() == hi, "gate_w must be [H, I] like up_w");
  KernelBuilder::require(s.down.shape() == std::vector<int64_t>{s.I, s.H}, "down_w must be [I, H]");
  auto bias = [&](bool present, const char* role, int64_t n) {
    if (!present) return DramView();
    const DramView v = kb.input(role, 2);
    KernelBuilder::require(v.shape() == std::vector<int64_t>{1, n}, std::string(role) + " must be [1, " + std::to_string(n) + "]");
    return v.at(0, 0);
  };
  s.gateB = bias(s.gateBias, "gate_b", s.I);
  s.upB = bias(s.upBias, "up_b", s.I);
  s.downB = bias(s.downBias, "down_b", s.H);
  sameAsHidden(s.out = kb.output("out", 3), "out");
  if (s.storeAdd) sameAsHidden(s.addOut = kb.output("add_out", 3), "add_out");

  const DType w = s.up.dtype();
  KernelBuilder::require((s.skipGate || s.gate.dtype() == w) && s.down.dtype() == w,
                         "gate_w, up_w and down_w must share one dtype");
  s.mm = kb.matmulDtype(w == DType::float32 ? DType::float32 : w);
  return s;
}

// ---- CTE: weights stationary, token blocks moving ----

class MlpCte {
 public:
  MlpCte(KernelBuilder& kb, const MlpSpec& s) : kb_(kb), s_(s) {
    w_.gate = s.gate;
    w_.up = s.up;
    w_.act = s.act;
    w_.skipGate = s.skipGate;
    w_.mm = s.mm;
  }

  void loadBiases() {
    if (s_.gateBias) w_.gateBias = loadColumnChunks(kb_, "gate_b", s_.gateB);
    if (s_.upBias) w_.upBias = loadColumnChunks(kb_, "up_b", s_.upB);
    if (s_.downBias) downBias_ = loadColumnChunks(kb_, "down_b", s_.downB);
  }

  void run(const TokenRowsIn& rows, const DramView& outRows, TokenPrologue& prologue) {
    const int64_t KT = ceilDiv(s_.H, kPartitions), IT = ceilDiv(s_.I, kPartitions), T = outRows.dim(0);
    const int64_t phase = std::max({prologue.stagingBytes(), gatedActivationsBytes(w_, kMaxMoving),
                                    downProjectBytes(s_.mm, s_.out.dtype(), kMaxMoving)});
    const int64_t tb = tokenBlock(kb_, T, (KT + IT) * dtypeSize(s_.mm), phase);
    for (int64_t t0 = 0; t0 < T; t0 += tb) {
      const int64_t tn = std::min(tb, T - t0);
      auto block = kb_.scope();
      const Tile xT = kb_.sbufTile("xT", s_.mm, {KT, tb});
      const Tile hT = kb_.sbufTile("hT", s_.mm, {IT, tb});
      prologue.transposedTokens(rows, xT, 0, t0, tn);
      gatedActivationsT(kb_, w_, xT, hT, tn);
      downProjectAndStore(kb_, {{s_.down, hT}}, downBias_, outRows, t0, tn, s_.mm);
    }
  }

 private:
  KernelBuilder& kb_;
  const MlpSpec& s_;
  GatedMlpWeights w_;
  Tile downBias_;
};

// ---- TKG: tokens stationary, weights moving ----

class MlpTkg {
 public:
  MlpTkg(KernelBuilder& kb, const MlpSpec& s) : kb_(kb), s_(s), KT_(ceilDiv(s.H, kPartitions)), IT_(ceilDiv(s.I, kPartitions)) {}

  void loadBiases() {
    // Biases run along the free axis here: broadcast rows.
    auto row = [&](bool present, const char* name, const DramView& v, int64_t n) {
      if (!present) return Tile();
      const Tile t = kb_.sbufTile(name, DType::float32, {n});
      loadBroadcastRow(kb_, t, v);
      return t;
    };
    gateBias_ = row(s_.gateBias, "gate_b", s_.gateB, s_.I);
    upBias_ = row(s_.upBias, "up_b", s_.upB, s_.I);
    downBias_ = row(s_.downBias, "down_b", s_.downB, s_.H);
  }

  void run(const TokenRowsIn& rows, const DramView& outRows, TokenPrologue& prologue) {
    const int64_t T = outRows.dim(0);
    for (int64_t t0 = 0; t0 < T; t0 += kPartitions) {
      const int64_t tn = std::min(kPartitions, T - t0);
      auto block = kb_.scope();
      const Tile xT = kb_.sbufTile("xT", s_.mm, {KT_, kPartitions});
      const Tile hT = kb_.sbufTile("hT", s_.mm, {IT_, kPartitions});
      prologue.transposedTokens(rows, xT, 0, t0, tn);
      gateUp(xT, hT, tn);
      down(hT, outRows, t0, tn);
    }
  }

 private:
  static constexpr int64_t kPieceTiles = 4;
  static constexpr int kBufs = 4;

  void gateUp(const Tile& xT, const Tile& hT, int64_t tn) {
    auto phase = kb_.scope();
    const WeightLoads loads{kPieceTiles, ceilDiv(KT_, kPieceTiles), kMaxMoving, s_.I};
    const int64_t reserved = 4 * kMaxMoving * dtypeSize(DType::float32) + s_.I * dtypeSize(s_.mm);  // tmp, h
    const int64_t cols = weightColumns(kb_, s_.mm, loads, s_.skipGate ? 1 : 2, weightBudget(kb_, reserved));
    const int bufs = weightBufs(loads, cols, kBufs);
    WeightStream uw(kb_, kb_.sbufPool("up_w", s_.mm, {kPieceTiles, cols}, bufs));
    WeightStream gw(kb_, s_.skipGate ? TilePool() : kb_.sbufPool("gate_w", s_.mm, {kPieceTiles, cols}, bufs));
    uw.plan({s_.up}, 0, s_.I, kMaxMoving);
    if (!s_.skipGate) gw.plan({s_.gate}, 0, s_.I, kMaxMoving);
    TilePool tmp = kb_.sbufPool("act_tmp", DType::float32, {kMaxMoving}, 4);
    const Tile h = kb_.sbufTile("h", s_.mm, {s_.I});
    PsumPool gps = kb_.psumPool("gate_acc", 2);
    PsumPool ups = kb_.psumPool("up_acc", 2);
    PsumPool tps = kb_.psumPool("transpose", 2);
    for (int64_t i0 = 0; i0 < s_.I; i0 += kMaxMoving) {
      const int64_t iw = std::min(kMaxMoving, s_.I - i0);
      const Tile hc = h.rows(0, tn).cols(i0, iw);
      const Tile pu = ups.next(DType::float32, {iw}).rows(0, tn);
      {
        auto sec = kb_.section("up_proj");
        projectWeightsMoving(kb_, pu, uw, xT, tn);
      }
      auto plusBias = [&](const Tile& acc, const Tile& bias) {
        if (!bias.location()) return acc;
        const Tile t = tmp.next().rows(0, tn).cols(0, iw);
        kb_.tensorTensor(t, acc, bias.rows(0, tn).cols(i0, iw), AluOp::add);
        return t;
      };
      if (s_.skipGate) {
        auto sec = kb_.section("act");
        kb_.activation(hc, plusBias(pu, upBias_), s_.act);
        continue;
      }
      const Tile pg = gps.next(DType::float32, {iw}).rows(0, tn);
      {
        auto sec = kb_.section("gate_proj");
        projectWeightsMoving(kb_, pg, gw, xT, tn);
      }
      auto sec = kb_.section("act");
      const Tile g = tmp.next().rows(0, tn).cols(0, iw);
      kb_.activation(g, plusBias(pg, gateBias_), s_.act);
      kb_.tensorTensor(hc, plusBias(pu, upBias_), g, AluOp::mult);
    }
    auto sec = kb_.section("transpose_h");
    transposeInto(kb_, tps, hT.slice(1, 0, tn), h.rows(0, tn), Engine::Activation);
  }

  void down(const Tile& hT, const DramView& outRows, int64_t t0, int64_t tn) {
    auto phase = kb_.scope();
    const WeightLoads loads{kPieceTiles, ceilDiv(IT_, kPieceTiles), kMaxMoving, s_.H};
    const int64_t cols = weightColumns(kb_, s_.mm, loads, 1, weightBudget(kb_, 3 * kMaxMoving * dtypeSize(s_.out.dtype())));
    WeightStream dw(kb_, kb_.sbufPool("down_w", s_.mm, {kPieceTiles, cols}, weightBufs(loads, cols, kBufs)));
    dw.plan({s_.down}, 0, s_.H, kMaxMoving);
    TilePool os = kb_.sbufPool("out", s_.out.dtype(), {kMaxMoving}, 3);
    PsumPool acc = kb_.psumPool("down_acc", 2);
    EvacuationEngines evac;
    for (int64_t c0 = 0; c0 < s_.H; c0 += kMaxMoving) {
      const int64_t cw = std::min(kMaxMoving, s_.H - c0);
      const Tile po = acc.next(DType::float32, {cw}).rows(0, tn);
      {
        auto sec = kb_.section("down_proj");
        projectWeightsMoving(kb_, po, dw, hT, tn);
      }
      auto sec = kb_.section("store");
      const Tile o = os.next().rows(0, tn).cols(0, cw);
      if (downBias_.location())
        kb_.tensorTensor(o, po, downBias_.rows(0, tn).cols(c0, cw), AluOp::add);
      else
        evacuate(kb_, o, po, evac.next());
      kb_.store(outRows.slice(0, t0, tn).slice(1, c0, cw), o);
    }
  }

  KernelBuilder& kb_;
  const MlpSpec& s_;
  int64_t KT_, IT_;
  Tile gateBias_, upBias_, downBias_;
};

void expandMLP(KernelBuilder& kb) {
  const MlpSpec s = readMlpSpec(kb);
  std::vector<DramView> tokenViews{s.hidden, s.out};
  if (s.storeAdd) tokenViews.push_back(s.residual), tokenViews.push_back(s.addOut);
  TokenPrologue::Config pc;
  pc.H = s.H;
  pc.hiddenDtype = s.hidden.dtype();
  pc.addends = s.storeAdd ? 1 : 0;
  pc.norm = s.norm;
  pc.eps = s.eps;
  pc.gamma = s.gamma;
  pc.xTdtype = s.mm;
  TokenPrologue prologue(kb, pc);
  MlpCte cte(kb, s);
  MlpTkg tkg(kb, s);
  if (s.tkg)
    tkg.loadBiases();
  else
    cte.loadBiases();
  for (const auto& seg : tokenSegments(tokenViews)) {
    TokenRowsIn rows{seg[0], {}, std::nullopt};
    if (s.storeAdd) rows.addends = {seg[2]}, rows.sumOut = seg[3];
    if (s.tkg)
      tkg.run(rows, seg[1], prologue);
    else
      cte.run(rows, seg[1], prologue);
  }
}

}  // namespace

// The attrs in the order BirCodeGenLoop's MLP family emits them (seed 000's roster, then eps and
// is_tkg); gate_bias is beyond the seed's roster, so it is emitted only when set.
const LeafSignature kMlpSignature{
    {boolAttr("fused_rmsnorm", false, "NxDI's norm flag: true = RMS norm unless norm_type says otherwise"),
     enumAttr("norm_type", "NormType", normTypeNames(), "0", "the norm in front of the projections (RowNorm.h)"),
     boolAttr("store_add", false, "add residual to hidden first and store the sum as add_out"),
     boolAttr("quant_kernel", false, "fp8 weights with row scales (refused by this leaf)"),
     floatAttr("lower_bound", "0.0", "clips quantized inputs (needs quant_kernel)"),
     boolAttr("skip_gate", false, "no gate projection: out = act(x @ Wu [+ bu]) @ Wd"),
     enumAttr("act_fn", "ActFnType", mlpActivationNames(), "0", "the gate activation (Swish = x * sigmoid(1.702 x))"),
     [] {
       AttrSig a = boolAttr("gate_bias", false, "gate_b is given (not with skip_gate)");
       a.only_when_set = true;
       return a;
     }(),
     boolAttr("up_bias", false, "up_b is given"),
     boolAttr("down_bias", false, "down_b is given"),
     floatAttr("eps", "1e-06", "the norm's epsilon"),
     [] {
       AttrSig a = boolAttr("is_tkg", false, "the token-generation tiling: B*S < TKG_BS_SEQLEN_THRESHOLD");
       a.from_codegen = true;
       return a;
     }()},
    {{"hidden", {"B", "S", "H"}},
     {"residual", {"B", "S", "H"}, {"store_add"}},
     {"ln_w", {"1", "H"}},
     {"gate_w", {"H", "I"}, {"!skip_gate"}},
     {"gate_w_scale", {"num_partitions", "I"}, {"!skip_gate", "quant_kernel"}},
     {"up_w", {"H", "I"}},
     {"up_w_scale", {"num_partitions", "I"}, {"quant_kernel"}},
     {"down_w", {"I", "H"}},
     {"down_w_scale", {"num_partitions", "H"}, {"quant_kernel"}},
     {"gate_b", {"1", "I"}, {"gate_bias"}},
     {"up_b", {"1", "I"}, {"up_bias"}},
     {"down_b", {"1", "H"}, {"down_bias"}}},
    {{"out", {"B", "S", "H"}}, {"add_out", {"B", "S", "H"}, {"store_add"}}}};

WALRUS_REGISTER_LEAF("MLP", expandMLP,
                     "out = (act(x @ Wg [+bg]) * (x @ Wu [+bu])) @ Wd [+bd], x = norm(hidden [+ residual]); CTE and TKG tilings",
                     kMlpSignature);

}  // namespace walrus::kernels
