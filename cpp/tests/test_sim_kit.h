// Helpers of the simulator's C++ tests: a module under construction with a bump allocator for
// SBUF/PSUM, tile and whole-tensor access patterns, and runs that bind host vectors.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bir/Error.h"
#include "bir/Module.h"
#include "sim/Numerics.h"
#include "sim/Simulator.h"

namespace sim_test {

using namespace bir;

struct Kit {
  std::unique_ptr<Module> m = std::make_unique<Module>();
  Function* f = m->addFunction();
  BasicBlock* bb = f->addBlock();
  int64_t sbTop = 0, psTop = 0;
  std::map<std::string, std::vector<uint8_t>> buffers;  // bound DRAM tensors

  MemoryLocation* sbuf(const std::string& n, int64_t p, int64_t elems, DType t = DType::float32) {
    const int64_t bytes = elems * dtypeSize(t);
    auto* l = f->createOnChipTensor(n, MemoryType::SB, t, p, bytes, 0, sbTop);
    sbTop += (bytes + 63) / 64 * 64;
    return l;
  }
  MemoryLocation* psum(const std::string& n, int64_t p, int64_t elems, DType t = DType::float32) {
    const int64_t bytes = elems * dtypeSize(t);
    auto* l = f->createOnChipTensor(n, MemoryType::PSUM, t, p, bytes, 0, psTop);
    psTop += (bytes + 2047) / 2048 * 2048;
    return l;
  }
  MemoryLocation* dram(const std::string& n, MemoryType type, std::vector<int64_t> shape, DType t) {
    auto* l = f->createDramTensor(n, type, t, shape);
    if (type != MemoryType::DRAM) buffers[n].assign(static_cast<size_t>(l->sizeBytes()), 0);
    return l;
  }
  static AccessPattern tile(MemoryLocation* l, int64_t p = -1, int64_t elems = -1, int64_t p0 = 0, int64_t col = 0) {
    const int64_t row = l->bytes_per_partition / dtypeSize(l->set->dtype);
    if (p < 0) p = l->partitions - p0;
    if (elems < 0) elems = row - col;
    return Instruction::createAP(l, p0 * row + col, {{row, p}, {1, elems}}, {}, -1);
  }
  static AccessPattern full(MemoryLocation* l) { return sequentialPattern(l); }
  template <class T = Instruction>
  T* add(Opcode op, std::vector<AccessPattern> ins, std::vector<AccessPattern> outs, const std::string& name = {}) {
    Instruction* I = bb->addInstruction(op, name);
    I->ins = std::move(ins);
    I->outs = std::move(outs);
    return static_cast<T*>(I);
  }
  InstDMA* dma(AccessPattern dst, AccessPattern src, int64_t queue = 0, const std::string& name = {}) {
    auto* d = add<InstDMA>(InstructionType::DMA, {std::move(src)}, {std::move(dst)}, name);
    d->queue = queue;
    return d;
  }
  template <class T>
  void fill(const std::string& n, const std::vector<T>& v) {
    auto& b = buffers.at(n);
    ASSERT_EQ(b.size(), v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
  }
  template <class T>
  std::vector<T> read(const std::string& n) const {
    const auto& b = buffers.at(n);
    std::vector<T> v(b.size() / sizeof(T));
    std::memcpy(v.data(), b.data(), b.size());
    return v;
  }
  sim::SimResult run(sim::Mode mode = sim::Mode::Full, const std::string& arch = "trn1", int threads = 0) {
    sim::SimOptions o;
    o.arch = arch;
    o.mode = mode;
    o.threads = threads;
    sim::Simulator s(*m, o);
    if (mode == sim::Mode::Full)
      for (auto& [n, b] : buffers) s.bind(n, b.data(), static_cast<int64_t>(b.size()));
    return s.run();
  }
  const sim::Record& record(const sim::SimResult& r, const std::string& name) const {
    for (const auto& rec : r.records)
      if (r.instruction(rec).name == name) return rec;
    throw std::runtime_error("no record " + name);
  }
};

// Runs `k` and expects a SimulationError whose message contains `needle`.
inline void expectRefused(Kit& k, const std::string& needle, sim::Mode mode = sim::Mode::Timing,
                          const std::string& arch = "trn1") {
  try {
    k.run(mode, arch);
    ADD_FAILURE() << "not refused; expected: " << needle;
  } catch (const sim::SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

inline std::vector<uint16_t> toBf16(const std::vector<float>& v) {
  std::vector<uint16_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = sim::floatToBf16(v[i]);
  return r;
}

}  // namespace sim_test
