// The simulator's numbers: store rules of every dtype (docs/isa-semantics.md §2), ALU corner cases,
// the matmul kernel against a naive product, and end-to-end runs of small modules.
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>

#include "sim/Alu.h"
#include "sim/FastMath.h"
#include "sim/Gemm.h"
#include "test_sim_kit.h"

using namespace sim_test;
using sim::bitsToFloat;
using sim::floatToBits;

TEST(SimNumerics, Bf16RoundsToNearestEven) {
  EXPECT_EQ(sim::floatToBf16(bitsToFloat(0x3F808000u)), 0x3F80);  // halfway, even stays
  EXPECT_EQ(sim::floatToBf16(bitsToFloat(0x3F818000u)), 0x3F82);  // halfway, odd rounds up
  EXPECT_EQ(sim::floatToBf16(bitsToFloat(0x3F808001u)), 0x3F81);
  EXPECT_EQ(sim::floatToBf16(bitsToFloat(0x7F7FFFFFu)), 0x7F80);  // overflow -> inf
  const uint16_t nan = sim::floatToBf16(bitsToFloat(0x7F800001u));
  EXPECT_TRUE(std::isnan(sim::bf16ToFloat(nan)));
  EXPECT_EQ(sim::floatToBf16(-0.0f), 0x8000);
}

#if defined(__x86_64__)
// The oracle is the x86 converter instruction (present on this host whether or not the build
// takes the SIMD paths, NXS_PORTABLE).
namespace {
bool hostHasF16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
}
__attribute__((target("f16c"))) uint16_t hwToFp16(float f) {
  return static_cast<uint16_t>(_mm_cvtsi128_si32(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT)));
}
__attribute__((target("f16c"))) float hwFromFp16(uint16_t h) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h))); }
}  // namespace

TEST(SimNumerics, Fp16MatchesTheHardwareConverter) {
  if (!hostHasF16c()) GTEST_SKIP() << "no F16C";
  std::mt19937 gen(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const float f = bitsToFloat(i < 100000 ? bits(gen) : (bits(gen) & 0x8FFFFFFFu) | 0x30000000u);
    const uint16_t hw = hwToFp16(f);
    const uint16_t sw = sim::floatToFp16(f);
    ASSERT_EQ(sw, hw) << std::hexfloat << f;  // NaN payloads too
    ASSERT_EQ(floatToBits(sim::fp16ToFloat(sw)), floatToBits(hwFromFp16(hw)));
  }
}
#endif  // __x86_64__

TEST(SimNumerics, Fp8SaturatesAndRoundsToNearestEven) {
  auto e4 = [](float f) { return sim::encodeSmallFloat<4, 3, true>(f); };
  auto d4 = [](uint32_t v) { return sim::decodeSmallFloat<4, 3>(v); };
  EXPECT_EQ(d4(e4(240.0f)), 240.0f);
  EXPECT_EQ(d4(e4(1000.0f)), 240.0f);  // saturate
  EXPECT_EQ(d4(e4(-std::numeric_limits<float>::infinity())), -240.0f);
  EXPECT_TRUE(std::isnan(d4(e4(std::nanf("")))));
  EXPECT_EQ(d4(e4(0x1p-9f)), 0x1p-9f);          // smallest subnormal
  EXPECT_EQ(d4(e4(0x1p-10f)), 0.0f);            // halfway to 0: even
  EXPECT_EQ(d4(e4(0x1.8p-10f)), 0x1p-9f);
  EXPECT_EQ(d4(e4(1.0625f)), 1.0f);             // halfway between 1 and 1.125: even
  EXPECT_EQ(d4(e4(1.1875f)), 1.25f);            // halfway between 1.125 and 1.25: even
  EXPECT_EQ((sim::decodeSmallFloat<5, 2>(sim::encodeSmallFloat<5, 2, true>(1e6f))), 57344.0f);
  EXPECT_EQ((sim::decodeSmallFloat<3, 4>(sim::encodeSmallFloat<3, 4, true>(100.0f))), 15.5f);
  for (uint32_t v = 0; v < 256; ++v) {  // every finite code decodes and re-encodes to itself
    const float f = d4(v);
    if (std::isfinite(f)) {
      EXPECT_EQ(e4(f), v) << v;
    }
  }
}

