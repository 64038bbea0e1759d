#include "FastMath.h"

#include <bit>
#include <cmath>
#include <limits>

#include "Numerics.h"
#include "Simd.h"

namespace sim {
namespace {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;        // few mantissa bits: n * kLn2Hi is exact
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kOverflow = 88.72283935546875f;
constexpr float kUnderflow = -103.972076416f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

inline float pow2(int32_t e) { return bitsToFloat(static_cast<uint32_t>(e + 127) << 23); }

#if NXS_X86_SIMD
__attribute__((target("avx2"))) void expRunAvx2(float* v, int64_t n) {
  const __m256 log2e = _mm256_set1_ps(kLog2e), hi = _mm256_set1_ps(kLn2Hi), lo = _mm256_set1_ps(kLn2Lo);
  const __m256 over = _mm256_set1_ps(kOverflow), under = _mm256_set1_ps(kUnderflow);
  const __m256 one = _mm256_set1_ps(1.0f), inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  const __m256i bias = _mm256_set1_epi32(127);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(v + i);
    const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, under), over);  // keeps n in range
    const __m256 nf = _mm256_round_ps(_mm256_mul_ps(xc, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_sub_ps(xc, _mm256_mul_ps(nf, hi));
    r = _mm256_sub_ps(r, _mm256_mul_ps(nf, lo));
    __m256 p = _mm256_set1_ps(kP0);
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kP1));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kP2));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kP3));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kP4));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kP5));
    p = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(p, _mm256_mul_ps(r, r)), r), one);
    const __m256i ni = _mm256_cvtps_epi32(nf);
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
    y = _mm256_blendv_ps(y, inf, _mm256_cmp_ps(x, over, _CMP_GT_OQ));
    y = _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(x, under, _CMP_LT_OQ));
    y = _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));  // NaN
    _mm256_storeu_ps(v + i, y);
  }
  for (; i < n; ++i) v[i] = expf32(v[i]);
}
#endif

// ---- erf and Gelu: evaluated in double precision, rounded once to fp32 ----
//
// For z >= 0, erfc(z) = t exp(g(u) - z^2), t = 2 / (2 + z), u = 2t - 1 in (-1, 1], with g a
// polynomial fitted by scripts/fit_erfc.py (erfc's relative error <= 1.4e-12, so the fp32 results
// are correctly rounded except within ~1e-4 ulp of a tie). Gelu is x Phi(x) with
// Phi(x) = 1 - erfc(|x| / sqrt 2) / 2 for x >= 0, erfc(|x| / sqrt 2) / 2 below: the left tail
// keeps its relative accuracy (1 + erf(x / sqrt 2) in fp32 would cancel to nothing). erf itself
// is its Taylor series below |x| = 1/2 (relative accuracy near 0) and 1 - erfc(|x|) above.
// Scalar and AVX2 versions perform the same IEEE double operations in the same order (no fused
// multiply-adds), so every host gives the same bits.

// Gelu of NaN: Gelu(NaN) is x's own NaN, quieted (x + x). x Phi(x) would multiply two NaNs, x's and
// Phi's (which has |x|'s sign), and which of two NaN operands a multiply returns depends on the
// order the compiler put them in: GCC and clang (under ASan) chose differently.

// g(u), degree 18: |error| <= 1.33e-12 on z in [0, 30] (relative error of erfc)
constexpr double kErfcPoly[] = {
    -0.6717940840566923, 0.6726432239992207, 0.047343306853420045, -0.04689561153577452,
    -0.009872690055732311, 0.00882496197557028, 0.0017589456274281123, -0.0023460061458611707,
    -0.00014634251391440332, 0.0006745612262982466, -9.332732318680457e-05, -0.0001767237232794933,
    7.039377629537494e-05, 3.591550891488432e-05, -2.8728222458228542e-05, -4.423967921914149e-06,
    7.4079397037214836e-06, 1.6440447468898797e-07, -9.43767812905686e-07,
};

constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr double kErfSeriesBelow = 0.5;
// erf(x) = x * sum_n kErfSeries[n] x^(2n): 2 / sqrt(pi) * (-1)^n / (n! (2n + 1)); the first term
// left out is below 4e-15 relative for |x| < 1/2.
constexpr double kErfSeries[] = {
    1.1283791670955126, -0.37612638903183754, 0.11283791670955126, -0.026866170645131252,
    0.005223977625442188, -0.0008548327023450852, 0.00012055332981789664, -1.492565035840625e-05,
    1.6462114365889246e-06, -1.6365844691234924e-07, 1.4807192815879218e-08,
};
// exp(a) for a <= 1: 2^n exp(r), r = a - n ln2 in two parts (n ln2Hi is exact), exp(r) by its
// Taylor series to r^11 (|r| <= ln2 / 2: the rest is below 7e-15 relative). a < -708 gives 0.
constexpr double kLog2eD = 1.4426950408889634;
constexpr double kLn2HiD = 0.693147180369123816490, kLn2LoD = 1.90821492927058770002e-10;  // fdlibm's split
constexpr double kExpFloor = -708.0;
constexpr double kInvFactorial[] = {
    1.0, 1.0, 0.5, 0.16666666666666666, 0.041666666666666664, 0.008333333333333333, 0.001388888888888889,
    0.0001984126984126984, 2.48015873015873e-05, 2.7557319223985893e-06, 2.755731922398589e-07,
    2.505210838544172e-08,
};

// sum_i c[i] x^i by Estrin's scheme: pairs c[2i] + c[2i+1] x, then pairs of those with x^2, ...
// A few more multiplies than Horner's rule, but a dependency chain of log2(N) steps rather than N
// (the AVX2 version below takes the same steps, so results agree bit for bit).
template <int N>
double estrin(const double (&c)[N], double x) {
  double p[N];
  for (int i = 0; i < N; ++i) p[i] = c[i];
  for (int n = N; n > 1; n = (n + 1) / 2, x = x * x) {
    for (int i = 0; i < n / 2; ++i) p[i] = p[2 * i] + p[2 * i + 1] * x;
    if (n % 2) p[n / 2] = p[n - 1];
  }
  return p[0];
}

double expNonPositive(double a) {
  if (std::isnan(a)) return a;
  if (a < kExpFloor) return 0.0;
  const double n = std::nearbyint(a * kLog2eD);
  double r = a - n * kLn2HiD;
  r = r - n * kLn2LoD;
  const auto scale = std::bit_cast<double>(static_cast<uint64_t>(static_cast<int64_t>(n) + 1023) << 52);
  return estrin(kInvFactorial, r) * scale;
}

// erfc(z) for z >= 0 (+inf gives 0, NaN stays NaN).
double erfcNonNegative(double z) {
  const double t = 2.0 / (2.0 + z), u = 2.0 * t - 1.0;
  return t * expNonPositive(estrin(kErfcPoly, u) - z * z);
}

#if NXS_X86_SIMD
// The AVX2 versions work on kBlock vectors at once: each is a long chain of dependent multiplies
// and adds, and interleaving independent chains keeps the FP units busy.
constexpr int kBlock = 4;
using Block = __m256d[kBlock];
#define NXS_EACH _Pragma("GCC unroll 4") for (int k = 0; k < kBlock; ++k)

// estrin() on each of the block's vectors: x in, the polynomial's values out.
template <int N>
__attribute__((target("avx2"))) inline void estrinAvx2(const double (&c)[N], Block x) {
  __m256d p[N][kBlock];
#pragma GCC unroll 32
  for (int i = 0; i < N; ++i) NXS_EACH p[i][k] = _mm256_set1_pd(c[i]);
#pragma GCC unroll 8
  for (int n = N; n > 1; n = (n + 1) / 2) {
#pragma GCC unroll 16
    for (int i = 0; i < n / 2; ++i)
      NXS_EACH p[i][k] = _mm256_add_pd(p[2 * i][k], _mm256_mul_pd(p[2 * i + 1][k], x[k]));
    if (n % 2) NXS_EACH p[n / 2][k] = p[n - 1][k];
    NXS_EACH x[k] = _mm256_mul_pd(x[k], x[k]);
  }
  NXS_EACH x[k] = p[0][k];
}

