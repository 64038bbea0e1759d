#include "KernelCost.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "Hwm.h"

namespace bir {
namespace {

constexpr double kP = 128;       // partitions = PE rows: a tile of rows, a contraction tile
constexpr double kMoving = 512;  // PE moving free size per nc_matmul (v2/v3) [I]
constexpr double kFlashKeys = 1024;  // FlashAttention.h: keys per block

double ceilDiv(double a, double b) { return std::ceil(a / b); }
double tiles(double n) { return ceilDiv(n, kP); }

// ---- the per-instruction formulas Hwm charges (Hwm.cpp), in ns of their engine ----

class Formulas {
 public:
  explicit Formulas(const MachineConfig& c) : c_(c) {}
  const MachineConfig& config() const { return c_; }

  // nc_matmul: max(min(64, N_stationary), N_moving) PE cycles, 4x for fp32 [I].
  double matmul(double m, double n, bool fp32 = false) const {
    return std::max(std::min(64.0, m), n) * (fp32 ? c_.pe_fp32_factor : 1.0) / c_.pe_clock_ghz;
  }
  // nc_transpose on the PE: max(P, min(64, F)) [I] (exact transpose mode, in the input dtype).
  double transpose(double p, double f) const { return std::max(p, std::min(64.0, f)) / c_.pe_clock_ghz; }
  // ACT instructions (activation, tensor_scalar, copy): max(MIN_II, N) ScalarE cycles [I].
  double act(double n) const { return minII(n) / c_.act_clock_ghz; }
  // ActReadAccumulator: ~64 ScalarE cycles [A1].
  double actRead() const { return static_cast<double>(c_.act_read_accumulator_cycles) / c_.act_clock_ghz; }
  // DVE instructions: max(MIN_II, cycles), cycles the instruction's formula in N (N, 2N, 8N) [I].
  double dve(double cycles) const { return minII(cycles) / c_.dve_clock_ghz; }
  // GpSimd elementwise: GPSIMD_START + N [I] (Hwm::poolCycles).
  double pool(double n) const { return (static_cast<double>(c_.gpsimd_start_cycles) + n) / c_.pool_clock_ghz; }
  // The issuing engine's cost to trigger one DMA (Hwm: dma_trigger_cycles).
  double dmaTrigger() const { return static_cast<double>(c_.dma_trigger_cycles) / c_.sp_clock_ghz; }
  // DMA payload on the DMA engines: bytes / (bandwidth x engines), an engine per 8 partitions of
  // the on-chip side [D1]; a contiguous run takes at least dma_descriptor_ns (Hwm).
  double dmaPayload(double bytes, double partitions = kP, double runBytes = 1e9) const {
    const double engines = std::min<double>(c_.dma_engines, ceilDiv(partitions, c_.dma_partitions_per_engine));
    const double floorBytes = c_.dma_descriptor_ns * c_.dma_engine_bandwidth_gbps;
    const double charged = runBytes < floorBytes ? bytes / runBytes * floorBytes : bytes;
    return charged / (c_.dma_engine_bandwidth_gbps * engines);
  }
  // One transfer end to end on its queue: start latency, then the payload [D1, DB].
  double dmaLatency(double bytes, double partitions = kP) const {
    return c_.dma_start_latency_ns + dmaPayload(bytes, partitions);
  }
  // The access overhead after an instruction until its result is visible (~60 cycles [A1]).
  double access(double ghz) const { return static_cast<double>(c_.sram_access_cycles) / ghz; }

 private:
  double minII(double n) const { return std::max(static_cast<double>(c_.min_ii_cycles), n); }
  const MachineConfig& c_;
};

// Busy time per engine, in ns. The DMA row is the DMA engines' payload time over the whole core;
// sp and pool include the DMA triggers they issue.
struct Busy {
  double pe = 0, act = 0, dve = 0, pool = 0, sp = 0, dma = 0;
  double busiest() const { return std::max({pe, act, dve, pool, sp, dma}); }
  Busy& operator+=(const Busy& o) {
    pe += o.pe, act += o.act, dve += o.dve, pool += o.pool, sp += o.sp, dma += o.dma;
    return *this;
  }
  Busy operator*(double k) const { return {pe * k, act * k, dve * k, pool * k, sp * k, dma * k}; }
};

// ---- the node's operands and attrs ----

struct Node {
  const InstBIRKernel& I;
  std::vector<std::vector<int64_t>> ins, outs;
  std::vector<DType> inTypes, outTypes;

  explicit Node(const InstBIRKernel& inst) : I(inst) {
    auto add = [](const std::vector<AccessPattern>& aps, auto& shapes, auto& types) {
      for (const auto& ap : aps) {
        if (ap.isImmediate()) continue;
        std::vector<int64_t> s = ap.access_shape;
        if (s.empty())
          for (const auto& p : ap.pattern) s.push_back(p.num);
        shapes.push_back(s);
        types.push_back(ap.dtype);
      }
    };
    add(I.ins, ins, inTypes);
    add(I.outs, outs, outTypes);
  }
  double in(size_t i, int d) const { return static_cast<double>(ins[i][static_cast<size_t>(d < 0 ? ins[i].size() + d : d)]); }
  double out(size_t i, int d) const { return static_cast<double>(outs[i][static_cast<size_t>(d < 0 ? outs[i].size() + d : d)]); }
  bool rank(size_t i, size_t r) const { return i < ins.size() && ins[i].size() == r; }
  // Product of all but the last dim: the token rows of a [..., H] operand.
  double rows(size_t i) const {
    double n = 1;
    for (size_t d = 0; d + 1 < ins[i].size(); ++d) n *= static_cast<double>(ins[i][d]);
    return n;
  }
  double es(size_t i) const { return static_cast<double>(dtypeSize(inTypes[i])); }
  double outEs(size_t i) const { return static_cast<double>(dtypeSize(outTypes[i])); }
  bool fp32(size_t i) const { return inTypes[i] == DType::float32 || inTypes[i] == DType::float32r; }

