#include "FastMath.h"

#include <immintrin.h>

#include <cmath>
#include <limits>

#include "Numerics.h"

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

}  // namespace

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
  if (cpuHasAvx2Fma()) return expRunAvx2(v, n);
  for (int64_t i = 0; i < n; ++i) v[i] = expf32(v[i]);
}

}  // namespace sim
