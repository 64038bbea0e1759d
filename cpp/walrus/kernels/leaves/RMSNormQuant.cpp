// QuantOnly: (RMS norm +) fp8 quantisation of each token row (nkilib's rmsnorm_quant_kernel).
//
//   x = rms_norm(hidden) * gamma                    (norm_type RMS_NORM; NO_NORM: x = hidden)
//   ROW:    a = max|x| (min lower_bound, and x clipped to +-lower_bound, when lower_bound > 0)
//           dq = max(a / fp8_max, 1e-6);  out[t] = [fp8(x / dq) (H bytes), dq as fp32 (4 bytes)]
//   STATIC: out[t] = fp8(x / in_scale)              (saturating)
//
//   Operands and attrs: the signature at the bottom of this file; out is fp8 (fp8_max: 240 for
//   float8e4, 57344 for float8e5); hidden may also be [rows, H].
//
// Tiles of 128 rows, software-pipelined three deep (load, norm, quantize), the passes over a row
// spread over the engines: ACT squares and sums it and scales it by 1/rms, Pool multiplies by
// gamma and quantizes, DVE finds max and min. The dequant scale is written into the row's last 4 bytes
// through an fp32 view of the fp8 tile, so each row leaves in one DMA.
#include <algorithm>

#include "walrus/kernels/KernelBuilder.h"
#include "walrus/kernels/LeafRegistry.h"
#include "walrus/kernels/RowNorm.h"
#include "walrus/kernels/TileOps.h"
#include "walrus/kernels/TokenRows.h"

