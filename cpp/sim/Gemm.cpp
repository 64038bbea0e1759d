#include "Gemm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <utility>

#include "Numerics.h"
#include "Simd.h"
#include "bir/Error.h"

namespace sim {

// ---- Workers ----

namespace {
// About 50 us of polling before a helper sleeps (a pause is some tens of cycles).
constexpr int kSpinIterations = 4000;
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Waits for done(): polls for a while (the other thread is usually microseconds away), then
// yields the core.
template <class Done>
void waitUntil(Done done) {
  for (int i = 0; !done() && i < kSpinIterations; ++i) cpuRelax();
  while (!done()) std::this_thread::yield();
}
}  // namespace

Workers::Workers(int threads) {
  for (int t = 1; t < threads; ++t) threads_.emplace_back([this, t] { loop(t); });
}

Workers::~Workers() {
  if (!threads_.empty()) drainPosted();
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& th : threads_) th.join();
}

void Workers::drain(uint32_t generation, int t) {
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    const int next = static_cast<int>(c & 0x7fff), end = static_cast<int>(c >> 16 & 0x7fff);
    if (static_cast<uint32_t>(c >> 32) != generation || next >= end) return;
    const bool fromBack = t != 0 && (c >> 31 & 1);
    if (!claim_.compare_exchange_weak(c, fromBack ? c - (uint64_t{1} << 16) : c + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue;
    fn_(ctx_, fromBack ? end - 1 : next, t);
    done_.fetch_add(1, std::memory_order_release);
    c = claim_.load(std::memory_order_acquire);
  }
}

void Workers::runPosted() {
  uint64_t f = finished_.load(std::memory_order_relaxed);
  while (f < posted_.load(std::memory_order_acquire)) {
    const Task task = tasks_[f % kPostedSlots];
    task.fn(task.ctx);
    finished_.store(++f, std::memory_order_release);
  }
}

void Workers::loop(int t) {
  uint32_t seen = 0;
  // Helper 1 also runs the posted tasks; post() bumps the generation to wake it.
  auto idle = [&](uint32_t g) {
    return g == seen && (t != 1 || finished_.load(std::memory_order_relaxed) == posted_.load(std::memory_order_acquire));
  };
  for (;;) {
    uint32_t g = generation_.load(std::memory_order_acquire);
    for (int i = 0; idle(g) && i < kSpinIterations; ++i) {
      cpuRelax();
      g = generation_.load(std::memory_order_acquire);
    }
    while (idle(g)) {
      generation_.wait(seen, std::memory_order_acquire);
      g = generation_.load(std::memory_order_acquire);
    }
    if (t == 1) runPosted();
    if (g == seen) continue;
    seen = g;
    if (stop_.load(std::memory_order_relaxed)) return;
    // The job's fields are read only after a chunk of this generation is claimed, and the caller
    // cannot finish (and overwrite them) before that chunk is done.
    drain(g, t);
  }
}

uint64_t Workers::post(void (*fn)(void*), void* ctx) {
  const uint64_t n = posted_.load(std::memory_order_relaxed);
  if (n >= kPostedSlots) waitPosted(n + 1 - kPostedSlots);  // the slot's last task has finished
  tasks_[n % kPostedSlots] = {fn, ctx};
  posted_.store(n + 1, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  return n;
}

void Workers::waitPosted(uint64_t count) {
  waitUntil([&] { return finished_.load(std::memory_order_acquire) >= count; });
}

void Workers::run(int chunks, void (*fn)(void*, int, int), void* ctx, bool twoEnded) {
  if (!threads_.empty()) drainPosted();
  if (threads_.empty() || chunks <= 1 || chunks > kMaxChunks) {
    for (int c = 0; c < chunks; ++c) fn(ctx, c, 0);
    return;
  }
  const uint32_t g = generation_.load(std::memory_order_relaxed) + 1;
  fn_ = fn;
  ctx_ = ctx;
  done_.store(0, std::memory_order_relaxed);
  claim_.store(static_cast<uint64_t>(g) << 32 | uint64_t{twoEnded} << 31 | static_cast<uint64_t>(chunks) << 16,
               std::memory_order_release);
  generation_.store(g, std::memory_order_release);
  generation_.notify_all();
  drain(g, 0);
  // Only chunks a helper claimed remain, and that helper is running them.
  waitUntil([&] { return done_.load(std::memory_order_acquire) == chunks; });
}

// ---- micro-kernels ----

namespace {

constexpr int kMR = GemmEngine::kMR, kNR = GemmEngine::kNR;

// Stores (or adds) a rows x 16 block held in `acc` (row-major, 16 floats per row) into C, only
// its first `cols` columns.
inline void storeBlock(const float* acc, int rows, int cols, float* c, int64_t ldc, bool accumulate) {
  for (int r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    if (accumulate)
      for (int j = 0; j < cols; ++j) row[j] += acc[r * kNR + j];
    else
      std::memcpy(row, acc + r * kNR, static_cast<size_t>(cols) * sizeof(float));
  }
}

#if NXS_X86_SIMD
// C[0..MR, 0..cols) (+)= sum_k ap[k][0..MR] * bp[k][0..16): panels are k-major, kMR / kNR wide.
// Every loop over r is unrolled so that the 2 * MR accumulators live in registers.
template <int MR>
__attribute__((target("avx2,fma"))) void microKernelAvx2(int K, const float* ap, const float* bp,
                                                          float* c, int64_t ldc, int cols,
                                                          bool accumulate) {
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
  for (int k = 0; k < K; ++k) {
    const __m256 b0 = _mm256_loadu_ps(bp + k * kNR);
    const __m256 b1 = _mm256_loadu_ps(bp + k * kNR + 8);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 a = _mm256_broadcast_ss(ap + k * kMR + r);
      acc0[r] = _mm256_fmadd_ps(a, b0, acc0[r]);
      acc1[r] = _mm256_fmadd_ps(a, b1, acc1[r]);
    }
  }
  if (cols == kNR) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      float* row = c + r * ldc;
      if (accumulate) {
        _mm256_storeu_ps(row, _mm256_add_ps(_mm256_loadu_ps(row), acc0[r]));
        _mm256_storeu_ps(row + 8, _mm256_add_ps(_mm256_loadu_ps(row + 8), acc1[r]));
      } else {
        _mm256_storeu_ps(row, acc0[r]);
        _mm256_storeu_ps(row + 8, acc1[r]);
      }
    }
    return;
  }
  alignas(32) float tmp[MR * kNR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    _mm256_store_ps(tmp + r * kNR, acc0[r]);
    _mm256_store_ps(tmp + r * kNR + 8, acc1[r]);
  }
  storeBlock(tmp, MR, cols, c, ldc, accumulate);
}