TEST(SimNumerics, IntegerStoresRoundSaturateAndZeroNaN) {
  EXPECT_EQ(sim::floatToInt<int8_t>(2.5f), 2);
  EXPECT_EQ(sim::floatToInt<int8_t>(3.5f), 4);
  EXPECT_EQ(sim::floatToInt<int8_t>(-300.0f), -128);
  EXPECT_EQ(sim::floatToInt<uint8_t>(-3.0f), 0);
  EXPECT_EQ(sim::floatToInt<int32_t>(3e9f), INT32_MAX);
  EXPECT_EQ(sim::floatToInt<int64_t>(1e30f), INT64_MAX);
  EXPECT_EQ(sim::floatToInt<uint32_t>(std::nanf("")), 0u);
  uint8_t buf[8];
  sim::storeInt64Element(DType::int16, buf, 100000);
  int16_t v;
  std::memcpy(&v, buf, 2);
  EXPECT_EQ(v, INT16_MAX);
}

TEST(SimNumerics, AluCornerCases) {
  using sim::alu;
  using enum AluOp;
  EXPECT_EQ(alu<mod>(-7.0f, 3.0f), 2.0f);  // sign of b, as numpy.mod
  EXPECT_EQ(alu<mod>(7.0f, -3.0f), -2.0f);
  EXPECT_TRUE(std::isnan(alu<max>(std::nanf(""), 1.0f)));
  EXPECT_EQ(alu<arith_shift_right>(-16.0f, 40.0f), -1.0f);
  EXPECT_EQ(alu<arith_shift_left>(1.0f, 32.0f), 0.0f);
  EXPECT_EQ(alu<logical_shift_right>(8.0f, 2.0f), 2.0f);
  EXPECT_EQ(alu<bitwise_not>(0.0f, 0.0f), -1.0f);
  EXPECT_EQ(alu<bitwise_and>(6.9f, 3.0f), 2.0f);  // int32 truncates toward zero
  EXPECT_EQ(alu<average>(1.0f, 2.0f), 1.5f);
  // mod as numpy.mod: exact, with b's sign (a - b * floor(a / b) in fp32 gives 0 for (1, 0.1f))
  EXPECT_EQ(alu<mod>(1.0f, 0.1f), std::fmod(1.0f, 0.1f));
  EXPECT_NE(alu<mod>(1.0f, 0.1f), 0.0f);
  EXPECT_EQ(alu<mod>(5.0f, -3.0f), -1.0f);
  EXPECT_EQ(alu<mod>(-5.0f, 3.0f), 1.0f);
  EXPECT_EQ(alu<mod>(1.0f, INFINITY), 1.0f);
  EXPECT_EQ(alu<mod>(-1.0f, INFINITY), INFINITY);
  EXPECT_TRUE(std::signbit(alu<mod>(6.0f, -3.0f)));
  EXPECT_FALSE(std::signbit(alu<mod>(-6.0f, 3.0f)));
  EXPECT_TRUE(std::isnan(alu<mod>(1.0f, 0.0f)));
  EXPECT_EQ(alu<is_ge>(2.0f, 2.0f), 1.0f);
  EXPECT_EQ(alu<logical_xor>(0.0f, -3.0f), 1.0f);
  EXPECT_EQ(sim::aluDyn(subtract, 5.0f, 2.0f), 3.0f);
}

namespace {
// Naive fp64 reference of C = A^T B for A [K, M], B [K, N].
std::vector<double> naive(int K, int M, int N, const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<double> c(static_cast<size_t>(M) * N, 0.0);
  for (int k = 0; k < K; ++k)
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) c[static_cast<size_t>(m) * N + n] += double(a[size_t(k) * M + m]) * b[size_t(k) * N + n];
  return c;
}
}  // namespace

