// bir::InlineVector (an access pattern's pairs): the same contents as std::vector through every
// operation the code uses, inline up to N elements and on the heap beyond, across copies, moves
// and growth in either place.
#include <gtest/gtest.h>

#include <vector>

#include "bir/AccessPattern.h"
#include "bir/InlineVector.h"

namespace {

using bir::APPair;
using V = bir::InlineVector<APPair, 3>;

std::vector<APPair> pairs(int n, int base = 0) {
  std::vector<APPair> v;
  for (int i = 0; i < n; ++i) v.push_back({base + i, base + 2 * i + 1});
  return v;
}

V inlineOf(const std::vector<APPair>& v) { return V(v.begin(), v.end()); }

TEST(InlineVector, PushBackInlineThenHeap) {
  V v;
  EXPECT_TRUE(v.empty());
  std::vector<APPair> ref;
  for (int i = 0; i < 9; ++i) {
    v.push_back({i, i + 1});
    ref.push_back({i, i + 1});
    EXPECT_EQ(v, ref);
    EXPECT_EQ(v.front(), ref.front());
    EXPECT_EQ(v.back(), ref.back());
    EXPECT_GE(v.capacity(), v.size());
  }
  v.push_back(v[0]);  // an element of the vector itself, at a growth
  ref.push_back(ref[0]);
  EXPECT_EQ(v, ref);
}

TEST(InlineVector, CopyAndMoveEitherPlace) {
  for (int n : {0, 1, 3, 4, 7}) {
    const V a = inlineOf(pairs(n));
    V b = a;  // copy construction
    EXPECT_EQ(b, a);
    V c = std::move(b);  // move construction: b is left empty
    EXPECT_EQ(c, a);
    EXPECT_TRUE(b.empty());
    for (int m : {0, 2, 5}) {
      V d = inlineOf(pairs(m, 100));
      d = a;  // copy assignment over either place
      EXPECT_EQ(d, a);
      V e = inlineOf(pairs(m, 100));
      V f = a;
      e = std::move(f);  // move assignment over either place
      EXPECT_EQ(e, a);
      EXPECT_TRUE(f.empty());
      f.push_back({1, 1});  // a moved-from vector is usable
      EXPECT_EQ(f, (std::vector<APPair>{{1, 1}}));
    }
    V self = a;
    const V& alias = self;
    self = alias;  // self-assignment
    EXPECT_EQ(self, a);
  }
}

TEST(InlineVector, ResizeClearInsertAssign) {
  V v = {{1, 2}, {3, 4}};
  v.resize(5);
  EXPECT_EQ(v, (std::vector<APPair>{{1, 2}, {3, 4}, {1, 1}, {1, 1}, {1, 1}}));
  v.resize(1);
  EXPECT_EQ(v, (std::vector<APPair>{{1, 2}}));
  const std::vector<APPair> more = pairs(4, 10);
  v.insert(v.end(), more.begin(), more.end());
  std::vector<APPair> ref{{1, 2}};
  ref.insert(ref.end(), more.begin(), more.end());
  EXPECT_EQ(v, ref);
  v.insert(v.begin() + 1, APPair{7, 7});
  ref.insert(ref.begin() + 1, APPair{7, 7});
  EXPECT_EQ(v, ref);
  v.erase(v.begin());
  ref.erase(ref.begin());
  EXPECT_EQ(v, ref);
  EXPECT_EQ(static_cast<std::vector<APPair>>(v), ref);
  v.clear();
  EXPECT_TRUE(v.empty());
  v = ref;
  EXPECT_EQ(v, ref);
  v = {{5, 6}};
  EXPECT_EQ(v, (std::vector<APPair>{{5, 6}}));
  EXPECT_EQ(v.emplace_back(APPair{8, 9}), (APPair{8, 9}));
  EXPECT_NE(v, (V{{5, 6}}));
}

// An operand's pattern: inline up to the engine limit (a partition pair and kApMaxFreeDims free
// pairs); a longer (DMA / DRAM) pattern still holds all its pairs.
TEST(InlineVector, AccessPatternPairs) {
  EXPECT_EQ(bir::APPairs::inlineCapacity(), static_cast<size_t>(bir::UniformConfig::kApMaxFreeDims + 1));
  bir::AccessPattern ap;
  ap.pattern = pairs(5);
  EXPECT_EQ(ap.pattern.capacity(), bir::APPairs::inlineCapacity());
  ap.pattern = pairs(12);
  EXPECT_EQ(ap.pattern, pairs(12));
  bir::AccessPattern copy = ap;
  EXPECT_EQ(copy.pattern, pairs(12));
  EXPECT_EQ(copy.freeShape().size(), 11u);
}

}  // namespace
