// Per-lane reductions and searches: tensor_reduce, bn_stats / bn_aggr, max8, find_index8 and
// match_replace8. docs/isa-semantics.md §5.
#include <algorithm>

#include "Alu.h"
#include "Semantics.h"

namespace sim {

using namespace bir;

namespace {

// How many trailing free dims `axis` folds (X = 1, XY = 2, ...); 0 for C and XYZWC (refused).
int foldedDims(ReduceAxis a) {
  switch (a) {
    case ReduceAxis::X: return 1;
    case ReduceAxis::XY: return 2;
    case ReduceAxis::XYZ: return 3;
    case ReduceAxis::XYZW: return 4;
    default: return 0;
  }
}

// Elements per folded group: the product of the last `k` free nums of the pattern as written.
int64_t foldedElements(const AccessPattern& ap, int k) {
  int64_t n = 1;
  for (size_t i = ap.pattern.size(); k > 0 && i-- > 1; --k) n *= ap.pattern[i].num;
  return n;
}

// NaN-safe "a before b" for descending order: NaN first (largest), then by value.
bool descending(float a, float b) {
  if (std::isnan(a)) return !std::isnan(b);
  if (std::isnan(b)) return false;
  return a > b;
}

constexpr uint32_t kNotFound = 0xFFFFFFFFu;

}  // namespace

// ---- TensorReduce ----

void check(const InstTensorReduce& I, Checker& c) {
  const int k = foldedDims(I.axis);
  if (k == 0) c.fail(std::string("reduce axis ") + std::string(enumName(I.axis)) + " (partition reductions are not modelled)");
  const int dims = static_cast<int>(I.ins[0].pattern.size()) - 1;
  if (k > dims)
    c.fail(std::string("axis ") + std::string(enumName(I.axis)) + " folds " + std::to_string(k) +
           " free dims but ins[0] has " + std::to_string(dims));
  c.notImmediate(c.in(0), "data");
  c.lanes(c.out(0), c.in(0).lanes, "result");
  c.elems(c.out(0), c.in(0).freeElems / foldedElements(I.ins[0], k), "result");
}

void exec(const InstTensorReduce& I, Exec& x) {
  const Operand &in = x.in(0), &out = x.out(0);
  const int64_t inner = foldedElements(I.ins[0], foldedDims(I.axis));
  const int64_t groups = out.freeElems;
  float* v = x.slot(0, in.freeElems);
  float* r = x.slot(1, groups);
  withAluOp(I.op, [&]<AluOp Op>() {
    for (int64_t l = 0; l < in.lanes; ++l) {
      x.gatherLane(in, l, v);
      for (int64_t g = 0; g < groups; ++g) {
        const float* s = v + g * inner;
        float acc = s[0];
        for (int64_t i = 1; i < inner; ++i) acc = alu<Op>(acc, s[i]);
        r[g] = I.negate ? -acc : acc;
      }
      x.scatterLane(out, l, r);
    }
  });
}

// ---- BNStats: [count, mean, var*count] of the even and of the odd elements ----

void check(const InstBNStats&, Checker& c) {
  c.notImmediate(c.in(0), "data");
  c.require(legality::bnStats(Checker::facts(c.in(0)), c.cfg));
  c.lanes(c.out(0), c.in(0).lanes, "statistics");
  c.elems(c.out(0), 6, "statistics");
}

void exec(const InstBNStats&, Exec& x) {
  const Operand &in = x.in(0), &out = x.out(0);
  const int64_t n = in.freeElems;
  float* v = x.slot(0, n);
  for (int64_t l = 0; l < in.lanes; ++l) {
    x.gatherLane(in, l, v);
    float stats[6];
    for (int parity = 0; parity < 2; ++parity) {
      const int64_t count = (n - parity + 1) / 2;
      float sum = 0.0f;
      for (int64_t i = parity; i < n; i += 2) sum += v[i];
      const float mean = count ? sum / static_cast<float>(count) : 0.0f;
      float m2 = 0.0f;
      for (int64_t i = parity; i < n; i += 2) {
        const float dlt = v[i] - mean;
        m2 += dlt * dlt;
      }
      stats[3 * parity] = static_cast<float>(count);
      stats[3 * parity + 1] = mean;
      stats[3 * parity + 2] = m2;  // population variance * count
    }
    x.scatterLane(out, l, stats);
  }
}

// ---- BNStatsAggregate: mean and population variance of the union of k (count, mean, M2) ----

void check(const InstBNStatsAggregate&, Checker& c) {
  c.notImmediate(c.in(0), "statistics");
  if (c.in(0).freeElems % 3 != 0)
    c.fail("bn_aggr takes whole (count, mean, var*count) triples; ins[0] has " + std::to_string(c.in(0).freeElems) +
           " elements per partition");
  c.lanes(c.out(0), c.in(0).lanes, "mean and variance");
  c.elems(c.out(0), 2, "mean and variance");
}

void exec(const InstBNStatsAggregate&, Exec& x) {
  const Operand &in = x.in(0), &out = x.out(0);
  const int64_t k = in.freeElems / 3;
  float* v = x.slot(0, in.freeElems);
  for (int64_t l = 0; l < in.lanes; ++l) {
    x.gatherLane(in, l, v);
    float total = 0.0f, weighted = 0.0f;
    for (int64_t t = 0; t < k; ++t) {
      if (v[3 * t] == 0.0f) continue;
      total += v[3 * t];
      weighted += v[3 * t] * v[3 * t + 1];
    }
    const float mean = weighted / total;
    float m2 = 0.0f;
    for (int64_t t = 0; t < k; ++t) {
      if (v[3 * t] == 0.0f) continue;
      const float dlt = v[3 * t + 1] - mean;
      m2 += v[3 * t + 2] + v[3 * t] * dlt * dlt;
    }
    const float res[2] = {mean, m2 / total};
    x.scatterLane(out, l, res);
  }
}

// ---- Max (max8), MaxIndex (find_index8), MatchReplace (match_replace8) ----

void check(const InstMax&, Checker& c) {
  c.notImmediate(c.in(0), "data");
  c.require(legality::max8Family(InstructionType::Max, Checker::facts(c.in(0)), c.cfg));
  c.lanes(c.out(0), c.in(0).lanes, "top 8");
  c.elems(c.out(0), 8, "top 8");
}

void exec(const InstMax&, Exec& x) {
  const Operand &in = x.in(0), &out = x.out(0);
  float* v = x.slot(0, in.freeElems);
  for (int64_t l = 0; l < in.lanes; ++l) {
    x.gatherLane(in, l, v);
    std::partial_sort(v, v + 8, v + in.freeElems, descending);
    x.scatterLane(out, l, v);
  }
}

void check(const InstMaxIndex&, Checker& c) {
  c.notImmediate(c.in(0), "data");
  c.require(legality::max8Family(InstructionType::MaxIndex, Checker::facts(c.in(0)), c.cfg));
  c.lanes(c.in(1), c.in(0).lanes, "values");
  c.elems(c.in(1), 8, "values");
  c.lanes(c.out(0), c.in(0).lanes, "indices");
  c.elems(c.out(0), 8, "indices");
}

namespace {
// For each of the 8 values, the first index in data[0..n) holding it and not yet taken (when
// `taken` is given), else kNotFound.
void findIndex8(const float* data, int64_t n, const float* vals, float* idx, uint8_t* taken) {
  for (int k = 0; k < 8; ++k) {
    uint32_t found = kNotFound;
    for (int64_t i = 0; i < n; ++i)
      if (data[i] == vals[k] && !(taken && taken[i])) {
        found = static_cast<uint32_t>(i);
        if (taken) taken[i] = 1;
        break;
      }
    idx[k] = static_cast<float>(found);  // 0xFFFFFFFF saturates back to itself in uint32
  }
}
}  // namespace

void exec(const InstMaxIndex&, Exec& x) {
  const Operand &in = x.in(0), &vals = x.in(1), &out = x.out(0);
  float* v = x.slot(0, in.freeElems);
  float* w = x.slot(1, 8);
  float* idx = x.slot(2, 8);
  for (int64_t l = 0; l < in.lanes; ++l) {
    x.gatherLane(in, l, v);
    x.gatherLane(vals, l, w);
    findIndex8(v, in.freeElems, w, idx, nullptr);
    x.scatterLane(out, l, idx);
  }
}

void check(const InstMatchReplace&, Checker& c) {
  c.notImmediate(c.in(0), "data");
  c.require(legality::max8Family(InstructionType::MatchReplace, Checker::facts(c.in(0)), c.cfg));
  c.lanes(c.in(1), c.in(0).lanes, "values");
  c.elems(c.in(1), 8, "values");
  c.sameShape(c.out(0), {&c.in(0)});
  if (c.nOuts == 2) {
    c.lanes(c.out(1), c.in(0).lanes, "indices");
    c.elems(c.out(1), 8, "indices");
  }
}

void exec(const InstMatchReplace& I, Exec& x) {
  const Operand &in = x.in(0), &vals = x.in(1), &out = x.out(0);
  const int64_t n = in.freeElems;
  const bool stage = x.inst().stage;
  float* v = x.slot(0, stage ? n * in.lanes : n);
  float* w = x.slot(1, 8);
  float* idx = x.slot(2, 8 * in.lanes);
  uint8_t* taken = x.byteSlot(n);
  const float imm = static_cast<float>(I.imm_value);
  for (int64_t l = 0; l < in.lanes; ++l) {
    float* lv = stage ? v + l * n : v;
    x.gatherLane(in, l, lv);
    x.gatherLane(vals, l, w);
    std::fill(taken, taken + n, 0);
    findIndex8(lv, n, w, idx + 8 * l, taken);
    for (int64_t i = 0; i < n; ++i)
      if (taken[i]) lv[i] = imm;
    if (!stage) x.scatterLane(out, l, lv);
  }
  for (int64_t l = 0; l < in.lanes; ++l) {
    if (stage) x.scatterLane(out, l, v + l * n);
    if (x.nOuts() == 2) x.scatterLane(x.out(1), l, idx + 8 * l);
  }
}

}  // namespace sim