// Two adjacent B panels at once (32 columns, all of them in C): the AVX2 kernel with zmm registers.
// Each C element still gets the same FMAs in the same k order from zero and one add into C, so
// the bits are those of two calls of the 16-column kernel.
template <int MR>
__attribute__((target("avx512f"))) void microKernelAvx512Pair(int K, const float* ap, const float* bp0,
                                                               const float* bp1, float* c, int64_t ldc,
                                                               bool accumulate) {
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
  for (int k = 0; k < K; ++k) {
    const __m512 b0 = _mm512_loadu_ps(bp0 + k * kNR);
    const __m512 b1 = _mm512_loadu_ps(bp1 + k * kNR);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(ap[k * kMR + r]);
      acc0[r] = _mm512_fmadd_ps(a, b0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(a, b1, acc1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    float* row = c + r * ldc;
    if (accumulate) {
      _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), acc0[r]));
      _mm512_storeu_ps(row + kNR, _mm512_add_ps(_mm512_loadu_ps(row + kNR), acc1[r]));
    } else {
      _mm512_storeu_ps(row, acc0[r]);
      _mm512_storeu_ps(row + kNR, acc1[r]);
    }
  }
}

// Runs f.operator()<MR>() with MR = rows (1..kMR): a kernel's row count is a template argument, so
// that its accumulators are registers.
template <class F>
void withRows(int rows, F&& f) {
  switch (rows) {
    case 6: return f.template operator()<6>();
    case 5: return f.template operator()<5>();
    case 4: return f.template operator()<4>();
    case 3: return f.template operator()<3>();
    case 2: return f.template operator()<2>();
    default: return f.template operator()<1>();
  }
}

#endif  // NXS_X86_SIMD

