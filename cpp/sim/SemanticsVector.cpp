// Elementwise instructions of ACT, DVE and Pool: activation and its accumulators, memset, copies
// (static and dynamic), reciprocal, tensor-scalar and tensor-tensor ALU ops, the scan, dropout,
// scalar_tensor_tensor, select (+reduce) and the predicated copy. docs/isa-semantics.md §3-§5.
#include <algorithm>
#include <cstring>

#include "Alu.h"
#include "Semantics.h"
#include "bir/Verifier.h"

namespace sim {

using namespace bir;

namespace {

// fold_op over v[0..n): sequential, from the first element.
float fold(AluOp op, const float* v, int64_t n) {
  return withAluOp(op, [&]<AluOp Op>() {
    float r = v[0];
    for (int64_t i = 1; i < n; ++i) r = alu<Op>(r, v[i]);
    return r;
  });
}

// The dtypes of the tensors among `ops` (an immediate is a number, not a tile of bit patterns): on
// the stack, as every elementwise instruction's check asks for them.
class TileDtypes {
 public:
  TileDtypes(std::initializer_list<const Operand*> ops) {
    for (const Operand* op : ops)
      if (!op->isImm()) dtypes_[n_++] = op->dtype;
  }
  operator std::span<const DType>() const { return {dtypes_, n_}; }

