#include "State.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace sim {

namespace {
constexpr int64_t kHugePage = 2 << 20;
}

LargeBuffer::LargeBuffer(int64_t bytes) : n_(std::max<int64_t>(bytes, 1)) {
#ifdef __linux__
  // Over-allocate by one huge page and trim, to start on a 2 MiB boundary.
  const size_t len = static_cast<size_t>(n_ + kHugePage);
  void* raw = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto addr = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (addr + kHugePage - 1) & ~static_cast<uintptr_t>(kHugePage - 1);
  if (aligned > addr) munmap(raw, aligned - addr);
  const uintptr_t end = addr + len, used = aligned + static_cast<uintptr_t>(n_);
  if (end > used) munmap(reinterpret_cast<void*>(used), end - used);
  p_ = reinterpret_cast<void*>(aligned);
  if (n_ >= kHugePage) madvise(p_, static_cast<size_t>(n_), MADV_HUGEPAGE);
#else
  p_ = std::calloc(static_cast<size_t>(n_), 1);
  if (!p_) throw std::bad_alloc();
#endif
}

LargeBuffer::~LargeBuffer() {
#ifdef __linux__
  if (p_) munmap(p_, static_cast<size_t>(n_));
#else
  std::free(p_);
#endif
}

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& o) noexcept {
  if (this != &o) {
    this->~LargeBuffer();
    p_ = o.p_;
    n_ = o.n_;
    o.p_ = nullptr;
    o.n_ = 0;
  }
  return *this;
}

void LargeBuffer::zero() {
  if (p_) std::memset(p_, 0, static_cast<size_t>(n_));
}

BitSet::BitSet(int64_t bits) : buf_(((bits + 63) / 64) * 8), nwords_((bits + 63) / 64) {
  words_ = reinterpret_cast<uint64_t*>(buf_.data());
}

void BitSet::reset() { buf_.zero(); }

namespace {
// Mask of bits [lo, hi) within one word (0 <= lo < hi <= 64).
inline uint64_t wordMask(int64_t lo, int64_t hi) {
  const uint64_t upper = hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return upper & ~((uint64_t{1} << lo) - 1);
}
}  // namespace

int64_t BitSet::firstClear(int64_t first, int64_t n) const {
  int64_t i = first;
  const int64_t end = first + n;
  while (i < end) {
    const int64_t w = i >> 6, lo = i & 63;
    const int64_t hi = std::min<int64_t>(64, lo + (end - i));
    const uint64_t m = wordMask(lo, hi);
    const uint64_t missing = ~words_[static_cast<size_t>(w)] & m;
    if (missing) return (w << 6) + std::countr_zero(missing);
    i += hi - lo;
  }
  return -1;
}

bool BitSet::all(int64_t first, int64_t n) const { return firstClear(first, n) < 0; }

void BitSet::set(int64_t first, int64_t n) {
  int64_t i = first;
  const int64_t end = first + n;
  while (i < end) {
    const int64_t w = i >> 6, lo = i & 63;
    const int64_t hi = std::min<int64_t>(64, lo + (end - i));
    words_[static_cast<size_t>(w)] |= wordMask(lo, hi);
    i += hi - lo;
  }
}

void BitSet::clear(int64_t first, int64_t n) {
  int64_t i = first;
  const int64_t end = first + n;
  while (i < end) {
    const int64_t w = i >> 6, lo = i & 63;
    const int64_t hi = std::min<int64_t>(64, lo + (end - i));
    words_[static_cast<size_t>(w)] &= ~wordMask(lo, hi);
    i += hi - lo;
  }
}

const char* spaceName(Space s) {
  switch (s) {
    case Space::SBUF: return "SBUF";
    case Space::PSUM: return "PSUM";
    case Space::DRAM: return "DRAM";
    case Space::Imm: return "immediate";
  }
  return "?";
}

std::string Memory::describe(int64_t offset, int64_t n) const {
  if (pitch > 0) {
    const int64_t p = offset / pitch, b = offset % pitch;
    return std::string(spaceName(space)) + " partition " + std::to_string(p) + " bytes [" +
           std::to_string(b) + ", " + std::to_string(b + n) + ")";
  }
  return "tensor '" + name + "' bytes [" + std::to_string(offset) + ", " +
         std::to_string(offset + n) + ")";
}

CoreState::CoreState(int64_t partitions, int64_t sbufBpp, int64_t psumBpp)
    : psumGroup(partitions * psumBpp / 4), actAccumulator(static_cast<size_t>(partitions), 0.0f) {
  sbufData_ = LargeBuffer(partitions * sbufBpp);
  psumData_ = LargeBuffer(partitions * psumBpp);
  auto init = [&](Memory& m, const char* name, Space s, uint8_t* data, int64_t pitch) {
    m.name = name;
    m.space = s;
    m.data = data;
    m.pitch = pitch;
    m.bytes = partitions * pitch;
    m.tracked = true;
    m.written = BitSet(m.bytes);
  };
  init(sbuf, "SBUF", Space::SBUF, sbufData_.data(), sbufBpp);
  init(psum, "PSUM", Space::PSUM, psumData_.data(), psumBpp);
}

void CoreState::reset() {
  sbuf.written.reset();
  psum.written.reset();
  psumGroup.reset();
  std::fill(actAccumulator.begin(), actAccumulator.end(), 0.0f);
}

}  // namespace sim