// The portable kernel: the same blocking and the same operations as the SIMD kernels, one fused
// multiply-add per k from zero in ascending k, then one add into C, so it gives their bits.
void microKernelPortable(int rows, int K, const float* ap, const float* bp, float* c, int64_t ldc,
                         int cols, bool accumulate) {
  float acc[kMR * kNR] = {};
  for (int k = 0; k < K; ++k)
    for (int r = 0; r < rows; ++r) {
      const float a = ap[k * kMR + r];
      for (int j = 0; j < kNR; ++j) acc[r * kNR + j] = std::fma(a, bp[k * kNR + j], acc[r * kNR + j]);
    }
  storeBlock(acc, rows, cols, c, ldc, accumulate);
}

// Two adjacent full panels (32 columns): the AVX-512 kernel when GemmEngine chose the wide form.
void microKernelPair(int rows, int K, const float* ap, const float* bp0, const float* bp1, float* c, int64_t ldc,
                     bool accumulate) {
#if NXS_X86_SIMD
  withRows(rows, [&]<int MR>() { microKernelAvx512Pair<MR>(K, ap, bp0, bp1, c, ldc, accumulate); });
#else
  microKernelPortable(rows, K, ap, bp0, c, ldc, kNR, accumulate);
  microKernelPortable(rows, K, ap, bp1, c + kNR, ldc, kNR, accumulate);
#endif
}

void microKernel(int rows, int K, const float* ap, const float* bp, float* c, int64_t ldc, int cols,
                 bool accumulate) {
#if NXS_X86_SIMD
  if (cpuHasAvx2Fma())
    return withRows(rows, [&]<int MR>() { microKernelAvx2<MR>(K, ap, bp, c, ldc, cols, accumulate); });
#endif
  microKernelPortable(rows, K, ap, bp, c, ldc, cols, accumulate);
}

// ---- packing: one row segment of B into 16-wide panels (panel p holds columns 16p..16p+15) ----

#if NXS_X86_SIMD
__attribute__((target("avx2,fma"))) void packBf16Avx2(const uint8_t* src, int cols, float* dst, int64_t panelStride) {
  int j = 0;
  for (; j + kNR <= cols; j += kNR, dst += panelStride) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * j));
    const __m256i lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(h));
    const __m256i hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(h, 1));
    _mm256_storeu_ps(dst, _mm256_castsi256_ps(_mm256_slli_epi32(lo, 16)));
    _mm256_storeu_ps(dst + 8, _mm256_castsi256_ps(_mm256_slli_epi32(hi, 16)));
  }
  if (j < cols) {
    loadRun(bir::DType::bfloat16, src + 2 * j, 2, cols - j, dst);
    std::fill(dst + (cols - j), dst + kNR, 0.0f);
  }
}

// One bf16 row of A (M elements) into its slot of every row panel (panel i, rows
// [panelStart[i], panelStart[i + 1]), starts `panelStride` floats after panel i - 1), converting
// eight elements at a time where eight are there to read.
__attribute__((target("avx2"))) void packBf16IntoRowPanels(const uint8_t* src, int M, const std::vector<int>& panelStart,
                                                          float* dst, int64_t panelStride) {
  for (size_t i = 0; i + 1 < panelStart.size(); ++i, dst += panelStride) {
    const int m0 = panelStart[i], w = panelStart[i + 1] - m0;
    if (m0 + 8 <= M && (w == kMR || w == 4)) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * m0));
      const __m256 v = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
      _mm_storeu_ps(dst, _mm256_castps256_ps128(v));
      if (w == kMR) _mm_storel_pi(reinterpret_cast<__m64*>(dst + 4), _mm256_extractf128_ps(v, 1));
    } else {
      loadRun(bir::DType::bfloat16, src + 2 * m0, 2, w, dst);
    }
  }
}
#endif  // NXS_X86_SIMD

// Converts `cols` elements of one row, from column col0, into panels; the last panel's tail is zero.
void packRow(const MatrixRows& m, int64_t row, int col0, int cols, float* dst, int64_t panelStride, float* temp) {
  const int esize = bir::dtypeSize(m.dtype);
  const uint8_t* src = m.base + row * m.pitch + int64_t{col0} * esize;
#if NXS_X86_SIMD
  if (m.dtype == bir::DType::bfloat16 && cpuHasAvx2Fma()) return packBf16Avx2(src, cols, dst, panelStride);
#endif
  // fp32 rows are copied as bytes (they need not be 4-aligned); other dtypes convert first.
  const uint8_t* f = src;
  if (m.dtype != bir::DType::float32 && m.dtype != bir::DType::float32r) {
    loadRun(m.dtype, src, esize, cols, temp);
    f = reinterpret_cast<const uint8_t*>(temp);
  }
  int j = 0;
  for (; j + kNR <= cols; j += kNR, dst += panelStride) std::memcpy(dst, f + 4 * j, kNR * sizeof(float));
  if (j < cols) {
    std::memcpy(dst, f + 4 * j, static_cast<size_t>(cols - j) * sizeof(float));
    std::fill(dst + (cols - j), dst + kNR, 0.0f);
  }
}

