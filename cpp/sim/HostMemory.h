// Host memory for the simulator's large, long-lived buffers: SBUF, PSUM, their bit sets and the
// per-instruction records.
//
// Such buffers are touched page by page the first time they are used, and in a virtual machine
// every 4 KiB page fault costs microseconds: a 1 M-instruction timing run writes 40 MB of records,
// about 10,000 faults with 4 KiB pages (perf stat -e page-faults) and none extra with 2 MiB
// transparent huge pages. SBUF operand rows (a partition, 192 KiB, apart) also stop missing the TLB.
// Released blocks are kept for reuse: memory touched before is cheaper still (HostMemory.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace sim {

// Memory of at least `bytes`, its first `bytes` zero-filled if `zeroed`: fresh pages (only what
// is touched is committed), on Linux 2 MiB aligned and advised for transparent huge pages (but
// for a last huge page less than half used), or a released block of the same size (see
// BlockCache in HostMemory.cpp). Throws std::bad_alloc.
void* allocateLarge(int64_t bytes, bool zeroed = true);
void releaseLarge(void* p, int64_t bytes);

// A large zero-filled allocation owned by one object.
class LargeBuffer {
 public:
  LargeBuffer() = default;
  explicit LargeBuffer(int64_t bytes);
  ~LargeBuffer();
  LargeBuffer(LargeBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  LargeBuffer& operator=(LargeBuffer&& o) noexcept;
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(p_); }

 private:
  void* p_ = nullptr;
  int64_t n_ = 0;
};

// A std::allocator that serves allocations of a huge page or more from allocateLarge, for vectors
// that are reserved once and then filled (the per-instruction records).
template <typename T>
struct LargePageAllocator {
  using value_type = T;
  static constexpr size_t kLarge = size_t{2} << 20;
  LargePageAllocator() = default;
  template <typename U>
  LargePageAllocator(const LargePageAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kLarge) return static_cast<T*>(allocateLarge(static_cast<int64_t>(bytes), false));
    return static_cast<T*>(::operator new(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kLarge) return releaseLarge(p, static_cast<int64_t>(bytes));
    ::operator delete(p);
  }
  template <typename U>
  bool operator==(const LargePageAllocator<U>&) const noexcept { return true; }
};

}  // namespace sim
