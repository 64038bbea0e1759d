#include "Program.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "CrossCoreOrder.h"
#include "Semantics.h"
#include "bir/Error.h"
#include "bir/Json.h"
#include "bir/OperandCheck.h"
#include "bir/Verifier.h"

namespace sim {

uint8_t quadrantsOfAny(int64_t p0, int64_t n) {
  uint8_t m = 0;
  for (int64_t q = p0 / 32; q * 32 < p0 + n && q < 4; ++q) m |= static_cast<uint8_t>(1u << q);
  return m;
}

namespace {

using bir::Engine;
using bir::MemoryType;
using bir::NodeClass;

bool isKernelNode(NodeClass c) {
  return c == NodeClass::BIRKernel || c == NodeClass::NKIKernel || c == NodeClass::NKIKLIRKernel;
}

// The PSUM ports DVE and ACT share that bytes [lo, hi) of a partition hold (DecodedInst::psumPorts):
// the one port (v2), or their banks (v3). Out of line: rarely needed, and kept out of the
// decoder's access lambda, which is inlined into every operand's decode.
[[gnu::noinline]] uint8_t psumPortsOf(int64_t lo, int64_t hi, const bir::MachineConfig& cfg) {
  if (cfg.dve_act_share_psum) return 1;
  if (hi <= lo) return 0;
  const int64_t first = lo / cfg.psum_bank_bytes, last = (hi - 1) / cfg.psum_bank_bytes;
  return static_cast<uint8_t>((2u << last) - (1u << first));  // banks first..last
}

// The verifier reports "functions[F].blocks[B].instructions[I]...: msg"; name the instruction.
[[noreturn]] void rethrowVerifierError(const bir::Module& m, const bir::BIRError& e) {
  const std::string msg = e.what();
  int f = -1, b = -1, i = -1, used = 0;
  if (std::sscanf(msg.c_str(), "functions[%d].blocks[%d].instructions[%d]%n", &f, &b, &i, &used) == 3 &&
      f >= 0 && f < static_cast<int>(m.functions().size())) {
    const auto& fn = *m.functions()[static_cast<size_t>(f)];
    if (b >= 0 && b < static_cast<int>(fn.blocks().size()) &&
        i >= 0 && i < static_cast<int>(fn.blocks()[static_cast<size_t>(b)]->size())) {
      const bir::Instruction& I = *fn.blocks()[static_cast<size_t>(b)]->at(static_cast<size_t>(i));
      throw SimulationError(instructionWhere(f, static_cast<uint32_t>(b), static_cast<uint32_t>(i), I) +
                            msg.substr(static_cast<size_t>(used)));
    }
  }
  throw SimulationError("the module does not verify: " + msg);
}

// Why the instruction's unknown BIR JSON fields (extra_json: kept so that a module round-trips
// through the tools, read by nothing here) cannot be ignored, or "" when it has none: a field the
// simulator does not model may change what the instruction does (a misspelled "reverse_0" would
// run as if the operands were not reversed), so the run is refused rather than silently wrong.
std::string unmodeledFields(const bir::Instruction& I) {
  const std::vector<std::string> names = bir::extraFieldNames(I.extra_json);
  if (names.empty()) return {};
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
  return std::string("the simulator does not model field") + (names.size() > 1 ? "s " : " ") + list + " of " +
         I.opcodeName() + " (unknown to this BIR reader, kept only to be written back)";
}

// Which engines each node class may run on [ref §4]; Unassigned was already resolved by
// Hwm::engineOf. DMA lists the engines that can trigger a queue.
bool engineAllowed(NodeClass c, Engine e) {
  using enum Engine;
  auto any = [&](std::initializer_list<Engine> l) { return std::find(l.begin(), l.end(), e) != l.end(); };
  switch (c) {
    case NodeClass::DMA: return any({SP, Activation, Pool});
    case NodeClass::TensorCopy:
    case NodeClass::TensorCopyDynamic:
    case NodeClass::TensorScalar:
    case NodeClass::TensorScalarPtr: return any({DVE, Activation, Pool});
    case NodeClass::TensorTensor:
    case NodeClass::Memset:
    case NodeClass::Rand:
    case NodeClass::SetRandState:
    case NodeClass::GetRandState: return any({DVE, Pool});
    case NodeClass::NoOp:
    case NodeClass::DevicePrint: return e != Unassigned;
    case NodeClass::BIRKernel:
    case NodeClass::NKIKernel:
    case NodeClass::NKIKLIRKernel: return true;
    default: return e == bir::defaultEngine(c);  // the single-engine classes: their one engine
  }
}

const char* engineName(Engine e) {
  switch (e) {
    case Engine::PE: return "PE";
    case Engine::Activation: return "Activation";
    case Engine::DVE: return "DVE";
    case Engine::Pool: return "Pool";
    case Engine::SP: return "SP";
    case Engine::DMA: return "DMA";
    case Engine::Unassigned: return "Unassigned";
  }
  return "?";
}

bool samePattern(const Operand& a, const Operand& b) {
  if (a.p0 != b.p0 || a.base != b.base || a.lanes != b.lanes || a.laneStride != b.laneStride ||
      a.esize != b.esize || a.nfree != b.nfree)
    return false;
  for (int i = 0; i < a.nfree; ++i)
    if (a.num[i] != b.num[i] || a.stride[i] != b.stride[i]) return false;
  return true;
}

bool overlapsDifferently(const Operand& in, const Operand& out) {
  return footprintsOverlap(in, out) && !samePattern(in, out);
}

struct Decoder {
  const bir::Module& module;
  const bir::Hwm& hwm;
  const bir::MachineConfig& cfg;
  Mode mode;
  std::vector<TensorSpec>& tensors;
  std::unordered_map<std::string, int32_t> tensorByName;
  // The same, by location object: what operands point at (no string hashing per operand).
  std::unordered_map<const bir::MemoryLocation*, int32_t> tensorByLocation;
  // The legality facts of the instruction being decoded, one per operand (kept for its capacity).
  std::vector<bir::legality::Operand> facts;
  // Its operands' pattern shapes, ins then outs (kept for its capacity).
  std::vector<bir::PatternShape> shapes;
  // Timing mode: its decoded operands, ins then outs (kept for its capacity).
  std::vector<Operand> scratch;
  // The operands facts, shapes and scratch have room for: grown together, and compared here
  // rather than through each vector's size (a division by its element's size, three per
  // instruction).
  size_t room = 0;

