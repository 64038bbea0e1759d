// The functional side of the simulator: for every node class, `check` (run once when decoding:
// what the machine refuses, with the shape rules the executor relies on) and `exec` (run in `full`
// mode: what the instruction computes, docs/isa-semantics.md §5). Both are overloads per node
// class, declared from NodeClasses.def and dispatched by checkInstruction / execInstruction.
//
// Exec moves data lane by lane through fp32 scratch: operands are gathered (converted to fp32,
// checked against the initialisation bits), computed on, and scattered (converted to the output
// dtype, marked written). Lanes with few elements are gathered several at a time so that small
// tiles still run as long vector loops.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "Gemm.h"
#include "Program.h"
#include "State.h"
#include "bir/Error.h"
#include "bir/Legality.h"

namespace sim {

// ---------------------------------------------------------------------------------------------
// Decode-time checks.

class Checker {
 public:
  // `facts[k]` is legalityFacts(ops[k]), made once per operand by the decoder.
  Checker(const bir::Instruction& I, int core, uint32_t block, uint32_t index, bir::Engine engine,
          const bir::MachineConfig& cfg, Mode mode, const Operand* ops, const bir::legality::Operand* facts,
          int nIns, int nOuts)
      : I(I), engine(engine), cfg(cfg), mode(mode), nIns(nIns), nOuts(nOuts), core_(core),
        block_(block), index_(index), ops_(ops), facts_(facts) {}

  const bir::Instruction& I;
  const bir::Engine engine;
  const bir::MachineConfig& cfg;
  const Mode mode;
  const int nIns, nOuts;

  const Operand& in(int k) const { return ops_[k]; }
  const Operand& out(int k) const { return ops_[nIns + k]; }

  [[noreturn]] void fail(const std::string& msg) const;
  // The operand has `lanes` lanes (non-immediate operands only).
  void lanes(const Operand& op, int64_t lanes, const char* what) const;
  // The operand has exactly n elements per lane.
  void elems(const Operand& op, int64_t n, const char* what) const;
  // A [P,1] pointer: P lanes of one element (or an immediate).
  void pointer(const Operand& op, int64_t lanes, const char* what) const;
  // Every non-immediate operand has the lanes of `ref`, and each of ins/outs listed has the
  // elements per lane of `ref`.
  void sameShape(const Operand& ref, std::initializer_list<const Operand*> others) const;
  void notImmediate(const Operand& op, const char* what) const;
  std::string name(const Operand& op) const;  // "ins[1]" / "outs[0]"
  // The operand (one of in(k) / out(k)) as the legality rules (bir/Legality.h) see it, and their
  // verdict: fails with the rule's message unless the instruction is legal.
  const bir::legality::Operand& facts(const Operand& op) const { return facts_[&op - ops_]; }
  void require(const bir::legality::Verdict& v) const {
    if (v) fail(v->message);
  }

  // Hazard footprint adjustments (see Program): the whole location of ins[k] / outs[k] may be
  // touched (dynamic offsets), or outs[k] is also read.
  int wholeLocationIn = -1, wholeLocationOut = -1;
  bool outAlsoRead = false;
  // Staging (DecodedInst::stage): inputs pair with outputs element by element in pattern order,
  // so an input with the output's very pattern streams in place; false (an indirect DMA's rows
  // follow its index) makes any overlap stage.
  bool pairsByPattern = true;

 private:
  int core_;
  uint32_t block_, index_;
  const Operand* ops_;
  const bir::legality::Operand* facts_;
};

// A decoded operand as the legality rules (bir/Legality.h) see it. Inline: made for every operand
// of every instruction a module is prepared with.
inline bir::legality::Operand legalityFacts(const Operand& op) {
  namespace lg = bir::legality;
  lg::Operand f;
  f.space = op.space == Space::SBUF ? lg::Space::SBUF
            : op.space == Space::PSUM ? lg::Space::PSUM
            : op.space == Space::DRAM ? lg::Space::DRAM
                                      : lg::Space::Immediate;
  f.dtype = op.dtype;
  f.partitions = op.lanes;
  f.free_elements = op.freeElems;
  if (op.onChip()) {
    f.placed = true;
    f.start_byte = op.base;
    f.byte_lo = op.lo;
    f.byte_hi = op.hi;
  }
  return f;
}

void checkInstruction(const bir::Instruction& I, Checker& c);
#define BIR_NODE_CLASS(C) void check(const bir::Inst##C& I, Checker& c);
#include "bir/NodeClasses.def"
#undef BIR_NODE_CLASS

// ---------------------------------------------------------------------------------------------
// Execution.

// A device_print: the instruction, its prefix and the printed values ([P, N] fp32).
struct DevicePrintRecord {
  std::string instruction;
  std::string prefix;
  int64_t partitions = 0, elements = 0;
  std::vector<float> values;
};

class Exec {
 public:
  Exec(CoreState& core, std::vector<DramTensor>& dram, const bir::MachineConfig& cfg, GemmEngine& gemm,
       std::vector<DevicePrintRecord>& prints);