// SBUF rows are a partition (192 KiB) apart, so every row of an operand is a cold, separate
// region: prefetch `ahead` rows early to overlap the misses.
constexpr int kPrefetchRows = 6;
inline void prefetchRow(const MatrixRows& m, int64_t row, int64_t col0, int64_t cols) {
  const int esize = bir::dtypeSize(m.dtype);
  const char* p = reinterpret_cast<const char*>(m.base + row * m.pitch + col0 * esize);
  for (int64_t b = 0; b < cols * esize; b += 64) __builtin_prefetch(p + b);
}

// Rows [k0, k1) of A (K x M) into its row panels (panel i: rows [panelStart[i], panelStart[i + 1]),
// kMR floats per k, K * kMR floats after panel i - 1). `row`: M floats of scratch.
void packARows(const MatrixRows& a, int k0, int k1, int K, int M, const std::vector<int>& panelStart, float* aPack,
               float* row) {
  const int esize = bir::dtypeSize(a.dtype);
  const int aPanels = static_cast<int>(panelStart.size()) - 1;
#if NXS_X86_SIMD
  const bool bf16A = a.dtype == bir::DType::bfloat16 && cpuHasAvx2Fma();
#endif
  for (int k = k0; k < k1; ++k) {
    if (k + kPrefetchRows < k1) prefetchRow(a, k + kPrefetchRows, 0, M);
    float* dst = aPack + static_cast<size_t>(k) * kMR;
#if NXS_X86_SIMD
    if (bf16A) {
      packBf16IntoRowPanels(a.base + k * a.pitch, M, panelStart, dst, int64_t{K} * kMR);
      continue;
    }
#endif
    loadRun(a.dtype, a.base + k * a.pitch, esize, M, row);
    for (int i = 0; i < aPanels; ++i) {
      const int m0 = panelStart[static_cast<size_t>(i)], m1 = panelStart[static_cast<size_t>(i) + 1];
      float* to = dst + static_cast<size_t>(i) * K * kMR;
      if (m1 - m0 == kMR)  // a constant size: a few moves, not a call per panel and row
        std::memcpy(to, row + m0, kMR * sizeof(float));
      else
        std::memcpy(to, row + m0, static_cast<size_t>(m1 - m0) * sizeof(float));
    }
  }
}

// One cache line between B panels: a panel is K * 64 bytes, a multiple of 4 KiB for K = 64 or
// 128, and packing writes row k of every panel in turn; unpadded, all of those land in one L1
// set and evict each other.
int64_t bPanelStride(int K) { return int64_t{K} * GemmEngine::kNR + GemmEngine::kNR; }

// Rows [k0, k1) of B, columns [col0, col1), into the 16-column panels from `panels` on (the panel
// of column col0), bStride floats apart. `row`: col1 - col0 floats of scratch.
void packBRows(const MatrixRows& b, int k0, int k1, int col0, int col1, float* panels, int64_t bStride, float* row) {
  for (int k = k0; k < k1; ++k) {
    if (k + kPrefetchRows < k1) prefetchRow(b, k + kPrefetchRows, col0, col1 - col0);
    packRow(b, k, col0, col1 - col0, panels + k * kNR, bStride, row);
  }
}

