#include "walrus/kernels/TokenRows.h"

#include "bir/Error.h"

namespace walrus::kernels {

namespace {
bool nests(const DramView& v) {
  for (size_t d = 0; d + 2 < v.rank(); ++d) {
    const auto &outer = v.dims()[d], &inner = v.dims()[d + 1];
    if (outer.num > 1 && inner.num > 1 && outer.step != inner.step * inner.num) return false;
  }
  return true;
}
}  // namespace

std::vector<std::vector<DramView>> tokenSegments(const std::vector<DramView>& views) {
  bool merged = true;
  for (const auto& v : views) merged = merged && nests(v);
  if (merged) {
    std::vector<DramView> rows;
    for (const auto& v : views) rows.push_back(v.rows());
    return {rows};
  }
  // Batch by batch: every view is [B, S, ...].
  const int64_t B = views.front().dim(0);
  std::vector<std::vector<DramView>> segments;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<DramView> rows;
    for (const auto& v : views) {
      if (v.rank() < 3 || v.dim(0) != B) throw KernelError("token operand " + v.str() + " does not share the batch dim");
      rows.push_back(v.at(0, b).rows());
    }
    segments.push_back(rows);
  }
  return segments;
}

}  // namespace walrus::kernels
