// The ALU ops (AluOp) and activation functions (ActivationFunc) on fp32 values, exactly as
// docs/isa-semantics.md sections 3 and 4 define them. Each is a template on the enum value so
// that bulk loops are instantiated per op (the dispatch switch sits outside the element loop);
// the switches are generated from the enum lists in bir/Enums.def.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "FastMath.h"
#include "Numerics.h"
#include "bir/Enums.h"

namespace sim {

using bir::ActivationFunc;
using bir::AluOp;

inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// numpy.mod: the remainder of a / b with the sign of b. fmod is exact; adding b where the signs
// differ rounds once; a zero remainder takes b's sign; b = 0 or an infinite a gives NaN.
inline float floorMod(float a, float b) {
  float m = std::fmod(a, b);
  if (m == 0) return std::copysign(0.0f, b);
  return (b < 0) != (m < 0) ? m + b : m;
}

// The bit-vector ops on 32-bit patterns (docs/isa-semantics.md section 3): the Vector Engine
// "treats input elements as bit patterns" [NKI ISA, supported math operators]. The shift count is
// b's pattern as int32; counts outside 0..31 give 0 (left, logical right) or the sign fill
// (arithmetic right) (ours). Other ops return a. `width` (elementBits) is the bits of a's
// element: a logical shift right brings zeros in at the element's own top bit, so an int8 or
// int16 pattern's sign extension is cut off first (NKI's "Logical Shift Right"; an arithmetic one
// is "Not supported" [NKI ISA, supported math operators]).
inline uint32_t bitvecAlu(AluOp op, uint32_t a, uint32_t b, uint32_t width = 0xFFFFFFFFu) {
  const int32_t s = static_cast<int32_t>(b);
  const bool counted = s >= 0 && s <= 31;
  switch (op) {
    case AluOp::bitwise_and: return a & b;
    case AluOp::bitwise_or: return a | b;
    case AluOp::bitwise_xor: return a ^ b;
    case AluOp::bitwise_not: return ~a;
    case AluOp::arith_shift_left:
    case AluOp::logical_shift_left: return counted ? a << s : 0u;
    case AluOp::arith_shift_right: {
      const int32_t x = static_cast<int32_t>(a);
      return static_cast<uint32_t>(counted ? x >> s : (x < 0 ? -1 : 0));
    }
    case AluOp::logical_shift_right: return counted ? (a & width) >> s : 0u;
    default: return a;
  }
}
// The pattern bits an element of dtype t fills (bitvecAlu's `width`).
inline uint32_t elementBits(bir::DType t) {
  const int size = bir::dtypeSize(t);
  return size == 1 ? 0xFFu : size == 2 ? 0xFFFFu : 0xFFFFFFFFu;
}

// GpSimd's arithmetic on int32 / uint32 tiles: "native integer arithmetic. This ensures exact
// results for all 32-bit integer values" [NKI 0.6 nki.isa.tensor_tensor]. The ops with an exact
// integer form: add, subtract and mult (modulo 2^32, as native 32-bit arithmetic wraps (ours)),
// divide (rounded toward zero, as nki.isa.scalar_alu defines NKI's integer nl.divide), mod (the
// remainder with the divisor's sign: nki.language.mod, "the Python modulus x % y"), max, min and
// the comparisons (1 / 0). The others (pow, ...) stay on fp32 values. A zero divisor is refused
// by the caller (the docs do not say what it gives).
inline bool hasIntForm(AluOp op) {
  switch (op) {
    case AluOp::add: case AluOp::subtract: case AluOp::mult: case AluOp::max: case AluOp::min:
    case AluOp::divide: case AluOp::mod:
    case AluOp::is_equal: case AluOp::not_equal: case AluOp::is_ge: case AluOp::is_gt:
    case AluOp::is_le: case AluOp::is_lt: case AluOp::bypass:
      return true;
    default:
      return false;
  }
}
// The dtypes GpSimd's native integer arithmetic takes (hasIntForm's ops on them are exact).
inline bool isWord(bir::DType t) { return t == bir::DType::int32 || t == bir::DType::uint32; }
// The exact result (a 32-bit pattern to store) of a hasIntForm op on two integer values.
inline uint32_t intAlu(AluOp op, int64_t a, int64_t b) {
  switch (op) {
    case AluOp::add: return static_cast<uint32_t>(static_cast<uint64_t>(a + b));
    case AluOp::subtract: return static_cast<uint32_t>(static_cast<uint64_t>(a - b));
    case AluOp::mult: return static_cast<uint32_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    // (b != 0: the caller refuses a zero divisor; int32 min / -1 = 2^31 wraps like add)
    case AluOp::divide: return static_cast<uint32_t>(static_cast<uint64_t>(a / b));
    case AluOp::mod: {
      const int64_t r = a % b;  // (the sign of a; floor mod moves it to b's)
      return static_cast<uint32_t>(static_cast<uint64_t>(r != 0 && (r < 0) != (b < 0) ? r + b : r));
    }
    case AluOp::max: return static_cast<uint32_t>(a > b ? a : b);
    case AluOp::min: return static_cast<uint32_t>(a < b ? a : b);
    case AluOp::is_equal: return a == b;
    case AluOp::not_equal: return a != b;
    case AluOp::is_ge: return a >= b;
    case AluOp::is_gt: return a > b;
    case AluOp::is_le: return a <= b;
    case AluOp::is_lt: return a < b;
    default: return static_cast<uint32_t>(a);
  }
}

template <AluOp Op>
inline float alu(float a, float b) {
  using enum AluOp;
  auto i32 = truncToInt32;
  auto flag = [](bool v) { return v ? 1.0f : 0.0f; };
  if constexpr (Op == add) return a + b;
  else if constexpr (Op == subtract) return a - b;
  else if constexpr (Op == mult) return a * b;
  else if constexpr (Op == divide) return a / b;
  else if constexpr (Op == max) return (std::isnan(a) || std::isnan(b)) ? kNaN : (a > b ? a : b);
  else if constexpr (Op == min) return (std::isnan(a) || std::isnan(b)) ? kNaN : (a < b ? a : b);
  else if constexpr (Op == pow) return std::pow(a, b);
  else if constexpr (Op == mod) return floorMod(a, b);
  else if constexpr (Op == average) return (a + b) * 0.5f;
  else if constexpr (Op == abs) return std::fabs(a);
  else if constexpr (Op == rsqrt) return 1.0f / std::sqrt(a);
  else if constexpr (Op == bypass) return a;
  else if constexpr (Op == is_equal) return flag(a == b);
  else if constexpr (Op == not_equal) return flag(a != b);
  else if constexpr (Op == is_ge) return flag(a >= b);
  else if constexpr (Op == is_gt) return flag(a > b);
  else if constexpr (Op == is_le) return flag(a <= b);
  else if constexpr (Op == is_lt) return flag(a < b);
  else if constexpr (Op == logical_and) return flag((a != 0) && (b != 0));
  else if constexpr (Op == logical_or) return flag((a != 0) || (b != 0));
  else if constexpr (Op == logical_xor) return flag((a != 0) != (b != 0));
  else if constexpr (Op == bitwise_and || Op == bitwise_or || Op == bitwise_xor || Op == bitwise_not ||
                     Op == arith_shift_left || Op == arith_shift_right)
    // (fp32 values, where an instruction has them: int32(a) and int32(b) as patterns)
    return static_cast<float>(static_cast<int32_t>(
        bitvecAlu(Op, static_cast<uint32_t>(i32(a)), static_cast<uint32_t>(i32(b)))));
  else if constexpr (Op == logical_shift_left || Op == logical_shift_right) {
    return static_cast<float>(bitvecAlu(Op, truncToUint32(a), static_cast<uint32_t>(i32(b))));
  } else {
    static_assert(Op != Op, "AluOp without semantics");
  }
}

// Calls f.template operator()<Op>() for the runtime op (one instantiation per AluOp).
template <class F>
inline decltype(auto) withAluOp(AluOp op, F&& f) {
  switch (op) {
#define SIM_ALU_CASE(o) \
  case AluOp::o:        \
    return f.template operator()<AluOp::o>();
    BIR_ENUM_AluOp(SIM_ALU_CASE)
#undef SIM_ALU_CASE
  }
  return f.template operator()<AluOp::bypass>();
}

// Runtime-op scalar form, for folds over short runs and per-lane constants.
inline float aluDyn(AluOp op, float a, float b) {
  return withAluOp(op, [&]<AluOp Op>() { return alu<Op>(a, b); });
}

// v[i] = op(v[i], c) (or op(c, v[i]) when reversed), over n values: one instantiation per op.
inline void applyScalar(AluOp op, bool reverse, float* v, int64_t n, float c) {
  withAluOp(op, [&]<AluOp Op>() {
    if (reverse)
      for (int64_t i = 0; i < n; ++i) v[i] = alu<Op>(c, v[i]);
    else
      for (int64_t i = 0; i < n; ++i) v[i] = alu<Op>(v[i], c);
  });
}

bool isComparison(AluOp op);

// ---- activation functions on x = in * scale + bias ----

inline float sigmoidf(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float softplusf(float x) { return std::fmax(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); }
inline double sigmoidd(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The limits at -inf and +inf of the functions whose formulas below give inf * 0 there (NaN): the
// public table "Supported Activation Functions for NKI ISA" gives them the valid input range
// [-inf, inf]. A negative zero where the values just above -inf are negative zeros too.
template <ActivationFunc F>
inline constexpr bool kHasInfLimits =
    F == ActivationFunc::Silu || F == ActivationFunc::Mish || F == ActivationFunc::Gelu_apprx_sigmoid ||
    F == ActivationFunc::Gelu_apprx_tanh || F == ActivationFunc::Derivative_Gelu ||
    F == ActivationFunc::Derivative_silu;
template <ActivationFunc F>
inline float infLimit(float x) {
  if constexpr (F == ActivationFunc::Derivative_Gelu) return x > 0 ? 1.0f : 0.0f;
  else if constexpr (F == ActivationFunc::Derivative_silu) return x > 0 ? 1.0f : -0.0f;
  else return x > 0 ? x : -0.0f;  // x * (a factor going to 1 / to 0)
}

template <ActivationFunc F>
inline float activation(float x, float alpha) {
  using enum ActivationFunc;
  if constexpr (kHasInfLimits<F>)
    if (std::isinf(x)) return infLimit<F>(x);
  if constexpr (F == Abs) return std::fabs(x);
  else if constexpr (F == Abs_reciprocal_sqrt) return 1.0f / std::sqrt(std::fabs(x));
  else if constexpr (F == Arctan) return std::atan(x);
  else if constexpr (F == Copy || F == Identity) return x;
  // The composite functions below are evaluated in double and rounded once, in forms without
  // cancellation (1 - sigmoid(x) as sigmoid(-x), 1 + erf as erfc, 1 + tanh(u) as 2 sigmoid(2u)):
  // in fp32, exp(-x * x) alone is tens of ulps off in the tails.
  else if constexpr (F == Derivative_Erf) return static_cast<float>(1.1283791670955126 * std::exp(-double{x} * x));
  else if constexpr (F == Derivative_Gelu) {
    const double d = x;
    return static_cast<float>(0.5 * std::erfc(-d * 0.70710678118654752) + d * 0.39894228040143268 * std::exp(-0.5 * d * d));
  } else if constexpr (F == Derivative_silu) {
    const double d = x;
    return static_cast<float>(sigmoidd(d) * (1.0 + d * sigmoidd(-d)));
  } else if constexpr (F == Dsqrt) return 0.5f / std::sqrt(x);
  else if constexpr (F == Erf) return erf32(x);  // bulk runs use erfRun, expRun, geluRun (same results)
  else if constexpr (F == Exp) return expf32(x);
  else if constexpr (F == Gelu) return gelu32(x);
  else if constexpr (F == Gelu_apprx_sigmoid) return static_cast<float>(x * sigmoidd(1.702 * x));
  else if constexpr (F == Gelu_apprx_tanh) {
    const double d = x;  // 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715 x^3)
    return static_cast<float>(d * sigmoidd(2 * 0.79788456080286536 * (d + 0.044715 * d * d * d)));
  }
  else if constexpr (F == Is_finite) return std::isfinite(x) ? 1.0f : 0.0f;
  else if constexpr (F == Ln) return std::log(x);
  else if constexpr (F == Ln_prime) return 1.0f / x;
  else if constexpr (F == Lrelu || F == Prelu) return x > 0 ? x : alpha * x;
  else if constexpr (F == MemsetZero) return 0.0f;
  else if constexpr (F == Mish) return x * std::tanh(softplusf(x));
  else if constexpr (F == Reciprocal) return 1.0f / x;
  else if constexpr (F == Relu) return std::isnan(x) ? x : (x > 0 ? x : 0.0f);
  else if constexpr (F == Rsqrt) return 1.0f / std::sqrt(x);
  else if constexpr (F == Sigmoid) return sigmoidf(x);
  else if constexpr (F == Sign) return std::isnan(x) ? x : static_cast<float>((x > 0) - (x < 0));
  else if constexpr (F == Silu) return x * sigmoidf(x);
  else if constexpr (F == Sin) return std::sin(x);
  else if constexpr (F == Softplus) return softplusf(x);
  else if constexpr (F == Sqrt) return std::sqrt(x);
  else if constexpr (F == Square) return x * x;
  else if constexpr (F == Tanh) return std::tanh(x);
  else if constexpr (F == Unknown) return kNaN;  // refused when decoding
  else static_assert(F != F, "ActivationFunc without semantics");
}

template <class F>
inline decltype(auto) withActivationFunc(ActivationFunc fn, F&& f) {
  switch (fn) {
#define SIM_ACT_CASE(a)    \
  case ActivationFunc::a:  \
    return f.template operator()<ActivationFunc::a>();
    BIR_ENUM_ActivationFunc(SIM_ACT_CASE)
#undef SIM_ACT_CASE
  }
  return f.template operator()<ActivationFunc::Unknown>();
}

// ---- deterministic random numbers (Memset Random): counter-based, no state ----

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
// Uniform [0, 1) from (seed, counter), 24 random bits.
inline float uniform01(uint64_t seed, uint64_t counter) {
  return static_cast<float>(splitmix64(seed * 0x100000001b3ull ^ splitmix64(counter)) >> 40) *
         0x1p-24f;
}

}  // namespace sim
