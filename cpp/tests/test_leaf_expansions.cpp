// Every IT54 leaf expanded by InlineBIRKernel: the code is legal (test_leaf_kit.h) and has the
// shape its tiling promises (matmul and transpose counts, skipped blocks, DMA counts).
#include "test_leaf_kit.h"

namespace nxs_leaf_test {
namespace {

using namespace bir;
constexpr DType bf16 = DType::bfloat16, f32 = DType::float32;

TEST(LeafMLP, ContextEncodingTilesTokensBy512WithWeightsStationary) {
  // T = 640 tokens: blocks of 512 and 128; H = 512 (4 tiles), I = 768 (6 tiles).
  auto m = kernelModule("MLP", {{"h", {1, 640, 512}}, {"g", {1, 512}}, {"wg", {512, 768}}, {"wu", {512, 768}},
                                {"wd", {768, 512}}},
                        {{"o", {1, 640, 512}}}, {{"norm_type", "1"}, {"is_tkg", "false"}});
  const auto stats = expand(*m);
  expectLegalExpansion(*m, "node0", "MLP");
  // Per block: gate and up 2 x 6 x 4 matmuls, down 4 x 6.
  EXPECT_EQ(countMatmuls(*m, false), 2u * (2 * 6 * 4 + 4 * 6));
  // x^T: 4 per 128-token tile (5 tiles); out^T back: per 128 columns of H, one per 128 tokens.
  EXPECT_EQ(countMatmuls(*m, true), 5u * 4 + 4 * 4 + 4 * 1);
  EXPECT_LE(stats.sbuf_bytes, 192 * 1024);
  EXPECT_LE(stats.psum_banks, 8);
}

TEST(LeafMLP, TokenGenerationStreamsWeightsAsTheMovingOperand) {
  auto m = kernelModule("MLP", {{"h", {2, 5, 512}}, {"r", {2, 5, 512}}, {"g", {1, 512}}, {"wg", {512, 768}},
                                {"wu", {512, 768}}, {"wd", {768, 512}}, {"bg", {1, 768}}, {"bd", {1, 512}}},
                        {{"o", {2, 5, 512}}, {"sum", {2, 5, 512}}},
                        {{"store_add", "true"}, {"norm_type", "2"}, {"act_fn", "3"}, {"down_bias", "true"},
                         {"gate_bias", "true"}, {"is_tkg", "true"}});
  expand(*m);
  expectLegalExpansion(*m, "node0", "MLP");
  // gate and up: 2 chunks of 512 columns of I x 4 H tiles each; down: 1 chunk of H x 6 I tiles.
  EXPECT_EQ(countMatmuls(*m, false), 2u * 2 * 4 + 6);
  EXPECT_EQ(countMatmuls(*m, true), 4u + 6);  // x^T and h^T; the output is token-major already
  for (const auto& I : m->function(0)->blocks()[0]->instructions())
    if (auto* mm = dyn_cast<InstMatmult>(I.get()); mm && !mm->is_transpose) {
      EXPECT_EQ(mm->ins[0].freeElements(), 10);  // the 10 tokens are the stationary operand
    }
}

TEST(LeafQKV, LayoutsAndTilings) {
  for (const char* tkg : {"false", "true"})
    for (int layout = 0; layout < 3; ++layout) {
      SCOPED_TRACE(std::string("useTkgQKVKernel ") + tkg + ", layout " + std::to_string(layout));
      const int64_t B = 2, S = 100, H = 256, N = 4 + 2 * 2, d = 64;
      std::vector<int64_t> out = layout == 0 ? std::vector<int64_t>{B, S, N * d}
                                 : layout == 1 ? std::vector<int64_t>{N, B, S, d}
                                               : std::vector<int64_t>{N, B, d, S};
      auto m = kernelModule("QKV", {{"h", {B, S, H}}, {"res", {B, S, H}}, {"w", {H, N * d}}, {"g", {1, H}}, {"b", {1, N * d}}},
                            {{"o", out}},
                            {{"num_q_heads", "4"}, {"num_kv_heads", "2"}, {"d_head", "64"}, {"bias", "true"},
                             {"output_layout", std::to_string(layout)}, {"useTkgQKVKernel", tkg}});
      expand(*m);
      expectLegalExpansion(*m, "node0", "QKV");
    }
}

TEST(LeafRMSNormQuant, OneStorePerRowTileUnlessTheScaleIsMisaligned) {
  for (int64_t H : {256, 301}) {
    auto m = kernelModule("QuantOnly", {{"h", {1, 300, H}}, {"g", {1, H}}}, {{"o", {1, 300, H + 4}, DType::float8e4}});
    expand(*m);
    expectLegalExpansion(*m, "node0", "QuantOnly");
    size_t stores = 0;
    for (const auto& I : m->function(0)->blocks()[0]->instructions())
      if (I->nodeClass() == NodeClass::DMA && I->outs[0].loc->isDram()) ++stores;
    EXPECT_EQ(stores, (H % 4 == 0 ? 1u : 2u) * 3) << "H = " << H;  // 3 tiles of 128 rows
  }
}

TEST(LeafAttention, CausalSkipsBlocksAfterTheDiagonalAndMasksByMatmul) {
  for (bool causal : {true, false}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    const std::string name = causal ? "CausalAttentionMMSoftmaxMMWithoutSwap" : "AttentionMMSoftmaxMMWithoutSwap";
    auto m = kernelModule(name,
                          {{"q", {1, 128, 1024}}, {"k", {1, 128, 1024}}, {"v", {1, 1024, 128}}}, {{"o", {1, 128, 1024}}},
                          {{"scale", "0.0883883"}});
    expand(*m);
    expectLegalExpansion(*m, "node0", name);
    // 8 query tiles; causal: tile i sees 128 (i + 1) keys, 1 block for i < 4, 2 after; +1 mask matmul each.
    const size_t qk = causal ? 4 * 1 + 4 * 2 + 8 : 8 * 2;
    const size_t pv = causal ? 36 : 64;  // sum over tiles of the 128-key chunks seen
    EXPECT_EQ(countMatmuls(*m, false), qk + pv);
  }
}

TEST(LeafAttention, GroupedQueryHeadsLoadEachKvHeadOnce) {
  auto m = kernelModule("AttentionMMSoftmaxMMWithoutSwap", {{"q", {8, 64, 256}}, {"k", {2, 64, 256}}, {"v", {2, 256, 64}}},
                        {{"o", {8, 64, 256}}});
  expand(*m);
  expectLegalExpansion(*m, "node0", "AttentionMMSoftmaxMMWithoutSwap");
  size_t kvLoads = 0;
  for (const auto& I : m->function(0)->blocks()[0]->instructions())
    if (I->nodeClass() == NodeClass::DMA && (I->ins[0].loc->name == "k" || I->ins[0].loc->name == "v")) ++kvLoads;
  EXPECT_EQ(kvLoads, 2u * 2);  // k and v of each of the 2 kv heads
}

TEST(LeafBackwardsAttention, Expands) {
  for (bool causal : {true, false}) {
    auto m = kernelModule("BackwardsAttention",
                          {{"q", {4, 64, 640}}, {"k", {2, 64, 640}}, {"v", {2, 64, 640}}, {"o", {4, 64, 640}},
                           {"dy", {4, 64, 640}}, {"lse", {4, 640}, f32}},
                          {{"dq", {4, 64, 640}}, {"dk", {2, 64, 640}}, {"dv", {2, 64, 640}}},
                          {{"is_causal", causal ? "true" : "false"}, {"scale", "0.125"}});
    expand(*m);
    expectLegalExpansion(*m, "node0", "BackwardsAttention");
    // Per head, key blocks of 512 and 128; causal skips the 4 query tiles before the second block
    // and zeroes P above the diagonal in the 5 (query tile, block) pairs that cross it (dS^T goes
    // by DMA: no PE transposes, no identity).
    const size_t pairs = causal ? 5 + 1 : 5 + 5;
    EXPECT_EQ(count(*m, InstructionType::TensorScalarAffineSelect), causal ? 4u * 5 : 0u);
    EXPECT_EQ(countMatmuls(*m, true), 0u);
    EXPECT_GE(countMatmuls(*m, false), 4 * pairs * 4);  // S, dP, dV, dK at least, per head and pair
  }
}

TEST(LeafAttentionTkgFwd, StacksTheGroupsHeadsOnPartitions) {
  auto m = kernelModule("AttentionTkgFwd",
                        {{"q", {8, 64, 4}}, {"kp", {2, 64, 700}}, {"vp", {2, 700, 64}}, {"ka", {2, 64, 4}}, {"va", {2, 4, 64}}},
                        {{"o", {8, 64, 4}}}, {{"prior_len", "650"}, {"scale", "0.125"}});
  expand(*m);
  expectLegalExpansion(*m, "node0", "AttentionTkgFwd");
  for (const auto& I : m->function(0)->blocks()[0]->instructions())
    if (auto* mm = dyn_cast<InstMatmult>(I.get()); mm && !mm->is_transpose && mm->outs[0].freeElements() > 64) {
      EXPECT_EQ(mm->outs[0].partitions(), 16);  // 4 heads x 4 tokens per pass
    }
}

TEST(LeafMoE, RouterAndExperts) {
  auto r = kernelModule("RouterTopK", {{"x", {200, 256}}, {"w", {256, 64}}},
                        {{"l", {200, 64}, f32}, {"i", {200, 10}, DType::int32}, {"a", {200, 64}, f32}},
                        {{"k", "10"}, {"norm_topk_prob", "true"}});
  expand(*r);
  expectLegalExpansion(*r, "node0", "RouterTopK");
  EXPECT_EQ(count(*r, InstructionType::Max), 2u * 2);  // 2 token tiles x 2 rounds of 8
  auto e = kernelModule("ExpertMLPs", {{"x", {300, 256}}, {"a", {300, 4}, f32}, {"g", {4, 256, 128}}, {"u", {4, 256, 128}},
                                       {"d", {4, 128, 256}}},
                        {{"o", {300, 256}}});
  expand(*e);
  expectLegalExpansion(*e, "node0", "ExpertMLPs");
}

TEST(LeafMatmulAndTranspose, Expand) {
  for (const char* name : {"RowTiledMM", "ColumnTiledMM"}) {
    auto m = kernelModule(name, {{"a", {300, 200}}, {"b", {200, 700}}, {"bias", {1, 700}}}, {{"o", {300, 700}}});
    expand(*m);
    expectLegalExpansion(*m, "node0", name);
  }
  auto t = kernelModule("CaymanPackedPETranspose", {{"x", {8, 32, 256}}}, {{"o", {8, 256, 32}}});
  expand(*t);
  expectLegalExpansion(*t, "node0", "CaymanPackedPETranspose");
  EXPECT_EQ(countMatmuls(*t, true), 2u * 2);  // 4 matrices per transpose, 2 column chunks
}

}  // namespace
}  // namespace nxs_leaf_test
