// Instructions that move data between lanes or compute from indices: stream shuffle, the DVE
// 32x32 transpose, iota, affine select (causal masks) and range select. docs/isa-semantics.md §5.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "Alu.h"
#include "Semantics.h"

namespace sim {

using namespace bir;

namespace {

// Iota's index expression for every element of a lane: base + channel_multiplier * lane +
// sum_k idx_k * pattern[k].step over the pattern's index space, outermost first, in 32-bit
// integer math ("The index values are computed in 32-bit integer math" [I iota], NKI 0.6 too):
// summed in int64 (the terms are int32, checkIotaPattern) and wrapped to int32.
void iotaValues(int64_t base, int64_t channelMultiplier, const std::vector<APPair>& pattern,
                int64_t lane, int64_t* out, int64_t n) {
  int64_t idx[16] = {};
  const int nd = static_cast<int>(pattern.size());
  int64_t v = base + channelMultiplier * lane;
  for (int64_t e = 0; e < n; ++e) {
    out[e] = static_cast<int32_t>(static_cast<uint32_t>(v));
    for (int k = nd - 1; k >= 0; --k) {  // odometer, innermost fastest
      if (++idx[k] < pattern[static_cast<size_t>(k)].num) {
        v += pattern[static_cast<size_t>(k)].step;
        break;
      }
      v -= (idx[k] - 1) * pattern[static_cast<size_t>(k)].step;
      idx[k] = 0;
    }
  }
}

// The index expression's terms are int32 ([nki.isa.iota, NKI 0.6]: "an int32 offset").
void checkIotaPattern(Checker& c, int64_t base, int64_t channelMultiplier, const std::vector<APPair>& pattern,
                      int64_t elems) {
  const auto int32 = [&](int64_t v, const std::string& what) {
    if (v < INT32_MIN || v > INT32_MAX)
      c.fail(what + " " + std::to_string(v) + " is outside int32 (the index values are 32-bit integer math)");
  };
  int32(base, "the offset");
  int32(channelMultiplier, "the channel multiplier");
  for (const auto& p : pattern) int32(p.step, "the index pattern's step");
  if (pattern.size() > 16) c.fail("the index pattern has more than 16 dims");
  int64_t n = 1;
  for (const auto& p : pattern) {
    if (p.num < 1) c.fail("the index pattern has a dim of num " + std::to_string(p.num));
    n *= p.num;
  }
  if (n != elems)
    c.fail("the index pattern covers " + std::to_string(n) + " elements but the output has " +
           std::to_string(elems) + " per partition");
}

bool compareInt(AluOp op, int64_t a, int64_t b) {
  switch (op) {
    case AluOp::is_equal: return a == b;
    case AluOp::not_equal: return a != b;
    case AluOp::is_ge: return a >= b;
    case AluOp::is_gt: return a > b;
    case AluOp::is_le: return a <= b;
    default: return a < b;  // is_lt; other ops are refused
  }
}

}  // namespace

// ---- StreamShuffle: per 32-partition quadrant, out lane i <- in lane 32q + mask[i % 32] ----

void check(const InstStreamShuffle& I, Checker& c) {
  c.notImmediate(c.in(0), "source");
  // The partition counts may differ (the ISA's num_active_partitions is the larger of the two):
  // one source partition broadcast to a quadrant is the documented example. The mask loop
  // below checks that every output lane's source lane exists.
  if (c.in(0).freeElems != c.out(0).freeElems)
    c.fail("ins[0] has " + std::to_string(c.in(0).freeElems) + " elements per partition but outs[0] has " +
           std::to_string(c.out(0).freeElems));
  if (c.in(0).dtype != c.out(0).dtype) c.fail("stream shuffle moves one dtype; ins[0] and outs[0] differ");
  if (I.shuffle_mask.size() != 32)
    c.fail("shuffle_mask has " + std::to_string(I.shuffle_mask.size()) + " entries; it takes 32");
  for (int64_t i = 0; i < c.out(0).lanes; ++i) {
    const int64_t m = I.shuffle_mask[static_cast<size_t>(i % 32)];
    if (m == 255) continue;
    if (m < 0 || m > 31 || 32 * (i / 32) + m >= c.in(0).lanes)
      c.fail("shuffle_mask[" + std::to_string(i % 32) + "] = " + std::to_string(m) + " names no partition of ins[0]");
  }
}

// The elements move as bytes (check: one dtype), as StreamTranspose's do: an int32 beyond 2^24 and
// a NaN's payload arrive unchanged.
void exec(const InstStreamShuffle& I, Exec& x) {
  const Operand &in = x.in(0), &out = x.out(0);
  const int64_t n = in.freeElems, laneBytes = n * in.esize;
  // Read every source lane first: the shuffle may be in place.
  uint8_t* v = x.byteSlot(laneBytes * in.lanes);
  for (int64_t l = 0; l < in.lanes; ++l)
    x.copyStream(x.lane(in, l), Exec::buffered(v + l * laneBytes, in.dtype, n, in), false);
  for (int64_t i = 0; i < out.lanes; ++i) {
    const int64_t m = I.shuffle_mask[static_cast<size_t>(i % 32)];
    if (m != 255) x.copyStream(Exec::buffered(v + (32 * (i / 32) + m) * laneBytes, in.dtype, n, in), x.lane(out, i), false);
  }
}

// ---- StreamTranspose: out[j, i] = in[i, j], blocks of at most dve_transpose_max squared ----

void check(const InstStreamTranspose&, Checker& c) {
  c.require(bir::legality::dveTranspose(c.facts(c.in(0)), c.facts(c.out(0)), c.cfg));
}

// The elements move as bytes: of one dtype they are copied exactly (an int32 beyond 2^24, a NaN's
// payload); into another dtype copyStream converts them as every engine's store does (§2).
void exec(const InstStreamTranspose&, Exec& x) {
  const Operand &in = x.in(0), &out = x.out(0);
  const int64_t p = in.lanes, n = in.freeElems, es = in.esize;
  uint8_t* v = x.byteSlot(2 * p * n * es);
  uint8_t* t = v + p * n * es;
  // Every input lane is read before anything is written: the transpose may be in place.
  for (int64_t l = 0; l < p; ++l) x.copyStream(x.lane(in, l), Exec::buffered(v + l * n * es, in.dtype, n, in), false);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < p; ++i) std::memcpy(t + (j * p + i) * es, v + (i * n + j) * es, static_cast<size_t>(es));
  for (int64_t j = 0; j < n; ++j) x.copyStream(Exec::buffered(t + j * p * es, in.dtype, p, in), x.lane(out, j), false);
}

