#include "walrus/KernelNodeLatency.h"

#include <filesystem>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "bir/Error.h"
#include "bir/Json.h"
#include "sim/Program.h"
#include "sim/Timing.h"
#include "walrus/BIRKernelWrapper.h"
#include "walrus/Clone.h"
#include "walrus/CompiledNkiKernels.h"
#include "walrus/FileReference.h"
#include "walrus/ResolveNKIKernel.h"
#include "walrus/SpliceKernelNode.h"
#include "walrus/TranslateNKIASTToBIR.h"

namespace walrus {

namespace {

using bir::Instruction;
using bir::Module;

// Kernels inside kernels are priced recursively; no real kernel nests this deep.
constexpr int kMaxNesting = 8;
// Initial-exec: in each thread's static TLS block, allocated with the thread. The default model
// would allocate it on first use, where glibc aborts the process when memory is exhausted.
__attribute__((tls_model("initial-exec"))) thread_local int gNesting = 0;

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::string, bir::Latency> latencies;
  KernelNodeLatencyStats stats;
};
Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: no order-of-destruction issue at exit
  return *c;
}

struct Host {
  const Module* module = nullptr;
  int64_t core = 0;  // the index of the node's function: its NeuronCoreId
};

Host hostOf(const Instruction& node) {
  Host h;
  const bir::BasicBlock* bb = node.parent();
  const bir::Function* f = bb ? bb->parent() : nullptr;
  h.module = f ? f->parent() : nullptr;
  if (h.module)
    for (size_t i = 0; i < h.module->functions().size(); ++i)
      if (h.module->functions()[i].get() == f) h.core = static_cast<int64_t>(i);
  return h;
}

// The node alone in function `core` of a new module, its operands over DRAM tensors t0, t1, ...
// of the host tensors' shapes and dtypes (same offsets and patterns).
std::unique_ptr<Module> scratchModule(const Instruction& node, const Host& host, const bir::MachineConfig& cfg) {
  auto m = std::make_unique<Module>();
  m->arch = host.module ? host.module->arch : cfg.bir_arch;
  m->files_dir = host.module ? host.module->files_dir : std::string();
  for (int64_t i = 0; i < host.core; ++i) m->addFunction();
  bir::Function* f = m->addFunction("scratch");
  std::unique_ptr<Instruction> copy = cloneInstruction(node);
  copy->name = "k";
  std::unordered_map<const bir::MemoryLocation*, bir::MemoryLocation*> tensors;
  for (auto* list : {&copy->ins, &copy->outs})
    for (bir::AccessPattern& ap : *list) {
      if (ap.isImmediate()) continue;
      const bir::MemoryLocation& loc = *ap.loc;
      if (!loc.isDram() || !loc.set)
        throw KernelError(describeNode(node) + ": operand tensor '" + loc.name + "' is not a DRAM tensor");
      auto [it, fresh] = tensors.try_emplace(&loc, nullptr);
      if (fresh)
        it->second = f->createDramTensor("t" + std::to_string(tensors.size() - 1), loc.type, loc.set->dtype,
                                         loc.set->tensor_shape, loc.set->kind);
      ap.loc = it->second;
    }
  f->addBlock()->append(std::move(copy));
  return m;
}

// What else decides the expansion besides the scratch module: the carried kernel's content when it
// lives in a file (handles of kernels compiled in this process name their content), and the model.
std::string fileStamp(const std::string& folder, const std::string& reference) {
  std::error_code ec;
  const auto path = resolveFileReference(FileScope{folder, {}}, reference, "file");
  const auto size = std::filesystem::file_size(path, ec);
  const auto time = std::filesystem::last_write_time(path, ec);
  return path + ":" + std::to_string(size) + ":" + std::to_string(time.time_since_epoch().count());
}

