#include "HostMemory.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace sim {

namespace {
constexpr int64_t kHugePage = 2 << 20;

// Large blocks are whole huge pages, so that a released block fits any later request of the
// same rounded size.
int64_t blockBytes(int64_t bytes) {
  bytes = std::max<int64_t>(bytes, 1);
  return bytes < kHugePage ? bytes : (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

void* mapBlock(int64_t bytes) {
#ifdef __linux__
  // Over-allocate by one huge page and trim, to start on a 2 MiB boundary.
  const size_t len = static_cast<size_t>(bytes + kHugePage);
  void* raw = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto addr = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (addr + kHugePage - 1) & ~static_cast<uintptr_t>(kHugePage - 1);
  if (aligned > addr) munmap(raw, aligned - addr);
  const uintptr_t end = addr + len, used = aligned + static_cast<uintptr_t>(bytes);
  if (end > used) munmap(reinterpret_cast<void*>(used), end - used);
  void* p = reinterpret_cast<void*>(aligned);
  if (bytes >= kHugePage) madvise(p, static_cast<size_t>(bytes), MADV_HUGEPAGE);
  return p;
#else
  void* p = std::calloc(static_cast<size_t>(bytes), 1);
  if (!p) throw std::bad_alloc();
  return p;
#endif
}

void unmapBlock(void* p, int64_t bytes) {
#ifdef __linux__
  munmap(p, static_cast<size_t>(bytes));
#else
  (void)bytes;
  std::free(p);
#endif
}

// Released blocks of a huge page or more, kept for the next request of the same size. In a
// virtual machine the first touch of memory the host has not backed yet is slow (in this
// Firecracker guest, ~1.3 ns per byte: a 1 M-instruction timing run's 40 MB of records cost 40%
// of the run), and memory the guest frees can go back to the host. A block written before does
// not pay again, so the second run of a module (a sweep, a benchmark, a test) reuses the blocks
// of the first.
class BlockCache {
 public:
  void* take(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
      if (it->bytes == bytes) {
        void* p = it->p;
        cached_ -= it->bytes;
        blocks_.erase(it);
        return p;
      }
    return nullptr;
  }
  BlockCache() { blocks_.reserve(kBlocks + 1); }  // give() never allocates: it runs in deallocate()

  // Keeps the block, evicting the oldest ones beyond kBlocks blocks or kBytes bytes.
  void give(void* p, int64_t bytes) noexcept {
    std::array<Block, kBlocks + 1> evicted{};
    size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks_.push_back({p, bytes});
      cached_ += bytes;
      while (blocks_.size() > kBlocks || cached_ > kBytes) {
        evicted[n++] = blocks_.front();
        cached_ -= blocks_.front().bytes;
        blocks_.erase(blocks_.begin());
      }
    }
    for (size_t i = 0; i < n; ++i) unmapBlock(evicted[i].p, evicted[i].bytes);
  }

 private:
  static constexpr size_t kBlocks = 4;
  static constexpr int64_t kBytes = int64_t{256} << 20;  // what idle blocks may hold
  struct Block {
    void* p = nullptr;
    int64_t bytes = 0;
  };
  std::mutex mutex_;
  std::vector<Block> blocks_;
  int64_t cached_ = 0;
};

BlockCache& blockCache() {
  static BlockCache* cache = new BlockCache;  // never destroyed: blocks may be released at exit
  return *cache;
}
}  // namespace

void* allocateLarge(int64_t bytes, bool zeroed) {
  const int64_t n = blockBytes(bytes);
  void* p = nullptr;
  if (n >= kHugePage)
    if ((p = blockCache().take(n)) && zeroed) std::memset(p, 0, static_cast<size_t>(bytes));
  if (!p) p = mapBlock(n);
#ifdef __linux__
  // A last huge page less than half used (PSUM's 2 MiB plus its partition padding) stays in
  // 4 KiB pages: touching its few used bytes would otherwise commit all 2 MiB.
  if (n >= kHugePage && n > bytes) {
    void* last = static_cast<uint8_t*>(p) + n - kHugePage;
    madvise(last, kHugePage, n - bytes > kHugePage / 2 ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
  }
#endif
  return p;
}

void releaseLarge(void* p, int64_t bytes) {
  if (!p) return;
  const int64_t n = blockBytes(bytes);
  if (n >= kHugePage) return blockCache().give(p, n);
  unmapBlock(p, n);
}

LargeBuffer::LargeBuffer(int64_t bytes) : p_(allocateLarge(bytes)), n_(std::max<int64_t>(bytes, 1)) {}

LargeBuffer::~LargeBuffer() { releaseLarge(p_, n_); }

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& o) noexcept {
  if (this != &o) {
    releaseLarge(p_, n_);
    p_ = o.p_;
    n_ = o.n_;
    o.p_ = nullptr;
    o.n_ = 0;
  }
  return *this;
}

}  // namespace sim