// C's columns of B panels [p0, p1) (panel p0 at `bPanels`) (+)= every A panel times them; with
// `wide`, two full panels at a time (microKernelPair).
void multiplyPanels(int K, int N, const float* aPanels, const std::vector<int>& panelStart, const float* bPanels,
                    int64_t bStride, int p0, int p1, float* c, int64_t ldc, bool accumulate, bool wide) {
  const int rowPanels = static_cast<int>(panelStart.size()) - 1;
  for (int pi = p0; pi < p1;) {
    const float* b = bPanels + (pi - p0) * bStride;
    const int cols = std::min(2 * kNR, N - pi * kNR);
    const bool pair = wide && pi + 1 < p1 && cols == 2 * kNR;
    for (int i = 0; i < rowPanels; ++i) {
      const int m0 = panelStart[static_cast<size_t>(i)], m1 = panelStart[static_cast<size_t>(i) + 1];
      const float* a = aPanels + static_cast<int64_t>(i) * K * kMR;
      float* cBlock = c + m0 * ldc + pi * kNR;
      if (pair)
        microKernelPair(m1 - m0, K, a, b, b + bStride, cBlock, ldc, accumulate);
      else
        microKernel(m1 - m0, K, a, b, cBlock, ldc, std::min(kNR, cols), accumulate);
    }
    pi += pair ? 2 : 1;
  }
}

// Instructions below this many multiply-adds run on the caller alone: sharing costs more.
constexpr int64_t kParallelMacs = int64_t{1} << 20;
// B panels (pairs of them with the wide kernel) per product chunk, at most.
constexpr int kPanelsPerChunk = 4;
// Rows of k per chunk of the preparation phase (K = 128 gives 4 chunks).
constexpr int kPrepRowsPerChunk = 32;

}  // namespace

// ---- GemmEngine ----

struct GemmEngine::Job {
  GemmEngine* self;
  int K, M, N;
  int64_t bStride;  // floats from one B panel to the next
  const MatrixRows* a;
  const MatrixRows* b;
  const float* aPanels;  // what the product reads
  float* aPack;          // where the preparation packs A (null: A's panels are cached)
  float* bPanels;
  float* c;
  int64_t ldc;
  bool accumulate;
  RowCheck check;
  void* checkCtx;
  int prepRanges;  // ranges of kPrepRowsPerChunk rows of k
  int splitPanel;  // >= 0: preparation chunks pack B panels before / from this one (two per range)
  std::atomic<bool> refused{false};
};

int GemmEngine::threadsFor(int requested) {
  if (requested <= 0) return static_cast<int>(std::min(2u, std::max(1u, std::thread::hardware_concurrency())));
  return std::min(requested, kMaxThreads);
}

void GemmEngine::checkThreads(int64_t requested) {
  if (requested < 0 || requested > kMaxThreads)
    throw SimulationError("threads " + std::to_string(requested) + " is outside 0.." + std::to_string(kMaxThreads) +
                          " (0: up to 2 host threads for the matmul kernel; n: n threads)");
}

GemmEngine::GemmEngine(int threads) : threads_(threadsFor(threads)), wide_(cpuHasAvx512()) {
  rowTemp_.resize(static_cast<size_t>(threads_));
}

void GemmEngine::useWideKernel(bool on) {
  drain();  // a pending part reads wide_
  wide_ = on && cpuHasAvx512();
}

GemmEngine::~GemmEngine() {
  drain();  // the helper may still be writing a deferred part's C
  delete workers_;
}

Workers& GemmEngine::workers() {
  if (!workers_) workers_ = new Workers(threads_);
  return *workers_;
}

// A's rows in panels of at most kMR: 6 each, except that a remainder of 1 or 2 rows joins the
// last full panel and splits as 4 + 3 or 4 + 4, because a 1- or 2-row micro-kernel has too few
// independent accumulators to keep the FMA units busy (M = 128: 20 x 6 + 2 x 4).
void GemmEngine::planRowPanels(int M, std::vector<int>& panelStart) {
  panelStart.clear();
  for (int m = 0; m < M;) {
    panelStart.push_back(m);
    const int left = M - m;
    m += left > 8 ? kMR : left > kMR ? 4 : left;
  }
  panelStart.push_back(M);
}