 private:
  DType dtypes_[2] = {};  // the most any caller passes
  size_t n_ = 0;
};

void checkNotBothPsum(Checker& c, const Operand& a, const Operand& b) {
  c.require(bir::legality::psumInputs(c.I.opcode(), c.facts(a), c.facts(b)));
}

}  // namespace

// ---- Activation: y = func(in * scale + bias), with the accumulate command ----

void check(const InstActivation& I, Checker& c) {
  const int want = 1 + I.has_bias + I.has_scale_tensor;
  if (c.nIns != want)
    c.fail("takes " + std::to_string(want) + " inputs (data" + (I.has_bias ? ", bias" : "") +
           (I.has_scale_tensor ? ", scale" : "") + "), got " + std::to_string(c.nIns));
  if (I.func == ActivationFunc::Unknown) c.fail("activation function Unknown");
  if (I.acc == AccumCmd::AddAccumulate || I.acc == AccumCmd::LoadAccumulate)
    c.fail(std::string("accumulate command ") + std::string(enumName(I.acc)) + " is not modelled");
  if (I.acc != AccumCmd::Idle) {
    c.require(bir::legality::reduceOp(I.opcode(), I.acc_op));
    c.require(bir::legality::activationReduce(I.acc, I.acc_op, c.cfg));
    // The registers fold the fp32 activation results: what a bit-vector operator makes of their
    // bit patterns is not modelled (the executor folds values).
    if (bir::legality::isBitvecOp(I.acc_op))
      c.fail(std::string("acc_op ") + std::string(enumName(I.acc_op)) +
             ": a bit-vector reduction of the Activation engine's fp32 results is not modelled");
  }
  c.notImmediate(c.in(0), "data");
  c.sameShape(c.out(0), {&c.in(0)});
  for (int k = 1; k < c.nIns; ++k) c.pointer(c.in(k), c.out(0).lanes, k == 1 && I.has_bias ? "bias" : "scale");
}

namespace {
// Refuses reading an Activation accumulation register of out's partitions that no instruction
// has set (the Vector Engine's registers are refused the same way: SemanticsReduce.cpp).
void checkActAccumulatorsSet(Exec& x, const Operand& out) {
  for (int64_t l = 0; l < out.lanes; ++l) {
    const auto p = static_cast<size_t>(out.p0 + l);
    if (!x.core.actAccumulatorSet[p])
      x.fail("reads the Activation engine's accumulation register of partition " + std::to_string(p) +
             ", which no instruction has set (accumulate command Zero or ZeroAccumulate sets it; NKI: reduce_cmd "
             "reset or reset_reduce)");
  }
}
}  // namespace

void exec(const InstActivation& I, Exec& x) {
  const Operand& out = x.out(0);
  if (I.acc == AccumCmd::Accumulate) checkActAccumulatorsSet(x, out);
  const Operand* bias = I.has_bias ? &x.in(1) : nullptr;
  const Operand* scaleOp = I.has_scale_tensor ? &x.in(1 + I.has_bias) : nullptr;
  const float scaleConst = static_cast<float>(I.scale), alpha = static_cast<float>(I.alpha);
  withActivationFunc(I.func, [&]<ActivationFunc F>() {
    x.elementwise({&x.in(0)}, out, [&](int64_t l0, int64_t nl, int64_t n, const float* const* in, float* res) {
      for (int64_t j = 0; j < nl; ++j) {
        const int64_t lane = l0 + j;
        const float s = scaleOp ? x.laneScalar(*scaleOp, lane) : scaleConst;
        const float b = bias ? x.laneScalar(*bias, lane) : 0.0f;
        const float* src = in[0] + j * n;
        float* y = res + j * n;
        if constexpr (F == ActivationFunc::Exp || F == ActivationFunc::Erf || F == ActivationFunc::Gelu) {
          for (int64_t i = 0; i < n; ++i) y[i] = src[i] * s + b;  // -ffp-contract=off: two roundings
          if constexpr (F == ActivationFunc::Exp) expRun(y, n);
          else if constexpr (F == ActivationFunc::Erf) erfRun(y, n);
          else geluRun(y, n);
        } else {
          for (int64_t i = 0; i < n; ++i) y[i] = activation<F>(src[i] * s + b, alpha);
        }
        if (I.acc == AccumCmd::Idle) continue;
        float& acc = x.core.actAccumulator[static_cast<size_t>(out.p0 + lane)];
        if (I.acc == AccumCmd::Zero)
          acc = 0.0f;
        else if (I.acc == AccumCmd::ZeroAccumulate)
          acc = fold(I.acc_op, y, n);
        else
          acc = aluDyn(I.acc_op, acc, fold(I.acc_op, y, n));
      }
    });
  });
  if (I.acc != AccumCmd::Idle)
    std::fill_n(x.core.actAccumulatorSet.begin() + out.p0, out.lanes, uint8_t{1});
}

void check(const InstReadActivationAccumulator&, Checker& c) { c.elems(c.out(0), 1, "accumulator copy"); }

void exec(const InstReadActivationAccumulator&, Exec& x) {
  const Operand& out = x.out(0);
  checkActAccumulatorsSet(x, out);
  for (int64_t l = 0; l < out.lanes; ++l) x.scatterLane(out, l, &x.core.actAccumulator[static_cast<size_t>(out.p0 + l)]);
}

// ---- Memset ----

void check(const InstMemset&, Checker&) {}

void exec(const InstMemset& I, Exec& x) {
  const Operand& out = x.out(0);
  const int64_t n = out.freeElems;
  if (I.mode == MemsetMode::Const && !bir::isFloat(out.dtype) &&
      static_cast<double>(static_cast<float>(I.constant)) != I.constant) {
    // An integer destination takes the constant itself (§2's conversion of the exact number):
    // through fp32, an int32 beyond 2^24 or a uint32 mask such as 0xDEADBEEF would change. (A
    // constant fp32 holds, such as nl.zeros' 0, stores the same through the fp32 runs below.)
    int64_t* v = x.intSlot(n);
    std::fill(v, v + n, roundToInt64(I.constant));
    for (int64_t l = 0; l < out.lanes; ++l) x.scatterIntLane(out, l, v);
    return;
  }
  float* v = x.slot(0, n);
  if (I.mode == MemsetMode::Const) std::fill(v, v + n, static_cast<float>(I.constant));
  // Random: uniform [0, 1) from a generator seeded by the instruction's position (ours).
  const uint64_t seed = (static_cast<uint64_t>(x.coreIndex) << 32) | x.inst().ordinal;
  for (int64_t l = 0; l < out.lanes; ++l) {
    if (I.mode == MemsetMode::Random)
      for (int64_t i = 0; i < n; ++i) v[i] = uniform01(seed, static_cast<uint64_t>(l * n + i));
    x.scatterLane(out, l, v);
  }
}

// ---- Reciprocal, Dropout ----

void check(const InstReciprocal&, Checker& c) { c.sameShape(c.out(0), {&c.in(0)}); }

void exec(const InstReciprocal&, Exec& x) {
  x.elementwise({&x.in(0)}, x.out(0), [&](int64_t, int64_t nl, int64_t n, const float* const* in, float* res) {
    for (int64_t i = 0; i < nl * n; ++i) res[i] = 1.0f / in[0][i];
  });
}

void check(const InstDropout& I, Checker& c) {
  c.sameShape(c.out(0), {&c.in(0)});
  if (!(I.prob >= 0.0 && I.prob <= 1.0)) c.fail("dropout probability " + std::to_string(I.prob) + " is outside [0, 1]");
}

// "If the probability is 1.0, all elements are replaced with zeros. If the probability is 0.0, all
// elements are kept with their original values" [I dropout] (the NKI 0.6 page too): survivors
// keep their values. Per lane, per element in enumeration order, the next draw u of the Vector
// Engine's generator of the lane's partition (SemanticsRandom.cpp, the one nl.random_seed /
// set_rng_seed seed and rng draws from), as 24 bits in [0, 1): the element drops when u < prob
// (ours: which draws the hardware compares is not documented). Successive dropouts and loop
// iterations thus draw different masks; a seed makes them reproducible.
void exec(const InstDropout& I, Exec& x) {
  const float prob = static_cast<float>(I.prob);
  const int64_t p0 = x.out(0).p0;
  auto& gen = x.core.rng[CoreState::kRngVector];
  x.elementwise(
      {&x.in(0)}, x.out(0),
      [&](int64_t l0, int64_t nl, int64_t n, const float* const* in, float* res) {
        for (int64_t j = 0; j < nl; ++j) {
          XorwowState& s = gen[static_cast<size_t>(p0 + l0 + j)];
          for (int64_t i = j * n; i < (j + 1) * n; ++i) {
            const float u = static_cast<float>(xorwowNext(s) >> 8) * 0x1p-24f;
            res[i] = u < prob ? 0.0f : in[0][i];
          }
        }
      });  // (each lane advances its own partition's generator, so lanes may run concurrently)
}

// ---- TensorCopy: bytes when the dtypes match, else through fp32 ----
// A Scalar Engine without a native tensor_copy (v2: MachineConfig::act_tensor_copy) copies on its
// activation path, "by first casting the input tile to FP32", so an int32 above 2^24 rounds there
// as it does on the hardware (nki-isa-and-hw.md, tensor_copy).

void check(const InstTensorCopy&, Checker& c) { c.sameShape(c.out(0), {&c.in(0)}); }

namespace {

// Whether the PSUM element at byte `off` (`esize` bytes) is unwritten, and a matmul's hole.
bool unwritten(const Memory& ps, int64_t off, int esize) { return !ps.written.all(off, esize); }
bool hole(const CoreState& core, int64_t off, int esize) {
  return core.psumHoles.all(off / 4, (off + esize + 3) / 4 - off / 4);
}

// Whether some element of the PSUM operand `op` is unwritten and every such element a matmul's
// hole (CoreState::psumHoles).
bool onlyHoles(Exec& x, const Operand& op) {
  const Memory& ps = x.core.psum;
  bool any = false;
  for (int64_t l = 0; l < op.lanes; ++l) {
    RunCursor cur(op, x.lanePtr(op, l));
    while (!cur.done()) {
      const int64_t n = cur.remaining(), off = cur.ptr() - ps.data;
      if (cur.step() != op.esize || unwritten(ps, off, static_cast<int>(n * op.esize)))
        for (int64_t i = 0; i < n; ++i) {
          const int64_t e = off + i * cur.step();
          if (!unwritten(ps, e, op.esize)) continue;
          if (!hole(x.core, e, op.esize)) return false;  // never written: refused as any read
          any = true;
        }
      cur.advance(n);
    }
  }
  return any;
}

// A copy out of PSUM of the output columns a matmul left unwritten for the moving columns it read
// unwritten (SemanticsMatmul.cpp), copied out whole before a store that masks them. Each written
// element is copied as exec below copies it (`bytes`: bit for bit, else through fp32); each hole
// leaves its destination element unwritten, so that whatever reads it later is refused as this
// copy would have been. Only PSUM into SBUF; false, having done nothing, unless some element is a
// hole and every unwritten one is (PSUM nothing wrote is refused as any read).
bool copyWithHoles(Exec& x, const Operand& in, const Operand& out, bool bytes) {
  Memory &ps = x.core.psum, &sb = x.core.sbuf;
  if (!x.core.anyPsumHoles || in.space != Space::PSUM || out.space != Space::SBUF || !ps.tracked || !sb.tracked ||
      !onlyHoles(x, in))
    return false;
  for (int64_t l = 0; l < in.lanes; ++l) {
    const uint8_t* src = x.lanePtr(in, l);
    uint8_t* dst = x.lanePtr(out, l);
    for (int64_t e = 0; e < in.freeElems; ++e) {
      const uint8_t* s = src + in.freeOffset(e);
      uint8_t* d = dst + out.freeOffset(e);
      if (unwritten(ps, s - ps.data, in.esize)) {
        sb.written.clear(d - sb.data, out.esize);
        continue;
      }
      if (bytes)
        std::memcpy(d, s, in.esize);
      else
        storeElement(out.dtype, d, loadElement(in.dtype, s));
      sb.written.set(d - sb.data, out.esize);
    }
  }
  x.core.sbufWrittenTiles.clear();  // (tiles it holds may no longer be written in full)
  return true;
}

}  // namespace

void exec(const InstTensorCopy&, Exec& x) {
  const Operand &in = x.in(0), &out = x.out(0);
  const bool throughFp32 = x.inst().engine == bir::Engine::Activation && !x.cfg.act_tensor_copy;
  if (copyWithHoles(x, in, out, !in.isImm() && in.dtype == out.dtype && !throughFp32)) return;
  if (in.isImm() || in.dtype != out.dtype || throughFp32) {
    x.elementwise({&in}, out, [&](int64_t, int64_t nl, int64_t n, const float* const* src, float* res) {
      std::copy(src[0], src[0] + nl * n, res);
    });
    return;
  }
  if (x.inst().stage) {
    // Overlapping source and destination: stage the bytes of every lane first.
    const int64_t laneBytes = in.freeElems * in.esize;
    uint8_t* buf = x.byteSlot(laneBytes * in.lanes);
    const Operand flat = contiguousOperand(in.dtype, in.freeElems);
    auto staged = [&](int64_t l) { return Exec::Stream{RunCursor(flat, buf + l * laneBytes), nullptr, in.dtype, &in}; };
    for (int64_t l = 0; l < in.lanes; ++l) x.copyStream(x.lane(in, l), staged(l), false);
    for (int64_t l = 0; l < in.lanes; ++l) x.copyStream(staged(l), x.lane(out, l), false);
    return;
  }
  x.forLanes(in.lanes, 2 * in.numElements() * in.esize, out, [&](Exec& on, int64_t l0, int64_t l1) {
    for (int64_t l = l0; l < l1; ++l) on.copyStream(on.lane(in, l), on.lane(out, l), false);
  });
}

// ---- TensorCopyDynamicSrc / Dst: the src (dst) pattern moves by int32(ins[1][0]) * step ----

void check(const InstTensorCopyDynamic& I, Checker& c) {
  c.notImmediate(c.in(0), "source");
  c.sameShape(c.out(0), {&c.in(0)});
  if (I.opcode() == InstructionType::TensorCopyDynamicSrc)
    c.wholeLocationIn = 0;
  else
    c.wholeLocationOut = 0;
}

void exec(const InstTensorCopyDynamic& I, Exec& x) {
  const bool src = I.opcode() == InstructionType::TensorCopyDynamicSrc;
  const Operand& offsetOp = x.in(1);
  int64_t d;
  if (offsetOp.isImm()) {
    d = truncToInt32(x.laneScalar(offsetOp, 0));  // the value stored as the immediate's dtype
  } else {
    const uint8_t* p = x.lanePtr(offsetOp, 0);
    x.checkWritten(x.memory(offsetOp), p, 1, offsetOp.esize, offsetOp.esize, offsetOp);
    d = std::clamp<int64_t>(loadIndexElement(offsetOp.dtype, p), INT32_MIN, INT32_MAX);
  }
  const Operand& fixed = src ? x.out(0) : x.in(0);
  Operand moved = src ? x.in(0) : x.out(0);
  const AccessPattern& ap = src ? I.ins[0] : I.outs[0];
  const MemoryLocation& loc = *ap.loc;
  // The moved pattern, re-placed: it must stay inside its location and keep the start-partition
  // rule (docs/isa-semantics.md §5).
  const int64_t shift = d * I.dynamic_step;
  const int64_t row = loc.bytes_per_partition / moved.esize;
  const int64_t off = ap.offset + shift;
  const int64_t flo = (moved.lo - moved.base) / moved.esize, fhi = (moved.hi - moved.base) / moved.esize - 1;
  const int64_t part = off >= 0 ? off / row : -1, col = off >= 0 ? off % row : 0;
  std::string why;
  if (off < 0 || part + moved.lanes > loc.partitions || col + flo < 0 || col + fhi >= row)
    why = "moves outside tensor '" + loc.name + "'";
  else
    why = checkStartPartition(loc.base_partition + part, moved.lanes);
  if (!why.empty())
    x.fail(std::string(src ? "ins[0]" : "outs[0]") + " with the run-time offset " + std::to_string(d) +
           " (x dynamic_step " + std::to_string(I.dynamic_step) + " elements) " + why);
  const int64_t placed = loc.addr + col * moved.esize;
  moved.p0 = static_cast<int32_t>(loc.base_partition + part);
  moved.lo += placed - moved.base;
  moved.hi += placed - moved.base;
  moved.base = placed;
  const Operand& in = src ? moved : fixed;
  const Operand& out = src ? fixed : moved;
  // Where the moved pattern now shares bytes with the fixed one, the source is read in full first
  // (the decoder's `stage` could not know where it would land).
  const int64_t laneBytes = in.freeElems * in.esize;
  uint8_t* staged = footprintsOverlap(in, out) ? x.byteSlot(in.lanes * laneBytes) : nullptr;
  auto sourceLane = [&](int64_t l) {
    Exec::Stream s = x.lane(in, l);
    s.op = &x.in(0);
    return s;
  };
  auto stagedLane = [&](int64_t l) { return Exec::buffered(staged + l * laneBytes, in.dtype, in.freeElems, x.in(0)); };
  if (staged)
    for (int64_t l = 0; l < in.lanes; ++l) x.copyStream(sourceLane(l), stagedLane(l), false);
  for (int64_t l = 0; l < in.lanes; ++l) {
    Exec::Stream t = x.lane(out, l);
    t.op = &x.out(0);
    x.copyStream(staged ? stagedLane(l) : sourceLane(l), t, false);
  }
}

// ---- TensorScalar, TensorScalarPtr ----

namespace {
// res = (v op0 c0) op1 c1 on bit patterns (reverseN swaps opN's operands; op1 bypass skips it).
// `width`: the data element's bits (elementBits), for a logical shift right of the data or of
// op0's result (a reversed op shifts the constant, a 32-bit number).
void bitvecScalars(AluOp op0, bool reverse0, AluOp op1, bool reverse1, const uint32_t* v, int64_t n, uint32_t c0,
                   uint32_t c1, uint32_t width, uint32_t* res) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t t = reverse0 ? bitvecAlu(op0, c0, v[i]) : bitvecAlu(op0, v[i], c0, width);
    res[i] = op1 == AluOp::bypass ? t : reverse1 ? bitvecAlu(op1, c1, t) : bitvecAlu(op1, t, c1, width);
  }
}
}  // namespace

