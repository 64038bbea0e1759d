#include "Simulator.h"

#include "Numerics.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <utility>
#include <unordered_map>

namespace sim {

namespace {
double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One NeuronCore's SBUF and PSUM is tens of MiB; a fresh one costs the kernel a page fault and a
// page clear per 4 KiB (or 2 MiB) touched. SBUF contents never need clearing (reads of unwritten
// bytes are refused through the bit sets, which reset() clears), so the last state is kept for
// the next run of the same size.
std::mutex gStateMutex;
std::unique_ptr<CoreState> gCachedState;

std::unique_ptr<CoreState> takeState(const bir::MachineConfig& cfg) {
  {
    std::lock_guard<std::mutex> lock(gStateMutex);
    if (gCachedState && gCachedState->hasShape(cfg.num_partitions, cfg.sbuf_bytes_per_partition,
                                               cfg.psum_bytes_per_partition))
      return std::move(gCachedState);
  }
  return std::make_unique<CoreState>(cfg.num_partitions, cfg.sbuf_bytes_per_partition,
                                     cfg.psum_bytes_per_partition);
}

void returnState(std::unique_ptr<CoreState> s) {
  std::lock_guard<std::mutex> lock(gStateMutex);
  gCachedState = std::move(s);
}

// Likewise the matmul kernel: its worker threads and panel buffers, warm, for the next run. Held
// by a plain pointer that is never destroyed: joining its threads at exit (or in a forked child,
// which has none) is never needed.
GemmEngine* gCachedGemm = nullptr;

std::unique_ptr<GemmEngine> takeGemm(int threads) {
  {
    std::lock_guard<std::mutex> lock(gStateMutex);
    if (gCachedGemm && gCachedGemm->threads() == GemmEngine::threadsFor(threads))
      return std::unique_ptr<GemmEngine>(std::exchange(gCachedGemm, nullptr));
  }
  return std::make_unique<GemmEngine>(threads);
}

void returnGemm(std::unique_ptr<GemmEngine> g) {
  std::unique_ptr<GemmEngine> previous;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(gStateMutex);
  previous.reset(std::exchange(gCachedGemm, g.release()));
}

// The elements of an Output tensor no instruction wrote read as NaN (0 for integer dtypes), not
// as whatever the caller's buffer held. Filled after the run, so the caller need not fill its
// arrays first: the run's own stores are their first touch, on the worker threads for large
// DMAs. Returns what it filled: every element with a byte no instruction wrote (a view of
// another element size may write part of an element; the whole element is filled).
// The elements of a tensor of `bytes` bytes with a byte `written` lacks: how many, and the first.
void countUnwritten(const BitSet& written, int64_t bytes, int64_t es, UnwrittenOutput& u,
                    const std::function<void(int64_t, int64_t)>& eachRun) {
  int64_t next = 0;  // the first element not counted yet
  for (int64_t i = 0; i < bytes;) {
    const int64_t lo = written.firstClear(i, bytes - i);
    if (lo < 0) break;
    int64_t hi = written.firstSet(lo, bytes - lo);
    if (hi < 0) hi = bytes;
    const int64_t first = std::max(lo / es, next), end = (hi - 1) / es + 1;
    if (u.first < 0) u.first = first;
    u.elements += end - first;
    if (eachRun) eachRun(first, end);
    next = end;
    i = hi;
  }
}

// Full mode: fills the elements of Output tensor `t` no instruction wrote with NaN (floats) or 0.
UnwrittenOutput fillUnwritten(DramTensor& t) {
  UnwrittenOutput filled{t.name, t.dtype, t.shape, 0, -1};
  const int es = bir::dtypeSize(t.dtype);
  uint8_t value[8] = {};
  if (bir::isFloat(t.dtype)) storeElement(t.dtype, value, std::numeric_limits<float>::quiet_NaN());
  countUnwritten(t.mem.written, t.bytes, es, filled, [&](int64_t first, int64_t end) {
    for (int64_t e = first; e < end; ++e) std::memcpy(t.mem.data + e * es, value, static_cast<size_t>(es));
  });
  return filled;
}

// Marks the bytes of the elements pattern[d..n) addresses from element `at` (of `es` bytes).
void markPattern(BitSet& written, const bir::APPair* pattern, size_t d, size_t n, int64_t at, int64_t es) {
  const bir::APPair& p = pattern[d];
  if (d + 1 == n) {
    if (p.step == 1 || p.num == 1) {
      written.set(at * es, p.num * es);
    } else {
      for (int64_t i = 0; i < p.num; ++i) written.set((at + i * p.step) * es, es);
    }
    return;
  }
  for (int64_t i = 0; i < p.num; ++i) markPattern(written, pattern, d + 1, n, at + i * p.step, es);
}

// Timing mode (no data): the elements of Output tensor `s` that no write addresses. A loop writes
// the same elements again and again: each distinct write is marked once (the mixed stream of
// benchmarks/bench_timing.py stores 100 000 times to eight places), so the cost is about the
// output's size, not the number of writes.
UnwrittenOutput neverWritten(const TensorSpec& s) {
  UnwrittenOutput u{s.name, s.dtype, s.shape, 0, -1};
  const bir::APPair* pairs = s.write_pairs.data();
  auto same = [&](const OutputWrite& a, const OutputWrite& b) {
    if (a.esize != b.esize || a.offset != b.offset || a.count != b.count) return false;
    for (uint32_t i = 0; i < a.count; ++i)
      if (pairs[a.first + i].step != pairs[b.first + i].step || pairs[a.first + i].num != pairs[b.first + i].num)
        return false;
    return true;
  };
  auto hash = [&](const OutputWrite& w) {
    uint64_t h = static_cast<uint64_t>(w.offset) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(w.esize);
    for (uint32_t i = 0; i < w.count; ++i)
      h = (h ^ static_cast<uint64_t>(pairs[w.first + i].step)) * 0x100000001B3ull ^
          static_cast<uint64_t>(pairs[w.first + i].num) * 0xC2B2AE3D27D4EB4Full;
    return h;
  };
  for (const OutputWrite& w : s.writes)
    if (w.whole) return u;  // (every element)
  BitSet written(s.bytes);
  // The writes marked so far, by hash: an open-addressing table in one allocation (the run
  // allocates nothing per instruction, cpp/tests/test_sim_allocations.cpp), slot = write + 1.
  size_t slots = 16;
  while (slots < 2 * s.writes.size()) slots *= 2;
  std::vector<uint32_t> table(slots, 0);
  for (uint32_t k = 0; k < s.writes.size(); ++k) {
    const OutputWrite& w = s.writes[k];
    if (w.count == 0) continue;
    size_t i = hash(w) & (slots - 1);
    while (table[i] != 0 && !same(s.writes[table[i] - 1], w)) i = (i + 1) & (slots - 1);
    if (table[i] != 0) continue;  // the same elements, marked already
    table[i] = k + 1;
    markPattern(written, pairs + w.first, 0, w.count, w.offset, w.esize);
  }
  countUnwritten(written, s.bytes, bir::dtypeSize(s.dtype), u, nullptr);
  return u;
}
}  // namespace

const DecodedInst& SimResult::decoded(const Record& r) const {
  for (const auto& c : program->cores)
    if (c.core == r.core) return c.insts[r.inst];
  throw SimulationError("record of an unknown core " + std::to_string(r.core));
}

const DramTensor* SimResult::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t->name == name) return t.get();
  return nullptr;
}