std::string cacheKey(const Module& scratch, const Instruction& node, const bir::MachineConfig& cfg) {
  std::ostringstream key;
  key << bir::moduleToJson(scratch, -1) << '\n';
  if (auto* it55 = bir::dyn_cast<bir::InstNKIKernel>(&node); it55 && !findCompiledNkiKernel(it55->func))
    key << fileStamp(scratch.files_dir, it55->func) << '\n';
  if (auto* it56 = bir::dyn_cast<bir::InstNKIKLIRKernel>(&node)) {
    const size_t first = it56->klir_binary.find_first_not_of(" \t\r\n");
    const bool embedded = it56->kernel_format == "bir" && first != std::string::npos && it56->klir_binary[first] == '{';
    if (!embedded) key << fileStamp(scratch.files_dir, it56->klir_binary) << '\n';
  }
  cfg.fields([&](const char* name, const auto& value) { key << name << '=' << value << ';'; });
  return key.str();
}

// Expands the scratch module's one node in place, with the builder the resolve passes use.
void expand(Module& scratch, int64_t core) {
  bir::BasicBlock& bb = *scratch.function(core)->blocks()[0];
  Instruction* node = bb.at(0);
  if (auto* it54 = bir::dyn_cast<bir::InstBIRKernel>(node)) {
    Logger quiet;
    BIRKernelWrapper::createInstance(quiet, it54, &bb, /*verify=*/true)->inlineInPlace();
  } else if (auto* it55 = bir::dyn_cast<bir::InstNKIKernel>(node)) {
    resolveNKIKernel(*it55, FileScope{scratch.files_dir, {}});
  } else if (auto* it56 = bir::dyn_cast<bir::InstNKIKLIRKernel>(node)) {
    TranslateNKIASTToBIR(FileScope{scratch.files_dir, {}}).lowerKernelInst(*it56);
  } else {
    throw KernelError(describeNode(*node) + ": not a kernel node");
  }
}

bir::Latency schedule(const Module& expanded, int64_t core, const bir::Hwm& hwm) {
  const sim::Program program(expanded, hwm, sim::Mode::Timing, core);
  const sim::CoreProgram& cp = program.cores.at(0);
  sim::Scheduler scheduler(hwm.config(), program.tensors);
  scheduler.reset(cp.accesses.size());
  bir::Latency l;
  l.engine = bir::Engine::PE;
  l.whole_core = true;
  for (const sim::DecodedInst& d : cp.insts) {
    scheduler.schedule(cp, d);
    if (d.track == sim::kTrackPE) {
      l.flops += d.flops;
      l.adjusted_flops += d.adjusted_flops;
    }
    if (d.cls == bir::NodeClass::DMA || d.wholeCore) l.bytes += d.bytes;
  }
  l.busy_ns = scheduler.end_ns;
  l.cycles = l.busy_ns * hwm.config().pe_clock_ghz;
  return l;
}

}  // namespace

bir::Latency kernelNodeLatency(const bir::Hwm& hwm, const Instruction& node) {
  const Host host = hostOf(node);
  auto scratch = scratchModule(node, host, hwm.config());
  const std::string key = cacheKey(*scratch, node, hwm.config());
  {
    std::lock_guard<std::mutex> lock(cache().mutex);
    if (auto it = cache().latencies.find(key); it != cache().latencies.end()) {
      ++cache().stats.cached;
      return it->second;
    }
  }
  if (gNesting >= kMaxNesting)
    throw KernelError(describeNode(node) + ": kernel nodes nested more than " + std::to_string(kMaxNesting) + " deep");
  struct Nested {
    Nested() { ++gNesting; }
    ~Nested() { --gNesting; }
  } nested;
  // Errors keep their kind and name the node first (the scratch copy of it is called 'k').
  const std::string where = describeNode(node) + ": pricing it by its expansion: ";
  bir::Latency l;
  try {
    expand(*scratch, host.core);
    l = schedule(*scratch, host.core, hwm);
  } catch (const KernelError& e) {
    throw KernelError(where + e.what());
  } catch (const sim::SimulationError& e) {
    throw sim::SimulationError(where + e.what());
  } catch (const bir::BIRError& e) {
    throw bir::BIRError(where + e.what());
  } catch (const klr::KLRError& e) {
    throw klr::KLRError(where + e.what());
  }
  std::lock_guard<std::mutex> lock(cache().mutex);
  ++cache().stats.computed;
  cache().latencies.emplace(key, l);
  return l;
}

KernelNodeLatencyStats kernelNodeLatencyStats() {
  std::lock_guard<std::mutex> lock(cache().mutex);
  return cache().stats;
}

}  // namespace walrus