void check(const InstTensorScalar& I, Checker& c) {
  c.sameShape(c.out(0), {&c.in(0)});
  c.require(bir::legality::aluOps(I.opcode(), c.engine, I.op0, I.op1));
  const DType out[] = {c.out(0).dtype};
  c.require(bir::legality::bitvecDtypes(I.opcode(), I.op0, I.op1, TileDtypes({&c.in(0)}), out));
}

void exec(const InstTensorScalar& I, Exec& x) {
  if (bir::legality::isBitvecOp(I.op0)) {  // (op1 is then bit-vector or bypass: alu.tensor-scalar-op-kinds)
    const uint32_t c0 = bitsOfNumber(I.const0), c1 = bitsOfNumber(I.const1);
    x.wordElementwise({&x.in(0)}, x.out(0), [&](int64_t, int64_t n, const uint32_t* const* in, uint32_t* res) {
      bitvecScalars(I.op0, I.reverse0, I.op1, I.reverse1, in[0], n, c0, c1, elementBits(x.in(0).dtype), res);
    });
    return;
  }
  const float c0 = static_cast<float>(I.const0), c1 = static_cast<float>(I.const1);
  x.elementwise({&x.in(0)}, x.out(0), [&](int64_t, int64_t nl, int64_t n, const float* const* in, float* res) {
    std::copy(in[0], in[0] + nl * n, res);
    applyScalar(I.op0, I.reverse0, res, nl * n, c0);
    if (I.op1 != AluOp::bypass) applyScalar(I.op1, I.reverse1, res, nl * n, c1);
  });
}