  void run(const CoreProgram& p, const DecodedInst& d);

  // ---- for the exec overloads ----
  const DecodedInst& inst() const { return *d_; }
  const Operand& in(int k) const { return ops_[k]; }
  const Operand& out(int k) const { return ops_[d_->nIns + k]; }
  int nIns() const { return d_->nIns; }
  int nOuts() const { return d_->nOuts; }
  [[noreturn]] void fail(const std::string& msg) const;
  // The Vector Engine's accumulation register of absolute partition `p` (an unset one is refused,
  // naming the instruction that last unset them); setting those of `out`'s partitions, one value
  // per lane (after the lanes' work: not from forLanes' threads).
  float vectorRegister(int64_t p) const;
  void setVectorRegisters(const Operand& out, const float* values);

  Memory& memory(const Operand& op) {
    return op.space == Space::SBUF ? core.sbuf
           : op.space == Space::PSUM ? core.psum
                                     : dram[static_cast<size_t>(op.tensor)].mem;
  }
  // Element 0 of lane `lane` (on-chip: partition p0 + lane; DRAM: the lane-th outer step).
  uint8_t* lanePtr(const Operand& op, int64_t lane);
  // The lane's elements as fp32 (immediates repeat their value); refuses unwritten bytes.
  void gatherLane(const Operand& op, int64_t lane, float* out);
  // Converts and stores the lane; marks the bytes written (and, in PSUM, outside any matmul group).
  void scatterLane(const Operand& op, int64_t lane, const float* in);
  // A [P,1] operand's lanes from in[0..P).
  void scatterLanes(const Operand& op, const float* in) {
    for (int64_t l = 0; l < op.lanes; ++l) scatterLane(op, l, in + l);
  }
  // Stores exact integers into the lane (indices, counters): through fp32 only into a float dtype.
  void scatterIntLane(const Operand& op, int64_t lane, const int64_t* in);
  // The bit-vector operators' lanes (Numerics loadBitsElement / storeBitsElement): the lane's
  // elements as 32-bit patterns (an immediate's number by bitsOfNumber), and their stores.
  void gatherBitsLane(const Operand& op, int64_t lane, uint32_t* out);
  void scatterBitsLane(const Operand& op, int64_t lane, const uint32_t* in);
  // Element 0 of the lane as a 32-bit pattern (a [P,1] pointer).
  uint32_t laneBits(const Operand& op, int64_t lane);
  // Element k of the lane: its bytes, checked as written (copied bit for bit by the gathers).
  const uint8_t* readElement(const Operand& op, int64_t lane, int64_t k);
  // Element 0 of the lane as fp32 (a [P,1] pointer).
  float laneScalar(const Operand& op, int64_t lane);
  // Checks / marks one run of bytes.
  void checkWritten(Memory& m, const uint8_t* p, int64_t n, int64_t step, int esize, const Operand& op);
  void markWritten(Memory& m, const uint8_t* p, int64_t n, int64_t step, int esize);

  // Scratch slot `i`: at least n fp32 values. Slots grow to the largest request and stay, so the
  // steady state allocates nothing.
  float* slot(int i, int64_t n) {
    auto& v = slots_[static_cast<size_t>(i)];
    if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
    return v.data();
  }
  int64_t* intSlot(int64_t n) {
    if (static_cast<int64_t>(ints_.size()) < n) ints_.resize(static_cast<size_t>(n));
    return ints_.data();
  }
  uint8_t* byteSlot(int64_t n) {
    if (static_cast<int64_t>(bytes_.size()) < n) bytes_.resize(static_cast<size_t>(n));
    return bytes_.data();
  }
  static constexpr int kSlots = 6;
  static constexpr int kOutSlot = kSlots - 1;
  // Free while elementwise() runs with at most kSideSlot inputs: the per-lane values of a second
  // output, stored after the first (docs/isa-semantics.md §1, several outputs).
  static constexpr int kSideSlot = kSlots - 2;
  static constexpr int64_t kChunk = 4096;  // elements gathered together across small lanes