__attribute__((target("avx2"))) inline void expNonPositiveAvx2(Block a) {
  Block n, p;
  NXS_EACH {
    n[k] = _mm256_round_pd(_mm256_mul_pd(a[k], _mm256_set1_pd(kLog2eD)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    p[k] = _mm256_sub_pd(a[k], _mm256_mul_pd(n[k], _mm256_set1_pd(kLn2HiD)));
    p[k] = _mm256_sub_pd(p[k], _mm256_mul_pd(n[k], _mm256_set1_pd(kLn2LoD)));
  }
  estrinAvx2(kInvFactorial, p);
  NXS_EACH {
    // 2^n: n + 1023 lands in the low mantissa bits of 2^52 + 2^51 + n + 1023 (exact; the 2^51 bit
    // keeps the sum's exponent fixed and is shifted out). Lanes where a < kExpFloor (or NaN) get
    // a meaningless scale here and are replaced below.
    const __m256d biased = _mm256_add_pd(n[k], _mm256_set1_pd(6755399441055744.0 + 1023.0));
    const __m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_castpd_si256(biased), 52));
    const __m256d y = _mm256_mul_pd(p[k], scale);
    const __m256d low = _mm256_cmp_pd(a[k], _mm256_set1_pd(kExpFloor), _CMP_LT_OQ);
    const __m256d nan = _mm256_cmp_pd(a[k], a[k], _CMP_UNORD_Q);
    a[k] = _mm256_blendv_pd(_mm256_blendv_pd(y, _mm256_setzero_pd(), low), a[k], nan);
  }
}

// z >= 0 in, erfc(z) out.
__attribute__((target("avx2"))) inline void erfcNonNegativeAvx2(Block z) {
  Block t, g;
  NXS_EACH {
    t[k] = _mm256_div_pd(_mm256_set1_pd(2.0), _mm256_add_pd(_mm256_set1_pd(2.0), z[k]));
    g[k] = _mm256_sub_pd(_mm256_mul_pd(_mm256_set1_pd(2.0), t[k]), _mm256_set1_pd(1.0));
  }
  estrinAvx2(kErfcPoly, g);
  NXS_EACH g[k] = _mm256_sub_pd(g[k], _mm256_mul_pd(z[k], z[k]));
  expNonPositiveAvx2(g);
  NXS_EACH z[k] = _mm256_mul_pd(t[k], g[k]);
}

__attribute__((target("avx2"))) inline __m256d absAvx2(__m256d x) {
  return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
}

__attribute__((target("avx2"))) inline void geluAvx2(Block x) {
  Block e;
  NXS_EACH e[k] = _mm256_mul_pd(absAvx2(x[k]), _mm256_set1_pd(kInvSqrt2));
  erfcNonNegativeAvx2(e);
  NXS_EACH {
    const __m256d half = _mm256_mul_pd(_mm256_set1_pd(0.5), e[k]);
    const __m256d phi = _mm256_blendv_pd(half, _mm256_sub_pd(_mm256_set1_pd(1.0), half),
                                         _mm256_cmp_pd(x[k], _mm256_setzero_pd(), _CMP_GE_OQ));
    // Gelu(-inf) is its limit, -0 (x * phi is -inf * 0); Gelu(+inf) = +inf * 1 already
    const __m256d minusInf = _mm256_cmp_pd(x[k], _mm256_set1_pd(-kInfD), _CMP_EQ_OQ);
    x[k] = _mm256_blendv_pd(_mm256_mul_pd(x[k], phi), _mm256_add_pd(x[k], x[k]),
                            _mm256_cmp_pd(x[k], x[k], _CMP_UNORD_Q));  // Gelu of NaN: see above kErfcPoly
    x[k] = _mm256_blendv_pd(x[k], _mm256_set1_pd(-0.0), minusInf);
  }
}