void check(const InstTensorScalarPtr& I, Checker& c) {
  c.sameShape(c.out(0), {&c.in(0)});
  for (int k = 1; k < c.nIns; ++k) c.pointer(c.in(k), c.out(0).lanes, "per-partition scalar");
  c.require(bir::legality::aluOps(I.opcode(), c.engine, I.op0, I.op1));
  const DType out[] = {c.out(0).dtype};
  c.require(bir::legality::bitvecDtypes(I.opcode(), I.op0, I.op1, TileDtypes({&c.in(0)}), out));
}

void exec(const InstTensorScalarPtr& I, Exec& x) {
  const bool two = x.nIns() == 3;
  if (bir::legality::isBitvecOp(I.op0)) {
    x.wordElementwise({&x.in(0)}, x.out(0), [&](int64_t l, int64_t n, const uint32_t* const* in, uint32_t* res) {
      const uint32_t c1 = two ? x.laneBits(x.in(2), l) : bitsOfNumber(I.const1);
      bitvecScalars(I.op0, I.reverse0, I.op1, I.reverse1, in[0], n, x.laneBits(x.in(1), l), c1,
                    elementBits(x.in(0).dtype), res);
    });
    return;
  }
  x.elementwise({&x.in(0)}, x.out(0), [&](int64_t l0, int64_t nl, int64_t n, const float* const* in, float* res) {
    std::copy(in[0], in[0] + nl * n, res);
    for (int64_t j = 0; j < nl; ++j) {
      const float c0 = x.laneScalar(x.in(1), l0 + j);
      const float c1 = two ? x.laneScalar(x.in(2), l0 + j) : static_cast<float>(I.const1);
      applyScalar(I.op0, I.reverse0, res + j * n, n, c0);
      if (I.op1 != AluOp::bypass) applyScalar(I.op1, I.reverse1, res + j * n, n, c1);
    }
  });
}