  const std::string* raw(const std::string& key) const { return I.attr(key); }
  bool flag(const std::string& key, const std::optional<bool>& field, bool fallback) const {
    if (field) return *field;
    if (const std::string* v = raw(key)) return *v == "true" || *v == "True" || *v == "1";
    return fallback;
  }
  double number(const std::string& key, double fallback) const {
    const std::string* v = raw(key);
    if (!v) return fallback;
    try {
      return std::stod(*v);
    } catch (...) {
      return fallback;
    }
  }
};

// The row norm of the MLP / QKV prologue (RowNorm.h): none, RMS or layer norm.
enum class Norm { None, RMS, Layer };
Norm normOf(const Node& n, bool familyNorm) {
  int64_t type = familyNorm ? 1 : 0;
  if (n.I.norm_type) {
    type = *n.I.norm_type;
  } else if (const std::string* v = n.raw("norm_type")) {
    static const std::vector<std::string> names = {"NO_NORM", "RMS_NORM", "LAYER_NORM", "RMS_NORM_SKIP_GAMMA"};
    const auto it = std::find(names.begin(), names.end(), *v);
    type = it != names.end() ? it - names.begin() : static_cast<int64_t>(n.number("norm_type", static_cast<double>(type)));
  }
  const bool fused = n.flag("fused_rmsnorm", n.I.fused_rmsnorm, familyNorm);
  if (type == (familyNorm ? 1 : 0) && !fused) return Norm::None;
  if (type == 0) return familyNorm && fused ? Norm::RMS : Norm::None;
  return type == 2 ? Norm::Layer : Norm::RMS;
}

// ---- shared pieces of the leaves ----

// TokenPrologue.h, per tile of `rows` token rows of hidden [T, H]: with a norm or residual adds,
// the rows are loaded as fp32 (DMA casts charge the wider side [D1]), added on DVE (2N: fp32
// SBUF + SBUF [I]), normalised (RMS: ACT square-and-sum, then DVE scales by 1/rms; layer norm:
// bn_stats / bn_aggr) and transposed on the PE, KT transposes of [rows, 128], evacuated by DVE
// with gamma (PSUM + SBUF: N). Without either, KT DMA transposes bring x^T from DRAM.
Busy prologueTile(const Formulas& f, double rows, double H, double addends, Norm norm, double hiddenEs) {
  Busy b;
  const double KT = tiles(H);
  if (norm == Norm::None && addends == 0) {
    b.dma += KT * f.dmaPayload(rows * kP * hiddenEs);
    b.sp += KT * f.dmaTrigger();
    return b;
  }
  b.dma += (1 + addends) * f.dmaPayload(rows * H * 4);
  b.sp += (1 + addends) * f.dmaTrigger();
  b.dve += addends * f.dve(2 * H);
  if (norm == Norm::RMS) {
    b.act += f.act(H) + f.actRead();
    b.dve += 2 * f.dve(1) + f.dve(H);
  } else if (norm == Norm::Layer) {
    b.dve += ceilDiv(H, 512) * f.dve(512) + f.dve(13 * 2 * ceilDiv(H, 512)) + f.dve(1) + f.dve(H);
  } else {
    b.dve += f.dve(H);
  }
  b.pe += KT * f.transpose(rows, kP);
  b.dve += f.dve(KT * rows);
  return b;
}

// The prologue of one block of tn tokens. It is not overlapped with the previous block's
// projections: its loads are emitted after that block's stores (the DMA engines serve transfers
// in program order) and the PE waits for the block's xT. Its row tiles are pipelined (loaded one
// ahead): the busiest engine per tile, plus one tile's load and norm latency.
double prologueBlock(const Formulas& f, double tn, double H, double addends, Norm norm, double hiddenEs) {
  double t = 0;
  Busy first;
  for (double r = 0; r < tn; r += kP) {
    const Busy b = prologueTile(f, std::min(kP, tn - r), H, addends, norm, hiddenEs);
    if (r == 0) first = b;
    t += b.busiest();
  }
  return t + first.dma + f.config().dma_start_latency_ns + first.act;
}

// PSUM evacuations alternate between ACT and DVE (TileOps.h EvacuationEngines): half each.
void evacuateHalves(Busy& b, const Formulas& f, double count, double n) {
  b.act += count / 2 * f.act(n);
  b.dve += count / 2 * f.dve(n);
}

// GatedMlp.h gatedActivationsT for one block of tn tokens (weights stationary, tokens moving):
// IT x KT matmuls per projection, the activation on ACT from PSUM and the gate x up product on
// DVE (PSUM + SBUF: N), the weights streamed once per block.
Busy gatedActivations(const Formulas& f, double tn, double H, double I, double wEs, bool fp32, bool gate = true) {
  Busy b;
  const double KT = tiles(H), IT = tiles(I), proj = gate ? 2 : 1;
  b.pe += proj * IT * KT * f.matmul(kP, tn, fp32);
  b.act += IT * f.act(tn);
  if (gate) b.dve += IT * f.dve(tn);
  b.dma += f.dmaPayload(proj * H * I * wEs);
  b.sp += proj * IT * ceilDiv(KT, 8) * f.dmaTrigger();
  return b;
}

// GatedMlp.h downProjectAndStore for one block: per 128 output columns, `terms` x IT matmuls, an
// ACT evacuation, the transposes back (tn / 128 of them) and their evacuation, the stores.
Busy downProject(const Formulas& f, double tn, double I, double H, double terms, double wEs, double outEs, bool fp32) {
  Busy b;
  const double KT = tiles(H), IT = tiles(I), chunks = tiles(tn);
  b.pe += KT * terms * IT * f.matmul(kP, tn, fp32);
  b.act += KT * f.act(tn);
  // The transposes back follow the matmuls in the PE's stream and wait for the ACT evacuation.
  b.pe += KT * (chunks * f.transpose(kP, kP) + f.act(tn) + f.access(f.config().act_clock_ghz));
  evacuateHalves(b, f, KT, tn);
  b.dma += f.dmaPayload(terms * I * H * wEs) + f.dmaPayload(tn * H * outEs);
  b.sp += KT * terms * ceilDiv(IT, 8) * f.dmaTrigger();
  b.pool += KT * chunks * f.dmaTrigger();
  return b;
}

// Projection.h tokenBlock: up to 512 tokens, fewer when the resident activations do not fit.
double tokenBlock(const MachineConfig& c, double T, double residentPerToken, double phaseBytes) {
  double tb = std::min(kMoving, tiles(T) * kP);
  while (tb > kP && residentPerToken * tb + phaseBytes > static_cast<double>(c.sbuf_bytes_per_partition) - 4096) tb -= kP;
  return tb;
}

// ---- the families ----

using Estimator = std::function<std::optional<double>(const Node&, const Formulas&)>;

// MLP (MLP.cpp). CTE: token blocks of <= 512, weights stationary, PE-bound; TKG: 128 tokens
// stationary, weights moving 512 columns at a time, bound by the weight DMA. Both pipeline their
// engines (rotating weight pools and PSUM banks): the busiest engine.
std::optional<double> mlp(const Node& n, const Formulas& f) {
  const bool storeAdd = n.flag("store_add", n.I.store_add, false);
  const bool skipGate = n.flag("skip_gate", n.I.skip_gate, false);
  const size_t up = (storeAdd ? 3 : 2) + (skipGate ? 0 : 1);
  if (n.ins.size() < up + 2 || !n.rank(0, 3) || !n.rank(up, 2) || !n.rank(up + 1, 2)) return std::nullopt;
  const double T = n.rows(0), H = n.in(0, -1), I = n.in(up, 1), wEs = n.es(up), KT = tiles(H), IT = tiles(I);
  const bool fp32 = n.fp32(up), tkg = n.flag("is_tkg", n.I.is_tkg, false);
  const Norm norm = normOf(n, false);
  const double addends = storeAdd ? 1 : 0, proj = skipGate ? 1 : 2;
  if (!tkg) {
    const double tb = tokenBlock(f.config(), T, (KT + IT) * wEs, 10 * H + 4 * 8 * kP * wEs);
    double total = 0;
    for (double t0 = 0; t0 < T; t0 += tb) {
      const double tn = std::min(tb, T - t0);
      Busy b = gatedActivations(f, tn, H, I, wEs, fp32, !skipGate);
      b += downProject(f, tn, I, H, 1, wEs, n.outEs(0), fp32);
      total += prologueBlock(f, tn, H, addends, norm, n.es(0)) + b.busiest();
    }
    return total;
  }
  Busy b;
  {
    for (double t0 = 0; t0 < T; t0 += kP) {
      const double tn = std::min(kP, T - t0), chunks = ceilDiv(I, kMoving), outChunks = ceilDiv(H, kMoving);
      b += prologueTile(f, tn, H, addends, norm, n.es(0));
      b.pe += proj * chunks * KT * f.matmul(tn, kMoving, fp32);
      b.act += chunks * f.act(kMoving);
      if (!skipGate) b.dve += chunks * f.dve(kMoving);
      b.pe += IT * f.transpose(tn, kP);
      b.act += f.act(IT * tn);
      b.pe += outChunks * IT * f.matmul(tn, kMoving, fp32);
      evacuateHalves(b, f, outChunks, kMoving);
      b.dma += f.dmaPayload((proj + 1) * H * I * wEs) + f.dmaPayload(tn * H * n.outEs(0), tn);
      b.sp += (proj * chunks * ceilDiv(KT, 4) + outChunks * ceilDiv(IT, 4)) * f.dmaTrigger();
    }
  }
  return b.busiest();
}

// QKV (QKV.cpp): the MLP's projections with one weight [H, (nq + 2 nkv) d]. CTE: weights
// stationary per 128 output columns, ACT evacuation, transposed back on the PE unless the layout
// is NBdS; TKG: tokens stationary, weights moving. Pipelined: the busiest engine.
std::optional<double> qkv(const Node& n, const Formulas& f) {
  if (n.ins.size() < 3 || !n.rank(0, 3)) return std::nullopt;
  const bool hasBias = n.flag("bias", std::nullopt, false);
  const size_t w = n.ins.size() - 2 - (hasBias ? 1 : 0);
  if (!n.rank(w, 2)) return std::nullopt;
  const double T = n.rows(0), H = n.in(0, -1), I = n.in(w, 1), wEs = n.es(w), KT = tiles(H), IT = tiles(I);
  const double addends = static_cast<double>(w - 1);
  const bool fp32 = n.fp32(w), tkg = n.flag("is_tkg", n.I.is_tkg, false);
  int64_t layout = n.I.output_layout ? *n.I.output_layout : 0;
  if (const std::string* v = n.raw("output_layout")) layout = *v == "NBdS" ? 2 : *v == "NBSd" ? 1 : *v == "BSD" ? 0 : static_cast<int64_t>(n.number("output_layout", 0));
  const Norm norm = normOf(n, true);
  const double oEs = n.outEs(0);
  if (!tkg) {
    const double tb = tokenBlock(f.config(), T, KT * wEs, std::max(10 * H, 3 * 8 * kP * wEs + 4 * kMoving * oEs));
    double total = 0;
    for (double t0 = 0; t0 < T; t0 += tb) {
      const double tn = std::min(tb, T - t0), chunks = tiles(tn);
      Busy b;
      b.pe += IT * KT * f.matmul(kP, tn, fp32);
      b.act += IT * f.act(tn);
      b.dma += f.dmaPayload(H * I * wEs) + f.dmaPayload(tn * I * oEs);
      b.sp += IT * ceilDiv(KT, 8) * f.dmaTrigger();
      if (layout != 2) {
        // The transposes back follow the matmuls in the PE's stream, after the ACT evacuation.
        b.pe += IT * (chunks * f.transpose(kP, kP) + f.act(tn) + f.access(f.config().act_clock_ghz));
        evacuateHalves(b, f, IT, tn);
      }
      b.pool += IT * chunks * f.dmaTrigger();
      total += prologueBlock(f, tn, H, addends, norm, n.es(0)) + b.busiest();
    }
    return total;
  }
  Busy b;
  {
    for (double t0 = 0; t0 < T; t0 += kP) {
      const double tn = std::min(kP, T - t0), chunks = ceilDiv(I, kMoving);
      b += prologueTile(f, tn, H, addends, norm, n.es(0));
      b.pe += chunks * KT * f.matmul(tn, kMoving, fp32);
      evacuateHalves(b, f, chunks, kMoving);
      b.dma += f.dmaPayload(H * I * wEs) + f.dmaPayload(tn * I * oEs, tn);
      b.sp += chunks * ceilDiv(KT, 4) * f.dmaTrigger();
      b.pool += chunks * f.dmaTrigger();
    }
  }
  return b.busiest();
}

// QuantOnly (RMSNormQuant.cpp): per tile of 128 rows, three-deep pipelined: ACT squares-and-sums
// and scales the row (2 passes of N = H), Pool multiplies by gamma and quantizes (2 passes), DVE
// finds max and -min (2 passes, fp32: N each) plus the per-row scalars. The busiest engine.
std::optional<double> quantOnly(const Node& n, const Formulas& f) {
  if (n.ins.size() < 2 || n.ins[0].size() < 2) return std::nullopt;
  const double T = n.rows(0), H = n.in(0, -1);
  int64_t qt = 2;
  if (const std::string* v = n.raw("quantization_type")) qt = *v == "STATIC" ? 1 : *v == "ROW" ? 2 : static_cast<int64_t>(n.number("quantization_type", 2));
  const bool row = qt != 1;
  const Norm norm = normOf(n, true);
  const double tileCount = tiles(T);
  Busy per;
  per.dma += f.dmaPayload(kP * H * 4) + f.dmaPayload(kP * (H + 4) * n.outEs(0));
  per.sp += f.dmaTrigger();
  per.pool += (row ? 2 : 1) * f.dmaTrigger();
  if (norm != Norm::None) {
    per.act += 2 * f.act(H) + f.actRead();
    per.dve += 2 * f.dve(1);
    per.pool += f.pool(H);
  }
  per.pool += f.pool(H);
  if (row) per.dve += 2 * f.dve(H) + 2 * f.dve(1) + f.dve(8);
  // The load of tile i + 3 is queued behind the store of tile i (the DMA engines serve transfers
  // in program order), and DVE's max / min of tile i + 2 sit behind tile i + 3's 1/rms in its
  // in-order stream: a recurrence over two tiles through DVE (max, min, scale), Pool (quantize),
  // the store, the next load, ACT (square-and-sum) and DVE (1/rms).
  const double dveAccess = f.access(f.config().dve_clock_ghz), actAccess = f.access(f.config().act_clock_ghz);
  const double cycle = 2 * f.dve(H) + 3 * f.dve(1) + f.dve(8) + 2 * dveAccess + f.pool(H) + f.access(f.config().pool_clock_ghz) +
                       f.dmaLatency(kP * (H + 4) * n.outEs(0)) + f.dmaLatency(kP * H * 4) +
                       (norm != Norm::None ? f.act(H) + f.actRead() + actAccess + 2 * f.dve(1) + dveAccess : 0);
  // Filling the pipeline: gamma (broadcast to every partition) and the first tile load, then the
  // first tile's norm (ACT square-and-sum, Pool gamma, ACT scale) before any quantize.
  const double fill = (norm != Norm::None ? f.dmaPayload(kP * H * 4) + 2 * f.act(H) + f.actRead() + f.pool(H) : 0) +
                      f.dmaLatency(kP * H * 4);
  return fill + std::max(per.busiest(), cycle / 2) * tileCount;
}

// Flash attention (FlashAttention.h, OnlineSoftmax.h): one block of kw keys for `rows` query rows
// costs, per engine,
//   PE   scores: DT x ceil(kw/512) matmuls (rows stationary, 512 keys moving) [+ the mask matmul]
//        P V: ceil(kw/128) matmuls (P^T stationary, v [128 keys, d] moving)
//   DVE  row max from PSUM (fp32: N = kw), the running-max min, O = a O (N = d) + P V (PSUM: N = d)
//   ACT  exp from PSUM (N = kw), the accumulator read, the correction exp and the l update
//   DMA  P^T: ceil(kw/128) SBUF-to-SBUF transposes, issued from Pool
// and one block of a lane is a chain through PE, DVE, ACT, the DMA queue and the PE again. The
// scheduler keeps `lanes` items in flight, stage by stage, and pipelines each lane by one block:
// a round (one block of every lane) takes the larger of the lanes' busiest engine and the
// chain's latency.
struct FlashBlockCost {
  Busy busy;
  double chain = 0;
};
FlashBlockCost flashBlock(const Formulas& f, double kw, double rows, double d, bool masked, bool fp32, double es,
                          bool first, bool last) {
  const double DT = tiles(d), groups = ceilDiv(kw, kMoving), chunks = tiles(kw);
  FlashBlockCost c;
  Busy& b = c.busy;
  double scores = 0;
  for (double g = 0; g < groups; ++g) scores += DT * f.matmul(rows, std::min(kMoving, kw - g * kMoving), fp32);
  if (masked) scores += f.matmul(rows, std::min(kw, kP), fp32);
  const double pv = chunks * f.matmul(rows, d, fp32);
  b.pe = scores + pv;
  const double dveMax = f.dve(kw) + f.dve(1);
  const double dveAcc = f.dve(d) + f.dve(d);
  b.dve = dveMax + dveAcc;
  const double actExp = f.act(kw) + f.actRead() + 2 * f.act(1);
  b.act = actExp;
  const double tBytes = std::min(kP, kw) * rows * es;
  b.dma = chunks * f.dmaPayload(tBytes);
  b.pool = chunks * f.dmaTrigger();
  const double transposes = f.dmaLatency(tBytes) + chunks * f.dmaTrigger();
  c.chain = scores + dveMax + f.access(f.config().dve_clock_ghz) + actExp + f.access(f.config().act_clock_ghz) +
            transposes + pv + dveAcc;
  // An item's first block starts from its q, scaled on Pool; its last ends with out = O / l on
  // DVE and the transposed store.
  if (first) {
    b.pool += f.pool(rows);
    c.chain += f.pool(rows) + f.access(f.config().pool_clock_ghz);
  }
  if (last) {
    b.dve += f.dve(d);
    b.dma += f.dmaPayload(rows * d * es);
    c.chain += f.dve(d) + f.access(f.config().dve_clock_ghz) + f.dmaTrigger() + f.dmaLatency(rows * d * es);
  }
  return c;
}

// Runs `items` (each a list of blocks: kw and whether masked) `lanes` at a time.
double flashRun(const Formulas& f, const std::vector<std::vector<std::pair<double, bool>>>& items, double lanes,
                double rows, double d, bool fp32, double es) {
  double total = 0;
  for (size_t i0 = 0; i0 < items.size(); i0 += static_cast<size_t>(lanes)) {
    const size_t i1 = std::min(items.size(), i0 + static_cast<size_t>(lanes));
    size_t rounds = 0;
    for (size_t i = i0; i < i1; ++i) rounds = std::max(rounds, items[i].size());
    for (size_t r = 0; r < rounds; ++r) {
      Busy round;
      double chain = 0;
      for (size_t i = i0; i < i1; ++i) {
        if (r >= items[i].size()) continue;
        const FlashBlockCost c = flashBlock(f, items[i][r].first, rows, d, items[i][r].second, fp32, es, r == 0,
                                            r + 1 == items[i].size());
        round += c.busy;
        chain = std::max(chain, c.chain);
      }
      total += std::max(round.busiest(), chain);
    }
  }
  return total;
}

// FlashAttention::lanesFor: two score banks per lane and the lanes' P V accumulators packed.
double flashLanes(const MachineConfig& c, double d, int most) {
  const double perBank = std::max(1.0, std::floor(2048 / (d * 4)));
  for (int lanes = most; lanes > 1; --lanes)
    if (2 * lanes + ceilDiv(lanes, perBank) <= static_cast<double>(c.psum_banks)) return lanes;
  return 1;
}

// CausalAttentionMMSoftmaxMMWithoutSwap / AttentionMMSoftmaxMMWithoutSwap (Attention.cpp):
// q [BH, d, Sq], k [BKV, d, Sk], v [BKV, Sk, d]; an item per 128 queries of a head, blocks of
// 1024 keys (causal: keys up to the tile's last query, the last block masked).
std::optional<double> attention(const Node& n, const Formulas& f, bool causal) {
  if (n.ins.size() < 3 || !n.rank(0, 3) || !n.rank(1, 3)) return std::nullopt;
  const double BH = n.in(0, 0), d = n.in(0, 1), Sq = n.in(0, 2), BKV = n.in(1, 0), Sk = n.in(1, 2);
  const bool fp32 = n.fp32(0);
  const double es = n.es(0);
  std::vector<std::vector<std::pair<double, bool>>> head;
  for (double q0 = 0; q0 < Sq; q0 += kP) {
    const double qw = std::min(kP, Sq - q0), keys = causal ? std::min(Sk, q0 + qw) : Sk;
    std::vector<std::pair<double, bool>> blocks;
    for (double k0 = 0; k0 < keys; k0 += kFlashKeys) {
      const double kw = std::min(kFlashKeys, keys - k0);
      blocks.push_back({kw, causal && k0 + kw > q0 + 1});
    }
    head.push_back(blocks);
  }
  std::vector<std::vector<std::pair<double, bool>>> group;
  for (double h = 0; h < BH / BKV; ++h) group.insert(group.end(), head.begin(), head.end());
  const double lanes = flashLanes(f.config(), d, 6);
  const double perGroup = flashRun(f, group, lanes, std::min(kP, Sq), d, fp32, es);
  // k and v of the next kv head load while this one computes: the larger of the two per head.
  const double kvLoad = f.dmaPayload(2 * d * Sk * es);
  return BKV * std::max(perGroup, kvLoad) + kvLoad;
}

// AttentionTkgFwd (AttentionTkgFwd.cpp): per kv head one item of (heads of the group x Sa) rows
// over the prior in 1024-key blocks plus the active block; the items of a chunk of kv heads run
// while the next chunk's cache loads (the larger of the two per chunk).
std::optional<double> attentionTkg(const Node& n, const Formulas& f) {
  if (n.ins.size() < 5 || !n.rank(0, 3) || !n.rank(1, 3)) return std::nullopt;
  const double BH = n.in(0, 0), d = n.in(0, 1), Sa = n.in(0, 2), BKV = n.in(1, 0), Sp = n.in(1, 2);
  const double prior = n.number("prior_len", Sp), es = n.es(0), group = BH / BKV;
  const bool fp32 = n.fp32(0), causal = n.flag("causal_active", std::nullopt, true);
  const double headsPerPass = std::max(1.0, std::min(group, std::floor(kP / Sa))), rows = headsPerPass * Sa;
  const double DT = tiles(d), priorTiles = std::max(tiles(prior), 1.0);
  const double perHead = (DT * std::max(prior, 1.0) + priorTiles * d + DT * Sa + d) * es;
  const double chunk = std::max(1.0, std::min(std::floor((BKV + 1) / 2),
                                              std::floor(static_cast<double>(f.config().sbuf_bytes_per_partition) * 3 / 4 / perHead / 2)));
  std::vector<std::pair<double, bool>> blocks;
  for (double k0 = 0; k0 < prior; k0 += kFlashKeys) blocks.push_back({std::min(kFlashKeys, prior - k0), false});
  blocks.push_back({Sa, causal});
  const double itemsPerHead = ceilDiv(group, headsPerPass), lanes = flashLanes(f.config(), d, 6);
  const double kvLoad = f.dmaPayload(2 * d * (prior + Sa) * es);
  double total = chunk * kvLoad;  // the first chunk loads before anything runs
  for (double g0 = 0; g0 < BKV; g0 += chunk) {
    const double heads = std::min(chunk, BKV - g0);
    std::vector<std::vector<std::pair<double, bool>>> items(static_cast<size_t>(heads * itemsPerHead), blocks);
    const double next = std::min(chunk, BKV - g0 - heads) * kvLoad;
    total += std::max(flashRun(f, items, lanes, rows, d, fp32, es), next);
  }
  return total;
}

// BackwardsAttention (BackwardsAttention.cpp): per query head, per 512-key block, query tiles two
// at a time, each stage for both before the next. The PE's in-order stream puts a pair's dq
// matmuls (which wait for the DMA transposes of dS) before the next pair's scores, so the pairs
// hardly overlap: a pair costs the larger of its busiest engine and its chain
// S -> exp, dP - Di (ACT, both tiles) -> dS -> dV, dK -> dS^T -> dQ. Per query head the loads
// and the -Di prologue run before its blocks (behind the previous head's stores).
std::optional<double> backwardsAttention(const Node& n, const Formulas& f) {
  if (n.ins.size() < 6 || !n.rank(0, 3) || !n.rank(1, 3)) return std::nullopt;
  const double BH = n.in(0, 0), d = n.in(0, 1), S = n.in(0, 2), BKV = n.in(1, 0), ST = tiles(S);
  const bool causal = n.I.is_causal ? *n.I.is_causal : n.flag("is_causal", std::nullopt, false);
  const bool fp32 = n.fp32(0);
  const double es = n.es(0);
  double total = 0;
  for (double k0 = 0; k0 < S; k0 += kMoving) {
    const double kw = std::min(kMoving, S - k0), chunks = tiles(kw);
    const double first = causal ? std::floor(k0 / kP) : 0;
    for (double t0 = first; t0 < ST; t0 += 2) {
      const double lanes = std::min(2.0, ST - t0);
      const bool diag = causal && t0 * kP < k0 + kw;
      Busy b;
      b.pe = lanes * (2 * f.matmul(kP, kw, fp32) + 2 * f.matmul(d, kw, fp32) + chunks * f.matmul(d, kP, fp32));
      b.act = lanes * 2 * f.act(kw);
      b.dve = lanes * (f.dve(kw) + f.dve(kP));
      b.pool = lanes * ((diag ? f.pool(kw) : 0) + chunks * f.dmaTrigger());
      b.dma = lanes * chunks * f.dmaPayload(kP * kP * es);
      // The chain through the pair: the first S, ACT's exp and dP - Di of both tiles (its
      // in-order stream), then the last tile's dS, dV / dK, dS^T (DMA) and dQ.
      double chain = f.matmul(kP, kw, fp32) + b.act + f.access(f.config().act_clock_ghz);
      chain += f.dve(kw) + f.access(f.config().dve_clock_ghz) + 2 * f.matmul(d, kw, fp32);
      chain += chunks * f.dmaTrigger() + f.dmaLatency(kP * kP * es) + chunks * f.matmul(d, kP, fp32);
      total += std::max(chain, b.busiest());
    }
  }
  total *= BH;
  // Per query head: q, dy, their transposes, o^T and lse loaded; -Di per query tile; dq stored.
  const double perHeadLoad = f.dmaPayload(6 * d * S * es);
  total += BH * (perHeadLoad + ST * (f.dve(2 * d) + f.act(d) + f.actRead()) + f.act(S));
  total += BKV * (f.dmaPayload(3 * d * S * es) + 2 * f.act(S));
  return total;
}

// RouterTopK (RouterTopK.cpp): per tile of 128 tokens, x^T by DMA transposes, the logits on the
// PE (KT matmuls, E moving), the top-k on DVE (max8 / match_replace8 rounds), the affinities on
// ACT and DVE, three stores. The next tile's loads are emitted after this tile's stores and the
// DMA engines serve transfers in program order, so the tiles do not overlap: each costs its
// loads plus its compute chain plus its stores.
std::optional<double> routerTopK(const Node& n, const Formulas& f) {
  if (n.ins.size() < 2 || !n.rank(1, 2) || n.outs.size() < 3) return std::nullopt;
  const double T = n.rows(0), H = n.in(0, -1), E = n.in(1, 1), KT = tiles(H);
  const double k = n.number("k", 8), rounds = ceilDiv(k, 8);
  const bool fp32 = n.fp32(1);
  double total = f.dmaLatency(H * E * n.es(1));
  for (double t0 = 0; t0 < T; t0 += kP) {
    const double tn = std::min(kP, T - t0);
    // The logits matmuls run in the shadow of the x^T loads, each as its k tile arrives.
    const double load = KT * f.dmaPayload(tn * kP * n.es(0)) + f.config().dma_start_latency_ns;
    const double mm = f.matmul(tn, E, fp32);
    double chain = std::max(0.0, KT * mm - load) + mm;
    chain += 2 * f.dve(E) + rounds * 2 * f.dve(E) + f.dve(8 * rounds);     // copies, max8 + match_replace8
    chain += f.dve(1) + f.act(E) + f.actRead() + f.dve(8) + f.dve(E);       // softmax affinities
    chain += 3 * (f.access(f.config().dve_clock_ghz));
    const double store = f.dmaLatency(tn * E * 4);
    total += load + chain + store;
  }
  return total;
}

// ExpertMLPs (ExpertMLPs.cpp): per block of tokens, every expert's gated activations (weights
// stationary), the affinity broadcast (a K = 1 matmul) and its DVE multiply, then one down
// projection summing every expert. PE-bound, pipelined: the busiest engine.
std::optional<double> expertMLPs(const Node& n, const Formulas& f) {
  if (n.ins.size() < 5 || !n.rank(2, 3)) return std::nullopt;
  const double T = n.rows(0), H = n.in(0, -1), E = n.in(2, 0), I = n.in(2, 2), wEs = n.es(2);
  const double KT = tiles(H), IT = tiles(I);
  const bool fp32 = n.fp32(2);
  const double tb = tokenBlock(f.config(), T, (KT + E * IT) * wEs, 10 * H + 4 * kMoving);
  Busy b;
  for (double t0 = 0; t0 < T; t0 += tb) {
    const double tn = std::min(tb, T - t0);
    for (double r = 0; r < tn; r += kP) b += prologueTile(f, std::min(kP, tn - r), H, 0, Norm::None, n.es(0));
    for (double e = 0; e < E; ++e) {
      b += gatedActivations(f, tn, H, I, wEs, fp32);
      b.pe += f.matmul(kP, tn);
      b.dve += IT * f.dve(tn);
    }
    b += downProject(f, tn, I, H, E, wEs, n.outEs(0), fp32);
  }
  return b.busiest();
}

// RowTiledMM / ColumnTiledMM (RowTiledMM.cpp, ColumnTiledMM.cpp): out [M, N] = a [M, K] @ b.
// Row: blocks of 512 rows of a, transposed on the PE (unless transpose_a), times b (streamed per
// block unless it fits half of SBUF, then loaded once up front), 512 columns moving; ACT/DVE
// evacuate.
// Column: blocks of rows of a resident as aT; b's 128-column tiles stationary, the rows moving,
// then outT transposed back on the PE. Both pipelined: the busiest engine.
std::optional<double> tiledMM(const Node& n, const Formulas& f, bool rowTiled) {
  if (n.ins.size() < 2 || !n.rank(0, 2) || !n.rank(1, 2)) return std::nullopt;
  const bool aT = n.flag("transpose_a", std::nullopt, false);
  const double M = aT ? n.in(0, 1) : n.in(0, 0), K = n.in(1, 0), N = n.in(1, 1), KT = tiles(K);
  const bool fp32 = n.fp32(0) || n.fp32(1);
  const double es = fp32 ? 4 : n.es(1), oEs = n.outEs(0);
  const double sbuf = static_cast<double>(f.config().sbuf_bytes_per_partition);
  Busy b;
  double serial = 0;
  auto loadA = [&](double rows) {
    b.dma += f.dmaPayload(rows * K * es);
    if (!aT) {
      b.pe += tiles(rows) * KT * f.transpose(kP, kP);
      evacuateHalves(b, f, tiles(rows) * ceilDiv(KT, 4), 4 * kP);
    }
  };
  if (rowTiled) {
    const double blockRows = std::min(4 * kP, tiles(M) * kP);
    const bool resident = KT * N * es <= sbuf / 2;
    // A resident b is loaded up front, in one DMA the first matmul waits for.
    if (resident) serial += f.dmaLatency(K * N * es);
    b.dma += f.dmaPayload(K * N * es) * (resident ? 0 : ceilDiv(M, blockRows));
    for (double b0 = 0; b0 < M; b0 += blockRows) {
      const double rows = std::min(blockRows, M - b0), t = tiles(rows);
      loadA(rows);
      for (double n0 = 0; n0 < N; n0 += kMoving) {
        const double nw = std::min(kMoving, N - n0);
        b.pe += KT * t * f.matmul(kP, nw, fp32);
        evacuateHalves(b, f, t, nw);
        b.pool += t * f.dmaTrigger();
      }
    }
  } else {
    double blockRows = std::max(kP, std::floor(sbuf / 2 / (KT * es) / kMoving) * kMoving);
    blockRows = std::min(blockRows, tiles(M) * kP);
    for (double b0 = 0; b0 < M; b0 += blockRows) {
      const double rows = std::min(blockRows, M - b0);
      loadA(rows);
      b.dma += f.dmaPayload(K * N * es);
      for (double n0 = 0; n0 < N; n0 += kP) {
        const double nw = std::min(kP, N - n0);
        for (double m0 = 0; m0 < rows; m0 += kMoving) {
          const double mw = std::min(kMoving, rows - m0);
          // outT's transposes follow the matmuls in the PE's stream and wait for its evacuation
          // (ACT and DVE in turn).
          const double evac = (f.act(mw) + f.dve(mw)) / 2 + f.access(f.config().dve_clock_ghz);
          b.pe += KT * f.matmul(nw, mw, fp32) + evac + tiles(mw) * f.transpose(nw, kP);
          evacuateHalves(b, f, 2, mw);
          b.pool += tiles(mw) * f.dmaTrigger();
        }
      }
    }
  }
  b.dma += f.dmaPayload(M * N * oEs);
  return serial + b.busiest();
}

// CaymanPackedPETranspose (CaymanPackedPETranspose.cpp): x [G, M, N] -> out [G, N, M]; matrices
// of <= 64 rows packed 128 / M to a tile; per block of <= 2048 columns one load, a PE transpose
// per 128 columns (evacuated by ACT / DVE in turn) and a store per matrix. DMA-bound.
std::optional<double> caymanTranspose(const Node& n, const Formulas& f) {
  if (n.ins.empty() || (n.ins[0].size() != 2 && n.ins[0].size() != 3)) return std::nullopt;
  const bool batched = n.ins[0].size() == 3;
  const double G = batched ? n.in(0, 0) : 1, M = n.in(0, -2), N = n.in(0, -1);
  const double pack = M <= kP / 2 ? std::floor(kP / M) : 1, rowTile = std::min(M, kP);
  const double colBlock = std::min(N, 4 * kMoving);
  Busy b;
  const double packs = ceilDiv(G, pack), rowTiles = ceilDiv(M, rowTile), colBlocks = ceilDiv(N, colBlock);
  const double blocks = packs * rowTiles * colBlocks, rows = std::min(pack * M, kP);
  const double chunks = tiles(colBlock);
  b.pe += blocks * chunks * f.transpose(rows, kP);
  evacuateHalves(b, f, blocks * chunks, rows);
  const double storeRun = rowTile * n.outEs(0);
  b.dma += f.dmaPayload(G * M * N * n.es(0)) + f.dmaPayload(G * M * N * n.outEs(0), kP, storeRun);
  b.sp += blocks * f.dmaTrigger();
  b.pool += blocks * pack * f.dmaTrigger();
  return b.busiest();
}

const std::map<std::string, Estimator>& estimators() {
  static const std::map<std::string, Estimator> table = {
      {"MLP", mlp},
      {"QKV", qkv},
      {"QuantOnly", quantOnly},
      {"CausalAttentionMMSoftmaxMMWithoutSwap", [](const Node& n, const Formulas& f) { return attention(n, f, true); }},
      {"AttentionMMSoftmaxMMWithoutSwap", [](const Node& n, const Formulas& f) { return attention(n, f, false); }},
      {"AttentionTkgFwd", attentionTkg},
      {"BackwardsAttention", backwardsAttention},
      {"RouterTopK", routerTopK},
      {"ExpertMLPs", expertMLPs},
      {"RowTiledMM", [](const Node& n, const Formulas& f) { return tiledMM(n, f, true); }},
      {"ColumnTiledMM", [](const Node& n, const Formulas& f) { return tiledMM(n, f, false); }},
      {"CaymanPackedPETranspose", caymanTranspose},
  };
  return table;
}

}  // namespace

std::optional<double> kernelNodeNs(const InstBIRKernel& I, const MachineConfig& c) {
  const auto& table = estimators();
  const auto it = table.find(I.kernel_name);
  if (it == table.end()) return std::nullopt;
  const Node node(I);
  if (node.ins.empty() || node.outs.empty()) return std::nullopt;
  for (const auto& s : node.ins)
    if (s.empty()) return std::nullopt;
  return it->second(node, Formulas(c));
}

}  // namespace bir