  // A stream of elements for copyStream: a cursor, its memory (null: untracked scratch), dtype.
  struct Stream {
    RunCursor cur;
    Memory* mem = nullptr;
    bir::DType dtype = bir::DType::float32;
    const Operand* op = nullptr;  // for messages
  };
  Stream lane(const Operand& op, int64_t lane);  // one lane of an operand
  Stream whole(const Operand& op);               // every element of an operand
  Stream whole(const Operand& op, int64_t first, int64_t count);  // its elements [first, first + count)
  // n contiguous elements of `dtype` at p (scratch, untracked): where an overlapping source is
  // staged before its destination is written. `op` names the operand in messages.
  static Stream buffered(uint8_t* p, bir::DType dtype, int64_t n, const Operand& op);
  // dst[k] = src[k] (bytes when the dtypes match, else through fp32), or dst[k] += src[k] in fp32
  // with rmwAdd, until src is exhausted.
  void copyStream(Stream src, Stream dst, bool rmwAdd);
  // copyStream of every element of src to dst, in shares of dst's lanes run by forLanes (src and
  // dst must not overlap).
  void copyWhole(const Operand& src, const Operand& dst, bool rmwAdd);

  // Runs body(on, l0, l1) over consecutive lane ranges that cover [0, lanes), `on` being the Exec
  // of the thread that runs the range. An instruction that moves at least kParallelBytes is split
  // over the matmul kernel's worker threads, each with its own Exec (its own scratch), provided
  // the written operand's lane ranges share no word of initialisation bits; otherwise it runs
  // here in one call. A refusal is rethrown once every range has finished, the lowest range's
  // first: the error the serial order raises. A body reads and writes only its own lanes' bytes.
  template <class Body>
  void forLanes(int64_t lanes, int64_t bytes, const Operand& written, Body&& body);
  static constexpr int64_t kParallelBytes = 64 << 10;

  // Runs the lanes of `out` in chunks of whole lanes: gathers each input into slots 0.. (lane j of
  // the chunk at in(i) + j * n), calls f(lane0, nlanes, n, in, res) which writes res, then scatters
  // res to `out`. When the instruction's inputs overlap its output (inst().stage) the chunk is the
  // whole instruction, so every input is read before anything is written. Large instructions run
  // their lanes on several threads (forLanes), so f may be called concurrently for different
  // lanes: it must use no Exec scratch, unless the caller asks for Lanes::Serial.
  enum class Lanes { Parallel, Serial };
  template <class F>
  void elementwise(std::initializer_list<const Operand*> inputs, const Operand& out, F&& f,
                   Lanes lanes = Lanes::Parallel);

  // elementwise on 32-bit patterns (gatherBitsLane), for the bit-vector operators and GpSimd's
  // integer arithmetic: every lane of every input is read before anything is written (an output
  // may overlap an input), then f(lane, n, in, res) computes each lane's n patterns and
  // scatterBitsLane stores them. Serial: such instructions are rare and short.
  template <class F>
  void wordElementwise(std::initializer_list<const Operand*> inputs, const Operand& out, F&& f);

  CoreState& core;
  std::vector<DramTensor>& dram;
  const bir::MachineConfig& cfg;
  GemmEngine& gemm;
  std::vector<DevicePrintRecord>& prints;
  int coreIndex = 0;

 private:
  const CoreProgram* prog_ = nullptr;
  const DecodedInst* d_ = nullptr;
  const Operand* ops_ = nullptr;
  std::vector<std::vector<float>> slots_;
  std::vector<uint8_t> bytes_;
  std::vector<int64_t> ints_;
  std::vector<std::unique_ptr<Exec>> helpers_;  // the worker threads' Execs, for forLanes

  template <class T, class Store>
  void scatterEach(const Operand& op, int64_t lane, const T* in, Store store);
  using LaneBody = void (*)(void* body, Exec& on, int64_t l0, int64_t l1);
  void runLanes(int64_t lanes, const Operand& written, LaneBody fn, void* body);
  template <class F>
  void elementwiseLanes(int64_t l0, int64_t l1, std::initializer_list<const Operand*> inputs, const Operand& out, F& f);