// ---- TensorTensor, TensorTensorScan ----

void check(const InstTensorTensor& I, Checker& c) {
  c.sameShape(c.out(0), {&c.in(0), &c.in(1)});
  checkNotBothPsum(c, c.in(0), c.in(1));
  c.require(bir::legality::aluOps(I.opcode(), c.engine, I.op, AluOp::bypass));
  const DType out[] = {c.out(0).dtype};
  c.require(bir::legality::bitvecDtypes(I.opcode(), I.op, AluOp::bypass, TileDtypes({&c.in(0), &c.in(1)}), out));
}

void exec(const InstTensorTensor& I, Exec& x) {
  if (x.inst().engine == Engine::Pool && hasIntForm(I.op) && isWord(x.in(0).dtype) && isWord(x.in(1).dtype) &&
      isWord(x.out(0).dtype) && !x.in(0).isImm() && !x.in(1).isImm()) {
    // (GpSimd's native integer arithmetic: the 32-bit patterns read as their dtypes' values)
    const bool s0 = x.in(0).dtype == DType::int32, s1 = x.in(1).dtype == DType::int32;
    const bool divides = I.op == AluOp::divide || I.op == AluOp::mod;
    auto value = [](uint32_t v, bool sign) { return sign ? int64_t{static_cast<int32_t>(v)} : int64_t{v}; };
    x.wordElementwise({&x.in(0), &x.in(1)}, x.out(0),
                        [&](int64_t l, int64_t n, const uint32_t* const* in, uint32_t* res) {
                          for (int64_t i = 0; i < n; ++i) {
                            const int64_t a = value(in[0][i], s0), b = value(in[1][i], s1);
                            if (divides && b == 0)
                              x.fail("GpSimd integer " + std::string(enumName(I.op)) + " by zero (ins[1] lane " +
                                     std::to_string(l) + ", element " + std::to_string(i) +
                                     "): what it gives is not documented");
                            res[i] = intAlu(I.op, a, b);
                          }
                        });
    return;
  }
  if (bir::legality::isBitvecOp(I.op)) {
    const uint32_t width = x.in(0).isImm() ? 0xFFFFFFFFu : elementBits(x.in(0).dtype);
    x.wordElementwise({&x.in(0), &x.in(1)}, x.out(0),
                        [&](int64_t, int64_t n, const uint32_t* const* in, uint32_t* res) {
                          for (int64_t i = 0; i < n; ++i) res[i] = bitvecAlu(I.op, in[0][i], in[1][i], width);
                        });
    return;
  }
  withAluOp(I.op, [&]<AluOp Op>() {
    x.elementwise({&x.in(0), &x.in(1)}, x.out(0),
                  [&](int64_t, int64_t nl, int64_t n, const float* const* in, float* res) {
                    const float *a = in[0], *b = in[1];
                    for (int64_t i = 0; i < nl * n; ++i) res[i] = alu<Op>(a[i], b[i]);
                  });
  });
}

