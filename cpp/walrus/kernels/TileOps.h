// Small building blocks the leaves share: moving tiles between layouts.
#pragma once

#include <cstdint>

#include "walrus/kernels/KernelBuilder.h"

namespace walrus::kernels {

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Writes the transpose of in [P <= 128, F] (SBUF) into out [128, ceil(F/128), >= P]:
// out[c, j, p] = in[p, 128 j + c] (the last chunk uses F % 128 partitions). The PE transposes
// chunks into PSUM in groups that fill a bank; `evac` (Activation or DVE) copies each group to
// out, converting to out's dtype. With `chunkScale` [128, ceil(F/128)] (fp32), the DVE multiplies
// out[c, j, :] by chunkScale[c, j] as it copies: a per-column scale of `in` (a norm's gamma) applied
// for free.
void transposeInto(KernelBuilder& kb, PsumPool& psum, const Tile& out, const Tile& in, bir::Engine evac,
                   const Tile* chunkScale = nullptr);

// Copies a PSUM result to SBUF (with a dtype conversion) on `e`: Activation (Copy) or DVE.
void evacuate(KernelBuilder& kb, const Tile& out, const Tile& in, bir::Engine e);

// Loads the [N] vector `row` into every partition of dst [128, N] (a partition-step-0 DMA).
void loadBroadcastRow(KernelBuilder& kb, const Tile& dst, const DramView& row);

// Loads the [N] vector `row` as a column: dst [N <= 128, 1] holds one element per partition.
void loadColumn(KernelBuilder& kb, const Tile& dst, const DramView& row);

// dst[p, j, :] = src[128 j + p, :] for the R rows of src [R, C] (R <= 128 * dst.dim(0)): row tiles
// of a weight matrix, K on partitions. One DMA when R is a multiple of 128, else one per tile.
void loadRowTiles(KernelBuilder& kb, const Tile& dst, const DramView& src);

// The [N] vector v as per-partition columns: result[p, j] = v[128 j + p] ([128, ceil(N/128)],
// fp32), loaded once; column j is the per-partition scalar of chunk j of whatever N indexes.
Tile loadColumnChunks(KernelBuilder& kb, const std::string& name, const DramView& v);

// Alternates between the Activation and Vector engines for PSUM evacuations, so neither becomes
// the bottleneck of a PE-bound loop.
class EvacuationEngines {
 public:
  bir::Engine next() {
    flip_ = !flip_;
    return flip_ ? bir::Engine::Activation : bir::Engine::DVE;
  }

 private:
  bool flip_ = false;
};

}  // namespace walrus::kernels
