#include "Numerics.h"

#include <algorithm>
#include <array>

#include "Simd.h"
#if NXS_X86_SIMD
#include <cpuid.h>
#endif

namespace sim {
namespace {

using bir::DType;

// ---- per-dtype element codecs ----

template <DType T>
struct Codec;

template <>
struct Codec<DType::float32> {
  static float load(const uint8_t* p) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static void store(uint8_t* p, float v) { std::memcpy(p, &v, 4); }
};
// tfloat32 (1 sign, 8 exponent, 10 mantissa bits [nki.api.shared]) in a 32-bit container: read as
// the fp32 it holds; stored rounded to nearest-even at 10 mantissa bits, the low 13 bits zero,
// overflowing to inf, NaN kept NaN (ours: the rounding of docs/isa-semantics.md §2 for bf16).
inline uint32_t floatToTf32Bits(float f) {
  const uint32_t u = floatToBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u & 0xffffe000u) | 0x00400000u;
  return (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
}
template <>
struct Codec<DType::float32r> : Codec<DType::float32> {
  static void store(uint8_t* p, float v) {
    const uint32_t u = floatToTf32Bits(v);
    std::memcpy(p, &u, 4);
  }
};

template <>
struct Codec<DType::bfloat16> {
  static float load(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16ToFloat(h);
  }
  static void store(uint8_t* p, float v) {
    const uint16_t h = floatToBf16(v);
    std::memcpy(p, &h, 2);
  }
};

template <>
struct Codec<DType::float16> {
  static float load(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return fp16ToFloat(h);
  }
  static void store(uint8_t* p, float v) {
    const uint16_t h = floatToFp16(v);
    std::memcpy(p, &h, 2);
  }
};

// fp8: decoded through a 256-entry table; encoded with saturation (docs/isa-semantics.md §2).
template <int E, int M>
struct Fp8Codec {
  static const std::array<float, 256>& table() {
    static const std::array<float, 256> t = [] {
      std::array<float, 256> a{};
      for (uint32_t i = 0; i < 256; ++i) a[i] = decodeSmallFloat<E, M>(i);
      return a;
    }();
    return t;
  }
  static float load(const uint8_t* p) { return table()[*p]; }
  static void store(uint8_t* p, float v) { *p = static_cast<uint8_t>(encodeSmallFloat<E, M, true>(v)); }
};
template <>
struct Codec<DType::float8e4> : Fp8Codec<4, 3> {};
template <>
struct Codec<DType::float8e5> : Fp8Codec<5, 2> {};
template <>
struct Codec<DType::float8e3> : Fp8Codec<3, 4> {};

template <class I>
struct IntCodec {
  static float load(const uint8_t* p) {
    I v;
    std::memcpy(&v, p, sizeof(I));
    return static_cast<float>(v);
  }
  static void store(uint8_t* p, float v) {
    const I x = floatToInt<I>(v);
    std::memcpy(p, &x, sizeof(I));
  }
};
template <>
struct Codec<DType::int8> : IntCodec<int8_t> {};
template <>
struct Codec<DType::int16> : IntCodec<int16_t> {};
template <>
struct Codec<DType::int32> : IntCodec<int32_t> {};
template <>
struct Codec<DType::int64> : IntCodec<int64_t> {};
template <>
struct Codec<DType::uint8> : IntCodec<uint8_t> {};
template <>
struct Codec<DType::uint16> : IntCodec<uint16_t> {};
template <>
struct Codec<DType::uint32> : IntCodec<uint32_t> {};
template <>
struct Codec<DType::uint64> : IntCodec<uint64_t> {};

// ---- generic runs ----

template <DType T>
void loadRunT(const uint8_t* p, int64_t stride, int64_t n, float* out) {
  constexpr int64_t kSize = bir::dtypeSize(T);
  if (stride == kSize) {
    for (int64_t i = 0; i < n; ++i) out[i] = Codec<T>::load(p + i * kSize);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = Codec<T>::load(p + i * stride);
  }
}

template <DType T>
void storeRunT(uint8_t* p, int64_t stride, int64_t n, const float* in) {
  constexpr int64_t kSize = bir::dtypeSize(T);
  if (stride == kSize) {
    for (int64_t i = 0; i < n; ++i) Codec<T>::store(p + i * kSize, in[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) Codec<T>::store(p + i * stride, in[i]);
  }
}

// ---- contiguous fast paths ----

// Byte buffers need not be 2-aligned (a location may start at an odd byte): memcpy per element,
// which the compiler turns into vector loads.
void loadBf16Contig(const uint8_t* p, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    out[i] = bitsToFloat(static_cast<uint32_t>(h) << 16);
  }
}

void storeBf16Contig(uint8_t* p, int64_t n, const float* in) {
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t h = floatToBf16(in[i]);
    std::memcpy(p + 2 * i, &h, 2);
  }
}

#if NXS_X86_SIMD
__attribute__((target("avx2,fma,f16c"))) void loadFp16ContigF16c(const uint8_t* p, int64_t n,
                                                                   float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = Codec<DType::float16>::load(p + 2 * i);
}

__attribute__((target("avx2,fma,f16c"))) void storeFp16ContigF16c(uint8_t* p, int64_t n,
                                                                    const float* in) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 2 * i), h);
  }
  for (; i < n; ++i) Codec<DType::float16>::store(p + 2 * i, in[i]);
}