// Product chunks shrink towards the end of the instruction (guided self-scheduling): a thread
// that finds no chunk left waits for the other's last one, so the last ones are small. The caller
// claims from the front and the helpers from the back, so the sizes shrink from both ends towards
// the middle (N = 512: 4, 4, 4, 3, 1, 1 | 1, 1, 2, 3, 4, 4 panels). With the wide kernel, in pairs
// of panels (a lone panel runs the narrow kernel at half the speed). Returns the first panel of
// the back chunks.
int GemmEngine::planProductChunks(int panels) {
  const int unit = wide_ ? 2 : 1, units = (panels + unit - 1) / unit;
  chunkStart_.clear();
  backSizes_.clear();
  int p = 0;
  for (int left = units; left > 0;) {
    const int size = std::clamp((left + 3) / 4, 1, kPanelsPerChunk);
    if (chunkStart_.size() == backSizes_.size())
      chunkStart_.push_back(std::exchange(p, p + size));
    else
      backSizes_.push_back(size);
    left -= size;
  }
  const int back = p;
  for (auto it = backSizes_.rbegin(); it != backSizes_.rend(); ++it) chunkStart_.push_back(std::exchange(p, p + *it));
  chunkStart_.push_back(units);
  for (int& start : chunkStart_) start = std::min(panels, start * unit);
  return std::min(panels, back * unit);
}

// Preparation chunk: rows of both operands pass the caller's check and are converted into
// panels: A's into panel i (its rows, kMR floats per k; not when A's panels are cached), B's row
// segments into the 16-column panels. Shared by threads, each chunk is a range of kPrepRowsPerChunk
// rows of the front or the back half of B's panels: claimed from both ends like the product, each
// thread mostly packs the panels it multiplies next (half a row is still a long run of one
// partition, which the hardware prefetcher streams; a product chunk's 128-byte pieces would each
// miss on their own). The front chunk checks and packs A's first half of the range's rows, the
// back chunk the second.
void GemmEngine::prepare(void* p, int chunk, int t) {
  Job& j = *static_cast<Job*>(p);
  GemmEngine& g = *j.self;
  const bool back = j.splitPanel >= 0 && chunk >= j.prepRanges;
  const int range = back ? 2 * j.prepRanges - 1 - chunk : chunk;
  const int k0 = range * kPrepRowsPerChunk, k1 = std::min(j.K, k0 + kPrepRowsPerChunk);
  int ak0 = k0, ak1 = k1, col0 = 0, col1 = j.N;
  if (j.splitPanel >= 0) {
    const int mid = (k0 + k1) / 2, split = std::min(j.N, j.splitPanel * kNR);
    (back ? ak0 : ak1) = mid;
    (back ? col0 : col1) = split;
  }
  if (ak0 < ak1 && j.check && !j.check(j.checkCtx, ak0, ak1)) {
    j.refused.store(true, std::memory_order_relaxed);
    return;
  }
  auto& row = g.rowTemp_[static_cast<size_t>(t)];
  if (static_cast<int>(row.size()) < std::max(j.M, j.N)) row.resize(static_cast<size_t>(std::max(j.M, j.N)));
  if (j.aPack) packARows(*j.a, ak0, ak1, j.K, j.M, g.panelStart_, j.aPack, row.data());
  packBRows(*j.b, k0, k1, col0, col1, j.bPanels + (col0 / kNR) * j.bStride, j.bStride, row.data());
}

// Product chunk: B panels [p0, p1) times every A panel.
void GemmEngine::work(void* p, int chunk, int) {
  const Job& j = *static_cast<const Job*>(p);
  const GemmEngine& g = *j.self;
  const int p0 = g.chunkStart_[static_cast<size_t>(chunk)], p1 = g.chunkStart_[static_cast<size_t>(chunk) + 1];
  multiplyPanels(j.K, j.N, j.aPanels, g.panelStart_, j.bPanels + p0 * j.bStride, j.bStride, p0, p1, j.c, j.ldc,
                 j.accumulate, g.wide_);
}

namespace {
// Whether C columns [j0, j1) of rows [0, m) at c share an element with columns [k0, k1) of rows
// [0, n) at d, both with row pitch ldc floats (a row's columns never reach the next row).
bool overlaps(const float* c, int m, int j0, int j1, const float* d, int n, int k0, int k1, int64_t ldc) {
  const intptr_t bytes = reinterpret_cast<intptr_t>(d) - reinterpret_cast<intptr_t>(c);
  if (bytes % 4) return true;  // not on c's element grid: assume the worst
  const int64_t delta = bytes / 4;  // d's element (r, j) is c's (r + dr, j + dj), or one row lower
  const int64_t dr = delta >= 0 ? delta / ldc : -((-delta + ldc - 1) / ldc), dj = delta - dr * ldc;
  for (int64_t wrap = 0; wrap < 2; ++wrap) {
    const int64_t r = dr + wrap, shift = dj - wrap * ldc;
    if (r < m && -r < n && j0 < k1 + shift && k0 + shift < j1) return true;
  }
  return false;
}
}  // namespace