namespace walrus::kernels {
namespace {

using namespace bir;

constexpr int64_t kRow = 2;  // QuantizationType::ROW
constexpr double kMinDequantScale = 1e-6;  // nkilib: keeps the reciprocal of tiny rows finite

double fp8Max(DType t) {
  switch (t) {
    case DType::float8e4: return 240.0;
    case DType::float8e5: return 57344.0;
    case DType::float8e3: return 15.5;
    default: throw KernelError("out must be an fp8 tensor (float8e4, float8e5, float8e3), not " +
                               std::string(enumName(t)));
  }
}

void expandRMSNormQuant(KernelBuilder& kb) {
  KernelAttrs& attrs = kb.attrs();
  const auto norm = static_cast<NormType>(attrs.choice("norm_type"));  // NO_NORM or RMS_NORM
  const int64_t quant = attrs.choice("quantization_type");               // STATIC or ROW
  const double lowerBound = attrs.number("lower_bound"), eps = attrs.number("eps");
  KernelBuilder::require(lowerBound >= 0, "lower_bound " + std::to_string(lowerBound) + "; expected >= 0");
  const bool row = quant == kRow, clip = row && lowerBound > 1e-6;

  const DramView hidden = kb.input("hidden");
  KernelBuilder::require(hidden.rank() >= 2, "hidden must have rank >= 2 (rows along the last dim)");
  const int64_t H = hidden.dim(hidden.rank() - 1);
  const DramView lnw = kb.input("ln_w", 2);
  KernelBuilder::require(lnw.shape() == std::vector<int64_t>{1, H}, "ln_w must be [1, H]");
  const DramView out = kb.output("out");
  std::vector<int64_t> expected = hidden.shape();
  if (row) expected.back() += 4;
  KernelBuilder::require(out.shape() == expected, std::string("out must be hidden's shape") + (row ? " with H + 4" : ""));
  const double qmax = fp8Max(out.dtype());

  std::vector<std::vector<DramView>> segments;
  if (hidden.rank() == 2)
    segments = {{hidden, out}};
  else
    segments = tokenSegments({hidden, out});

  Tile gamma, staticScale;
  if (norm == NormType::RMS) {
    gamma = kb.sbufTile("gamma", DType::float32, {H});
    loadBroadcastRow(kb, gamma, lnw.at(0, 0));
  }
  if (!row) {
    const DramView in = kb.input("in_scale", 2);
    KernelBuilder::require(in.shape() == std::vector<int64_t>{kPartitions, 1}, "in_scale must be [128, 1]");
    staticScale = kb.sbufTile("quant_scale", DType::float32, {1});
    kb.load(staticScale, in);
    kb.reciprocal(staticScale, staticScale);
  }
  // Row layout in SBUF: H values, padding to 4 bytes, the fp32 scale.
  const int64_t scaleAt = (H + 3) / 4 * 4;
  TilePool xs = kb.sbufPool("x", DType::float32, {H}, 3);
  TilePool scratch = kb.sbufPool("squares", DType::bfloat16, {H}, 1);
  TilePool qs = kb.sbufPool("q", out.dtype(), {scaleAt + 4}, 2);
  TilePool stats = kb.sbufPool("stats", DType::float32, {4}, 3);

  struct RowTile {
    DramView out;
    int64_t rows = 0;
    Tile x, st;
  };
  auto load = [&](const DramView& in, const DramView& o, int64_t t0) {
    RowTile r{o.slice(0, t0, std::min(kPartitions, in.dim(0) - t0)), 0, Tile(), Tile()};
    r.rows = r.out.dim(0);
    r.x = xs.next().rows(0, r.rows);
    r.st = stats.next().rows(0, r.rows);
    kb.load(r.x, in.slice(0, t0, r.rows));
    return r;
  };
  // x <- rms_norm(x) * gamma: ACT squares and sums the row, Pool multiplies by gamma meanwhile, ACT
  // scales by 1/rms.
  auto normalize = [&](const RowTile& r) {
    if (norm != NormType::RMS) return;
    auto sec = kb.section("norm");
    const Tile rstd = r.st.cols(0, 1);
    kb.activation(scratch.next().rows(0, r.rows), r.x, ActivationFunc::Square, Act().accumulate(AccumCmd::ZeroAccumulate));
    kb.readAccumulator(rstd);
    kb.tensorScalar(rstd, rstd, AluOp::mult, 1.0 / static_cast<double>(H), AluOp::add, eps);
    kb.tensorScalar(rstd, rstd, AluOp::rsqrt, 0.0);
    kb.tensorTensor(r.x, r.x, gamma.rows(0, r.rows), AluOp::mult, Engine::Pool);
    kb.activation(r.x, r.x, ActivationFunc::Copy, Act().scaleBy(rstd));
  };
  auto quantize = [&](const RowTile& r) {
    auto sec = kb.section("quantize");
    const Tile q = qs.next().rows(0, r.rows);
    if (!row) {
      kb.tensorScalarPtr(q.cols(0, H), r.x, AluOp::mult, staticScale.rows(0, r.rows), AluOp::bypass, std::nullopt, 0.0,
                         Engine::Pool);
      kb.store(r.out, q.cols(0, H));
      return;
    }
    // |x|max = max(max x, -min x): two DVE passes, no |x| pass.
    const Tile hi = r.st.cols(1, 1), negLo = r.st.cols(2, 1), quantScale = r.st.cols(3, 1);
    kb.reduce(hi, r.x, AluOp::max);
    kb.reduce(negLo, r.x, AluOp::min, ReduceAxis::X, /*negate=*/true);
    kb.tensorTensor(hi, hi, negLo, AluOp::max);
    if (clip) {
      kb.tensorScalar(hi, hi, AluOp::min, lowerBound);
      kb.tensorScalar(r.x, r.x, AluOp::min, lowerBound, AluOp::max, -lowerBound, Engine::Pool);
    }
    const Tile dq = q.cols(scaleAt, 4).bitcast(DType::float32);
    kb.tensorScalar(dq, hi, AluOp::mult, 1.0 / qmax, AluOp::max, kMinDequantScale);
    kb.reciprocal(quantScale, dq);
    kb.tensorScalarPtr(q.cols(0, H), r.x, AluOp::mult, quantScale, AluOp::bypass, std::nullopt, 0.0, Engine::Pool);
    if (scaleAt == H) {
      kb.store(r.out, q.cols(0, H + 4));
    } else {
      kb.store(r.out.slice(1, 0, H), q.cols(0, H));
      kb.store(r.out.slice(1, H, 4), q.cols(scaleAt, 4));
    }
  };

  // A three-stage software pipeline over row tiles: tile i + 2 loads and tile i + 1 normalizes
  // while tile i quantizes, so each engine's in-order stream interleaves independent tiles (and
  // no load sits behind a store in the DMA engines' program order).
  for (const auto& seg : segments) {
    const DramView in = seg[0].rows(), o = seg[1].rows();
    const int64_t tiles = ceilDiv(in.dim(0), kPartitions);
    std::vector<RowTile> t;
    for (int64_t i = 0; i < std::min<int64_t>(2, tiles); ++i) t.push_back(load(in, o, i * kPartitions));
    normalize(t[0]);
    for (int64_t i = 0; i < tiles; ++i) {
      if (i + 2 < tiles) t.push_back(load(in, o, (i + 2) * kPartitions));
      if (i + 1 < tiles) normalize(t[static_cast<size_t>(i + 1)]);
      quantize(t[static_cast<size_t>(i)]);
    }
  }
}

}  // namespace

// The attrs in the order BirCodeGenLoop's RMSNormQuant family emits them.
const LeafSignature kRmsNormQuantSignature{
    {enumAttr("norm_type", "NormType", normTypeNames(), "1", "RMS_NORM, or NO_NORM: quantize hidden as is",
              {"NO_NORM", "RMS_NORM"}),
     enumAttr("quantization_type", "QuantizationType", {"NONE", "STATIC", "ROW", "MX", "STATIC_MX", "ROW_MX"}, "2",
              "ROW: a dequant scale per row, stored in its last 4 bytes; STATIC: in_scale", {"ROW", "STATIC"}),
     floatAttr("lower_bound", "0.0", "clips each row's max to it when > 0 (ROW)"),
     floatAttr("eps", "1e-06", "the norm's epsilon")},
    {{"hidden", {"B", "S", "H"}},
     {"ln_w", {"1", "H"}},
     {"in_scale", {"num_partitions", "1"}, {"quantization_type=STATIC"}}},
    {{"out", {"B", "S", "H+4"}, {"quantization_type=ROW"}}, {"out", {"B", "S", "H"}, {"quantization_type=STATIC"}}}};

WALRUS_REGISTER_LEAF("QuantOnly", expandRMSNormQuant,
                     "out = fp8(rms_norm(hidden) * gamma) per row, with each row's fp32 dequant scale (ROW) or a static scale",
                     kRmsNormQuantSignature);

}  // namespace walrus::kernels
