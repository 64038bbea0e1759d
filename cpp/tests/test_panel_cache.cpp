// The packed-operand cache of the matmul kernel: admission, invalidation by SBUF writes, budget,
// and that GemmEngine really reads its operands from it.
#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <vector>

#include "sim/Gemm.h"
#include "sim/PanelCache.h"

using sim::PanelCache;
using sim::SbufTile;

namespace {
const uint8_t kRows[4096] = {};
PanelCache::Key key(int64_t offset, int k = 128, int width = 128) {
  return {kRows + offset, 192 * 1024, bir::DType::bfloat16, k, width};
}
constexpr int64_t kFloats = 128 * 132;  // a stationary 128 x 128 tile's panels
}  // namespace

TEST(PanelCache, KeepsATileOnItsSecondSightingAndHitsAfter) {
  PanelCache c;
  c.setBudget(int64_t{1} << 20);
  const SbufTile where{0b0001, 0, 256};
  EXPECT_EQ(c.find(key(0)), nullptr);
  EXPECT_EQ(c.admit(key(0), where, kFloats), nullptr) << "a first sighting of a role with no history";
  EXPECT_EQ(c.find(key(0)), nullptr);
  float* p = c.admit(key(0), where, kFloats);
  ASSERT_NE(p, nullptr);
  p[0] = 42.0f;
  EXPECT_EQ(c.find(key(0)), p);
  EXPECT_EQ(c.find(key(0))[0], 42.0f);
  EXPECT_EQ(c.find(key(0, 64)), nullptr) << "the shape is part of the key";
  EXPECT_EQ(c.heldBytes(), kFloats * 4);
}

TEST(PanelCache, AWriteDropsTheTilesItOverlapsOnly) {
  PanelCache c;
  c.setBudget(int64_t{1} << 20);
  const SbufTile where{0b0110, 1024, 1280};  // partitions 32..95, bytes [1024, 1280)
  c.find(key(0));
  c.find(key(0));
  ASSERT_NE(c.admit(key(0), where, kFloats), nullptr);
  c.invalidate(0b1001, 0, 4096);  // other quadrants
  c.invalidate(0b1111, 0, 1024);  // bytes just before
  c.invalidate(0b1111, 1280, 2000);  // bytes just after
  EXPECT_NE(c.find(key(0)), nullptr);
  c.invalidate(0b0100, 1279, 1280);  // one byte of one quadrant
  EXPECT_EQ(c.find(key(0)), nullptr);
  ASSERT_NE(c.admit(key(0), where, kFloats), nullptr) << "seen soon again: kept again";
  c.clear();
  EXPECT_EQ(c.find(key(0)), nullptr);
}

// Panels a matmul part still in progress reads are neither reused nor freed: with room for one
// tile, admitting another evicts the kept one unless it is in use, and then keeps nothing.
TEST(PanelCache, NeverEvictsPanelsInUse) {
  PanelCache c;
  c.setBudget(kFloats * 4);
  const SbufTile where{0b0001, 0, 256};
  auto admitSoon = [&](int64_t offset, std::span<const float* const> inUse) {
    c.find(key(offset));
    c.find(key(offset));
    return c.admit(key(offset), where, kFloats, inUse);
  };
  const float* first = admitSoon(0, {});
  ASSERT_NE(first, nullptr);
  const float* inUse[] = {first};
  EXPECT_EQ(admitSoon(256, inUse), nullptr);
  EXPECT_EQ(c.find(key(0)), first) << "the panels in use were evicted";
  EXPECT_NE(admitSoon(512, {}), nullptr) << "no longer in use: evicted for the new tile";
  EXPECT_EQ(c.find(key(0)), nullptr);
  EXPECT_EQ(c.heldBytes(), kFloats * 4);
}