void check(const InstTensorTensorScan& I, Checker& c) {
  c.sameShape(c.out(0), {&c.in(0), &c.in(1)});
  c.require(bir::legality::aluOps(I.opcode(), c.engine, I.op0, I.op1));
  checkNotBothPsum(c, c.in(0), c.in(1));
  if (c.nIns == 3) c.pointer(c.in(2), c.out(0).lanes, "initial value");
}

// r = op1(op0(data0[i], r), data1[i]); out[i] = r, per lane from r = initial.
void exec(const InstTensorTensorScan& I, Exec& x) {
  const bool ptr = x.nIns() == 3;
  x.elementwise({&x.in(0), &x.in(1)}, x.out(0),
                [&](int64_t l0, int64_t nl, int64_t n, const float* const* in, float* res) {
                  for (int64_t j = 0; j < nl; ++j) {
                    float r = ptr ? x.laneScalar(x.in(2), l0 + j) : static_cast<float>(I.initial);
                    const float *a = in[0] + j * n, *b = in[1] + j * n;
                    float* o = res + j * n;
                    for (int64_t i = 0; i < n; ++i) o[i] = r = aluDyn(I.op1, aluDyn(I.op0, a[i], r), b[i]);
                  }
                });
}

// ---- ScalarTensorTensor: out = op1(op0(data, scalar0), data1) ----

