// The engines' pseudo-random number generators (Xorwow.h): Rand (rng), SetRandState
// (rand_set_state, set_rng_seed) and GetRandState (rand_get_state). docs/isa-semantics.md §5.
#include <cstring>

#include "Numerics.h"
#include "Semantics.h"

namespace sim {

using namespace bir;

namespace {

constexpr int64_t kStateWords = 6;  // "element count for XORWOW must be 6 elements (GpSimd)" [I]

int generatorOf(Engine e) { return e == Engine::Pool ? CoreState::kRngPool : CoreState::kRngVector; }

// The GpSimd generator is NeuronCore-v3+ [I rng, rand_set_state, rand_get_state]: the rule
// instruction.generation.
void checkGenerator(const Instruction& I, Checker& c) { c.require(legality::generation(I.opcode(), c.engine, c.cfg)); }

void checkStateOperand(Checker& c, const Operand& op, const char* what) {
  c.notImmediate(op, what);
  if (op.dtype != DType::uint32 && op.dtype != DType::int32)
    c.fail(c.name(op) + " (" + what + ") is " + std::string(enumName(op.dtype)) + "; generator states are uint32");
  c.elems(op, kStateWords, what);
}

}  // namespace

// ---- Rand: 32 random bits per element, truncated to the destination's integer type ----

void check(const InstRand& I, Checker& c) {
  checkGenerator(I, c);
  const DType t = c.out(0).dtype;
  // "The output dst tile must be an integer type: int8, int16, int32, uint8, uint16, or uint32" [I]
  if (t != DType::int8 && t != DType::int16 && t != DType::int32 && t != DType::uint8 && t != DType::uint16 &&
      t != DType::uint32)
    c.fail("outs[0] is " + std::string(enumName(t)) + "; rng writes 8-, 16- or 32-bit integers");
}

// "truncates each 32-bit random value to the specified data type, taking the least significant
// bits" [I rng]: the low bytes, stored as they are.
void exec(const InstRand&, Exec& x) {
  const Operand& out = x.out(0);
  Memory& m = x.memory(out);
  auto& gen = x.core.rng[static_cast<size_t>(generatorOf(x.inst().engine))];
  for (int64_t l = 0; l < out.lanes; ++l) {
    XorwowState& s = gen[static_cast<size_t>(out.p0 + l)];
    RunCursor cur(out, x.lanePtr(out, l));
    while (!cur.done()) {
      const int64_t k = cur.remaining();
      for (int64_t i = 0; i < k; ++i) {
        const uint32_t v = xorwowNext(s);
        std::memcpy(cur.ptr() + i * cur.step(), &v, out.esize);  // little-endian: the low bits
      }
      x.markWritten(m, cur.ptr(), k, cur.step(), out.esize);
      cur.advance(k);
    }
  }
}

// ---- SetRandState: each lane's state, or (Vector Engine) one seed for all ----

void check(const InstSetRandState& I, Checker& c) {
  checkGenerator(I, c);
  const Operand& in = c.in(0);
  if (c.engine == Engine::DVE) {
    // set_rng_seed: "a [1,1] tensor ... with a 32-bit value" [I]; the Vector Engine's per-lane
    // states (24 words) are NeuronCore-v4's [I rand_set_state].
    c.notImmediate(in, "seed");
    c.lanes(in, 1, "seed");
    c.elems(in, 1, "seed");
    if (dtypeSize(in.dtype) != 4)
      c.fail("ins[0] (seed) is " + std::string(enumName(in.dtype)) + "; the seed is a 32-bit value");
    return;
  }
  checkStateOperand(c, in, "generator states");
}

void exec(const InstSetRandState&, Exec& x) {
  const Operand& in = x.in(0);
  auto& gen = x.core.rng[static_cast<size_t>(generatorOf(x.inst().engine))];
  if (x.inst().engine == Engine::DVE) {
    uint32_t seed;
    std::memcpy(&seed, x.readElement(in, 0, 0), 4);
    // Every lane's state derived from the seed and the partition (ours: not documented).
    for (size_t p = 0; p < gen.size(); ++p) gen[p] = xorwowFromSeed((uint64_t{seed} << 32) ^ (0x5eedull << 16) ^ p);
    return;
  }
  for (int64_t l = 0; l < in.lanes; ++l) {
    XorwowState& s = gen[static_cast<size_t>(in.p0 + l)];
    for (int64_t k = 0; k < kStateWords; ++k) {
      uint32_t w;
      std::memcpy(&w, x.readElement(in, l, k), 4);
      s[static_cast<size_t>(k)] = w;
    }
  }
}

// ---- GetRandState: each lane's state ----

void check(const InstGetRandState& I, Checker& c) {
  checkGenerator(I, c);
  checkStateOperand(c, c.out(0), "generator states");
}

void exec(const InstGetRandState&, Exec& x) {
  const Operand& out = x.out(0);
  const auto& gen = x.core.rng[CoreState::kRngPool];
  int64_t words[kStateWords];
  for (int64_t l = 0; l < out.lanes; ++l) {
    const XorwowState& s = gen[static_cast<size_t>(out.p0 + l)];
    for (int64_t k = 0; k < kStateWords; ++k) words[k] = static_cast<int64_t>(s[static_cast<size_t>(k)]);
    if (out.dtype == DType::uint32) {
      x.scatterIntLane(out, l, words);
    } else {  // int32: the same bits
      for (int64_t k = 0; k < kStateWords; ++k) {
        const uint32_t w = s[static_cast<size_t>(k)];
        uint8_t* p = x.lanePtr(out, l) + out.freeOffset(k);
        std::memcpy(p, &w, 4);
        x.markWritten(x.memory(out), p, 1, 4, 4);
      }
    }
  }
}

}  // namespace sim
