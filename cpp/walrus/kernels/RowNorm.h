// Normalization of token rows (tokens on partitions, the hidden dim along the free axis), shared
// by the MLP, QKV and RMSNormQuant leaves. nkilib's NormType values.
#pragma once

#include <cstdint>

#include "walrus/kernels/KernelBuilder.h"

namespace walrus::kernels {

enum class NormType : int64_t { None = 0, RMS = 1, Layer = 2, RMSSkipGamma = 3 };
inline const std::vector<std::string>& normTypeNames() {
  static const std::vector<std::string> names = {"NO_NORM", "RMS_NORM", "LAYER_NORM", "RMS_NORM_SKIP_GAMMA"};
  return names;
}
inline bool hasGamma(NormType t) { return t == NormType::RMS || t == NormType::Layer; }

// The norm a fused MLP / QKV node asks for. The families carry two attrs for it: NxDI's older
// fused_rmsnorm flag (true: RMS norm) and nkilib's norm_type, with family defaults that agree
// (MLP: false / NO_NORM, QKV: true / RMS_NORM; the leaf's signature holds them). The one the
// program changed decides:
//   norm_type, if it is not the family's default;
//   else fused_rmsnorm: true keeps the default norm (RMS_NORM when the default is NO_NORM), false
//   means NO_NORM.
// A node carries both, so an explicit default norm_type cannot be told from an unset one here: the
// Penguin families, which can, refuse the two set in contradiction (families.check_norm_attrs).
NormType fusedNormType(KernelAttrs& attrs);

// out = norm(x) row by row, without gamma:
//   RMS    x / sqrt(mean(x^2) + eps)             (nkilib's rms_norm; ACT square-and-accumulate)
//   Layer  (x - mean) / sqrt(var + eps)           (population variance; DVE bn_stats / bn_aggr)
// x and out are [P, H] (any dtypes; out may alias x). `stats` is scratch of at least
// [P, 6 * ceil(H / 512)] fp32; `squares` scratch [P, H] for the RMS squares (may be `out`).
void normalizeRows(KernelBuilder& kb, NormType type, double eps, const Tile& out, const Tile& x, const Tile& stats,
                   const Tile& squares);

// Scratch columns normalizeRows needs per partition.
inline int64_t normStatsColumns(int64_t H) { return 6 * ((H + kBnStatsMaxFree - 1) / kBnStatsMaxFree) + 2; }

}  // namespace walrus::kernels
