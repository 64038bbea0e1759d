// The numbers of an access pattern that preparing an instruction asks for, read in one pass over
// its [step, num] pairs. The verifier's bounds checks, the simulator's operand decode and the
// latency model each used to walk every pattern again; a long instruction stream does not fit in
// the caches, so the simulator's decoder has the verifier fill one PatternShape per operand
// (verifyOperand, OperandCheck.h) and hands it on to the decode and the pricing.
#pragma once

#include <algorithm>
#include <cstdint>

#include "AccessPattern.h"

namespace bir {

struct PatternShape {
  int64_t partitions = 1;    // the first pair's num (AccessPattern::partitions)
  int64_t freeElements = 1;  // the free pairs' nums multiplied (AccessPattern::freeElements)
  // The free pairs' smallest and largest element offsets relative to element 0, and the first
  // pair's; `overflow`: one of them does not fit in int64 (the others are then meaningless).
  int64_t lo = 0, hi = 0;
  int64_t outerLo = 0, outerHi = 0;
  bool overflow = false;
  // The element count (partitions * freeElements, or freeElements alone) does not fit in int64:
  // the counts are then meaningless, and a wrapped count may even equal another operand's.
  bool countOverflow = false;
  int64_t minNum = 1;  // the smallest num of any pair

  int64_t numElements() const { return partitions * freeElements; }
};

// Inline: called for every operand of every instruction a module is prepared with.
// The running values are locals, assigned to the result once at the end: accumulated through a
// reference into the result (lo or hi, chosen per pair), they went through memory at every pair.
inline PatternShape patternShape(const AccessPattern& ap) {
  PatternShape s;
  const size_t n = ap.pattern.size();
  if (n == 0) return s;
  const APPair* const pairs = ap.pattern.data();  // read once (InlineVector: inline or on the heap)
  int64_t span;
  bool overflow = __builtin_mul_overflow(pairs[0].num - 1, pairs[0].step, &span);
  (span < 0 ? s.outerLo : s.outerHi) = span;
  int64_t freeElements = 1, minNum = pairs[0].num, lo = 0, hi = 0, elements;
  bool countOverflow = false;
  for (size_t i = 1; i < n; ++i) {
    const APPair p = pairs[i];
    countOverflow |= __builtin_mul_overflow(freeElements, p.num, &freeElements);
    minNum = std::min(minNum, p.num);
    overflow |= __builtin_mul_overflow(p.num - 1, p.step, &span);
    if (span < 0)
      overflow |= __builtin_add_overflow(lo, span, &lo);
    else
      overflow |= __builtin_add_overflow(hi, span, &hi);
  }
  s.partitions = pairs[0].num;
  s.freeElements = freeElements;
  s.lo = lo;
  s.hi = hi;
  s.overflow = overflow;
  s.countOverflow = countOverflow | __builtin_mul_overflow(pairs[0].num, freeElements, &elements);
  s.minNum = minNum;
  return s;
}

}  // namespace bir
