// Large host blocks: released blocks are reused for the next request of the same size, and come
// back zero-filled when asked.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "sim/HostMemory.h"

TEST(HostMemory, ReleasedBlockIsReusedAndZeroedOnRequest) {
  const int64_t bytes = (int64_t{5} << 20) + 123;  // not a whole number of huge pages
  auto* a = static_cast<uint8_t*>(sim::allocateLarge(bytes));
  for (int64_t i = 0; i < bytes; i += 4096) ASSERT_EQ(a[i], 0);
  std::memset(a, 0xab, static_cast<size_t>(bytes));
  sim::releaseLarge(a, bytes);
  auto* b = static_cast<uint8_t*>(sim::allocateLarge(bytes));  // zeroed
  EXPECT_EQ(b, a) << "the released block of the same size is reused";
  for (int64_t i = 0; i < bytes; ++i) ASSERT_EQ(b[i], 0) << i;
  sim::releaseLarge(b, bytes);
  auto* c = static_cast<uint8_t*>(sim::allocateLarge(bytes, false));
  c[bytes - 1] = 1;  // usable to its last byte
  sim::releaseLarge(c, bytes);
}

TEST(HostMemory, IdleBlocksAreBounded) {
  // A block beyond what the cache may hold (256 MiB) is unmapped, not kept: the next request of
  // its size, not asking for zeros, still gets fresh (zero) pages rather than the old bytes.
  const int64_t big = int64_t{300} << 20;
  auto* a = static_cast<uint8_t*>(sim::allocateLarge(big, false));
  a[0] = a[big - 1] = 7;
  sim::releaseLarge(a, big);
  auto* b = static_cast<uint8_t*>(sim::allocateLarge(big, false));
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(b[big - 1], 0);
  sim::releaseLarge(b, big);
  // A cached block, by contrast, comes back as it was left when zeros are not asked for.
  const int64_t small = int64_t{4} << 20;
  auto* c = static_cast<uint8_t*>(sim::allocateLarge(small, false));
  c[0] = 9;
  sim::releaseLarge(c, small);
  auto* d = static_cast<uint8_t*>(sim::allocateLarge(small, false));
  EXPECT_EQ(d, c);
  EXPECT_EQ(d[0], 9);
  sim::releaseLarge(d, small);
}

TEST(HostMemory, LargePageAllocatorServesVectors) {
  std::vector<double, sim::LargePageAllocator<double>> v;
  for (int round = 0; round < 3; ++round) {
    v.clear();
    v.shrink_to_fit();
    v.reserve(1 << 20);  // 8 MiB: from allocateLarge
    for (int i = 0; i < (1 << 20); ++i) v.push_back(i);
    EXPECT_EQ(v[12345], 12345.0);
    v.push_back(1.0);  // grows past the reservation
    EXPECT_EQ(v.back(), 1.0);
  }
}
