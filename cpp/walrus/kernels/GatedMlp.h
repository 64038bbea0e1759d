// The weights-stationary (context-encoding) halves of a gated MLP, shared by the MLP and
// ExpertMLPs leaves. Activations are transposed, the hidden or intermediate dim on partitions:
//   gatedActivationsT    hT[i, t] = act(Wg^T xT + bg)[i, t] * (Wu^T xT + bu)[i, t]
//   downProjectAndStore  out[t, :] = sum over terms of (Wd^T hT)[:, t] (+ bd), per 128 output
//                        columns: accumulated in one PSUM group, transposed back, stored
// Weights stream in loads of 8 row tiles by as many columns as SBUF holds (Projection.h), one DMA
// each, two column groups deep (else 3-deep pools of one projection's columns); the biases are
// per-partition columns, free in the ACT evacuations.
#pragma once

#include <vector>

#include "walrus/kernels/Projection.h"

namespace walrus::kernels {

struct GatedMlpWeights {
  DramView gate, up;  // [H, I]; gate unused with skipGate
  Tile gateBias, upBias;  // [128, ceil(I / 128)] fp32 columns (loadColumnChunks), or empty
  bir::ActivationFunc act = bir::ActivationFunc::Silu;
  bool skipGate = false;
  bir::DType mm = bir::DType::bfloat16;
};

// hT[:, it, :tn] for every 128-row tile it of I; xT is [128, ceil(H / 128), >= tn], hT
// [128, ceil(I / 128), >= tn] (mm). Buffers live in a scope of their own.
void gatedActivationsT(KernelBuilder& kb, const GatedMlpWeights& w, const Tile& xT, const Tile& hT, int64_t tn);
// SBUF bytes per partition gatedActivationsT allocates for blocks of tb tokens.
int64_t gatedActivationsBytes(const GatedMlpWeights& w, int64_t tb);

// One term of a down projection: down [I, H] and its hT [128, ceil(I / 128), >= tn].
struct DownTerm {
  DramView down;
  Tile hT;
};

// outRows[t0 + t, :] = sum over terms of down^T hT[:, t] (+ biasCols) for t < tn; outRows is
// [T, H]; biasCols [128, ceil(H / 128)] fp32 or empty.
void downProjectAndStore(KernelBuilder& kb, const std::vector<DownTerm>& terms, const Tile& biasCols,
                         const DramView& outRows, int64_t t0, int64_t tn, bir::DType mm);
int64_t downProjectBytes(bir::DType mm, bir::DType out, int64_t tb);

}  // namespace walrus::kernels
