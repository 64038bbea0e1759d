// Dispatch, the shared checker and executor helpers, and the node classes with no computation
// (NoOp, DevicePrint, the kernel nodes, InstUnmodeled).
#include "Semantics.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include "Numerics.h"

namespace sim {

using namespace bir;

// ---------------------------------------------------------------------------------------------
// Checker

void Checker::fail(const std::string& msg) const {
  throw SimulationError(instructionWhere(core_, block_, index_, I) + ": " + msg);
}

std::string Checker::name(const Operand& op) const {
  const auto k = static_cast<int>(&op - ops_);
  return k < nIns ? "ins[" + std::to_string(k) + "]" : "outs[" + std::to_string(k - nIns) + "]";
}

void Checker::lanes(const Operand& op, int64_t n, const char* what) const {
  if (!op.isImm() && op.lanes != n)
    fail(name(op) + " (" + what + ") has " + std::to_string(op.lanes) + " partitions, expected " +
         std::to_string(n));
}

void Checker::elems(const Operand& op, int64_t n, const char* what) const {
  if (!op.isImm() && op.freeElems != n)
    fail(name(op) + " (" + what + ") has " + std::to_string(op.freeElems) +
         " elements per partition, expected " + std::to_string(n));
}

void Checker::pointer(const Operand& op, int64_t n, const char* what) const {
  lanes(op, n, what);
  elems(op, 1, what);
}

void Checker::sameShape(const Operand& ref, std::initializer_list<const Operand*> others) const {
  for (const Operand* o : others) {
    if (o->isImm()) continue;
    if (o->lanes != ref.lanes)
      fail(name(*o) + " has " + std::to_string(o->lanes) + " partitions but " + name(ref) + " has " +
           std::to_string(ref.lanes) + " (operands work lane by lane)");
    if (o->freeElems != ref.freeElems)
      fail(name(*o) + " has " + std::to_string(o->freeElems) + " elements per partition but " +
           name(ref) + " has " + std::to_string(ref.freeElems));
  }
}

void Checker::notImmediate(const Operand& op, const char* what) const {
  if (op.isImm()) fail(name(op) + " (" + what + ") must be a tensor, not an immediate");
}

void checkInstruction(const Instruction& I, Checker& c) {
  switch (I.nodeClass()) {
#define BIR_NODE_CLASS(C) \
  case NodeClass::C:      \
    return check(*cast<Inst##C>(&I), c);
#include "bir/NodeClasses.def"
#undef BIR_NODE_CLASS
  }
}

void execInstruction(const Instruction& I, Exec& x) {
  switch (I.nodeClass()) {
#define BIR_NODE_CLASS(C) \
  case NodeClass::C:      \
    return exec(*cast<Inst##C>(&I), x);
#include "bir/NodeClasses.def"
#undef BIR_NODE_CLASS
  }
}

// ---------------------------------------------------------------------------------------------
// Exec

Exec::Exec(CoreState& core, std::vector<DramTensor>& dram, const MachineConfig& cfg, GemmEngine& gemm,
           std::vector<DevicePrintRecord>& prints)
    : core(core), dram(dram), cfg(cfg), gemm(gemm), prints(prints), slots_(kSlots) {}

void Exec::run(const CoreProgram& p, const DecodedInst& d) {
  prog_ = &p;
  d_ = &d;
  ops_ = p.operands.data() + d.firstOperand;
  coreIndex = p.core;
  // A matmul may leave part of its product in progress (GemmEngine::run, deferrable); anything
  // else waits for it, since it may read that PSUM or write SBUF the part reads.
  if (d.inst->nodeClass() != NodeClass::Matmult) gemm.drain();
  // Packed matmul operands this instruction may overwrite are dropped first (PanelCache).
  for (uint32_t i = d.firstAccess; i < d.firstAccess + d.nAccess; ++i) {
    const Access& a = p.accesses[i];
    if (a.write && a.mem == kMemSbuf) gemm.panels().invalidate(a.quadrants, a.lo, a.hi);
  }
  // An accumulation instruction that does not set the registers may still change them ("Even
  // when reduce_cmd is set to idle, the accumulator state may still be modified", NKI 0.6
  // nki.isa.exponential): unset until an instruction sets them again.
  if (core.dveAccumulatorAnySet && accumulatesOnVectorEngine(d) && !setsVectorRegisters(d))
    core.vectorRegistersMayChange({d.block, d.index, d.inst});
  execInstruction(*d.inst, *this);
}

bool setsVectorRegisters(const DecodedInst& d) {
  return d.cls == NodeClass::TensorScalarReduce ||
         ((d.cls == NodeClass::SelectReduce || d.cls == NodeClass::RangeSelect) && d.nOuts == 2);
}

float Exec::vectorRegister(int64_t p) const {
  const auto i = static_cast<size_t>(p);
  if (!core.dveAccumulatorSet[i]) {
    const CoreState::InstructionRef& by = core.dveAccumulatorChangedBy;
    const std::string since =
        by.inst ? " since " + instructionWhere(coreIndex, by.block, by.index, *by.inst) + " (which may have changed it)"
                : std::string();
    fail("reads the Vector Engine's accumulation register of partition " + std::to_string(p) +
         ", which no instruction has set" + since);
  }
  return core.dveAccumulator[i];
}

void Exec::setVectorRegisters(const Operand& out, const float* values) {
  for (int64_t l = 0; l < out.lanes; ++l) {
    const auto p = static_cast<size_t>(out.p0 + l);
    core.dveAccumulator[p] = values[l];
    core.dveAccumulatorSet[p] = 1;
  }
  core.dveAccumulatorAnySet = true;
}

void Exec::fail(const std::string& msg) const {
  throw SimulationError(instructionWhere(coreIndex, d_->block, d_->index, *d_->inst) + ": " + msg);
}

uint8_t* Exec::lanePtr(const Operand& op, int64_t lane) {
  const Memory& m = memory(op);
  return op.onChip() ? m.data + (op.p0 + lane) * m.pitch + op.base : m.data + op.base + lane * op.laneStride;
}

namespace {
// The operand's immediate as the engine sees it: the value in its dtype, read as fp32.
float immValue(const Operand& op) {
  uint8_t buf[8];
  storeElement(op.dtype, buf, static_cast<float>(op.imm));
  return loadElement(op.dtype, buf);
}
}  // namespace

void Exec::checkWritten(Memory& m, const uint8_t* p, int64_t n, int64_t step, int esize, const Operand& op) {
  if (!m.tracked || n <= 0) return;
  const int64_t off = p - m.data;
  int64_t bad = -1;
  if (step == esize) {
    bad = m.written.firstClear(off, n * esize);
  } else {
    for (int64_t i = 0; i < n && bad < 0; ++i) bad = m.written.firstClear(off + i * step, esize);
  }
  if (bad < 0) return;
  const auto k = static_cast<int>(&op - ops_);
  const std::string what =
      k >= 0 && k < d_->nIns + d_->nOuts
          ? (k < d_->nIns ? "ins[" + std::to_string(k) + "]" : "outs[" + std::to_string(k - d_->nIns) + "]")
          : std::string("an operand");
  fail(what + " reads " + m.describe(bad, 1) + ", which no instruction has written");
}

void Exec::markWritten(Memory& m, const uint8_t* p, int64_t n, int64_t step, int esize) {
  if (n <= 0) return;
  const int64_t off = p - m.data;
  const bool psum = &m == &core.psum;
  if (step == esize) {
    if (m.tracked) m.written.set(off, n * esize);
    // A non-matmul write ends any accumulation group on those words [ref §2: accumulating into
    // PSUM a memset or copy initialised is UB, so the simulator refuses it].
    if (psum) core.endGroups(off / 4, (off + n * esize + 3) / 4 - off / 4);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t o = off + i * step;
    if (m.tracked) m.written.set(o, esize);
    if (psum) core.endGroups(o / 4, (o + esize + 3) / 4 - o / 4);
  }
}

void Exec::gatherLane(const Operand& op, int64_t lane, float* out) {
  if (op.isImm()) {
    std::fill(out, out + op.freeElems, immValue(op));
    return;
  }
  Memory& m = memory(op);
  if (op.singleRun()) {
    const uint8_t* p = lanePtr(op, lane);
    checkWritten(m, p, op.freeElems, op.runStride(), op.esize, op);
    loadRun(op.dtype, p, op.runStride(), op.freeElems, out);
    return;
  }
  RunCursor cur(op, lanePtr(op, lane));
  int64_t o = 0;
  while (!cur.done()) {
    const int64_t n = cur.remaining();
    checkWritten(m, cur.ptr(), n, cur.step(), op.esize, op);
    loadRun(op.dtype, cur.ptr(), cur.step(), n, out + o);
    o += n;
    cur.advance(n);
  }
}

void Exec::scatterLane(const Operand& op, int64_t lane, const float* in) {
  Memory& m = memory(op);
  if (op.singleRun()) {
    uint8_t* p = lanePtr(op, lane);
    storeRun(op.dtype, p, op.runStride(), op.freeElems, in);
    markWritten(m, p, op.freeElems, op.runStride(), op.esize);
    return;
  }
  RunCursor cur(op, lanePtr(op, lane));
  int64_t o = 0;
  while (!cur.done()) {
    const int64_t n = cur.remaining();
    storeRun(op.dtype, cur.ptr(), cur.step(), n, in + o);
    markWritten(m, cur.ptr(), n, cur.step(), op.esize);
    o += n;
    cur.advance(n);
  }
}

// Stores the lane's elements one by one: store(dtype, p, in[e]) for element e.
template <class T, class Store>
void Exec::scatterEach(const Operand& op, int64_t lane, const T* in, Store store) {
  Memory& m = memory(op);
  RunCursor cur(op, lanePtr(op, lane));
  int64_t e = 0;
  while (!cur.done()) {
    const int64_t k = cur.remaining();
    for (int64_t i = 0; i < k; ++i) store(op.dtype, cur.ptr() + i * cur.step(), in[e + i]);
    markWritten(m, cur.ptr(), k, cur.step(), op.esize);
    e += k;
    cur.advance(k);
  }
}

void Exec::scatterIntLane(const Operand& op, int64_t lane, const int64_t* in) {
  scatterEach(op, lane, in, storeInt64Element);
}

void Exec::gatherBitsLane(const Operand& op, int64_t lane, uint32_t* out) {
  if (op.isImm()) {
    std::fill(out, out + op.freeElems, bitsOfNumber(op.imm));
    return;
  }
  Memory& m = memory(op);
  RunCursor cur(op, lanePtr(op, lane));
  int64_t e = 0;
  while (!cur.done()) {
    const int64_t k = cur.remaining();
    checkWritten(m, cur.ptr(), k, cur.step(), op.esize, op);
    for (int64_t i = 0; i < k; ++i) out[e + i] = loadBitsElement(op.dtype, cur.ptr() + i * cur.step());
    e += k;
    cur.advance(k);
  }
}

void Exec::scatterBitsLane(const Operand& op, int64_t lane, const uint32_t* in) {
  scatterEach(op, lane, in, storeBitsElement);
}

uint32_t Exec::laneBits(const Operand& op, int64_t lane) {
  if (op.isImm()) return bitsOfNumber(op.imm);
  return loadBitsElement(op.dtype, readElement(op, lane, 0));
}

const uint8_t* Exec::readElement(const Operand& op, int64_t lane, int64_t k) {
  const uint8_t* p = lanePtr(op, lane) + op.freeOffset(k);
  checkWritten(memory(op), p, 1, op.esize, op.esize, op);
  return p;
}

float Exec::laneScalar(const Operand& op, int64_t lane) {
  if (op.isImm()) return immValue(op);
  Memory& m = memory(op);
  const uint8_t* p = lanePtr(op, lane);
  checkWritten(m, p, 1, op.esize, op.esize, op);
  return loadElement(op.dtype, p);
}

Exec::Stream Exec::lane(const Operand& op, int64_t l) {
  return Stream{RunCursor(op, op.isImm() ? nullptr : lanePtr(op, l)), op.isImm() ? nullptr : &memory(op),
                op.dtype, &op};
}

Exec::Stream Exec::whole(const Operand& op) {
  Memory& m = memory(op);
  const int64_t dim0 = op.onChip() ? m.pitch : op.laneStride;
  return Stream{RunCursor::whole(op, lanePtr(op, 0), dim0), &m, op.dtype, &op};
}

Exec::Stream Exec::buffered(uint8_t* p, bir::DType dtype, int64_t n, const Operand& op) {
  return Stream{RunCursor(contiguousOperand(dtype, n), p), nullptr, dtype, &op};
}

Exec::Stream Exec::whole(const Operand& op, int64_t first, int64_t count) {
  Stream s = whole(op);
  s.cur.window(first, count);
  return s;
}

void Exec::copyWhole(const Operand& src, const Operand& dst, bool rmwAdd) {
  const int64_t n = dst.freeElems;
  const int64_t bytes = src.numElements() * src.esize + dst.numElements() * dst.esize;
  forLanes(dst.lanes, bytes, dst, [&](Exec& on, int64_t l0, int64_t l1) {
    on.copyStream(on.whole(src, l0 * n, (l1 - l0) * n), on.whole(dst, l0 * n, (l1 - l0) * n), rmwAdd);
  });
}

namespace {
// Whether lanes [.., at) and [at, ..) of `op` write disjoint 64-bit words of the initialisation
// bits (one per byte) and of PSUM's group bits (one per fp32 word). On-chip lanes are whole
// partitions, so a pitch that is a multiple of 256 bytes suffices. DRAM lanes must follow each
// other without interleaving, the last byte of lane at-1 and the first of lane `at` in different
// 64-byte blocks.
bool splitsCleanly(const Operand& op, const Memory& m, int64_t at) {
  if (op.onChip()) return m.pitch % 256 == 0;
  int64_t lo = 0, hi = op.esize;  // a lane's bytes relative to its element 0
  for (int i = 0; i < op.nfree; ++i) {
    const int64_t span = (op.num[i] - 1) * op.stride[i];
    (span < 0 ? lo : hi) += span;
  }
  const int64_t ls = op.laneStride;
  if (ls <= 0 || ls < hi - lo) return false;
  const int64_t lastBefore = op.base + (at - 1) * ls + hi - 1, firstAfter = op.base + at * ls + lo;
  return lastBefore / 64 < firstAfter / 64;
}
}  // namespace

void Exec::runLanes(int64_t lanes, const Operand& written, LaneBody fn, void* body) {
  constexpr int kMaxShares = 16;
  const int threads = gemm.threads();
  // More shares than threads: a helper that wakes late (or is descheduled) takes fewer.
  const int shares = static_cast<int>(std::min<int64_t>({lanes, int64_t{2} * threads, kMaxShares}));
  int64_t start[kMaxShares + 1];
  for (int c = 0; c <= shares; ++c) start[c] = lanes * c / shares;
  const Memory& m = memory(written);
  for (int c = 1; c < shares; ++c) {
    if (!splitsCleanly(written, m, start[c])) {
      fn(body, *this, 0, lanes);
      return;
    }
  }
  helpers_.resize(static_cast<size_t>(threads - 1));
  for (auto& h : helpers_) {
    if (!h) h = std::make_unique<Exec>(core, dram, cfg, gemm, prints);
    h->prog_ = prog_;
    h->d_ = d_;
    h->ops_ = ops_;
    h->coreIndex = coreIndex;
  }
  struct Job {
    Exec* self;
    LaneBody fn;
    void* body;
    const int64_t* start;
    std::exception_ptr errors[kMaxShares];
  } job{this, fn, body, start, {}};
  gemm.workers().run(
      shares,
      [](void* p, int c, int t) {
        Job& j = *static_cast<Job*>(p);
        Exec& on = t == 0 ? *j.self : *j.self->helpers_[static_cast<size_t>(t - 1)];
        try {
          j.fn(j.body, on, j.start[c], j.start[c + 1]);
        } catch (...) {
          j.errors[c] = std::current_exception();
        }
      },
      &job);
  for (const auto& e : job.errors)
    if (e) std::rethrow_exception(e);
}

namespace {
// Runs of a DMA source are often scattered over DRAM (the column block of a row-major weight is
// one short run per row, rows kilobytes apart), too far apart for the hardware prefetcher: a
// cursor kAheadRuns runs ahead prefetches each run's first bytes so its misses overlap the copy.
constexpr int kAheadRuns = 8;
constexpr int64_t kAheadBytes = 512;
inline void prefetchRun(const RunCursor& c, int esize) {
  if (c.done() || c.step() != esize) return;
  const auto* p = reinterpret_cast<const char*>(c.ptr());
  const int64_t n = std::min(kAheadBytes, c.remaining() * esize);
  for (int64_t b = 0; b < n; b += 64) __builtin_prefetch(p + b);
}
}  // namespace

void Exec::copyStream(Stream src, Stream dst, bool rmwAdd) {
  const int es = dtypeSize(src.dtype), ed = dtypeSize(dst.dtype);
  const bool bytes = src.dtype == dst.dtype && !rmwAdd;
  float* a = bytes ? nullptr : slot(0, kChunk);
  float* b = rmwAdd ? slot(1, kChunk) : nullptr;
  RunCursor ahead = src.cur;
  for (int r = 0; r < kAheadRuns && !ahead.done(); ++r) ahead.advance(ahead.remaining());
  while (!src.cur.done() && !dst.cur.done()) {
    const int64_t k = std::min({src.cur.remaining(), dst.cur.remaining(), kChunk});
    if (k == src.cur.remaining() && !ahead.done()) {  // src moves to its next run: so does `ahead`
      prefetchRun(ahead, es);
      ahead.advance(ahead.remaining());
    }
    const uint8_t* sp = src.cur.ptr();
    uint8_t* dp = dst.cur.ptr();
    const int64_t ss = src.cur.step(), ds = dst.cur.step();
    if (src.mem) checkWritten(*src.mem, sp, k, ss, es, *src.op);
    if (bytes) {
      if (ss == es && ds == ed)
        std::memmove(dp, sp, static_cast<size_t>(k * es));
      else
        for (int64_t i = 0; i < k; ++i) std::memmove(dp + i * ds, sp + i * ss, static_cast<size_t>(es));
    } else {
      loadRun(src.dtype, sp, ss, k, a);
      if (rmwAdd) {
        if (dst.mem) checkWritten(*dst.mem, dp, k, ds, ed, *dst.op);
        loadRun(dst.dtype, dp, ds, k, b);
        for (int64_t i = 0; i < k; ++i) a[i] = a[i] + b[i];
      }
      storeRun(dst.dtype, dp, ds, k, a);
    }
    if (dst.mem) markWritten(*dst.mem, dp, k, ds, ed);
    src.cur.advance(k);
    dst.cur.advance(k);
  }
}

// ---------------------------------------------------------------------------------------------
// Node classes without computation.

void check(const InstNoOp&, Checker&) {}
void exec(const InstNoOp&, Exec&) {}

void check(const InstDevicePrint&, Checker& c) { c.notImmediate(c.in(0), "printed tensor"); }

void exec(const InstDevicePrint& I, Exec& x) {
  const Operand& op = x.in(0);
  DevicePrintRecord r;
  r.instruction = I.name;
  r.prefix = I.prefix;
  r.partitions = op.lanes;
  r.elements = op.freeElems;
  r.values.resize(static_cast<size_t>(op.numElements()));
  for (int64_t l = 0; l < op.lanes; ++l) x.gatherLane(op, l, r.values.data() + l * op.freeElems);
  x.prints.push_back(std::move(r));
}

// Kernel nodes run only in timing mode (Program refuses them in full mode); their cost is
// bir::Hwm's analytic estimate and they have no shape rules of their own beyond the verifier's.
void check(const InstBIRKernel&, Checker&) {}
void check(const InstNKIKernel&, Checker&) {}
void check(const InstNKIKLIRKernel&, Checker&) {}
void exec(const InstBIRKernel&, Exec& x) { x.fail("kernel nodes are not executable"); }
void exec(const InstNKIKernel&, Exec& x) { x.fail("kernel nodes are not executable"); }
void exec(const InstNKIKLIRKernel&, Exec& x) { x.fail("kernel nodes are not executable"); }

void check(const InstUnmodeled&, Checker& c) { c.fail("the simulator has no model of this opcode"); }
void exec(const InstUnmodeled&, Exec& x) { x.fail("the simulator has no model of this opcode"); }

}  // namespace sim
