#include "walrus/kernels/RowNorm.h"

#include "walrus/kernels/LeafSignature.h"

namespace walrus::kernels {

using namespace bir;

NormType fusedNormType(KernelAttrs& attrs) {
  const auto familyDefault = static_cast<NormType>(std::stoll(attrs.signature()->attr("norm_type")->fallback));
  const bool fused = attrs.flag("fused_rmsnorm");
  const auto type = static_cast<NormType>(attrs.choice("norm_type"));
  if (type != familyDefault) return type;
  if (!fused) return NormType::None;
  return type == NormType::None ? NormType::RMS : type;
}

void normalizeRows(KernelBuilder& kb, NormType type, double eps, const Tile& out, const Tile& x, const Tile& stats,
                   const Tile& squares) {
  if (type == NormType::None) {
    if (out.location() != x.location() || out.dtype() != x.dtype()) kb.copy(out, x);
    return;
  }
  auto s = kb.section("norm");
  const int64_t H = x.freeSize();
  const Tile rstd = stats.cols(0, 1);
  if (type == NormType::Layer) {
    // mean and population variance from bn_stats records of <= kBnStatsMaxFree elements each.
    const int64_t chunks = (H + kBnStatsMaxFree - 1) / kBnStatsMaxFree;
    const Tile records = stats.cols(2, 6 * chunks);
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t w = std::min<int64_t>(kBnStatsMaxFree, H - c * kBnStatsMaxFree);
      kb.bnStats(records.cols(6 * c, 6), x.cols(c * kBnStatsMaxFree, w));
    }
    const Tile meanVar = stats.cols(0, 2);
    kb.bnAggregate(meanVar, records);
    const Tile mean = stats.cols(0, 1), var = stats.cols(1, 1);
    kb.tensorScalar(var, var, AluOp::add, eps, AluOp::rsqrt, 0.0);
    kb.tensorScalarPtr(out, x, AluOp::subtract, mean, AluOp::mult, var);
    return;
  }
  // RMS: the ACT engine squares and sums each row into its accumulator in one pass.
  kb.activation(squares, x, ActivationFunc::Square, Act().accumulate(AccumCmd::ZeroAccumulate));
  kb.readAccumulator(rstd);
  kb.tensorScalar(rstd, rstd, AluOp::mult, 1.0 / static_cast<double>(H), AluOp::add, eps);
  kb.tensorScalar(rstd, rstd, AluOp::rsqrt, 0.0);
  kb.tensorScalarPtr(out, x, AluOp::mult, rstd);
}

}  // namespace walrus::kernels