TEST(SimNumerics, GemmKernelMatchesNaiveAndIgnoresThreadCount) {
  std::mt19937 gen(3);
  std::normal_distribution<float> nd;
  // M = 128, 37, 14, 13, 8, 7 split their last rows into 4-row panels (6k + 1 or 2 rows), and
  // their last panels end too close to the row's end for an 8-element read; N = 77, 40, 17, 93,
  // 200 end in a partial 16-column B panel. 128 x 128 x 512, 100 x 128 x 93 and 47 x 120 x 200 are
  // large enough to be shared by threads, the last two with a short last range of k rows.
  for (auto [K, M, N] :
       {std::array{128, 128, 512}, std::array{5, 37, 77}, std::array{64, 6, 16}, std::array{1, 1, 1},
        std::array{128, 14, 512}, std::array{33, 13, 40}, std::array{128, 8, 512}, std::array{9, 7, 17},
        std::array{100, 128, 93}, std::array{47, 120, 200}}) {
    // The operands' values are bf16 values, so that they can also be given as bf16 (the
    // kernel's other packing paths) and must then give the very same bits.
    auto bf16Values = [&](std::vector<float>& v, std::vector<uint16_t>& v16) {
      for (size_t i = 0; i < v.size(); ++i) {
        v16[i] = static_cast<uint16_t>(floatToBits(nd(gen)) >> 16);
        v[i] = bitsToFloat(uint32_t{v16[i]} << 16);
      }
    };
    std::vector<float> a(size_t(K) * M), b(size_t(K) * N);
    std::vector<uint16_t> a16(a.size()), b16(b.size());
    bf16Values(a, a16);
    bf16Values(b, b16);
    const auto ref = naive(K, M, N, a, b);
    std::vector<float> c1(size_t(M) * N, 1.0f), c3 = c1, c16 = c1, c1616 = c1, cNarrow = c1;
    sim::GemmEngine one(1), three(3), narrow(1);
    narrow.useWideKernel(false);  // the 16-column kernel only (where the CPU has AVX-512, `one` pairs panels)
    sim::MatrixRows A{reinterpret_cast<const uint8_t*>(a.data()), int64_t{M} * 4, DType::float32};
    sim::MatrixRows A16{reinterpret_cast<const uint8_t*>(a16.data()), int64_t{M} * 2, DType::bfloat16};
    sim::MatrixRows B{reinterpret_cast<const uint8_t*>(b.data()), int64_t{N} * 4, DType::float32};
    sim::MatrixRows B16{reinterpret_cast<const uint8_t*>(b16.data()), int64_t{N} * 2, DType::bfloat16};
    one.run(K, M, N, A, B, c1.data(), N, true);
    three.run(K, M, N, A, B, c3.data(), N, true);
    three.run(K, M, N, A, B16, c16.data(), N, true);
    one.run(K, M, N, A16, B16, c1616.data(), N, true);
    narrow.run(K, M, N, A, B, cNarrow.data(), N, true);
    for (size_t i = 0; i < c1.size(); ++i) {
      ASSERT_EQ(floatToBits(c1[i]), floatToBits(c3[i])) << "thread count changed a result";
      ASSERT_EQ(floatToBits(c1[i]), floatToBits(c16[i])) << "bf16 B changed a result at " << i;
      ASSERT_EQ(floatToBits(c1[i]), floatToBits(c1616[i])) << "bf16 A changed a result at " << i;
      ASSERT_EQ(floatToBits(c1[i]), floatToBits(cNarrow[i])) << "the kernel's width changed a result at " << i;
      ASSERT_NEAR(c1[i], ref[i] + 1.0, 1e-4 * (1 + std::abs(ref[i]))) << K << "x" << M << "x" << N;
    }
  }
}

