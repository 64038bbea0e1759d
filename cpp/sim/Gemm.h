// The matmul kernel behind InstMatmult in `full` mode: C[m, n] (=|+=) sum_k A[k, m] * B[k, n] for
// one PE instruction (K <= 128, M <= 128, N <= 512), fast enough that a simulated GEMM costs about
// what NumPy's float32 matmul costs for the same product.
//
// GotoBLAS structure sized for one instruction: A (the stationary, K x M) is converted once into
// 6-row panels and B (the moving, K x N) into 16-column panels, both fp32 and contiguous in k; a
// 6x16 register-blocked FMA micro-kernel (AVX2, or 6x32 over two panels with AVX-512, chosen at
// run time; a portable loop otherwise) accumulates over k in registers and adds into (or
// overwrites) C once. Large instructions run in
// two phases on a small persistent worker pool: the check of the operand rows and their conversion
// into panels, split by k rows and by halves of B; then the product, split by B panels. The caller
// takes work from the front and the helpers from the back, so each thread keeps converting and
// multiplying about the same B panels and C columns. With two threads, a run of matmuls needs no
// barrier at all: each instruction's columns are split between the caller and the helper, whose
// part may still be in progress when run() returns (`deferrable`, drain()). Each C element is
// computed by one thread in the same k order, so results do not depend on the thread count. A's
// panels may be kept for the next instructions that read the same rows (PanelCache.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
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
  // it touched last time is still in its core's cache). Every posted task finishes first (post).
  void run(int chunks, void (*fn)(void*, int, int), void* ctx, bool twoEnded = false);

  // Tasks for the first helper, run one after the other in the order posted while the caller
  // goes on (GemmEngine's deferred column parts). post() waits while kPostedSlots tasks are
  // unfinished and returns the task's number (0, 1, ...); fn(ctx) must not throw, and ctx must
  // live until the task has finished. Needs a helper (size() >= 2).
  static constexpr int kPostedSlots = 4;
  uint64_t post(void (*fn)(void*), void* ctx);
  uint64_t posted() const { return posted_.load(std::memory_order_relaxed); }  // caller only
  uint64_t finished() const { return finished_.load(std::memory_order_acquire); }
  void waitPosted(uint64_t count);  // until the first `count` posted tasks have finished
  void drainPosted() { waitPosted(posted()); }

 private:
  struct Task {
    void (*fn)(void*);
    void* ctx;
  };
  void loop(int t);
  void drain(uint32_t generation, int t);  // claims and runs chunks of `generation`
  void runPosted();                        // helper 1: the posted tasks not yet run
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
  Task tasks_[kPostedSlots] = {};
  std::atomic<uint64_t> posted_{0}, finished_{0};
};

// Rows of a matrix in some dtype: row r's contiguous elements start at base + r * pitch bytes.
struct MatrixRows {
  const uint8_t* base = nullptr;
  int64_t pitch = 0;
  bir::DType dtype = bir::DType::float32;
};

class GemmEngine {
 public:
  static constexpr int kMaxThreads = 64;
  // threads 0: min(2, hardware threads); 1..kMaxThreads: that many.
  explicit GemmEngine(int threads);
  static int threadsFor(int requested);  // the thread count GemmEngine(requested) runs
  // Throws SimulationError for a count GemmEngine does not take (negative, above kMaxThreads):
  // the simulator's options are checked with it before a run, not clamped into one.
  static void checkThreads(int64_t requested);
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
  //
  // `deferrable`: B's rows and C stay as they are, and nothing else reads or writes C, until the
  // caller calls drain() (a run of matmuls between other instructions). Then, with two threads,
  // the helper's part of C may still be in progress when run() returns: the instruction is split
  // by columns, the helper's part posted (Workers::post) and the caller's computed at once, so
  // that consecutive matmuls need no barrier. A later run() waits for pending parts whose C it
  // overlaps. Which thread computes a column does not change its value.
  bool run(int K, int M, int N, const MatrixRows& a, const MatrixRows& b, float* c, int64_t ldc,
           bool accumulate, RowCheck check = nullptr, void* checkCtx = nullptr, const SbufTile* aTile = nullptr,
           bool deferrable = false);
  // Waits for the deferred parts in progress (before anything else reads or writes their C, B or
  // SBUF).
  void drain() {
    if (workers_) workers_->drainPosted();
  }