  // Grows facts, shapes and scratch to hold n operands (no allocation once warm).
  void makeRoom(size_t n) {
    if (n <= room) return;
    facts.resize(n);
    shapes.resize(n);
    scratch.resize(n);
    room = n;
  }

  // Registers a DRAM tensor of functions[core] (`loc` of allocation `set`, both verified), shared
  // by name with the other functions. (The caller asks isDram: most locations are not.)
  void collectTensor(const bir::MemoryLocationSet& set, const bir::MemoryLocation& loc, int core) {
    TensorSpec spec;
    spec.name = loc.name;
    spec.type = loc.type;
    spec.dtype = set.dtype;
    spec.shape = set.tensor_shape;
    spec.bytes = loc.sizeBytes();
    const int64_t shaped = set.numElements() * bir::dtypeSize(set.dtype);
    if (loc.type != MemoryType::DRAM && shaped != spec.bytes)
      throw SimulationError("functions[" + std::to_string(core) + "] tensor '" + loc.name +
                            "': tensor_shape holds " + std::to_string(shaped) +
                            " bytes but its memory location " + std::to_string(spec.bytes));
    auto it = tensorByName.find(spec.name);
    if (it == tensorByName.end()) {
      tensorByName.emplace(spec.name, static_cast<int32_t>(tensors.size()));
      tensorByLocation.emplace(&loc, static_cast<int32_t>(tensors.size()));
      tensors.push_back(std::move(spec));
      return;
    }
    tensorByLocation.emplace(&loc, it->second);
    const TensorSpec& have = tensors[static_cast<size_t>(it->second)];
    if (have.type != spec.type || have.dtype != spec.dtype || have.bytes != spec.bytes ||
        have.shape != spec.shape)
      throw SimulationError("functions[" + std::to_string(core) + "] tensor '" + loc.name +
                            "' differs from the DRAM tensor of that name in another function "
                            "(NeuronCores share DRAM tensors by name)");
  }