TEST(SimNumerics, GemmKernelRefusedByItsRowCheckLeavesOutputAlone) {
  const int K = 128, M = 128, N = 512;  // large enough for the worker threads
  std::vector<float> a(size_t(K) * M, 1.0f), b(size_t(K) * N, 1.0f), c(size_t(M) * N, 7.0f);
  sim::MatrixRows A{reinterpret_cast<const uint8_t*>(a.data()), int64_t{M} * 4, DType::float32};
  sim::MatrixRows B{reinterpret_cast<const uint8_t*>(b.data()), int64_t{N} * 4, DType::float32};
  for (int threads : {1, 2}) {
    sim::GemmEngine g(threads);
    std::atomic<int> rowsSeen{0};
    auto refuseRow100 = [](void* ctx, int k0, int k1) {
      static_cast<std::atomic<int>*>(ctx)->fetch_add(k1 - k0);
      return !(k0 <= 100 && 100 < k1);
    };
    EXPECT_FALSE(g.run(K, M, N, A, B, c.data(), N, false, refuseRow100, &rowsSeen));
    EXPECT_LE(rowsSeen.load(), K);
    for (float x : c) ASSERT_EQ(x, 7.0f);
    auto acceptAll = [](void*, int, int) { return true; };
    EXPECT_TRUE(g.run(K, M, N, A, B, c.data(), N, false, acceptAll, nullptr));
    EXPECT_EQ(c[0], float(K));
    std::fill(c.begin(), c.end(), 7.0f);
  }
}

TEST(SimNumerics, EndToEndElementwiseAndMatmul) {
  Kit k;
  const int K = 96, M = 70, N = 200;
  auto* x = k.dram("x", MemoryType::Input, {K, M}, DType::bfloat16);
  auto* w = k.dram("w", MemoryType::Input, {K, N}, DType::bfloat16);
  auto* y = k.dram("y", MemoryType::Output, {M, N}, DType::float32);
  auto* xs = k.sbuf("xs", K, M, DType::bfloat16);
  auto* ws = k.sbuf("ws", K, N, DType::bfloat16);
  auto* acc = k.psum("acc", M, N);
  auto* ys = k.sbuf("ys", M, N);
  k.dma(Kit::tile(xs), Kit::full(x));
  k.dma(Kit::tile(ws), Kit::full(w), 1);
  for (int i = 0; i < 2; ++i) {
    auto* mm = k.add<InstMatmult>(InstructionType::Matmult, {Kit::tile(xs), Kit::tile(ws)}, {Kit::tile(acc)});
    mm->start_tensor_calc = i == 0;
  }
  auto* ts = k.add<InstTensorScalar>(InstructionType::TensorScalar, {Kit::tile(acc)}, {Kit::tile(ys)});
  ts->op0 = AluOp::add;
  ts->const0 = 0.5;
  k.dma(Kit::full(y), Kit::tile(ys));
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> ud(-1, 1);
  std::vector<float> a(size_t(K) * M), b(size_t(K) * N);
  for (auto& v : a) v = sim::bf16ToFloat(sim::floatToBf16(ud(gen)));
  for (auto& v : b) v = sim::bf16ToFloat(sim::floatToBf16(ud(gen)));
  k.fill("x", toBf16(a));
  k.fill("w", toBf16(b));
  const auto r = k.run();
  const auto got = k.read<float>("y");
  const auto ref = naive(K, M, N, a, b);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], 2 * ref[i] + 0.5, 1e-4) << i;
  EXPECT_GT(r.total_ns, 0);
  EXPECT_EQ(r.records.size(), 6u);
}