void GemmEngine::multiplyPart(const Part& w, std::vector<float>& bPanels, const std::vector<int>& panelStart,
                              std::vector<float>& rowTemp, const std::atomic<uint64_t>* aReady) {
  const int64_t bStride = bPanelStride(w.K);
  if (bPanels.size() < static_cast<size_t>((w.p1 - w.p0) * bStride))
    bPanels.resize(static_cast<size_t>((w.p1 - w.p0) * bStride));
  if (rowTemp.size() < static_cast<size_t>(w.N)) rowTemp.resize(static_cast<size_t>(w.N));
  packBRows(w.b, 0, w.K, w.p0 * kNR, std::min(w.N, w.p1 * kNR), bPanels.data(), bStride, rowTemp.data());
  if (aReady)
    while (aReady->load(std::memory_order_acquire) <= w.seq) cpuRelax();
  multiplyPanels(w.K, w.N, w.aPanels, panelStart, bPanels.data(), bStride, w.p0, w.p1, w.c, w.ldc, w.accumulate,
                 w.self->wide_);
}

void GemmEngine::runHelperPart(void* p) {
  const Part& w = *static_cast<const Part*>(p);
  GemmEngine& g = *w.self;
  if (g.helperDelayUs_) std::this_thread::sleep_for(std::chrono::microseconds(g.helperDelayUs_));
  planRowPanels(w.M, g.helperPanelStart_);
  multiplyPart(w, g.helperB_, g.helperPanelStart_, g.rowTemp_[1], &g.aReady_);
}

// The caller checks every row, posts the helper's panels, converts A (unless cached; meanwhile
// the helper converts its B panels) and multiplies its own panels. Only C ties consecutive parts
// together: a caller part waits for pending helper parts whose C it overlaps (the helper runs its
// own in order). The split follows the helper: found idle when a part is posted, it gets more
// panels; found busy, fewer (votes, so that one late wake-up does not move it).
GemmEngine::Stationary GemmEngine::stationaryPanels(const MatrixRows& a, int K, int M, size_t aSize,
                                                    const SbufTile* aTile, std::span<const float* const> inUse,
                                                    std::vector<float>& scratch) {
  if (aTile) {
    const PanelCache::Key key{a.base, a.pitch, a.dtype, K, M};
    if (const float* kept = cache_.find(key)) return {kept, nullptr, false};
    if (float* p = cache_.admit(key, *aTile, static_cast<int64_t>(aSize), inUse)) return {p, p, true};
  }
  if (scratch.size() < aSize) scratch.resize(aSize);
  return {scratch.data(), scratch.data(), false};
}

