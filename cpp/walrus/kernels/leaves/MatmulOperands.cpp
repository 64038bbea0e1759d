#include "walrus/kernels/leaves/MatmulOperands.h"

#include <algorithm>

namespace walrus::kernels {

using namespace bir;

LeafSignature matmulSignature() {
  return {{boolAttr("transpose_a", false, "a is given transposed, as aT [K, M]")},
          {{"a", {"M", "K"}}, {"b", {"K", "N"}}, {"bias", {"1", "N"}, {}, 0, true}},
          {{"out", {"M", "N"}}}};
}

MatmulOperands::MatmulOperands(KernelBuilder& kb) {
  hasBias = kb.hasInput("bias");  // an optional trailing input
  aTransposed = kb.attrs().flag("transpose_a");
  a = aTransposed ? kb.input("a", 2).permute({1, 0}) : kb.input("a", 2);
  b = kb.input("b", 2);
  out = kb.output("out", 2);
  M = a.dim(0);
  K = a.dim(1);
  N = b.dim(1);
  KernelBuilder::require(b.dim(0) == K, "a is [" + std::to_string(M) + ", " + std::to_string(K) + "] but b has " +
                                            std::to_string(b.dim(0)) + " rows");
  KernelBuilder::require(out.dim(0) == M && out.dim(1) == N,
                         "out is [" + std::to_string(out.dim(0)) + ", " + std::to_string(out.dim(1)) +
                             "]; expected [M, N] = [" + std::to_string(M) + ", " + std::to_string(N) + "]");
  if (hasBias) {
    const DramView v = kb.input("bias", 2);
    KernelBuilder::require(v.dim(0) == 1 && v.dim(1) == N, "bias must be [1, N] = [1, " + std::to_string(N) + "]");
    bias = v.at(0, 0);
  }
  const bool fp32 = a.dtype() == DType::float32 || b.dtype() == DType::float32;
  dtype = fp32 ? kb.matmulDtype(DType::float32) : b.dtype();
}

void MatmulOperands::loadTransposedRows(KernelBuilder& kb, const Tile& at, int64_t m0, int64_t rows,
                                        TilePool& aRows, PsumPool& tpsum, EvacuationEngines& evac) const {
  auto s = kb.section("transpose_a");
  if (aTransposed) {
    loadRowTiles(kb, at, a.permute({1, 0}).slice(1, m0, rows));
    return;
  }
  for (int64_t r0 = 0; r0 < rows; r0 += kPartitions) {
    const int64_t rr = std::min(kPartitions, rows - r0);
    const Tile aRow = aRows.next().rows(0, rr);
    kb.load(aRow, a.slice(0, m0 + r0, rr));
    transposeInto(kb, tpsum, at.slice(1, r0, rr), aRow, evac.next());
  }
}

Tile MatmulOperands::loadBiasRows(KernelBuilder& kb) const {
  if (!hasBias) return Tile();
  const Tile t = kb.sbufTile("bias", DType::float32, {N});
  loadBroadcastRow(kb, t, bias);
  return t;
}

}  // namespace walrus::kernels
