// Helper of the access-pattern tests: the element indices a pattern addresses.
#pragma once

#include <cstdint>
#include <vector>

#include "bir/AccessPattern.h"

// The element indices `ap` enumerates, in order (offset + sum_k i_k * step_k, outermost first).
inline std::vector<int64_t> elements(const bir::AccessPattern& ap) {
  std::vector<int64_t> out = {ap.offset};
  for (const bir::APPair& p : ap.pattern) {
    std::vector<int64_t> next;
    next.reserve(out.size() * static_cast<size_t>(p.num));
    for (int64_t base : out)
      for (int64_t i = 0; i < p.num; ++i) next.push_back(base + i * p.step);
    out = std::move(next);
  }
  return out;
}
