#include "HostMemory.h"

#include <algorithm>
#include <cstdlib>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace sim {

namespace {
constexpr int64_t kHugePage = 2 << 20;
}

void* allocateLarge(int64_t bytes) {
  bytes = std::max<int64_t>(bytes, 1);
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

void releaseLarge(void* p, int64_t bytes) {
  if (!p) return;
#ifdef __linux__
  munmap(p, static_cast<size_t>(std::max<int64_t>(bytes, 1)));
#else
  (void)bytes;
  std::free(p);
#endif
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