// ---- Iota (int32, converted on store without going through fp32 for integer outputs) ----

void check(const InstIota& I, Checker& c) {
  checkIotaPattern(c, I.base, I.channel_multiplier, I.pattern, c.out(0).freeElems);
}

void exec(const InstIota& I, Exec& x) {
  const Operand& out = x.out(0);
  int64_t* v = x.intSlot(out.freeElems);
  for (int64_t l = 0; l < out.lanes; ++l) {
    iotaValues(I.base, I.channel_multiplier, I.pattern, l, v, out.freeElems);
    x.scatterIntLane(out, l, v);
  }
}

// ---- TensorScalarAffineSelect: out = compare_op(e, 0) ? in : fill_value ----

void check(const InstAffineSelect& I, Checker& c) {
  c.sameShape(c.out(0), {&c.in(0)});
  checkIotaPattern(c, I.base, I.channel_multiplier, I.pattern, c.out(0).freeElems);
  if (!isComparison(I.compare_op)) c.fail(std::string("compare_op ") + std::string(enumName(I.compare_op)) + " is not a comparison");
}

void exec(const InstAffineSelect& I, Exec& x) {
  const Operand& out = x.out(0);
  int64_t* e = x.intSlot(out.freeElems);
  const float fill = static_cast<float>(I.fill_value);
  x.elementwise(
      {&x.in(0)}, out,
      [&](int64_t l0, int64_t nl, int64_t n, const float* const* in, float* res) {
        for (int64_t j = 0; j < nl; ++j) {
          iotaValues(I.base, I.channel_multiplier, I.pattern, l0 + j, e, n);
          for (int64_t i = 0; i < n; ++i) res[j * n + i] = compareInt(I.compare_op, e[i], 0) ? in[0][j * n + i] : fill;
        }
      },
      Exec::Lanes::Serial);  // e is one scratch row
}

// ---- RangeSelect (v3+): keep in[j] where cmp0(j + start, b0) and cmp1(j + start, b1) ----

void check(const InstRangeSelect& I, Checker& c) {
  c.require(legality::generation(I.opcode(), c.engine, c.cfg));
  for (AluOp op : {I.comp_op0, I.comp_op1})
    if (!isComparison(op)) c.fail(std::string("comparison op ") + std::string(enumName(op)) + " is not a comparison");
  c.sameShape(c.out(0), {&c.in(0)});
  c.pointer(c.in(1), c.out(0).lanes, "bound0");
  c.pointer(c.in(2), c.out(0).lanes, "bound1");
  if (c.nOuts == 2) c.pointer(c.out(1), c.out(0).lanes, "maximum");
}

void exec(const InstRangeSelect& I, Exec& x) {
  const float fill = static_cast<float>(I.fill_value);
  float* maxima = x.nOuts() == 2 ? x.slot(Exec::kSideSlot, x.out(0).lanes) : nullptr;
  x.elementwise({&x.in(0)}, x.out(0), [&](int64_t l0, int64_t nl, int64_t n, const float* const* in, float* res) {
    for (int64_t j = 0; j < nl; ++j) {
      const float b0 = x.laneScalar(x.in(1), l0 + j), b1 = x.laneScalar(x.in(2), l0 + j);
      float* o = res + j * n;
      for (int64_t i = 0; i < n; ++i) {
        const float idx = static_cast<float>(i + I.range_start);
        const bool keep = aluDyn(I.comp_op0, idx, b0) != 0.0f && aluDyn(I.comp_op1, idx, b1) != 0.0f;
        o[i] = keep ? in[0][j * n + i] : fill;
      }
      if (maxima) {
        float mx = o[0];
        for (int64_t i = 1; i < n; ++i) mx = alu<AluOp::max>(mx, o[i]);
        maxima[l0 + j] = mx;
      }
    }
  });
  if (maxima) {  // (reset_reduce: the registers start at -inf and take the max)
    x.setVectorRegisters(x.out(0), maxima);
    x.scatterLanes(x.out(1), maxima);
  }
}

}  // namespace sim