// erf and Gelu are computed in double precision and rounded once: against long-double references,
// every result is within 1 ulp and nearly all are correctly rounded, Gelu's left tail included
// (the fp32 formula x/2 (1 + erf(x / sqrt 2)) cancels there: 4% off at x = -5, 57% at -5.5, and
// 0 from -6 on).
TEST(SimNumerics, ErfAndGeluAreCorrectlyRoundedAndBulkEqualsScalar) {
  const auto ordered = [](float f) {  // float bits in an order where adjacent floats differ by 1
    const auto b = static_cast<int64_t>(floatToBits(f) & 0x7fffffff);
    return std::signbit(f) ? -b : b;
  };
  std::vector<float> xs;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4093) {
    const float x = bitsToFloat(static_cast<uint32_t>(u));
    if (!std::isnan(x)) xs.push_back(x);
  }
  for (float x = -16.0f; x < 16.0f; x += 0.000977f) xs.push_back(x);  // the interesting range, densely
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, 0.5f, -0.5f, 0.49999997f, inf, -inf}) xs.push_back(x);
  std::vector<float> erfs = xs, gelus = xs;
  sim::erfRun(erfs.data(), static_cast<int64_t>(erfs.size()));
  sim::geluRun(gelus.data(), static_cast<int64_t>(gelus.size()));
  int64_t roundedOff = 0, normal = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float x = xs[i], e = sim::erf32(x), g = sim::gelu32(x);
    ASSERT_EQ(floatToBits(e), floatToBits(erfs[i])) << x;  // identical on every host
    ASSERT_EQ(floatToBits(g), floatToBits(gelus[i])) << x;
    if (std::isinf(x)) continue;
    const long double xl = x;
    const float wantE = static_cast<float>(std::erfl(xl));
    const float wantG = static_cast<float>(xl * 0.5L * std::erfcl(-xl / std::sqrt(2.0L)));
    ASSERT_LE(std::llabs(ordered(e) - ordered(wantE)), 1) << "erf " << x << " = " << e << ", want " << wantE;
    ASSERT_LE(std::llabs(ordered(g) - ordered(wantG)), 1) << "gelu " << x << " = " << g << ", want " << wantG;
    for (auto [got, want] : {std::pair{e, wantE}, std::pair{g, wantG}}) {
      if (std::fabs(want) < std::numeric_limits<float>::min()) continue;  // subnormal: ties are common
      ++normal;
      roundedOff += got != want;
    }
  }
  EXPECT_LT(roundedOff, normal / 100000) << roundedOff << " of " << normal << " not correctly rounded";
  EXPECT_EQ(sim::erf32(inf), 1.0f);
  EXPECT_EQ(sim::erf32(-inf), -1.0f);
  EXPECT_EQ(sim::gelu32(inf), inf);
  // the limit, not -inf * 0: the public table gives Gelu the valid input range [-inf, inf]
  EXPECT_EQ(sim::gelu32(-inf), 0.0f);
  EXPECT_TRUE(std::signbit(sim::gelu32(-inf)));
  EXPECT_TRUE(std::isnan(sim::erf32(std::nanf(""))) && std::isnan(sim::gelu32(std::nanf(""))));
  EXPECT_TRUE(std::signbit(sim::erf32(-0.0f)) && std::signbit(sim::gelu32(-0.0f)));
}

TEST(SimNumerics, ExpBulkEqualsScalarAndIsAccurate) {
  std::vector<float> xs;
  for (float x = -110.0f; x < 90.0f; x += 0.01234f) xs.push_back(x);
  for (float x : {0.0f, -0.0f, 88.72f, 88.7229f, -103.97f, -104.0f, 1e-30f}) xs.push_back(x);
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  xs.push_back(std::nanf(""));
  std::vector<float> bulk = xs;
  sim::expRun(bulk.data(), static_cast<int64_t>(bulk.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    const float s = sim::expf32(xs[i]);
    ASSERT_EQ(floatToBits(s), floatToBits(bulk[i])) << xs[i];  // identical on every host
    if (std::isnan(xs[i])) continue;
    const double ref = std::exp(static_cast<double>(xs[i]));
    if (ref > 3.4e38) {
      EXPECT_TRUE(std::isinf(s) || s > 3.39e38f) << xs[i];
    } else if (ref >= std::numeric_limits<float>::min()) {
      EXPECT_NEAR(s, ref, 2.5e-7 * ref) << xs[i];  // about 2 ulp
    } else {
      EXPECT_NEAR(s, ref, 2e-45) << xs[i];         // subnormal results: within one subnormal step
    }
  }
}
