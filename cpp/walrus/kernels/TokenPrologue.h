// TokenPrologue: the fused front of the MLP and QKV leaves, for token rows of hidden [T, H]:
//   x = hidden (+ each addend)             residual adds, fp32
//   sumOut = x                             (store_add: the sum is an output too)
//   x = norm(x) * gamma                    RMS / Layer norm (RowNorm.h), optional gamma
//   xT = x^T                               [128, KT, tokens]: H on partitions, in the matmul dtype
// xT is what the projections multiply: the stationary operand of the weights-moving (TKG) tiling
// and the moving operand of the weights-stationary (CTE) tiling. gamma is applied as the
// transposes are evacuated (a per-partition scale once H is on partitions). Without a norm or
// residuals, DMA transposes bring x^T straight from DRAM.
#pragma once

#include <optional>
#include <vector>

#include "walrus/kernels/RowNorm.h"
#include "walrus/kernels/TileOps.h"

namespace walrus::kernels {

// The token rows one prologue call reads and writes: [T, H] views of one token segment.
struct TokenRowsIn {
  DramView hidden;
  std::vector<DramView> addends;
  std::optional<DramView> sumOut;
};

class TokenPrologue {
 public:
  struct Config {
    int64_t H = 0;
    bir::DType hiddenDtype = bir::DType::float32;
    int addends = 0;
    NormType norm = NormType::None;
    double eps = 1e-6;
    std::optional<DramView> gamma;  // [H], used when the norm has one
    bir::DType xTdtype = bir::DType::bfloat16;
  };

  // Loads gamma (once, for the kernel's lifetime: make it in the kernel's outermost scope).
  TokenPrologue(KernelBuilder& kb, Config config);

  // xT[:, :, col0 + i] = prologue(rows.hidden row t0 + i) for i < n; xT is [128, >= KT, >= col0 + n].
  // Its staging lives in a scope of its own, released on return.
  void transposedTokens(const TokenRowsIn& rows, const Tile& xT, int64_t col0, int64_t t0, int64_t n);

  int64_t KT() const { return ceilDiv(cfg_.H, kPartitions); }
  // SBUF bytes per partition transposedTokens allocates (for the callers' memory plans).
  int64_t stagingBytes() const;

 private:
  bool needsFp32() const { return cfg_.norm != NormType::None || cfg_.addends > 0; }
  KernelBuilder& kb_;
  Config cfg_;
  Tile gammaT_;  // [128, KT] fp32, or empty
};

}  // namespace walrus::kernels
