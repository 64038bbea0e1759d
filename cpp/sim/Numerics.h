// The numbers of the engines (docs/isa-semantics.md section 2-4): every element is read into
// fp32, computed in fp32 and converted to the destination dtype when written, with
// round-to-nearest-even; fp8 saturates, integers saturate and map NaN to 0.
//
// Scalar codecs (load/store one element) and bulk runs (n elements at a byte stride) for every
// dtype; the bulk runs are where the time goes, so the common dtypes have vectorisable loops and
// AVX2/F16C versions picked at run time.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "bir/Enums.h"

namespace sim {

using bir::DType;

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// ---- 16-bit and 8-bit floats ----

inline float bf16ToFloat(uint16_t h) { return bitsToFloat(static_cast<uint32_t>(h) << 16); }
// RNE; overflow rounds to inf; NaN stays NaN (quietened, sign kept).
inline uint16_t floatToBf16(float f) {
  const uint32_t u = floatToBits(f);
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>(nan ? ((u >> 16) | 0x40u) : rounded);
}

// A binary float with E exponent and M mantissa bits, IEEE-style (the all-ones exponent holds inf
// and NaN): fp16 (5,10), float8e4 = e4m3 (4,3, max 240), float8e5 = e5m2 (5,2, max 57344),
// float8e3 = e3m4 (3,4, max 15.5). Saturate: overflow and inf go to +-max finite (the fp8 rule).
template <int E, int M>
inline float decodeSmallFloat(uint32_t v) {
  constexpr int kBias = (1 << (E - 1)) - 1;
  constexpr uint32_t kExpMax = (1u << E) - 1;
  const uint32_t sign = (v >> (E + M)) & 1u;
  const uint32_t e = (v >> M) & kExpMax;
  const uint32_t m = v & ((1u << M) - 1);
  float r;
  if (e == 0)
    r = std::ldexp(static_cast<float>(m), 1 - kBias - M);
  else if (e == kExpMax)
    r = m ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    r = bitsToFloat(((e + 127 - kBias) << 23) | (m << (23 - M)));
  return sign ? -r : r;
}

template <int E, int M, bool Saturate>
inline uint32_t encodeSmallFloat(float f) {
  constexpr int kBias = (1 << (E - 1)) - 1;
  constexpr uint32_t kExpMax = (1u << E) - 1;
  constexpr uint32_t kMaxFinite = ((kExpMax - 1) << M) | ((1u << M) - 1);
  constexpr uint32_t kInf = kExpMax << M;
  const uint32_t u = floatToBits(f);
  const uint32_t sign = (u >> 31) << (E + M);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | kInf | (1u << (M - 1));  // NaN
  if (a == 0x7f800000u) return sign | (Saturate ? kMaxFinite : kInf);
  const int exp = static_cast<int>(a >> 23) - 127;
  if (exp < 1 - kBias) {
    // Subnormal (or zero) in the target: count quanta of 2^(1-bias-M); exact power-of-two scaling,
    // then the current rounding mode (nearest-even). 2^M quanta is the smallest normal, whose
    // encoding is the same integer.
    const float q = std::nearbyint(bitsToFloat(a) * std::ldexp(1.0f, M + kBias - 1));
    return sign | static_cast<uint32_t>(q);
  }
  constexpr int kShift = 23 - M;
  uint32_t r = (a + ((1u << (kShift - 1)) - 1) + ((a >> kShift) & 1u)) >> kShift;  // RNE, carries into exp
  r -= static_cast<uint32_t>(127 - kBias) << M;
  if (r > kMaxFinite) return sign | (Saturate ? kMaxFinite : kInf);
  return sign | r;
}

// A NaN is quieted and keeps its sign and payload, as the x86 F16C and Arm FCVT converters do.
inline float fp16ToFloat(uint16_t h) {
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
    return bitsToFloat((static_cast<uint32_t>(h & 0x8000u) << 16) | 0x7fc00000u | (static_cast<uint32_t>(h & 0x3ffu) << 13));
  return decodeSmallFloat<5, 10>(h);
}
// A NaN keeps its sign and the top 9 bits of its payload, quieted, as the x86 F16C and Arm FCVT
// converters do: the contiguous runs convert with F16C where the host has it (Numerics.cpp), and
// every path gives the same bits.
inline uint16_t floatToFp16(float f) {
  const uint32_t u = floatToBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu));
  return static_cast<uint16_t>(encodeSmallFloat<5, 10, false>(f));
}

// ---- integers: loads by value (RNE to fp32 beyond 2^24); stores RNE, saturate, NaN -> 0 ----

template <class T>
inline T floatToInt(float v) {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(static_cast<double>(v));
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (r <= lo) return std::numeric_limits<T>::min();
  if (r >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

// int32(x) of the ALU table: truncate toward zero, saturate, NaN -> 0.
inline int32_t truncToInt32(float v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  if (v <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}
inline uint32_t truncToUint32(float v) {
  if (std::isnan(v) || v <= 0.0f) return 0;
  if (v >= 4294967296.0f) return std::numeric_limits<uint32_t>::max();
  return static_cast<uint32_t>(v);
}

// ---- one element of any dtype ----

float loadElement(DType t, const uint8_t* p);
void storeElement(DType t, uint8_t* p, float v);
// Integer-valued stores that must not go through fp32 (Iota is computed in int64).
void storeInt64Element(DType t, uint8_t* p, int64_t v);
// A number (a Memset constant) as the integer §2's store conversion makes of it, exactly (not
// through fp32): rounded half to even, NaN -> 0, clamped to int64 (storeInt64Element then
// saturates it to the destination's range).
int64_t roundToInt64(double v);
// An element's value as int64 (index operands): integers exactly, floats truncated toward zero.
int64_t loadIndexElement(DType t, const uint8_t* p);
// The bit-vector operators' view of an element (docs/isa-semantics.md section 3): an integer as
// its 32-bit two's-complement pattern (signed types sign-extended, unsigned zero-extended, 64-bit
// ones cut to their low word), with no conversion through fp32; a float (a [P,1] operand) as
// int32(x) of the ALU table.
uint32_t loadBitsElement(DType t, const uint8_t* p);
// Stores a bit-vector result: an integer dtype takes the pattern's low bytes (a 64-bit one the
// pattern extended by the type's signedness); a float dtype the int32 value through fp32.
void storeBitsElement(DType t, uint8_t* p, uint32_t bits);
// A number (an immediate or a TensorScalar constant) as a bit-vector operand: truncated toward
// zero to an integer, then its low 32 bits (so 0xFFFFFFFF and -1 are the same mask).
uint32_t bitsOfNumber(double v);

// ---- runs: n elements `stride` bytes apart ----

void loadRun(DType t, const uint8_t* p, int64_t stride, int64_t n, float* out);
void storeRun(DType t, uint8_t* p, int64_t stride, int64_t n, const float* in);

// True when this build has the x86 SIMD paths (Simd.h), this CPU runs AVX2 + FMA + F16C and
// setSimdAllowed did not turn them off: the matmul micro-kernel, exp/erf/Gelu runs, fp16 runs.
bool cpuHasAvx2Fma();
// AVX-512F (and cpuHasAvx2Fma) with the OS saving zmm state: the matmul kernel's wide form.
bool cpuHasAvx512();
// Lets the SIMD paths run (the default) or not: the tests compare both paths bit for bit on one
// host. Not thread-safe; a GemmEngine reads it when it is made.
void setSimdAllowed(bool allowed);

}  // namespace sim
