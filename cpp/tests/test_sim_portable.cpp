// The SIMD paths (AVX2 / AVX-512 / F16C, cpp/sim/Simd.h) and the portable paths give the same bits:
// each bulk routine runs on the same data with SIMD allowed and with setSimdAllowed(false), on this
// host. In a portable build (NXS_PORTABLE, or a host without AVX2) there is one path and these skip.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "sim/FastMath.h"
#include "sim/Gemm.h"
#include "sim/Numerics.h"

namespace {

using sim::floatToBits;

// Runs f() with the SIMD paths off, then restores them.
template <class F>
void portably(F&& f) {
  sim::setSimdAllowed(false);
  f();
  sim::setSimdAllowed(true);
}

// Values across the ranges the routines treat differently: tiny, moderate, huge, both signs,
// subnormals, zeros, infinities and NaN; odd lengths leave a scalar tail.
std::vector<float> testValues(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<uint32_t> bits;
  std::normal_distribution<float> nd(0.0f, 6.0f);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i % 3 ? nd(gen) : sim::bitsToFloat(bits(gen));
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(), 88.72f, 88.73f, -103.97f, -104.0f};
  for (size_t i = 0; i < std::size(specials) && i < n; ++i) v[i * 7 % n] = specials[i];
  return v;
}

void expectSameBits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(floatToBits(a[i]), floatToBits(b[i])) << what << " differs at " << i;
}

class SimdVsPortable : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sim::cpuHasAvx2Fma()) GTEST_SKIP() << "no SIMD path in this build or on this host";
  }
};

TEST_F(SimdVsPortable, ExpErfGeluRuns) {
  for (auto run : {&sim::expRun, &sim::erfRun, &sim::geluRun}) {
    const std::vector<float> in = testValues(100003, 11);
    std::vector<float> simd = in, portable = in;
    run(simd.data(), static_cast<int64_t>(simd.size()));
    portably([&] { run(portable.data(), static_cast<int64_t>(portable.size())); });
    expectSameBits(simd, portable, "an exp/erf/Gelu run");
  }
}

TEST_F(SimdVsPortable, Fp16Runs) {
  const std::vector<float> in = testValues(4099, 12);
  std::vector<uint8_t> simd(2 * in.size()), portable(2 * in.size());
  sim::storeRun(bir::DType::float16, simd.data(), 2, static_cast<int64_t>(in.size()), in.data());
  portably([&] { sim::storeRun(bir::DType::float16, portable.data(), 2, static_cast<int64_t>(in.size()), in.data()); });
  ASSERT_EQ(simd, portable);
  std::vector<float> back(in.size()), backPortable(in.size());
  sim::loadRun(bir::DType::float16, simd.data(), 2, static_cast<int64_t>(in.size()), back.data());
  portably([&] { sim::loadRun(bir::DType::float16, simd.data(), 2, static_cast<int64_t>(in.size()), backPortable.data()); });
  expectSameBits(back, backPortable, "an fp16 load");
}

TEST_F(SimdVsPortable, MatmulKernels) {
  std::mt19937 gen(13);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (const auto& kmn : {std::array{128, 128, 512}, std::array{1, 1, 1}, std::array{37, 5, 33},
                          std::array{100, 128, 93}, std::array{128, 70, 200}}) {
    const int K = kmn[0], M = kmn[1], N = kmn[2];  // (not a structured binding: lambdas capture it below)
    for (bir::DType dt : {bir::DType::float32, bir::DType::bfloat16}) {
      const int es = bir::dtypeSize(dt);
      std::vector<uint8_t> a(size_t(K) * M * es), b(size_t(K) * N * es);
      for (size_t i = 0; i < a.size() / es; ++i) sim::storeElement(dt, a.data() + i * es, nd(gen));
      for (size_t i = 0; i < b.size() / es; ++i) sim::storeElement(dt, b.data() + i * es, nd(gen));
      const sim::MatrixRows A{a.data(), int64_t{M} * es, dt}, B{b.data(), int64_t{N} * es, dt};
      std::vector<float> simd(size_t(M) * N, 0.5f), portable = simd;
      for (bool accumulate : {false, true}) {
        sim::GemmEngine g(1);
        g.run(K, M, N, A, B, simd.data(), N, accumulate);
        portably([&] {
          sim::GemmEngine p(1);
          p.run(K, M, N, A, B, portable.data(), N, accumulate);
        });
        expectSameBits(simd, portable, "a matmul");
      }
    }
  }
}

}  // namespace

#if defined(NXS_PORTABLE)
TEST(SimPortableBuild, TakesNoSimdPath) {
  EXPECT_FALSE(sim::cpuHasAvx2Fma());
  EXPECT_FALSE(sim::cpuHasAvx512());
}
#endif