  // Verifies I (as bir::verifyInstruction does, in the same order) and decodes it: each operand is
  // verified just before it is decoded, so that its fields are read from memory once, in one pass
  // per operand. `shapes` receives their bir::patternShape, ins then outs, which the decode and
  // the pricing read.
  void decode(CoreProgram& cp, const bir::Instruction& I, uint32_t bi, uint32_t ii, uint32_t ordinal) {
    const int core = cp.core;
    const bir::InstructionCheck check = bir::verifyOperandCounts(I, static_cast<size_t>(core), bi, ii);
    auto fail = [&](const std::string& msg) -> void {
      throw SimulationError(instructionWhere(core, bi, ii, I) + ": " + msg);
    };
    // Built in place (nothing else is added to insts meanwhile); a refusal drops the program.
    DecodedInst& d = cp.insts.emplace_back();
    d.inst = &I;
    d.cls = I.nodeClass();
    d.block = bi;
    d.index = ii;
    d.ordinal = ordinal;
    if (d.cls == NodeClass::Unmodeled)
      fail("the simulator has no model of this opcode (its node class is InstUnmodeled)");
    if (!I.extra_json.empty())
      if (const std::string why = unmodeledFields(I); !why.empty()) fail(why);
    const bool kernel = isKernelNode(d.cls);
    if (kernel && mode == Mode::Full)
      fail("kernel nodes must be expanded (InlineBIRKernel / lowerKernelInst) before a full "
           "simulation; timing mode gives an analytic estimate");
    d.engine = bir::Hwm::engineOf(I);
    if (!engineAllowed(d.cls, d.engine))
      fail(std::string("runs on ") + engineName(d.engine) + ", which cannot execute " +
           bir::nodeClassName(d.cls));
    const bool compute = !kernel && d.cls != NodeClass::DMA;

    // ---- operands ----
    // Execution reads the operands again; timing mode drops them once decoded (at 176 bytes each,
    // three per instruction, they would be most of the memory a long stream takes, and first
    // touches of memory are slow in a virtual machine, HostMemory.h), so it decodes them into
    // scratch operands, whose footprints decodeFootprint assigns in full.
    // The operand lists' sizes and data, read once: the calls below could change them as far as
    // the compiler knows, so it would reload and divide them by sizeof(AccessPattern) at each use.
    const size_t nIns = I.ins.size(), nOuts = I.outs.size(), nOperands = nIns + nOuts;
    const bir::AccessPattern* const insData = I.ins.data();
    const bir::AccessPattern* const outsData = I.outs.data();
    // Assigned by index below (resize keeps the capacity: no allocation once warm).
    makeRoom(nOperands);
    bir::PatternShape* const shapes = this->shapes.data();
    Operand* ops;
    if (mode == Mode::Full) {
      // (Timing mode keeps no operands: firstOperand stays 0, the size of its empty list.)
      d.firstOperand = static_cast<uint32_t>(cp.operands.size());
      cp.operands.resize(d.firstOperand + nOperands);
      ops = cp.operands.data() + d.firstOperand;
    } else {
      ops = scratch.data();
    }
    d.nIns = static_cast<uint8_t>(nIns);
    d.nOuts = static_cast<uint8_t>(nOuts);
    bool immediateIn = false;  // an immediate input, whose facts are made once the output's are
    for (int side = 0; side < 2; ++side) {
      const bir::AccessPattern* const list = side == 0 ? insData : outsData;
      const size_t count = side == 0 ? nIns : nOuts, first = side == 0 ? 0 : nIns;  // in ops and shapes
      for (size_t k = 0; k < count; ++k) {
        const bir::AccessPattern& ap = list[k];
        // Worded only for an error: decoding a valid operand builds no strings. By value, so that the
        // loop indices stay in registers.
        auto what = [side, k] { return std::string(side == 0 ? "ins[" : "outs[") + std::to_string(k) + "]"; };
        bir::verifyOperand(I, check, ap, side == 0, k, shapes[first + k]);
        int32_t tensor = -1;
        if (!ap.isImmediate()) {
          const bir::MemoryLocation& loc = *ap.loc;
          if (loc.isDram()) {
            if (const auto at = tensorByLocation.find(&loc); at != tensorByLocation.end()) {
              tensor = at->second;
            } else {
              const auto found = tensorByName.find(loc.name);
              if (found == tensorByName.end())
                fail(what() + " names DRAM tensor '" + loc.name +
                     "', which no function being run allocates");
              tensor = found->second;
            }
            if (side == 1) tensors[static_cast<size_t>(tensor)].written_by_module = true;
            if (compute) fail(what() + " is DRAM tensor '" + loc.name + "': compute engines address SBUF and PSUM only");
          } else if (loc.type == MemoryType::SB) {
            // (Compared without the sum, which hostile JSON can push past int64: addr and bytes
            // are verified non-negative.)
            if (loc.bytes_per_partition > cfg.sbuf_bytes_per_partition ||
                loc.addr > cfg.sbuf_bytes_per_partition - loc.bytes_per_partition)
              fail(what() + " tensor '" + loc.name + "' occupies SBUF bytes [" + std::to_string(loc.addr) +
                   ", " + bir::verify_detail::sumText(loc.addr, loc.bytes_per_partition) + ") per partition, beyond the " +
                   std::to_string(cfg.sbuf_bytes_per_partition) + " bytes of a " + cfg.arch + " SBUF partition");
          } else if (loc.type == MemoryType::PSUM) {
            if (loc.bytes_per_partition > cfg.psum_bytes_per_partition ||
                loc.addr > cfg.psum_bytes_per_partition - loc.bytes_per_partition)
              fail(what() + " tensor '" + loc.name + "' occupies PSUM bytes [" + std::to_string(loc.addr) + ", " +
                   bir::verify_detail::sumText(loc.addr, loc.bytes_per_partition) + ") per partition, beyond the " +
                   std::to_string(cfg.psum_bytes_per_partition) + " bytes of a " + cfg.arch + " PSUM partition");
          } else {
            fail(what() + " tensor '" + loc.name + "' is in memory of type " +
                 std::string(bir::enumName(loc.type)) + ", which the simulator does not model");
          }
          if (loc.isOnChip() && (loc.partitions > cfg.num_partitions ||
                                 loc.base_partition > cfg.num_partitions - loc.partitions))
            fail(what() + " tensor '" + loc.name + "' exceeds the " + std::to_string(cfg.num_partitions) + " partitions");
        } else if (side == 1) {
          fail(what() + " is an immediate; outputs must be memory");
        }
        Operand& op = ops[first + k];
        decodeFootprint(ap, shapes[first + k], tensor, op);
        if (mode == Mode::Full || dimsMayRefuse(ap)) try {
            decodeDims(ap, op);
          } catch (const SimulationError& e) {
            fail(what() + ": " + e.what());
          }
        if (op.isImm()) {  // its facts are made below, once it has its shape
          immediateIn = true;
          continue;
        }
        bir::legality::Operand& f = facts[first + k];
        f = legalityFacts(op);
        if (!kernel && op.onChip())
          if (const auto why = bir::legality::engineOperand(I.opcode(), d.engine, f, side == 1, cfg))
            fail(why->message);
      }
    }

    // An immediate input stands for a tensor of the output's shape, every element its value; its
    // facts are those of that tensor. (Immediate outputs were refused above.)
    if (immediateIn)
      for (int k = 0; k < d.nIns; ++k)
        if (ops[k].isImm()) {
          if (d.nOuts > 0) {
            ops[k].lanes = ops[d.nIns].lanes;
            ops[k].freeElems = ops[d.nIns].freeElems;
          }
          facts[k] = legalityFacts(ops[k]);
        }

    // ---- node-class rules ----
    Checker c(I, core, bi, ii, d.engine, cfg, mode, ops, facts.data(), d.nIns, d.nOuts);
    checkInstruction(I, c);

    // Inputs that overlap the output without being the same elements are read in full before
    // anything is written (in-place operands with identical patterns stream as usual; where the
    // node does not pair elements by their patterns, any overlap stages). Only execution stages.
    if (mode == Mode::Full)
      for (int o = d.nIns; o < d.nIns + d.nOuts; ++o)
        for (int k = 0; k < d.nIns; ++k)
          if (c.pairsByPattern ? overlapsDifferently(ops[k], ops[o]) : footprintsOverlap(ops[k], ops[o]))
            d.stage = true;

    // ---- cost ----
    const bir::Latency lat = hwm.getLatency(I, shapes);
    d.cycles = lat.cycles;
    d.busy_ns = lat.busy_ns;
    d.access_ns = lat.access_ns;
    d.dma_latency_ns = lat.dma_latency_ns;
    d.dma_dge_ns = lat.dma_dge_ns;
    d.dma_transfer_ns = lat.dma_transfer_ns;
    d.dma_hbm_ns = lat.dma_hbm_ns;
    d.dma_engine_mask = lat.dma_engine_mask;
    d.bytes = lat.bytes;
    d.flops = lat.flops;
    d.adjusted_flops = lat.adjusted_flops;
    d.wholeCore = lat.whole_core;
    d.issueTrack = static_cast<uint8_t>(trackOfEngine(d.engine));
    d.track = d.issueTrack;
    if (d.cls == NodeClass::DMA) {
      const int64_t q = bir::cast<bir::InstDMA>(&I)->queue;
      if (q < 0 || q >= std::min<int64_t>(cfg.dma_queues, kMaxTracks - kNumEngines))
        fail("DMA queue " + std::to_string(q) + " does not exist (a core has " +
             std::to_string(cfg.dma_queues) + ")");
      d.track = static_cast<uint8_t>(kFirstQueueTrack + q);
      // Hardware DGE (checkInstruction refuses it where it does not exist): DGE[0] is commanded by
      // the ScalarE sequencer, DGE[1] by the Sync engine [A2]; software DGE makes the descriptors
      // on GpSimd.
      const bir::DgeType dge = bir::cast<bir::InstDMA>(&I)->dge_type;
      if (dge == bir::DgeType::HWDGE) d.dgeUnit = d.engine == bir::Engine::Activation ? 0 : 1;
      if (dge == bir::DgeType::SWDGE) d.dgeUnit = kDgePool;
    }

    // ---- hazard footprints, and the shared SRAM ports they need ----
    d.firstAccess = static_cast<uint32_t>(cp.accesses.size());
    uint8_t nAccess = 0;  // counted here, not through the list's size (a division by 24)
    const bool sharesSbuf = cfg.dve_pool_share_sbuf && (d.track == kTrackDVE || d.track == kTrackPool);
    const bool sharesPsum = (cfg.dve_act_share_psum || cfg.dve_act_share_psum_banks) &&
                            (d.track == kTrackDVE || d.track == kTrackACT);
    // Inline (GCC stopped inlining it when it grew the shared PSUM ports: 40 Ir per instruction).
    auto addAccess = [&](const Operand& op, const bir::AccessPattern& ap, bool write, bool whole)
                         __attribute__((always_inline)) {
      if (op.isImm()) return;
      Access a;
      a.write = write;
      if (op.onChip()) {
        a.mem = op.space == Space::SBUF ? kMemSbuf : kMemPsum;
        const bir::MemoryLocation& loc = *ap.loc;
        a.quadrants = whole ? quadrantsOf(loc.base_partition, loc.partitions) : quadrantsOf(op.p0, op.lanes);
        a.lo = whole ? loc.addr : op.lo;
        a.hi = whole ? loc.addr + loc.bytes_per_partition : op.hi;
        if (a.mem == kMemSbuf ? sharesSbuf : sharesPsum) {
          if (a.mem == kMemSbuf)
            d.ports |= kPortSbufDvePool;
          else
            d.psumPorts |= psumPortsOf(a.lo, a.hi, cfg);
        }
      } else {
        a.mem = kMemFirstDram + static_cast<uint32_t>(op.tensor);
        a.quadrants = 1;
        TensorSpec& spec = tensors[static_cast<size_t>(op.tensor)];
        a.lo = whole ? 0 : op.lo;
        a.hi = whole ? spec.bytes : op.hi;
        if (write && mode == Mode::Timing && spec.type == MemoryType::Output) {  // (full mode marks bytes as it writes)
          spec.writes.push_back({whole, op.esize, ap.offset, static_cast<uint32_t>(spec.write_pairs.size()),
                                 static_cast<uint32_t>(ap.pattern.size())});
          spec.write_pairs.insert(spec.write_pairs.end(), ap.pattern.begin(), ap.pattern.end());
        }
      }
      cp.accesses.push_back(a);
      ++nAccess;
    };
    for (int k = 0; k < d.nIns; ++k) addAccess(ops[k], insData[k], false, k == c.wholeLocationIn);
    for (int k = 0; k < d.nOuts; ++k) {
      const bool whole = k == c.wholeLocationOut;
      if (c.outAlsoRead) addAccess(ops[d.nIns + k], outsData[k], false, whole);
      addAccess(ops[d.nIns + k], outsData[k], true, whole);
    }
    d.nAccess = nAccess;
  }
};

// A traced module's instructions, operand vectors, patterns and locations lie where the tracer
// allocated them, and its scheduling pass reorders the instructions: walking them in program order
// jumps around the heap, and each step waits on a chain of dependent loads (the instruction, its
// operand arrays, each operand's pairs and its location, whose fields span three cache lines).
// Prefetched a few instructions ahead, one link of the chain per step, they arrive before the
// verifier reads them.
void prefetchAhead(const std::vector<std::unique_ptr<bir::Instruction>>& insts, size_t ii) {
  constexpr size_t kAhead = 4;  // instructions ahead of the one being decoded, for the first link
  if (ii + kAhead < insts.size()) __builtin_prefetch(insts[ii + kAhead].get());
  if (ii + kAhead - 1 < insts.size()) {
    const bir::Instruction& I = *insts[ii + kAhead - 1];
    __builtin_prefetch(I.ins.data());
    __builtin_prefetch(I.outs.data());
  }
  if (ii + kAhead - 2 < insts.size()) {
    const bir::Instruction& I = *insts[ii + kAhead - 2];
    for (const auto* list : {&I.ins, &I.outs})
      for (const bir::AccessPattern& ap : *list) {
        // The operand's fields up to the end of its inline pairs (AccessPattern.h: the pairs of
        // an engine instruction's pattern are held in the operand).
        const char* fields = reinterpret_cast<const char*>(&ap);
        const char* hotEnd = reinterpret_cast<const char*>(&ap.pattern + 1);
        for (const char* line = fields; line < hotEnd; line += 64) __builtin_prefetch(line);
        __builtin_prefetch(hotEnd - 1);
        if (ap.pattern.size() > bir::kInlinePairs) __builtin_prefetch(ap.pattern.data());
        if (!ap.loc) continue;  // an immediate
        const char* loc = reinterpret_cast<const char*>(ap.loc);
        for (size_t line = 0; line < sizeof(bir::MemoryLocation); line += 64) __builtin_prefetch(loc + line);
      }
  }
}

// The slots a few instructions on will be decoded into, for writing: their DecodedInst (two lines)
// and hazard footprints. Reserved up front, their memory was last written by an earlier program
// (HostMemory.h reuses released blocks) or never, and is seldom in cache: each store to a line not
// in cache holds its store-buffer entry until the line arrives, and three such lines an instruction
// filled the buffer and stalled the decoder. (Past the reserved end it asks for nothing a decode
// writes; a prefetch never faults.)
void prefetchOutput(const CoreProgram& cp) {
  constexpr size_t kInsts = 6, kAccesses = 16;  // about six instructions' footprints
  const char* const d = reinterpret_cast<const char*>(cp.insts.data() + cp.insts.size() + kInsts);
  __builtin_prefetch(d, 1);
  __builtin_prefetch(d + sizeof(DecodedInst) - 1, 1);
  __builtin_prefetch(cp.accesses.data() + cp.accesses.size() + kAccesses, 1);
}

}  // namespace

const char* trackName(int track) {
  static const char* kNames[kMaxTracks] = {"PE",    "ACT",   "DVE",   "Pool",  "SP",    "DMA0",  "DMA1",
                                           "DMA2",  "DMA3",  "DMA4",  "DMA5",  "DMA6",  "DMA7",  "DMA8",
                                           "DMA9",  "DMA10", "DMA11", "DMA12", "DMA13", "DMA14", "DMA15"};
  return track >= 0 && track < kMaxTracks ? kNames[track] : "?";
}

std::string instructionWhere(int core, uint32_t block, uint32_t index, const bir::Instruction& I) {
  return "functions[" + std::to_string(core) + "].blocks[" + std::to_string(block) + "].instructions[" +
         std::to_string(index) + "] " + I.opcodeName() + " '" + I.name + "'";
}

Program::Program(const bir::Module& m, const bir::Hwm& hwm, Mode mode_, std::optional<int64_t> neuronCoreId)
    : mode(mode_), config(&ownConfig_), ownConfig_(hwm.config()) {
  // Each operand is verified just before it is decoded, so that it is read from memory once (a
  // long stream does not fit in the caches). The verifier's complaints still come first: on any
  // refusal the whole module is verified before the refusal is passed on, exactly as when the
  // verifier ran over it before decoding (so a decoder's refusal of an operand is reported only
  // when no operand, of any instruction, breaks the verifier's rules).
  try {
    decodeModule(m, hwm, neuronCoreId);
  } catch (...) {
    try {
      bir::verifyModule(m);
    } catch (const bir::BIRError& e) {
      rethrowVerifierError(m, e);
    }
    throw;
  }
}

void Program::decodeModule(const bir::Module& m, const bir::Hwm& hwm, std::optional<int64_t> neuronCoreId) {
  const int64_t nf = static_cast<int64_t>(m.functions().size());
  // (Refused here, before the allocations are verified: the constructor then verifies the whole
  // module, whose complaints come first, as when the allocations were verified before these.)
  if (nf == 0) throw SimulationError("the module has no function to run");
  if (neuronCoreId && (*neuronCoreId < 0 || *neuronCoreId >= nf))
    throw SimulationError("neuron_core_id " + std::to_string(*neuronCoreId) + ": the module has " +
                          std::to_string(nf) + " function(s)");
  const int64_t first = neuronCoreId ? *neuronCoreId : 0;
  const int64_t last = neuronCoreId ? *neuronCoreId + 1 : nf;

  Decoder dec{m, hwm, hwm.config(), mode, tensors, {}, {}, {}, {}, {}, 0};
  // The functions to run register their DRAM tensors as their allocations are verified: one walk
  // over the allocations (a traced module has one per tile, and they do not stay in cache between
  // two walks). All are registered before any instruction is decoded: a function's operands may
  // name a DRAM tensor another function allocates.
  for (int64_t f = 0; f < nf; ++f) {
    const bir::Function& fn = *m.functions()[static_cast<size_t>(f)];
    if (f >= first && f < last)
      bir::verifyAllocations(fn, static_cast<size_t>(f), [&](const bir::MemoryLocationSet& set, const bir::MemoryLocation& loc) {
        if (loc.isDram()) dec.collectTensor(set, loc, static_cast<int>(f));
      });
    else
      bir::verifyAllocations(fn, static_cast<size_t>(f));
  }
  for (int64_t f = 0; f < nf; ++f) {
    const bir::Function& fn = *m.functions()[static_cast<size_t>(f)];
    const bool run = f >= first && f < last;
    CoreProgram cp;
    cp.core = static_cast<int>(f);
    cp.fn = &fn;
    if (run) {
      const size_t n = fn.instructionCount();
      cp.insts.reserve(n);
      if (mode == Mode::Full) cp.operands.reserve(n * 3);
      cp.accesses.reserve(n * 3);
    }
    uint32_t ordinal = 0;
    for (size_t bi = 0; bi < fn.blocks().size(); ++bi) {
      const bir::BasicBlock& bb = *fn.blocks()[bi];
      const auto& insts = bb.instructions();
      for (size_t ii = 0; ii < insts.size(); ++ii) {
        prefetchAhead(insts, ii);
        if (run) prefetchOutput(cp);
        const bir::Instruction& I = *insts[ii];
        if (!run) {
          bir::verifyInstruction(I, static_cast<size_t>(f), bi, ii);
          continue;
        }
        dec.decode(cp, I, static_cast<uint32_t>(bi), static_cast<uint32_t>(ii), ordinal++);
      }
    }
    if (run) cores.push_back(std::move(cp));
  }
  if (cores.size() > 1) CrossCoreOrder(cores, tensors).run();
}

size_t Program::instructionCount() const {
  size_t n = 0;
  for (const auto& c : cores) n += c.insts.size();
  return n;
}

}  // namespace sim
