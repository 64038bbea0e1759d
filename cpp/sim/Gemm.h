// The matmul kernel behind InstMatmult in `full` mode: C[m, n] (=|+=) sum_k A[k, m] * B[k, n] for
// one PE instruction (K <= 128, M <= 128, N <= 512), fast enough that a simulated GEMM costs about
// what NumPy's float32 matmul costs for the same product.
//
// GotoBLAS structure sized for one instruction: A (the stationary, K x M) is converted once into
// 6-row panels and B (the moving, K x N) into 16-column panels, both fp32 and contiguous in k; a
// 6x16 register-blocked FMA micro-kernel (AVX2, chosen at run time; a portable loop otherwise)
// accumulates over k in registers and adds into (or overwrites) C once. Large instructions run in
// two phases on a small persistent worker pool: the check of the operand rows and their conversion
// into panels, split by k rows and by halves of B; then the product, split by B panels. The caller
// takes work from the front and the helpers from the back, so each thread keeps converting and
// multiplying about the same B panels and C columns. Each C element is computed by one thread in
// the same k order, so results do not depend on the thread count. A's panels may be kept for the
// next instructions that read the same rows (PanelCache.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "PanelCache.h"
#include "bir/Enums.h"

namespace sim {

// Helper threads for the matmul kernel. Work is shared, not forked: the caller publishes a job of
// chunks and works through them itself; helpers that are awake claim chunks too. A helper that is
// descheduled (the host is shared) therefore never stalls the caller, which only waits for chunks
// a helper has already claimed. Helpers poll briefly between jobs (consecutive matmuls arrive
// microseconds apart) and then sleep on a futex.
class Workers {
 public:
  explicit Workers(int threads);
  ~Workers();
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  int size() const { return static_cast<int>(threads_.size()) + 1; }
  static constexpr int kMaxChunks = 0x7fff;
  // Runs fn(ctx, chunk, t) once for every chunk in [0, chunks), t being the thread (0 = caller);
  // returns when all have returned. fn must not throw. More than kMaxChunks run on the caller.
  // Chunks are claimed in order; with `twoEnded`, the caller claims from the front and the helpers
  // from the back, so that consecutive jobs give each thread about the same chunks (and the data
  // it touched last time is still in its core's cache).
  void run(int chunks, void (*fn)(void*, int, int), void* ctx, bool twoEnded = false);

 private:
  void loop(int t);
  void drain(uint32_t generation, int t);  // claims and runs chunks of `generation`
  std::vector<std::thread> threads_;
  std::atomic<uint32_t> generation_{0};
  // generation << 32 | twoEnded << 31 | end << 16 | next: chunks [next, end) are unclaimed. One
  // word, so that a helper still holding an older job's word can only ever claim (by
  // compare-and-swap) a chunk of the job that word describes, and no job's fields are rewritten
  // while one of its chunks is unclaimed.
  std::atomic<uint64_t> claim_{0};
  std::atomic<int> done_{0};
  std::atomic<bool> stop_{false};
  void (*fn_)(void*, int, int) = nullptr;
  void* ctx_ = nullptr;
};

// Rows of a matrix in some dtype: row r's contiguous elements start at base + r * pitch bytes.
struct MatrixRows {
  const uint8_t* base = nullptr;
  int64_t pitch = 0;
  bir::DType dtype = bir::DType::float32;
};

class GemmEngine {
 public:
  // threads <= 0: min(2, hardware threads).
  explicit GemmEngine(int threads);
  static int threadsFor(int requested);  // the thread count GemmEngine(requested) runs
  ~GemmEngine();
  int threads() const { return threads_; }
  // The worker pool (created on first use; threads() - 1 helpers). Exec also runs large
  // lane-parallel instructions on it.
  Workers& workers();

  // Rows [k0, k1) of both operands may be read? Runs on the worker threads, so it must not throw.
  using RowCheck = bool (*)(void* ctx, int k0, int k1);

  // C row m at c + m * ldc floats; accumulate: C += product, else C = product. When `check`
  // refuses some rows, returns false with C untouched. A stationary read in place from SBUF
  // names its tile (aTile), so that its packed panels can be kept in panels() and reused.
  bool run(int K, int M, int N, const MatrixRows& a, const MatrixRows& b, float* c, int64_t ldc,
           bool accumulate, RowCheck check = nullptr, void* checkCtx = nullptr, const SbufTile* aTile = nullptr);

  // Packed stationaries kept across instructions; the simulator sets its budget and drops
  // entries that SBUF writes overwrite.
  PanelCache& panels() { return cache_; }

  static constexpr int kMR = 6, kNR = 16;

 private:
  struct Job;
  void planRowPanels(int M);
  int planProductChunks(int panels);
  static void prepare(void* job, int chunk, int t);
  static void work(void* job, int chunk, int t);
  int threads_;
  Workers* workers_ = nullptr;  // created on the first large instruction
  std::vector<int> panelStart_;  // first row of each A panel, then M
  std::vector<int> chunkStart_;  // first B panel of each product chunk, then the panel count
  std::vector<int> backSizes_;  // planProductChunks' scratch: the back chunks' sizes
  std::vector<float> aPanels_, bPanels_;
  std::vector<std::vector<float>> rowTemp_;  // per thread
  PanelCache cache_;
};

}  // namespace sim
