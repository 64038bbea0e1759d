// The engines' pseudo-random number generator: Marsaglia's xorwow ("Xorshift RNGs", J. Stat.
// Software 8(14), 2003), the algorithm the NKI docs name [I rand2, rand_set_state]. One state per
// lane (partition) of the Vector and of the GpSimd engine, six 32-bit words: the five xorshift words
// x[0..4] then the Weyl counter d, in the order rand_set_state / rand_get_state move them (ours:
// the docs give the word count, not the order), so the bits differ from the hardware's.
#pragma once

#include <array>
#include <cstdint>

namespace sim {

using XorwowState = std::array<uint32_t, 6>;

// The next 32 random bits; advances the state.
inline uint32_t xorwowNext(XorwowState& s) {
  uint32_t t = s[4];
  const uint32_t x0 = s[0];
  s[4] = s[3];
  s[3] = s[2];
  s[2] = s[1];
  s[1] = x0;
  t ^= t >> 2;
  t ^= t << 1;
  t ^= x0 ^ (x0 << 4);
  s[0] = t;
  s[5] += 362437u;
  return t + s[5];
}

// A state derived from a 64-bit seed by splitmix64 (ours): a generator's state before any
// rand_set_state (seed = engine and partition), and each lane's after set_rng_seed (seed = the
// seed value and the partition). The xorshift words are never all zero.
inline XorwowState xorwowFromSeed(uint64_t seed) {
  XorwowState s{};
  uint64_t z = seed;
  for (int i = 0; i < 6; ++i) {
    z += 0x9e3779b97f4a7c15ull;
    uint64_t x = z;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    s[static_cast<size_t>(i)] = static_cast<uint32_t>((x ^ (x >> 31)) >> 32);
  }
  if ((s[0] | s[1] | s[2] | s[3] | s[4]) == 0) s[0] = 1;
  return s;
}

}  // namespace sim
