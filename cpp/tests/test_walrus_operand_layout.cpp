// Rebasing kernel access patterns through a node operand (OperandLayout): the composed pattern
// addresses exactly the host elements the operand maps the kernel's elements to, or is refused.
#include <gtest/gtest.h>

#include "bir/Module.h"
#include "walrus/OperandLayout.h"
#include "test_ap_kit.h"

using namespace bir;
using walrus::OperandLayout;

namespace {

AccessPattern pattern(MemoryLocation* t, int64_t offset, std::vector<APPair> pairs) {
  AccessPattern a;
  a.loc = t;
  a.dtype = t->set->dtype;
  a.offset = offset;
  a.pattern = std::move(pairs);
  return a;
}

struct Fixture {
  Module m;
  Function* f = m.addFunction();
  MemoryLocation* host = f->createDramTensor("host", MemoryType::Input, DType::float32, {4, 6, 8});
  MemoryLocation* kernel = f->createDramTensor("kernel", MemoryType::Input, DType::float32, {1024});
};

// Checks that rebasing `k` through `op` addresses op's elements at k's indices, in k's order.
void expectComposes(const AccessPattern& op, const AccessPattern& k) {
  std::string why;
  const auto out = OperandLayout(op).rebase(k, &why);
  ASSERT_TRUE(out.has_value()) << why;
  EXPECT_EQ(out->pattern.size(), k.pattern.size());
  const std::vector<int64_t> hostOf = elements(op), want = elements(k), got = elements(*out);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], hostOf[static_cast<size_t>(want[i])]) << i;
}

}  // namespace

TEST(WalrusOperandLayout, ContiguousOperandsShiftTheOffset) {
  Fixture x;
  const AccessPattern op = pattern(x.host, 48, {{8, 6}, {1, 8}});  // host[1], contiguous
  EXPECT_TRUE(OperandLayout(op).contiguous());
  expectComposes(op, pattern(x.kernel, 0, {{8, 6}, {1, 8}}));
  expectComposes(op, pattern(x.kernel, 5, {{-1, 4}}));              // a reversed read
  expectComposes(op, pattern(x.kernel, 2, {{16, 3}, {0, 5}, {3, 2}})); // a broadcast pair
}

TEST(WalrusOperandLayout, StridedOperandsMapPairsIntoTheirDims) {
  Fixture x;
  // host[:, 2:5, :] of [4, 6, 8]: rows 2..4 of each batch are one run of 24, so two dims remain.
  const AccessPattern runs = pattern(x.host, 16, {{48, 4}, {8, 3}, {1, 8}});
  EXPECT_FALSE(OperandLayout(runs).contiguous());
  expectComposes(runs, pattern(x.kernel, 0, {{24, 4}, {8, 3}, {1, 8}}));  // the whole view
  expectComposes(runs, pattern(x.kernel, 4, {{1, 16}}));                  // inside one run
  // host[:, 2:5, 0:4]: three dims of sizes 4, 3, 4 and host strides 48, 8, 1.
  const AccessPattern op = pattern(x.host, 16, {{48, 4}, {8, 3}, {1, 4}});
  expectComposes(op, pattern(x.kernel, 0, {{12, 4}, {4, 3}, {1, 4}}));    // the whole view
  expectComposes(op, pattern(x.kernel, 13, {{12, 2}, {1, 3}}));           // a tile
  expectComposes(op, pattern(x.kernel, 0, {{1, 4}, {12, 4}}));            // transposed walk
  expectComposes(op, pattern(x.kernel, 3, {{5, 1}, {4, 2}}));             // a pair that never steps
  std::string why;
  EXPECT_FALSE(OperandLayout(op).rebase(pattern(x.kernel, 0, {{1, 16}}), &why));
  EXPECT_NE(why.find("crosses a boundary of the operand's dim 2 (size 4, host stride 1)"), std::string::npos) << why;
  EXPECT_FALSE(OperandLayout(op).rebase(pattern(x.kernel, 0, {{5, 3}}), &why));
  EXPECT_NE(why.find("its pair [5, 3] steps across the operand's strided dims"), std::string::npos) << why;
  EXPECT_FALSE(OperandLayout(op).rebase(pattern(x.kernel, 48, {{1, 1}}), &why));
  EXPECT_NE(why.find("outside the 48 elements"), std::string::npos) << why;
}

TEST(WalrusOperandLayout, AdjacentContiguousDimsMerge) {
  Fixture x;
  // host[1:3] of [4, 6, 8] written as three dims: one contiguous run of 96 elements.
  const AccessPattern op = pattern(x.host, 48, {{48, 2}, {8, 6}, {1, 8}});
  EXPECT_TRUE(OperandLayout(op).contiguous());
  EXPECT_EQ(OperandLayout(op).elements(), 96);
  expectComposes(op, pattern(x.kernel, 0, {{1, 96}}));
}