__attribute__((target("avx2"))) inline void erfAvx2(Block x) {
  Block e, s;
  NXS_EACH {
    e[k] = absAvx2(x[k]);
    s[k] = _mm256_mul_pd(x[k], x[k]);
  }
  estrinAvx2(kErfSeries, s);
  const __m256d signBit = _mm256_set1_pd(-0.0);
  Block near;
  NXS_EACH near[k] = _mm256_cmp_pd(e[k], _mm256_set1_pd(kErfSeriesBelow), _CMP_LT_OQ);
  erfcNonNegativeAvx2(e);
  NXS_EACH {
    const __m256d far = _mm256_or_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), e[k]), _mm256_and_pd(x[k], signBit));  // +-
    x[k] = _mm256_blendv_pd(far, _mm256_mul_pd(x[k], s[k]), near[k]);
  }
}

// v[i] = f(v[i]) through double precision, 4 * kBlock at a time.
template <void (*F)(Block), float (*Scalar)(float)>
__attribute__((target("avx2"))) void doubleRunAvx2(float* v, int64_t n) {
  int64_t i = 0;
  for (; i + 4 * kBlock <= n; i += 4 * kBlock) {
    Block x;
    NXS_EACH x[k] = _mm256_cvtps_pd(_mm_loadu_ps(v + i + 4 * k));
    F(x);
    NXS_EACH _mm_storeu_ps(v + i + 4 * k, _mm256_cvtpd_ps(x[k]));
  }
  for (; i < n; ++i) v[i] = Scalar(v[i]);
}
#undef NXS_EACH
#endif  // NXS_X86_SIMD

}  // namespace

float erf32(float x) {
  const double xd = x, ax = std::fabs(xd);
  if (ax < kErfSeriesBelow) return static_cast<float>(xd * estrin(kErfSeries, xd * xd));
  return static_cast<float>(std::copysign(1.0 - erfcNonNegative(ax), xd));
}

float gelu32(float x) {
  const double xd = x;
  if (std::isnan(xd)) return static_cast<float>(xd + xd);  // Gelu of NaN: see above kErfcPoly
  if (xd == -kInfD) return -0.0f;  // the limit (x * phi is -inf * 0), as geluAvx2
  const double half = 0.5 * erfcNonNegative(std::fabs(xd) * kInvSqrt2);
  return static_cast<float>(xd * (xd >= 0 ? 1.0 - half : half));
}

void erfRun(float* v, int64_t n) {
#if NXS_X86_SIMD
  if (cpuHasAvx2Fma()) return doubleRunAvx2<erfAvx2, erf32>(v, n);
#endif
  for (int64_t i = 0; i < n; ++i) v[i] = erf32(v[i]);
}

void geluRun(float* v, int64_t n) {
#if NXS_X86_SIMD
  if (cpuHasAvx2Fma()) return doubleRunAvx2<geluAvx2, gelu32>(v, n);
#endif
  for (int64_t i = 0; i < n; ++i) v[i] = gelu32(v[i]);
}

float expf32(float x) {
  if (std::isnan(x)) return x;
  if (x > kOverflow) return std::numeric_limits<float>::infinity();
  if (x < kUnderflow) return 0.0f;
  const float nf = std::nearbyint(x * kLog2e);
  float r = x - nf * kLn2Hi;
  r = r - nf * kLn2Lo;
  float p = kP0;
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  p = (p * (r * r) + r) + 1.0f;
  const auto ni = static_cast<int32_t>(nf);
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  return (p * pow2(n1)) * pow2(n2);
}

void expRun(float* v, int64_t n) {
#if NXS_X86_SIMD
  if (cpuHasAvx2Fma()) return expRunAvx2(v, n);
#endif
  for (int64_t i = 0; i < n; ++i) v[i] = expf32(v[i]);
}

}  // namespace sim