TEST(PanelCache, StaysWithinItsBudgetAndLeavesOutAReuseSetLargerThanIt) {
  PanelCache c;
  const int64_t tileBytes = kFloats * 4;
  c.setBudget(3 * tileBytes);
  const SbufTile where{0b1111, 0, 256};
  // Tiles cycling through more than the budget never get in.
  for (int round = 0; round < 3; ++round)
    for (int t = 0; t < 8; ++t)
      if (!c.find(key(t * 256))) {
        EXPECT_EQ(c.admit(key(t * 256), where, kFloats), nullptr);
      }
  EXPECT_EQ(c.heldBytes(), 0);
  // Tiles coming back every second sighting do.
  for (int round = 0; round < 4; ++round)
    for (int t = 0; t < 2; ++t)
      if (!c.find(key(t * 256, 64))) c.admit(key(t * 256, 64), where, kFloats);
  EXPECT_NE(c.find(key(0, 64)), nullptr);
  EXPECT_NE(c.find(key(256, 64)), nullptr);
  EXPECT_LE(c.heldBytes(), 3 * tileBytes);
  // A tile larger than the budget is never kept; a smaller budget frees what exceeds it.
  c.find(key(1024, 128, 4096));
  c.find(key(1024, 128, 4096));
  EXPECT_EQ(c.admit(key(1024, 128, 4096), where, 128 * 4096), nullptr);
  c.setBudget(tileBytes);
  EXPECT_LE(c.heldBytes(), tileBytes);
  c.setBudget(0);
  EXPECT_EQ(c.heldBytes(), 0);
  EXPECT_EQ(c.find(key(0, 64)), nullptr);
}

TEST(PanelCache, AnAddressOverwrittenBeforeItsReuseIsNotKeptAgain) {
  PanelCache c;
  c.setBudget(int64_t{1} << 20);
  const SbufTile where{0b0001, 0, 256};
  c.find(key(0));
  c.find(key(0));
  ASSERT_NE(c.admit(key(0), where, kFloats), nullptr);
  c.invalidate(0b0001, 0, 256);  // a new weight tile loaded into the buffer
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.find(key(0)), nullptr);
    EXPECT_EQ(c.admit(key(0), where, kFloats), nullptr);
  }
}

TEST(PanelCache, GemmEngineMultipliesTheCachedPanelsUntilTheRowsAreDropped) {
  const int K = 64, M = 32, N = 48;
  std::vector<float> a(size_t(K) * M, 1.0f), b(size_t(K) * N, 2.0f), c(size_t(M) * N);
  const sim::MatrixRows A{reinterpret_cast<const uint8_t*>(a.data()), int64_t{M} * 4, bir::DType::float32};
  const sim::MatrixRows B{reinterpret_cast<const uint8_t*>(b.data()), int64_t{N} * 4, bir::DType::float32};
  const SbufTile aTile{0b0011, 0, M * 4};
  for (int threads : {1, 2}) {
    sim::GemmEngine g(threads);
    g.panels().setBudget(int64_t{1} << 20);
    for (int i = 0; i < 3; ++i) g.run(K, M, N, A, B, c.data(), N, false, nullptr, nullptr, &aTile);
    EXPECT_EQ(c[0], 2.0f * K);
    // Rows changed behind the cache's back (no SBUF write reported): the kept panels are used.
    std::fill(a.begin(), a.end(), 3.0f);
    g.run(K, M, N, A, B, c.data(), N, false, nullptr, nullptr, &aTile);
    EXPECT_EQ(c[0], 2.0f * K) << "the stationary panels did not come from the cache";
    // Reported (as Exec::run does for every SBUF write), they are packed again.
    g.panels().invalidate(0b0010, M * 4 - 1, M * 4 + 8);
    g.run(K, M, N, A, B, c.data(), N, false, nullptr, nullptr, &aTile);
    EXPECT_EQ(c[0], 6.0f * K);
    // Without tiles, nothing is cached.
    std::fill(a.begin(), a.end(), 1.0f);
    g.run(K, M, N, A, B, c.data(), N, false);
    EXPECT_EQ(c[M * N - 1], 2.0f * K);
    std::fill(a.begin(), a.end(), 1.0f);
    g.panels().clear();
  }
}