// F16C is read from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports has no "f16c".
bool cpuHasF16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
}

const bool kAvx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpuHasF16c();
}();
const bool kAvx512 = kAvx2 && __builtin_cpu_supports("avx512f");
#else
constexpr bool kAvx2 = false, kAvx512 = false;
#endif

bool simdAllowed = true;  // setSimdAllowed

}  // namespace

bool cpuHasAvx2Fma() { return kAvx2 && simdAllowed; }

bool cpuHasAvx512() { return kAvx512 && simdAllowed; }

void setSimdAllowed(bool allowed) { simdAllowed = allowed; }

float loadElement(DType t, const uint8_t* p) {
  switch (t) {
#define SIM_LOAD(name, bytes, cls) \
  case DType::name:                \
    return Codec<DType::name>::load(p);
    BIR_DTYPES(SIM_LOAD)
#undef SIM_LOAD
  }
  return 0;
}

void storeElement(DType t, uint8_t* p, float v) {
  switch (t) {
#define SIM_STORE(name, bytes, cls)    \
  case DType::name:                    \
    Codec<DType::name>::store(p, v);   \
    return;
    BIR_DTYPES(SIM_STORE)
#undef SIM_STORE
  }
}

void storeInt64Element(DType t, uint8_t* p, int64_t v) {
  auto sat = [&](auto tag) {
    using I = decltype(tag);
    I x;
    if constexpr (std::is_signed_v<I>) {
      x = v < static_cast<int64_t>(std::numeric_limits<I>::min())   ? std::numeric_limits<I>::min()
          : v > static_cast<int64_t>(std::numeric_limits<I>::max()) ? std::numeric_limits<I>::max()
                                                                    : static_cast<I>(v);
    } else {
      x = v < 0 ? 0
          : static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<I>::max())
              ? std::numeric_limits<I>::max()
              : static_cast<I>(v);
    }
    std::memcpy(p, &x, sizeof(I));
  };
  switch (t) {
    case DType::int8: return sat(int8_t{});
    case DType::int16: return sat(int16_t{});
    case DType::int32: return sat(int32_t{});
    case DType::int64: return sat(int64_t{});
    case DType::uint8: return sat(uint8_t{});
    case DType::uint16: return sat(uint16_t{});
    case DType::uint32: return sat(uint32_t{});
    case DType::uint64: return sat(uint64_t{});
    default: storeElement(t, p, static_cast<float>(v));
  }
}

