// Token operands [B, S, H] as [tokens, H] row views.
//
// Whole tensors (and sub-tensors whose batch and sequence dims nest) are one [B*S, H] view, so
// token tiles run across batch boundaries; otherwise each batch is its own [S, H] segment. Every
// token operand of a kernel is segmented the same way, so segment i of each lines up.
#pragma once

#include <vector>

#include "walrus/kernels/DramView.h"

namespace walrus::kernels {

// segments[i][j]: segment i of views[j]; all views must have the same [B, S] (or [T]) leading dims.
std::vector<std::vector<DramView>> tokenSegments(const std::vector<DramView>& views);

}  // namespace walrus::kernels
