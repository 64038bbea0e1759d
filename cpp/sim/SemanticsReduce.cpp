// Per-lane reductions and searches: tensor_reduce, tensor_scalar_reduce / _cumulative (the Vector
// Engine's accumulation registers), bn_stats / bn_aggr, max8, find_index8 and match_replace8.
// docs/isa-semantics.md §5.
#include <algorithm>
#include <limits>

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
  c.require(legality::reduceOp(I.opcode(), I.op));
  c.require(legality::bitvecDtypes(I.opcode(), I.op, AluOp::bypass, {c.in(0).dtype}, {c.out(0).dtype}));
  c.lanes(c.out(0), c.in(0).lanes, "result");
  c.elems(c.out(0), c.in(0).freeElems / foldedElements(I.ins[0], k), "result");
}

void exec(const InstTensorReduce& I, Exec& x) {
  const Operand &in = x.in(0), &out = x.out(0);
  const int64_t inner = foldedElements(I.ins[0], foldedDims(I.axis));
  const int64_t groups = out.freeElems;
  if (legality::isBitvecOp(I.op)) {  // (on bit patterns, as the elementwise bit-vector ops)
    std::vector<uint32_t> v(static_cast<size_t>(in.freeElems)), r(static_cast<size_t>(groups));
    for (int64_t l = 0; l < in.lanes; ++l) {
      x.gatherBitsLane(in, l, v.data());
      for (int64_t g = 0; g < groups; ++g) {
        const uint32_t* s = v.data() + g * inner;
        uint32_t acc = s[0];
        for (int64_t i = 1; i < inner; ++i) acc = bitvecAlu(I.op, acc, s[i]);
        r[static_cast<size_t>(g)] = I.negate ? 0u - acc : acc;  // (negate: the int32 value's)
      }
      x.scatterBitsLane(out, l, r.data());
    }
    return;
  }
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

// ---- TensorScalarReduce: y = op0(data, scalar0), folded into the DVE accumulation registers ----

namespace {
// The register value reset_reduce starts from: reduce_op's identity [I tensor_scalar_reduce,
// tensor_scalar_cumulative: 0 for add and subtract, 1 for mult, -inf for max, +inf for min].
float foldIdentity(AluOp op) {
  switch (op) {
    case AluOp::mult: return 1.0f;
    case AluOp::max: return -std::numeric_limits<float>::infinity();
    case AluOp::min: return std::numeric_limits<float>::infinity();
    default: return 0.0f;
  }
}
}  // namespace

void check(const InstTensorScalarReduce& I, Checker& c) {
  c.notImmediate(c.in(0), "data");
  c.sameShape(c.out(0), {&c.in(0)});
  c.require(bir::legality::aluOps(I.opcode(), c.engine, I.op0, AluOp::bypass));
  c.require(bir::legality::registerFold(I.reduce_op, I.cumulative));
  if (I.acc != AccumCmd::ZeroAccumulate && I.acc != AccumCmd::Accumulate && I.acc != AccumCmd::LoadAccumulate)
    c.fail(std::string("accumulate command ") + std::string(enumName(I.acc)) +
           " (the Vector Engine's registers take ZeroAccumulate, Accumulate or LoadAccumulate)");
  if (I.has_initial_tensor && I.acc != AccumCmd::LoadAccumulate)
    c.fail("has an initial register value but the accumulate command is " + std::string(enumName(I.acc)));
  const int want = 1 + I.has_scalar_tensor + I.has_initial_tensor;
  if (c.nIns != want)
    c.fail("takes " + std::to_string(want) + " inputs (data" + (I.has_scalar_tensor ? ", scalar" : "") +
           (I.has_initial_tensor ? ", initial register value" : "") + "), got " + std::to_string(c.nIns));
  if (I.has_scalar_tensor) c.pointer(c.in(1), c.out(0).lanes, "per-partition scalar");
  if (I.has_initial_tensor) c.pointer(c.in(want - 1), c.out(0).lanes, "initial register value");
  if (c.nOuts == 2) {
    if (I.cumulative) c.fail("a cumulative reduction writes its running values to outs[0] only");
    c.pointer(c.out(1), c.out(0).lanes, "reduction");
  }
  // "Input / output dtypes are restricted to BF16, FP16, FP32, FP8, UINT8, UINT16, INT8, INT16"
  // [I tensor_scalar_cumulative]
  if (I.cumulative)
    for (const Operand* op : {&c.in(0), &c.out(0)})
      if (op->dtype == DType::int32 || op->dtype == DType::uint32 || op->dtype == DType::int64 ||
          op->dtype == DType::uint64)
        c.fail(c.name(*op) + " is " + std::string(enumName(op->dtype)) +
               "; a cumulative reduction takes no 32- or 64-bit integer data");
}

// Per lane: reg starts at the identity, the register or the initial operand; for each element
// reg = reduce_op(y[i], reg); out[i] = y[i] (or reg, cumulative); the register keeps reg.
void exec(const InstTensorScalarReduce& I, Exec& x) {
  const Operand& out = x.out(0);
  float* regs = x.slot(Exec::kSideSlot, out.lanes);  // per lane, the register's new value
  const Operand* scalar = I.has_scalar_tensor ? &x.in(1) : nullptr;
  const Operand* initial = I.has_initial_tensor ? &x.in(x.nIns() - 1) : nullptr;
  const float c0 = static_cast<float>(I.const0), init = static_cast<float>(I.initial);
  withAluOp(I.reduce_op, [&]<AluOp Op>() {
    x.elementwise({&x.in(0)}, out, [&](int64_t l0, int64_t nl, int64_t n, const float* const* in, float* res) {
      for (int64_t j = 0; j < nl; ++j) {
        const int64_t lane = l0 + j;
        float r;
        if (I.acc == AccumCmd::ZeroAccumulate) {
          r = foldIdentity(I.reduce_op);
        } else if (I.acc == AccumCmd::LoadAccumulate) {
          r = initial ? x.laneScalar(*initial, lane) : init;
        } else {
          r = x.vectorRegister(out.p0 + lane);
        }
        float* y = res + j * n;
        std::copy(in[0] + j * n, in[0] + (j + 1) * n, y);
        applyScalar(I.op0, I.reverse0, y, n, scalar ? x.laneScalar(*scalar, lane) : c0);
        if (I.cumulative)
          for (int64_t i = 0; i < n; ++i) y[i] = r = alu<Op>(y[i], r);
        else
          for (int64_t i = 0; i < n; ++i) r = alu<Op>(y[i], r);
        regs[lane] = r;
      }
    });
  });
  x.setVectorRegisters(out, regs);
  if (x.nOuts() == 2) {
    if (I.negate)
      for (int64_t l = 0; l < out.lanes; ++l) regs[l] = -regs[l];
    x.scatterLanes(x.out(1), regs);
  }
}

// ---- BNStats: [count, mean, var*count] of the even and of the odd elements ----

void check(const InstBNStats&, Checker& c) {
  c.notImmediate(c.in(0), "data");
  c.require(legality::bnStats(c.facts(c.in(0)), c.cfg));
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
  c.require(legality::max8Family(InstructionType::Max, c.facts(c.in(0)), c.cfg));
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
  c.require(legality::max8Family(InstructionType::MaxIndex, c.facts(c.in(0)), c.cfg));
  c.lanes(c.in(1), c.in(0).lanes, "values");
  c.elems(c.in(1), 8, "values");
  c.lanes(c.out(0), c.in(0).lanes, "indices");
  c.elems(c.out(0), 8, "indices");
}

namespace {
// Each of the 8 values paired with the first index in data[0..n) holding it that no value before
// it took, else kNotFound. Duplicate values thus take distinct positions: find_index8 visits the
// values in order 0..7 (duplicates get ascending positions), match_replace8 in order 7..0
// (descending) [nki.isa.nc_match_replace8, 2.32: "Behavior with duplicate vals"].
void findIndex8(const float* data, int64_t n, const float* vals, float* idx, uint8_t* taken, bool reverse) {
  std::fill(taken, taken + n, 0);
  for (int j = 0; j < 8; ++j) {
    const int k = reverse ? 7 - j : j;
    uint32_t found = kNotFound;
    for (int64_t i = 0; i < n; ++i)
      if (data[i] == vals[k] && !taken[i]) {
        found = static_cast<uint32_t>(i);
        taken[i] = 1;
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
  uint8_t* taken = x.byteSlot(in.freeElems);
  for (int64_t l = 0; l < in.lanes; ++l) {
    x.gatherLane(in, l, v);
    x.gatherLane(vals, l, w);
    findIndex8(v, in.freeElems, w, idx, taken, false);
    x.scatterLane(out, l, idx);
  }
}

void check(const InstMatchReplace&, Checker& c) {
  c.notImmediate(c.in(0), "data");
  c.require(legality::max8Family(InstructionType::MatchReplace, c.facts(c.in(0)), c.cfg));
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
    findIndex8(lv, n, w, idx + 8 * l, taken, true);
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
