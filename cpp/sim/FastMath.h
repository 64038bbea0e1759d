// exp, erf and Gelu for the engines' fp32 arithmetic, each as one scalar function and a bulk
// version over runs that uses AVX2 when the CPU has it. Both versions evaluate the same IEEE
// operations in the same order (no fused multiply-adds), so results are bit-identical on every
// host; the bulk versions are what Activation(Exp, Erf, Gelu) runs on.
//
// exp (Cephes expf, ~1 ulp): n = rint(x log2 e); r = x - n ln2 in two parts (Cody-Waite);
// exp(r) by a degree-6 polynomial; scale by 2^n as two factors 2^(n/2) 2^(n - n/2), so that
// results down to the smallest subnormal are rounded once. x > 88.7228 gives inf, x < -103.98
// gives 0, NaN stays NaN. erf and Gelu: see FastMath.cpp.
#pragma once

#include <cstdint>

namespace sim {

float expf32(float x);
// v[i] = expf32(v[i]) for i < n.
void expRun(float* v, int64_t n);

// erf(x) and Gelu(x) = x Phi(x), computed in double precision and rounded once (FastMath.cpp);
// the runs give the same bits as the scalar functions.
float erf32(float x);
float gelu32(float x);
void erfRun(float* v, int64_t n);
void geluRun(float* v, int64_t n);

}  // namespace sim