void check(const InstScalarTensorTensor& I, Checker& c) {
  c.notImmediate(c.in(0), "data");
  c.notImmediate(c.in(1), "data1");
  c.sameShape(c.out(0), {&c.in(0), &c.in(1)});
  if (c.nIns == 3) c.pointer(c.in(2), c.out(0).lanes, "per-partition scalar");
  checkNotBothPsum(c, c.in(0), c.in(1));
  c.require(bir::legality::aluOps(I.opcode(), c.engine, I.op0, I.op1));
}

void exec(const InstScalarTensorTensor& I, Exec& x) {
  // The output may be one of the inputs (in place): element i of both is read before element i is
  // written, op0's results staged through a small stack block.
  constexpr int64_t kBlock = 256;
  const bool ptr = x.nIns() == 3;
  const float c0 = static_cast<float>(I.const0);
  withAluOp(I.op1, [&]<AluOp Op1>() {
    x.elementwise({&x.in(0), &x.in(1)}, x.out(0),
                  [&](int64_t l0, int64_t nl, int64_t n, const float* const* in, float* res) {
                    float t[kBlock];
                    for (int64_t j = 0; j < nl; ++j) {
                      const float s = ptr ? x.laneScalar(x.in(2), l0 + j) : c0;
                      const float *a = in[0] + j * n, *b = in[1] + j * n;
                      float* o = res + j * n;
                      for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
                        const int64_t k = std::min(kBlock, n - i0);
                        std::copy(a + i0, a + i0 + k, t);
                        applyScalar(I.op0, I.reverse0, t, k, s);
                        if (I.reverse1)
                          for (int64_t i = 0; i < k; ++i) o[i0 + i] = alu<Op1>(b[i0 + i], t[i]);
                        else
                          for (int64_t i = 0; i < k; ++i) o[i0 + i] = alu<Op1>(t[i], b[i0 + i]);
                      }
                    }
                  });
  });
}

// ---- Select, SelectReduce, CopyPredicated ----

void check(const InstSelect&, Checker& c) { c.sameShape(c.out(0), {&c.in(0), &c.in(1), &c.in(2)}); }

void exec(const InstSelect&, Exec& x) {
  x.elementwise({&x.in(0), &x.in(1), &x.in(2)}, x.out(0),
                [&](int64_t, int64_t nl, int64_t n, const float* const* in, float* res) {
                  for (int64_t i = 0; i < nl * n; ++i) res[i] = in[0][i] != 0.0f ? in[1][i] : in[2][i];
                });
}