bool GemmEngine::runDeferred(int K, int M, int N, const MatrixRows& a, const MatrixRows& b, float* c, int64_t ldc,
                             bool accumulate, RowCheck check, void* checkCtx, const SbufTile* aTile) {
  if (check && !check(checkCtx, 0, K)) return false;
  Workers& w = workers();
  const uint64_t seq = w.posted();
  const size_t slot = seq % Workers::kPostedSlots;
  if (seq >= Workers::kPostedSlots) w.waitPosted(seq + 1 - Workers::kPostedSlots);  // parts_[slot] is free
  planRowPanels(M, panelStart_);
  const size_t aSize = (panelStart_.size() - 1) * static_cast<size_t>(K) * kMR;
  if (rowTemp_[0].size() < static_cast<size_t>(std::max(M, N))) rowTemp_[0].resize(static_cast<size_t>(std::max(M, N)));

  // A's panels: never packed over panels a pending part reads; scratch is this slot's.
  const uint64_t done = w.finished();
  const float* inUse[Workers::kPostedSlots];
  size_t nInUse = 0;
  for (uint64_t j = done; j < seq; ++j) inUse[nInUse++] = parts_[j % Workers::kPostedSlots].aPanels;
  const Stationary st = stationaryPanels(a, K, M, aSize, aTile, {inUse, nInUse}, aSlots_[slot]);
  const float* aPanels = st.panels;
  float* aPack = st.pack;

  // The caller's panels [0, split) must not be pending in a helper part. Of the same C (the
  // next matmul of an accumulation group), the caller takes no more than the pending part left
  // it: a larger share waits for the next C.
  const int panels = (N + kNR - 1) / kNR;
  // (An even split with the wide kernel, which multiplies panels in pairs.)
  const int unit = wide_ && panels >= 4 ? 2 : 1;
  int split = std::clamp(unit * ((panels * callerShare_ + 32 * unit) / (64 * unit)), unit, panels - unit);
  for (uint64_t j = seq; j-- > done;) {
    const Part& h = parts_[j % Workers::kPostedSlots];
    if (h.ldc == ldc && !overlaps(c, M, 0, split * kNR, h.c, h.M, h.p0 * kNR, std::min(h.N, h.p1 * kNR), ldc))
      continue;
    if (h.c == c && h.ldc == ldc && h.M == M && h.N == N) {
      split = h.p0;
      continue;
    }
    w.waitPosted(j + 1);
    break;
  }
  const bool helperIdle = w.finished() == seq;
  parts_[slot] = {this, seq, K, M, N, split, panels, b, aPanels, c, ldc, accumulate};
  w.post(&GemmEngine::runHelperPart, &parts_[slot]);
  if (aPack) packARows(a, 0, K, K, M, panelStart_, aPack, rowTemp_[0].data());
  aReady_.store(seq + 1, std::memory_order_release);
  multiplyPart({this, seq, K, M, N, 0, split, b, aPanels, c, ldc, accumulate}, bPanels_, panelStart_, rowTemp_[0]);

  constexpr int kVotes = 4;
  shareVotes_ += helperIdle ? -1 : 1;
  if (std::abs(shareVotes_) >= kVotes) {
    callerShare_ = std::clamp(callerShare_ + (shareVotes_ > 0 ? 1 : -1), 4, 60);
    shareVotes_ = 0;
  }
  return true;
}

bool GemmEngine::run(int K, int M, int N, const MatrixRows& a, const MatrixRows& b, float* c, int64_t ldc,
                     bool accumulate, RowCheck check, void* checkCtx, const SbufTile* aTile, bool deferrable) {
  if (K <= 0 || M <= 0 || N <= 0) return true;
  const int panels = (N + kNR - 1) / kNR;
  if (deferrable && threads_ == 2 && panels >= 2 && int64_t{K} * M * N >= kParallelMacs)
    return runDeferred(K, M, N, a, b, c, ldc, accumulate, check, checkCtx, aTile);
  drain();
  planRowPanels(M, panelStart_);
  const size_t aSize = (panelStart_.size() - 1) * static_cast<size_t>(K) * kMR;
  const int64_t bStride = bPanelStride(K);
  const size_t bSize = static_cast<size_t>(panels * bStride);
  if (bPanels_.size() < bSize) bPanels_.resize(bSize);

  const Stationary st = stationaryPanels(a, K, M, aSize, aTile, {}, aPanels_);
  const float* aPanels = st.panels;
  float* aPack = st.pack;

  // Both phases are shared with the helpers: the preparation is a sixth of an instruction's
  // work, and left to the caller alone it would idle the helpers for that long.
  const bool parallel = threads_ > 1 && int64_t{K} * M * N >= kParallelMacs;
  const int backPanel = planProductChunks(panels);
  const int chunks = static_cast<int>(chunkStart_.size()) - 1;
  const int prepRanges = (K + kPrepRowsPerChunk - 1) / kPrepRowsPerChunk;
  // B's halves meet where the product's front chunks end.
  const int splitPanel = parallel ? backPanel : -1;
  Job job{this, K, M, N, bStride, &a, &b, aPanels, aPack, bPanels_.data(), c, ldc, accumulate, check, checkCtx,
          prepRanges, splitPanel};
  if (parallel)
    workers().run(2 * prepRanges, &GemmEngine::prepare, &job, /*twoEnded=*/true);
  else
    for (int ch = 0; ch < prepRanges; ++ch) prepare(&job, ch, 0);
  if (job.refused.load(std::memory_order_relaxed)) {
    if (st.admitted) cache_.drop({a.base, a.pitch, a.dtype, K, M});  // never filled
    return false;
  }
  if (parallel)
    workers().run(chunks, &GemmEngine::work, &job, /*twoEnded=*/true);
  else
    for (int ch = 0; ch < chunks; ++ch) work(&job, ch, 0);
  return true;
}

}  // namespace sim
