#include "walrus/kernels/TokenRows.h"

#include "bir/Error.h"

namespace walrus::kernels {

std::vector<std::vector<DramView>> tokenSegments(const std::vector<DramView>& views) {
  const DramView& first = views.front();
  bool nest = true;
  for (const auto& v : views) {
    if (v.rank() < 3 || v.dim(0) != first.dim(0) || v.dim(1) != first.dim(1))
      throw KernelError("token operand " + v.str() + " is not [B, S, ...] with the B and S of " + first.str());
    const auto &b = v.dims()[0], &s = v.dims()[1];
    nest = nest && (b.num == 1 || s.num == 1 || b.step == s.step * s.num);
  }
  std::vector<std::vector<DramView>> segments;
  if (nest) {
    segments.emplace_back();
    for (const auto& v : views) segments.back().push_back(v.merge(0));
    return segments;
  }
  for (int64_t b = 0; b < first.dim(0); ++b) {
    segments.emplace_back();
    for (const auto& v : views) segments.back().push_back(v.at(0, b));
  }
  return segments;
}

}  // namespace walrus::kernels
