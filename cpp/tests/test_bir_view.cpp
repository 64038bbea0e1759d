// bir::View, the one access-pattern algebra: each operation addresses exactly the elements the
// same NumPy-style view would, and refuses what it cannot express with the view's own words.
#include <gtest/gtest.h>

#include "bir/Error.h"
#include "bir/Module.h"
#include "bir/View.h"
#include "test_ap_kit.h"

using namespace bir;

namespace {

struct Fixture {
  Module m;
  Function* f = m.addFunction();
  MemoryLocation* t = f->createDramTensor("t", MemoryType::Input, DType::float32, {4, 6, 8});
  MemoryLocation* sb = f->createOnChipTensor("sb", MemoryType::SB, DType::float32, 128, 4096, 0, 0, {});
  View v = View::ofShape(t, DType::float32, {4, 6, 8});
};

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const BIRError& e) {
    return e.what();
  }
  return "no error";
}

TEST(BirView, ShapeIsRowMajor) {
  Fixture x;
  EXPECT_EQ(x.v.shape(), (std::vector<int64_t>{4, 6, 8}));
  EXPECT_EQ(x.v.dims(), (std::vector<APPair>{{48, 4}, {8, 6}, {1, 8}}));
  std::vector<int64_t> all(192);
  for (int64_t i = 0; i < 192; ++i) all[static_cast<size_t>(i)] = i;
  EXPECT_EQ(elements(x.v.ap()), all);
}

TEST(BirView, SliceAndAt) {
  Fixture x;
  const View s = x.v.slice(1, 2, 3);
  EXPECT_EQ(s.offset(), 16);
  EXPECT_EQ(s.shape(), (std::vector<int64_t>{4, 3, 8}));
  const View strided = x.v.slice(2, 1, 3, 2);  // elements 1, 3, 5 of the last dim
  EXPECT_EQ(elements(strided.at(0, 0).at(0, 0).ap()), (std::vector<int64_t>{1, 3, 5}));
  const View backwards = x.v.slice(2, 6, 3, -2);  // elements 6, 4, 2 of the last dim
  EXPECT_EQ(elements(backwards.at(0, 0).at(0, 0).ap()), (std::vector<int64_t>{6, 4, 2}));
  EXPECT_EQ(errorOf([&] { x.v.slice(2, 1, 2, -2); }),  // reaches element -1
            "View::slice: 2 elements every -2 from 1 of dim 2 of t@0[[48,4], [8,6], [1,8]] float32");
  EXPECT_EQ(errorOf([&] { x.v.slice(2, 1, 2, 0); }),
            "View::slice: 2 elements every 0 from 1 of dim 2 of t@0[[48,4], [8,6], [1,8]] float32");
  const View a = x.v.at(0, 3);
  EXPECT_EQ(a.rank(), 2u);
  EXPECT_EQ(a.offset(), 144);
  EXPECT_EQ(errorOf([&] { x.v.slice(1, 4, 3); }), "View::slice: [4, 7) of dim 1 of t@0[[48,4], [8,6], [1,8]] float32");
  EXPECT_EQ(errorOf([&] { x.v.slice(3, 0, 1); }), "View::slice: dim 3 of a rank-3 view of 't'");
  EXPECT_EQ(errorOf([&] { x.v.slice(2, 1, 4, 3); }),  // reaches element 10 of 8
            "View::slice: 4 elements every 3 from 1 of dim 2 of t@0[[48,4], [8,6], [1,8]] float32");
}

TEST(BirView, MergeRowsAndFlatten) {
  Fixture x;
  EXPECT_EQ(x.v.merge(0).dims(), (std::vector<APPair>{{8, 24}, {1, 8}}));
  EXPECT_EQ(x.v.rows().dims(), (std::vector<APPair>{{8, 24}, {1, 8}}));
  EXPECT_EQ(x.v.flatten().dims(), (std::vector<APPair>{{1, 192}}));
  const View cols = x.v.slice(2, 0, 4);  // rows of 4 of 8: the last two dims no longer nest
  EXPECT_EQ(errorOf([&] { cols.merge(1); }), "View::merge: dims 1 and 2 of t@0[[48,4], [8,6], [1,4]] float32 do not nest");
  EXPECT_EQ(errorOf([&] { cols.flatten(); }), "View::flat: the dims of t@0[[48,4], [8,6], [1,4]] float32 do not nest");
  EXPECT_EQ(cols.merge(0).dims(), (std::vector<APPair>{{8, 24}, {1, 4}}));
}

TEST(BirView, SplitPermuteBroadcast) {
  Fixture x;
  const View s = x.v.split(2, 4);
  EXPECT_EQ(s.dims(), (std::vector<APPair>{{48, 4}, {8, 6}, {4, 2}, {1, 4}}));
  EXPECT_EQ(elements(s.ap()), elements(x.v.ap()));
  EXPECT_EQ(errorOf([&] { x.v.split(1, 4); }), "View::split: dim 1 of t@0[[48,4], [8,6], [1,8]] float32 by 4");
  const View p = x.v.permute({2, 0, 1});
  EXPECT_EQ(p.dims(), (std::vector<APPair>{{1, 8}, {48, 4}, {8, 6}}));
  EXPECT_EQ(errorOf([&] { x.v.permute({0, 0, 1}); }), "View::permute: dim 0 twice");
  EXPECT_EQ(errorOf([&] { x.v.permute({0, 1}); }), "View::permute: 2 dims for t@0[[48,4], [8,6], [1,8]] float32");
  const View b = x.v.at(0, 0).at(0, 0).broadcast(0, 3);
  EXPECT_EQ(b.dims(), (std::vector<APPair>{{0, 3}, {1, 8}}));
  EXPECT_EQ(errorOf([&] { x.v.broadcast(4, 2); }), "View::broadcast: dim 4 of t@0[[48,4], [8,6], [1,8]] float32");
}

