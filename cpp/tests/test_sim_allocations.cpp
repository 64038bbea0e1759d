// "No heap allocation per instruction in the hot loop": Simulator::run's allocations must not grow
// with the number of instructions it runs. Every operator new of this test binary is counted (the
// replacement below forwards to malloc), and a stream of 8 tiles is compared with one of 64.

#include <atomic>
#include <cstdlib>
#include <new>

#include "test_sim_kit.h"

// ThreadSanitizer's runtime defines the allocation functions itself (a static archive, so a second
// definition does not link); under it the count is not taken and the test skips.
#if defined(__SANITIZE_THREAD__)
#define NXS_COUNT_NEWS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NXS_COUNT_NEWS 0
#endif
#endif
#ifndef NXS_COUNT_NEWS
#define NXS_COUNT_NEWS 1
#endif

namespace {
std::atomic<int64_t> gNews{0};
}  // namespace

#if NXS_COUNT_NEWS
// Replaceable global allocation functions ([new.delete.single], [new.delete.array]), every
// unaligned form: the standard library's own nothrow and array forms forward to these, but a
// sanitizer runtime's do not (they allocate from its own heap), so a form left out would pair a
// sanitizer allocation with free() below (ASan: alloc-dealloc-mismatch, e.g. std::stable_sort's
// nothrow temporary buffer). The aligned forms keep their library versions, which pair with their
// own deletes. Not inlined: GCC would then see free() meet operator new at the call site and warn
// (-Wmismatched-new-delete).
namespace {
void* countedAlloc(std::size_t n) noexcept {
  gNews.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
}  // namespace
__attribute__((noinline)) void* operator new(std::size_t n) {
  if (void* p = countedAlloc(n)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void* operator new[](std::size_t n) {
  if (void* p = countedAlloc(n)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return countedAlloc(n); }
__attribute__((noinline)) void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return countedAlloc(n); }
__attribute__((noinline)) void operator delete(void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete[](void* p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif

namespace {
using namespace sim_test;

// Softmax-like tiles with a matmul and its evacuation: per tile a DMA in, Exp with its row sum on
// ACT, a reciprocal, a per-partition scale, a tensor-tensor add, a matmul into PSUM, its copy out
// of PSUM and a DMA out. Two buffers of each, so consecutive tiles overlap in time.
std::unique_ptr<Kit> tileStream(int tiles) {
  auto k = std::make_unique<Kit>();
  const int P = 128, F = 64;
  auto* x = k->dram("x", MemoryType::Input, {tiles * P, F}, DType::float32);
  auto* y = k->dram("y", MemoryType::Output, {tiles * P, F}, DType::float32);
  MemoryLocation *xs[2], *es[2], *sums[2], *ys[2], *acc[2];
  for (int i = 0; i < 2; ++i) {
    const std::string s = std::to_string(i);
    xs[i] = k->sbuf("x" + s, P, F);
    es[i] = k->sbuf("e" + s, P, F, DType::bfloat16);
    sums[i] = k->sbuf("sum" + s, P, 1);
    ys[i] = k->sbuf("y" + s, P, F);
    acc[i] = k->psum("acc" + s, P, F);
  }
  auto* w = k->sbuf("w", P, P, DType::bfloat16);
  auto* fill = k->add<InstMemset>(InstructionType::Memset, {}, {Kit::tile(w)});
  fill->constant = 0.125;
  for (int t = 0; t < tiles; ++t) {
    const int b = t % 2;
    const AccessPattern rows = Instruction::createAP(x, int64_t{t} * P * F, {{F, P}, {1, F}}, {}, -1);
    k->dma(Kit::tile(xs[b]), rows, t % 16);
    auto* e = k->add<InstActivation>(InstructionType::Activation, {Kit::tile(xs[b])}, {Kit::tile(es[b])});
    e->func = ActivationFunc::Exp;
    auto* sum = k->add<InstTensorReduce>(InstructionType::TensorReduce, {Kit::tile(es[b])}, {Kit::tile(sums[b])});
    sum->op = AluOp::add;
    k->add(InstructionType::Reciprocal, {Kit::tile(sums[b])}, {Kit::tile(sums[b])});
    auto* scale = k->add<InstTensorScalarPtr>(InstructionType::TensorScalarPtr,
                                              {Kit::tile(xs[b]), Kit::tile(sums[b])}, {Kit::tile(ys[b])});
    scale->op0 = AluOp::mult;
    auto* add = k->add<InstTensorTensor>(InstructionType::TensorTensor, {Kit::tile(ys[b]), Kit::tile(xs[b])},
                                         {Kit::tile(ys[b])});
    add->op = AluOp::add;
    k->add<InstMatmult>(InstructionType::Matmult, {Kit::tile(w), Kit::tile(es[b])}, {Kit::tile(acc[b])});
    k->add(InstructionType::TensorCopy, {Kit::tile(acc[b])}, {Kit::tile(xs[b])});
    const AccessPattern out = Instruction::createAP(y, int64_t{t} * P * F, {{F, P}, {1, F}}, {}, -1);
    k->dma(out, Kit::tile(xs[b]), 16 - 1 - t % 16);
  }
  std::vector<float> xv(static_cast<size_t>(tiles) * P * F);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 97) / 97.0f;
  k->fill("x", xv);
  return k;
}

// Allocations of run() alone (the Simulator's construction decodes the program, once).
int64_t runAllocations(Kit& k, sim::Mode mode, bool records) {
  sim::SimOptions o;
  o.mode = mode;
  o.records = records;
  sim::Simulator s(*k.m, o);
  if (mode == sim::Mode::Full)
    for (auto& [n, b] : k.buffers) s.bind(n, b.data(), static_cast<int64_t>(b.size()));
  s.run();  // warm: first-use scratch, the matmul helper thread, the kept CoreState
  const int64_t before = gNews.load();
  const sim::SimResult r = s.run();
  const int64_t made = gNews.load() - before;
  EXPECT_EQ(r.instructions, k.m->functions()[0]->blocks()[0]->instructions().size());
  return made;
}
}  // namespace

TEST(SimAllocations, RunDoesNotAllocatePerInstruction) {
  if (!NXS_COUNT_NEWS) GTEST_SKIP() << "allocations are not counted under ThreadSanitizer";
  auto small = tileStream(8), large = tileStream(64);
  for (sim::Mode mode : {sim::Mode::Full, sim::Mode::Timing})
    for (bool records : {true, false}) {
      // Not exactly equal: a helper thread's scratch grows the first time it claims a share of
      // some kind of work, which the scheduling decides. Anything per instruction, or per tile,
      // would add hundreds (56 more tiles, 504 more instructions).
      const int64_t a = runAllocations(*small, mode, records), b = runAllocations(*large, mode, records);
      EXPECT_LT(std::abs(b - a), 16) << "run() allocated " << a << " times for 8 tiles (73 instructions) and " << b
                      << " times for 64 tiles (577); mode " << (mode == sim::Mode::Full ? "full" : "timing")
                      << ", records " << records;
    }
}
