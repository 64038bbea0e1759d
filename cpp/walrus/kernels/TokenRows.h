// Token operands [B, S, ...] as [tokens, ...] views.
//
// When the batch and sequence dims of every operand nest (whole tensors, and sub-tensors cut
// along other dims), the tokens are one [B*S, ...] segment, so token tiles run across batch
// boundaries; otherwise each batch is its own [S, ...] segment. Every token operand of a kernel
// is segmented the same way, so segment i of each lines up.
#pragma once

#include <vector>

#include "walrus/kernels/DramView.h"

namespace walrus::kernels {

// segments[i][j]: segment i of views[j]; every view is [B, S, ...] with the same B and S.
std::vector<std::vector<DramView>> tokenSegments(const std::vector<DramView>& views);

}  // namespace walrus::kernels