TEST(BirView, Bitcast) {
  Fixture x;
  const View h = x.v.bitcast(DType::bfloat16);
  EXPECT_EQ(h.dims(), (std::vector<APPair>{{96, 4}, {16, 6}, {1, 16}}));
  EXPECT_EQ(h.bitcast(DType::float32).dims(), x.v.dims());
  const View cols = x.v.permute({0, 2, 1});  // innermost dim of step 8: not contiguous
  EXPECT_EQ(errorOf([&] { cols.bitcast(DType::bfloat16); }),
            "View::bitcast: t@0[[48,4], [1,8], [8,6]] float32 as bfloat16 needs a contiguous, aligned innermost dim");
  const View odd = View::ofShape(x.t, DType::bfloat16, {3});
  EXPECT_NE(errorOf([&] { odd.bitcast(DType::float32); }), "no error");  // 6 bytes are no whole float32
}

TEST(BirView, Normalised) {
  Fixture x;
  const View n = x.v.slice(0, 1, 1).split(2, 2).normalised();
  EXPECT_EQ(n.dims(), (std::vector<APPair>{{1, 48}}));
  EXPECT_EQ(n.offset(), 48);
  const View cols = x.v.slice(2, 0, 4).normalised();
  EXPECT_EQ(cols.dims(), (std::vector<APPair>{{8, 24}, {1, 4}}));
  EXPECT_EQ(elements(cols.ap()), elements(x.v.slice(2, 0, 4).ap()));
  EXPECT_EQ(x.v.at(0, 1).at(0, 2).at(0, 3).normalised().dims(), (std::vector<APPair>{{1, 1}}));
}

TEST(BirView, OfOperandUndoesPartitionFirst) {
  Fixture x;
  const View sub = x.v.slice(1, 1, 4).slice(2, 2, 4);
  const auto pairs = sub.partitionFirstPairs(2);
  EXPECT_EQ(pairs, (std::vector<APPair>{{1, 4}, {48, 4}, {8, 4}}));
  AccessPattern ap = Instruction::createAP(x.t, sub.offset(), pairs, sub.shape(), 2, 1);
  const View back = View::ofOperand(ap, "ins[0]");
  EXPECT_EQ(back.dims(), sub.dims());
  EXPECT_EQ(back.offset(), sub.offset());
  ap.setPartitionDim(3);
  EXPECT_EQ(errorOf([&] { View::ofOperand(ap, "ins[0]"); }), "ins[0]: partition_dim 3 is not a dim of access_shape [4, 4, 4]");
}

TEST(BirView, OnChip) {
  Fixture x;
  const View t = View::onChip(x.sb, DType::float32, 128, {4, 8}, "Tile");
  const AccessPattern ap = t.ap();
  EXPECT_EQ(ap.pattern, (std::vector<APPair>{{1024, 128}, {8, 4}, {1, 8}}));
  const View r = t.partitionRange(32, 64).at(0, 1);
  EXPECT_EQ(r.partitions(), 64);
  EXPECT_EQ(r.offset(), 32 * 1024 + 8);
  EXPECT_EQ(r.at(0, 0).dims(), (std::vector<APPair>{{1, 1}}));  // a tile keeps one free dim
  EXPECT_EQ(t.at(0, 0).at(0, 0).broadcast(0, 5).dims(), (std::vector<APPair>{{0, 5}}));
  EXPECT_EQ(errorOf([&] { t.partitionRange(100, 29); }), "Tile::rows: partitions [100, 129) of sb[128, 4, 8] float32");
  EXPECT_EQ(errorOf([&] { t.slice(2, 0, 1); }), "Tile::slice: free dim 2 of sb[128, 4, 8] float32");
  EXPECT_EQ(errorOf([&] { t.slice(1, 6, 3); }), "Tile::slice: [6, 9) of free dim 1 of sb[128, 4, 8] float32");
  EXPECT_EQ(t.bitcast(DType::bfloat16).dims(), (std::vector<APPair>{{1, 64}}));
  EXPECT_EQ(t.bitcast(DType::bfloat16).ap().pattern.front(), (APPair{2048, 128}));
  EXPECT_EQ(errorOf([&] { t.permute({1, 0}).bitcast(DType::bfloat16); }),
            "Tile::flat: the free dims of sb[128, 8, 4] float32 do not nest");
  EXPECT_EQ(errorOf([&] { View::onChip(x.sb, DType::float32, 128, {2048}, "Tile"); }),
            "Tile: 2048 float32 elements per partition do not fit the 4096 bytes of 'sb'");
  EXPECT_EQ(errorOf([&] { View::onChip(x.sb, DType::float32, 128, {3}, "Tile").bitcast(DType::int64); }),
            "Tile::bitcast: sb[128, 3] float32 as int64 needs one contiguous, aligned free dim");
}

}  // namespace
