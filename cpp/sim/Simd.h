// Which instruction-set paths this build may take. NXS_X86_SIMD is 1 when the compiler targets
// x86-64 and the build does not force the portable path (CMake -DNXS_PORTABLE=ON defines
// NXS_PORTABLE; CI builds and tests that way, scripts/test-portable.sh). Code under it is compiled
// per function for AVX2 / AVX-512 (target attributes) and chosen at run time (cpuHasAvx2Fma,
// cpuHasAvx512 in Numerics.h), so a wheel runs on any x86-64. Every SIMD path has a portable path
// that performs the same IEEE operations in the same order: the bits never depend on the host.
#pragma once

#if (defined(__x86_64__) || defined(_M_X64)) && !defined(NXS_PORTABLE)
#define NXS_X86_SIMD 1
#include <immintrin.h>
#else
#define NXS_X86_SIMD 0
#endif