  // Packed stationaries kept across instructions; the simulator sets its budget and drops
  // entries that SBUF writes overwrite.
  PanelCache& panels() { return cache_; }

  static constexpr int kMR = 6, kNR = 16;

  // Whether the micro-kernel multiplies two B panels at once with AVX-512 (the default where the
  // CPU has it; about twice the FMA throughput on cores with 512-bit units). The bits are the same
  // either way; tests switch it off to compare.
  void useWideKernel(bool on);

  // Tests: the helper sleeps this long before each deferred part, as if the host had descheduled
  // it, so that later instructions meet its parts still in progress.
  void delayHelperForTesting(int microseconds) { helperDelayUs_ = microseconds; }

 private:
  struct Job;
  // Panels [p0, p1) of B (16 columns each) times all of A: one thread's part of an instruction.
  struct Part {
    GemmEngine* self;
    uint64_t seq;  // the posted task's number (helper parts)
    int K, M, N, p0, p1;
    MatrixRows b;
    const float* aPanels;
    float* c;
    int64_t ldc;
    bool accumulate;
  };
  static void planRowPanels(int M, std::vector<int>& panelStart);
  // A's panels (aSize floats): kept in the cache, else admitted into it (never reusing panels in
  // `inUse`), else in `scratch`. `pack` is where they must still be packed (null when kept).
  struct Stationary {
    const float* panels;
    float* pack;
    bool admitted;  // pack is a new cache entry
  };
  Stationary stationaryPanels(const MatrixRows& a, int K, int M, size_t aSize, const SbufTile* aTile,
                              std::span<const float* const> inUse, std::vector<float>& scratch);
  int planProductChunks(int panels);
  static void prepare(void* job, int chunk, int t);
  static void work(void* job, int chunk, int t);
  bool runDeferred(int K, int M, int N, const MatrixRows& a, const MatrixRows& b, float* c, int64_t ldc,
                   bool accumulate, RowCheck check, void* checkCtx, const SbufTile* aTile);
  // Packs the part's B panels, waits for A's panels (until aReady >= part.seq + 1, if given), multiplies.
  static void multiplyPart(const Part& part, std::vector<float>& bPanels, const std::vector<int>& panelStart,
                           std::vector<float>& rowTemp, const std::atomic<uint64_t>* aReady = nullptr);
  static void runHelperPart(void* part);
  int threads_;
  Workers* workers_ = nullptr;  // created on the first large instruction
  std::vector<int> panelStart_;  // first row of each A panel, then M
  std::vector<int> chunkStart_;  // first B panel of each product chunk, then the panel count
  std::vector<int> backSizes_;  // planProductChunks' scratch: the back chunks' sizes
  std::vector<float> aPanels_, bPanels_;
  std::vector<std::vector<float>> rowTemp_;  // per thread
  PanelCache cache_;
  // Deferred parts: the helper's part of posted task j is parts_[j % kPostedSlots], its A panels
  // (when not cached) aSlots_[j % kPostedSlots]; the helper's own B panels and row panel plan.
  Part parts_[Workers::kPostedSlots] = {};
  std::vector<float> aSlots_[Workers::kPostedSlots];
  std::atomic<uint64_t> aReady_{0};  // helper parts [0, aReady_) may read their A panels
  std::vector<float> helperB_;
  std::vector<int> helperPanelStart_;
  // The caller's share of a deferred instruction's panels, in 64ths, and the votes that move it:
  // the helper found idle when a part is posted (it finished early) votes for a smaller share.
  int callerShare_ = 32, shareVotes_ = 0;
  int helperDelayUs_ = 0;
  bool wide_;  // useWideKernel
};

}  // namespace sim