void check(const InstSelectReduce& I, Checker& c) {
  c.sameShape(c.out(0), {&c.in(0), &c.in(1)});
  if (c.nIns == 3) c.sameShape(c.out(0), {&c.in(2)});
  checkNotBothPsum(c, c.in(0), c.in(1));
  if (c.nOuts == 2) {
    c.pointer(c.out(1), c.out(0).lanes, "reduction");
    c.require(bir::legality::reduceOp(I.opcode(), I.reduce_op));
    const TileDtypes data = c.nIns == 3 ? TileDtypes({&c.in(1), &c.in(2)}) : TileDtypes({&c.in(1)});
    const DType outs[] = {c.out(0).dtype, c.out(1).dtype};
    c.require(bir::legality::bitvecDtypes(I.opcode(), I.reduce_op, AluOp::bypass, data, outs));  // (not the predicate)
  }
}

void exec(const InstSelectReduce& I, Exec& x) {
  const bool third = x.nIns() == 3, reduce = x.nOuts() == 2;
  const float onFalse = static_cast<float>(I.on_false_value);
  const Operand* falseOp = third ? &x.in(2) : &x.in(1);  // only read when `third`
  float* folds = reduce ? x.slot(Exec::kSideSlot, x.out(0).lanes) : nullptr;
  x.elementwise({&x.in(0), &x.in(1), falseOp}, x.out(0),
                [&](int64_t l0, int64_t nl, int64_t n, const float* const* in, float* res) {
                  for (int64_t i = 0; i < nl * n; ++i)
                    res[i] = in[0][i] != 0.0f ? in[1][i] : (third ? in[2][i] : onFalse);
                  if (reduce)
                    for (int64_t j = 0; j < nl; ++j) folds[l0 + j] = fold(I.reduce_op, res + j * n, n);
                });
  if (reduce) {  // (reset_reduce: the registers start at -inf and take the fold, max)
    x.setVectorRegisters(x.out(0), folds);
    x.scatterLanes(x.out(1), folds);
  }
}

void check(const InstCopyPredicated&, Checker& c) {
  c.sameShape(c.out(0), {&c.in(0), &c.in(1)});
  checkNotBothPsum(c, c.in(0), c.in(1));
}

// dst = src where predicate != 0; other dst elements keep their value (and are not written). The
// selected elements move as bytes when src and dst share a dtype (the copy moves data, as
// TensorCopy does: an int32 beyond 2^24 and a NaN's payload arrive unchanged), else through fp32.
void exec(const InstCopyPredicated&, Exec& x) {
  const Operand &src = x.in(0), &pred = x.in(1), &dst = x.out(0);
  const int64_t n = dst.freeElems;
  const bool all = x.inst().stage;
  const bool bytes = !src.isImm() && src.dtype == dst.dtype;
  const int64_t laneBytes = n * dst.esize, lanes = all ? dst.lanes : 1;
  float* s = bytes ? nullptr : x.slot(0, n * lanes);
  uint8_t* b = bytes ? x.byteSlot(laneBytes * lanes) : nullptr;
  float* p = x.slot(1, n * lanes);
  auto gather = [&](int64_t l, int64_t at) {  // lane l of src and predicate into scratch lane `at`
    if (bytes)
      x.copyStream(x.lane(src, l), Exec::buffered(b + at * laneBytes, src.dtype, n, src), false);
    else
      x.gatherLane(src, l, s + at * n);
    x.gatherLane(pred, l, p + at * n);
  };
  if (all)
    for (int64_t l = 0; l < dst.lanes; ++l) gather(l, l);
  Memory& m = x.memory(dst);
  for (int64_t l = 0; l < dst.lanes; ++l) {
    const int64_t at = all ? l : 0;
    if (!all) gather(l, 0);
    const float* pl = p + at * n;
    uint8_t* lane = x.lanePtr(dst, l);
    for (int64_t i = 0; i < n; ++i) {
      if (pl[i] == 0.0f) continue;
      uint8_t* e = lane + dst.freeOffset(i);
      if (bytes)
        std::memcpy(e, b + at * laneBytes + i * dst.esize, static_cast<size_t>(dst.esize));
      else
        storeElement(dst.dtype, e, s[at * n + i]);
      x.markWritten(m, e, 1, dst.esize, dst.esize);
    }
  }
}

}  // namespace sim