Simulator::Simulator(const bir::Module& m, SimOptions opts) : opts_(std::move(opts)) {
  const auto t0 = std::chrono::steady_clock::now();
  hwm_ = bir::makeHwm(opts_.arch);
  program_ = std::make_shared<Program>(m, *hwm_, opts_.mode, opts_.neuron_core_id);
  bound_.assign(program_->tensors.size(), nullptr);
  prepare_seconds_ = secondsSince(t0);
}

Simulator::Simulator(const bir::Module& m, SimOptions opts, const PreparedProgram& prepared)
    : opts_(std::move(opts)) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto refuse = [](const std::string& why) {
    throw SimulationError("a prepared program (the scheduling pass's decoding) " + why);
  };
  if (!prepared.program || prepared.module != &m) refuse("is of another module");
  const Program& p = *prepared.program;
  if (opts_.mode != p.mode) refuse("is for timing mode only; full mode prepares the module itself");
  if (opts_.arch != prepared.arch) refuse("is for arch '" + prepared.arch + "', not '" + opts_.arch + "'");
  const size_t nf = m.functions().size();
  if (opts_.neuron_core_id && !(nf == 1 && *opts_.neuron_core_id == 0))
    refuse("runs every function of the module, not only neuron_core_id " + std::to_string(*opts_.neuron_core_id));
  // The instructions it decoded are the module's, in their order (a pointer each: a pass that
  // added, removed or moved one since is caught; one that edited an instruction in place is not,
  // which is why only the library's own paths make prepared programs).
  bool same = p.cores.size() == nf;
  for (size_t f = 0; same && f < nf; ++f) {
    const CoreProgram& cp = p.cores[f];
    const bir::Function& fn = *m.functions()[f];
    same = cp.fn == &fn && cp.insts.size() == fn.instructionCount();
    uint32_t i = 0;
    for (const auto& block : fn.blocks())
      for (const auto& inst : block->instructions()) {
        if (!same) break;
        same = cp.insts[i++].inst == inst.get();
      }
  }
  if (!same) refuse("no longer matches the module's instructions");
  hwm_ = bir::makeHwm(opts_.arch);
  program_ = prepared.program;
  bound_.assign(program_->tensors.size(), nullptr);
  prepare_seconds_ = secondsSince(t0);
}