  // An fp32 lane used in place: any fp32-container input; an output only when storing is a plain
  // copy (tfloat32 rounds).
  static bool isContiguousFp32(const Operand& op, bool output = false) {
    return (op.dtype == bir::DType::float32 || (!output && op.dtype == bir::DType::float32r)) &&
           op.singleRun() && op.runStride() == 4 && op.base % 4 == 0 && !op.isImm();
  }
};

template <class Body>
void Exec::forLanes(int64_t lanes, int64_t bytes, const Operand& written, Body&& body) {
  using B = std::remove_reference_t<Body>;
  if (bytes < kParallelBytes || lanes < 2 || gemm.threads() < 2) {
    body(*this, int64_t{0}, lanes);
    return;
  }
  runLanes(lanes, written, [](void* b, Exec& on, int64_t l0, int64_t l1) { (*static_cast<B*>(b))(on, l0, l1); },
           &body);
}

template <class F>
void Exec::elementwise(std::initializer_list<const Operand*> inputs, const Operand& out, F&& f, Lanes lanes) {
  if (d_->stage || lanes == Lanes::Serial) {
    elementwiseLanes(0, out.lanes, inputs, out, f);
    return;
  }
  const int64_t bytes = out.numElements() * 4 * static_cast<int64_t>(inputs.size() + 1);
  forLanes(out.lanes, bytes, out, [&](Exec& on, int64_t l0, int64_t l1) { on.elementwiseLanes(l0, l1, inputs, out, f); });
}

template <class F>
void Exec::elementwiseLanes(int64_t first, int64_t last, std::initializer_list<const Operand*> inputs,
                            const Operand& out, F& f) {
  const int64_t n = out.freeElems;
  // fp32 lanes that are one contiguous run are used in place, one lane at a time: no staging
  // copies (the lane-local loops read element i before writing element i).
  bool direct = !d_->stage && isContiguousFp32(out, true);
  for (const Operand* op : inputs) direct = direct && (op->isImm() || isContiguousFp32(*op));
  if (direct) {
    const float* in[kSlots - 1] = {};
    for (int64_t l = first; l < last; ++l) {
      int i = 0;
      for (const Operand* op : inputs) {
        if (op->isImm()) {
          float* s = slot(i, n);
          gatherLane(*op, l, s);
          in[i++] = s;
        } else {
          const uint8_t* p = lanePtr(*op, l);
          checkWritten(memory(*op), p, n, 4, 4, *op);
          in[i++] = reinterpret_cast<const float*>(p);
        }
      }
      uint8_t* o = lanePtr(out, l);
      f(l, int64_t{1}, n, in, reinterpret_cast<float*>(o));
      markWritten(memory(out), o, n, 4, 4);
    }
    return;
  }
  const int64_t lanesPerChunk =
      d_->stage ? out.lanes : (n >= kChunk ? 1 : kChunk / (n ? n : 1));
  const float* in[kSlots - 1] = {};
  for (int64_t l0 = first; l0 < last; l0 += lanesPerChunk) {
    const int64_t nl = std::min<int64_t>(lanesPerChunk, last - l0);
    int i = 0;
    for (const Operand* op : inputs) {
      float* s = slot(i, nl * n);
      in[i++] = s;
      for (int64_t j = 0; j < nl; ++j) gatherLane(*op, l0 + j, s + j * n);
    }
    float* res = slot(kOutSlot, nl * n);
    f(l0, nl, n, in, res);
    for (int64_t j = 0; j < nl; ++j) scatterLane(out, l0 + j, res + j * n);
  }
}

template <class F>
void Exec::wordElementwise(std::initializer_list<const Operand*> inputs, const Operand& out, F&& f) {
  const int64_t n = out.freeElems, size = out.lanes * n;
  std::vector<uint32_t> v(static_cast<size_t>(size) * (inputs.size() + 1));
  const uint32_t* in[kSlots - 1] = {};
  int i = 0;
  for (const Operand* op : inputs) {
    uint32_t* s = v.data() + i * size;
    in[i++] = s;
    for (int64_t l = 0; l < out.lanes; ++l) gatherBitsLane(*op, l, s + l * n);
  }
  uint32_t* res = v.data() + i * size;
  const uint32_t* lane[kSlots - 1] = {};
  for (int64_t l = 0; l < out.lanes; ++l) {
    for (int k = 0; k < i; ++k) lane[k] = in[k] + l * n;
    f(l, n, lane, res + l * n);
  }
  for (int64_t l = 0; l < out.lanes; ++l) scatterBitsLane(out, l, res + l * n);
}

void execInstruction(const bir::Instruction& I, Exec& x);
// Whether `d` sets the Vector Engine's accumulation registers of its partitions: TensorScalarReduce,
// and a SelectReduce or RangeSelect with its reduction output (docs/isa-semantics.md §5).
bool setsVectorRegisters(const DecodedInst& d);
#define BIR_NODE_CLASS(C) void exec(const bir::Inst##C& I, Exec& x);
#include "bir/NodeClasses.def"
#undef BIR_NODE_CLASS

}  // namespace sim