int64_t roundToInt64(double v) {
  if (std::isnan(v)) return 0;
  const double r = std::nearbyint(v);  // (the default rounding mode: half to even)
  if (r >= 0x1p63) return std::numeric_limits<int64_t>::max();
  if (r < -0x1p63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(r);
}

int64_t loadIndexElement(DType t, const uint8_t* p) {
  auto get = [&](auto tag) {
    decltype(tag) x;
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (t) {
    case DType::int8: return get(int8_t{});
    case DType::int16: return get(int16_t{});
    case DType::int32: return get(int32_t{});
    case DType::int64: return get(int64_t{});
    case DType::uint8: return get(uint8_t{});
    case DType::uint16: return get(uint16_t{});
    case DType::uint32: return get(uint32_t{});
    case DType::uint64: {
      const uint64_t u = get(uint64_t{});
      return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::max()
                 : static_cast<int64_t>(u);
    }
    default: {
      const float f = loadElement(t, p);
      if (std::isnan(f)) return 0;
      if (f >= 9.2e18f) return std::numeric_limits<int64_t>::max();
      if (f <= -9.2e18f) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(f);
    }
  }
}

uint32_t loadBitsElement(DType t, const uint8_t* p) {
  if (bir::isFloat(t)) return static_cast<uint32_t>(truncToInt32(loadElement(t, p)));
  if (t == DType::uint64) {  // (loadIndexElement saturates it)
    uint64_t u;
    std::memcpy(&u, p, sizeof u);
    return static_cast<uint32_t>(u);
  }
  return static_cast<uint32_t>(loadIndexElement(t, p));
}

void storeBitsElement(DType t, uint8_t* p, uint32_t bits) {
  if (bir::isFloat(t)) return storeElement(t, p, static_cast<float>(static_cast<int32_t>(bits)));
  const bool sign = bir::dtypeClass(t) == bir::DTypeClass::Int;
  const uint64_t v = sign ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(bits))) : bits;
  std::memcpy(p, &v, static_cast<size_t>(bir::dtypeSize(t)));  // (little-endian: the low bytes)
}

uint32_t bitsOfNumber(double v) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(std::clamp(v, -9.2e18, 9.2e18));
  return static_cast<uint32_t>(static_cast<uint64_t>(static_cast<int64_t>(t)));
}

void loadRun(DType t, const uint8_t* p, int64_t stride, int64_t n, float* out) {
  if (n <= 0) return;
  if (t == DType::float32 || t == DType::float32r) {
    if (stride == 4) return void(std::memcpy(out, p, static_cast<size_t>(n) * 4));
  } else if (t == DType::bfloat16 && stride == 2) {
    return loadBf16Contig(p, n, out);
  }
#if NXS_X86_SIMD
  if (t == DType::float16 && stride == 2 && cpuHasAvx2Fma()) return loadFp16ContigF16c(p, n, out);
#endif
  switch (t) {
#define SIM_LOADRUN(name, bytes, cls) \
  case DType::name:                   \
    return loadRunT<DType::name>(p, stride, n, out);
    BIR_DTYPES(SIM_LOADRUN)
#undef SIM_LOADRUN
  }
}

void storeRun(DType t, uint8_t* p, int64_t stride, int64_t n, const float* in) {
  if (n <= 0) return;
  if (t == DType::float32) {
    if (stride == 4) return void(std::memcpy(p, in, static_cast<size_t>(n) * 4));
  } else if (t == DType::bfloat16 && stride == 2) {
    return storeBf16Contig(p, n, in);
  }
#if NXS_X86_SIMD
  if (t == DType::float16 && stride == 2 && cpuHasAvx2Fma()) return storeFp16ContigF16c(p, n, in);
#endif
  switch (t) {
#define SIM_STORERUN(name, bytes, cls) \
  case DType::name:                    \
    return storeRunT<DType::name>(p, stride, n, in);
    BIR_DTYPES(SIM_STORERUN)
#undef SIM_STORERUN
  }
}

}  // namespace sim