Simulator::~Simulator() = default;

void Simulator::bind(const std::string& name, void* data, int64_t bytes) {
  const auto& ts = program_->tensors;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].name != name) continue;
    if (ts[i].type == bir::MemoryType::DRAM)
      throw SimulationError("tensor '" + name + "' is internal (DRAM); only Input and Output tensors bind");
    if (bytes != ts[i].bytes)
      throw SimulationError("tensor '" + name + "' holds " + std::to_string(ts[i].bytes) + " bytes; got " +
                            std::to_string(bytes));
    if (!data && bytes) throw SimulationError("tensor '" + name + "': null buffer");
    bound_[i] = data;
    return;
  }
  throw SimulationError("the module has no DRAM tensor named '" + name + "'");
}

SimResult Simulator::run() {
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = threadCpuSeconds();
  const Program& prog = *program_;
  const bir::MachineConfig& cfg = hwm_->config();
  const bool full = prog.mode == Mode::Full;

  SimResult res;
  res.arch = cfg.arch;
  res.mode = prog.mode;
  res.program = program_;
  res.instructions = prog.instructionCount();
  res.prepare_seconds = prepare_seconds_;

  // DRAM tensors: Inputs are the caller's bytes (copied when the module writes them), Outputs the
  // caller's buffer or our own, internal tensors our own; unwritten bytes are tracked.
  std::vector<DramTensor> dram(prog.tensors.size());
  if (full) {
    for (size_t i = 0; i < prog.tensors.size(); ++i) {
      const TensorSpec& s = prog.tensors[i];
      DramTensor& t = dram[i];
      t.name = s.name;
      t.type = s.type;
      t.dtype = s.dtype;
      t.shape = s.shape;
      t.bytes = s.bytes;
      t.mem.name = s.name;
      t.mem.space = Space::DRAM;
      t.mem.bytes = s.bytes;
      auto* user = static_cast<uint8_t*>(bound_[i]);
      if (s.type == bir::MemoryType::Input) {
        if (!user && s.bytes) throw SimulationError("input tensor '" + s.name + "' is not bound");
        if (s.written_by_module) {
          t.owned.reset(new uint8_t[static_cast<size_t>(s.bytes)]);
          if (s.bytes) std::memcpy(t.owned.get(), user, static_cast<size_t>(s.bytes));
          t.mem.data = t.owned.get();
        } else {
          t.mem.data = user;
        }
      } else {
        if (user) {
          t.mem.data = user;
        } else {
          t.owned.reset(new uint8_t[static_cast<size_t>(std::max<int64_t>(s.bytes, 1))]());
          t.mem.data = t.owned.get();
        }
        t.mem.tracked = true;
        t.mem.written = BitSet(s.bytes);
      }
    }
  }

  std::unique_ptr<CoreState> state;
  std::unique_ptr<GemmEngine> gemm;
  std::unique_ptr<Exec> exec;
  if (full) {
    state = takeState(cfg);
    gemm = takeGemm(opts_.threads);
    // Packed stationaries kept across instructions may take 1/32 of what the run holds: peak
    // memory must stay within 1.2x of it, and the initialisation bits already take 1/8 of SBUF,
    // PSUM and the tracked DRAM tensors. (The tiled GEMM's reuse set is 1/55 of what it holds.)
    int64_t held = cfg.num_partitions * (cfg.sbuf_bytes_per_partition + cfg.psum_bytes_per_partition);
    for (const auto& t : dram) held += t.bytes;
    gemm->panels().setBudget(held / 32);
    exec = std::make_unique<Exec>(*state, dram, cfg, *gemm, res.prints);
  }
  Scheduler sched(cfg, prog.tensors);
  if (opts_.records) res.records.reserve(res.instructions);

  // Multi-core: each kernel's launch time on the cores before: when its first instruction issued
  // (a DMA's trigger, the time `notBefore` bounds; its transfer starts a DMA latency later).
  const bool multiCore = prog.cores.size() > 1;
  std::unordered_map<std::string, double> launched;
  uint64_t doneBefore = 0;  // instructions of the cores run before this one
  done_.store(0, std::memory_order_relaxed);
  for (const CoreProgram& cp : prog.cores) {
    if (state) state->reset();
    if (gemm) gemm->panels().clear();  // its keys are addresses in the state just reset
    sched.reset(cp.accesses.size());
    std::unordered_map<std::string, double> launchedHere;
    const std::string* lastKernel = nullptr;
    double notBefore = 0;
    int64_t peFlops = 0;
    double peAdjustedFlops = 0;
    for (uint32_t i = 0; i < cp.insts.size(); ++i) {
      const DecodedInst& d = cp.insts[i];
      if (i % kProgressStride == 0) done_.store(doneBefore + i, std::memory_order_relaxed);
      if (full) exec->run(cp, d);
      const std::string* kernel = nullptr;  // read only for multi-core modules (a cache miss each)
      if (multiCore) {
        kernel = &d.inst->kernel;
        if (kernel->empty()) {
          notBefore = 0;
          lastKernel = nullptr;
        } else if (!lastKernel || *lastKernel != *kernel) {
          const auto it = launched.find(*kernel);
          notBefore = it == launched.end() ? 0 : it->second;
          lastKernel = kernel;
        }
      }
      Record r = sched.schedule(cp, d, notBefore);
      if (kernel && !kernel->empty()) launchedHere.try_emplace(*kernel, r.issue_ns);
      if (d.track == kTrackPE || d.wholeCore) {  // a kernel node: its matmuls
        peFlops += d.flops;
        peAdjustedFlops += d.adjusted_flops;
      }
      if (opts_.records) {
        if (sched.poolDescriptorsStart_ns >= 0)
          res.pool_descriptors.emplace_back(static_cast<uint32_t>(res.records.size()), sched.poolDescriptorsStart_ns);
        r.inst = i;
        r.core = static_cast<uint16_t>(cp.core);
        res.records.push_back(r);
      }
    }
    if (gemm) gemm->drain();  // the last matmuls' parts in progress
    doneBefore += cp.insts.size();
    done_.store(doneBefore, std::memory_order_relaxed);
    for (const auto& [kernel, t] : launchedHere) {
      const auto [it, fresh] = launched.try_emplace(kernel, t);
      if (!fresh) it->second = std::min(it->second, t);
    }
    CoreResult cr;
    cr.core = cp.core;
    cr.end_ns = sched.end_ns;
    cr.pe_flops = peFlops;
    cr.pe_adjusted_flops = peAdjustedFlops;
    res.pe_flops += peFlops;
    res.pe_adjusted_flops += peAdjustedFlops;
    for (int t = 0; t < kMaxTracks; ++t) cr.tracks[t] = {sched.busy_ns[t], sched.count[t]};
    res.cores.push_back(cr);
    res.total_ns = std::max(res.total_ns, sched.end_ns);
  }
  if (res.total_ns > 0)
    res.pe_mfu = res.pe_adjusted_flops /
                 (cfg.peBf16PeakFlopsPerNs() * res.total_ns * static_cast<double>(prog.cores.size()));

  if (full) {
    for (auto& t : dram)
      if (t.type == bir::MemoryType::Output)
        if (UnwrittenOutput u = fillUnwritten(t); u.elements > 0) res.unwritten_outputs.push_back(std::move(u));
  } else {
    for (const TensorSpec& s : prog.tensors)
      if (s.type == bir::MemoryType::Output)
        if (UnwrittenOutput u = neverWritten(s); u.elements > 0) res.unwritten_outputs.push_back(std::move(u));
  }
  if (state) returnState(std::move(state));
  if (gemm) returnGemm(std::move(gemm));
  // Keep the DRAM tensors we own (outputs the caller did not bind, internal tensors).
  for (auto& t : dram)
    if (t.owned) res.tensors.push_back(std::make_unique<DramTensor>(std::move(t)));
  res.run_seconds = secondsSince(t0);
  res.run_cpu_seconds = threadCpuSeconds() - cpu0;
  return res;
}

}  // namespace sim
