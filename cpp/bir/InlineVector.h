// InlineVector<T, N>: a vector of trivially copyable T that holds up to N elements inside itself
// and moves to the heap only beyond N.
//
// Why: every operand of every BIR instruction has an access pattern of a few [step, num] pairs
// (AccessPattern::pattern). As a std::vector each was a heap block of its own: one malloc per
// operand when the tracer emits a module (about 30% of emission), and, when the simulator prepares
// a freshly built module, a cache miss on a block far from its operand for every reader. Held
// inline, the pairs sit next to the operand's other fields. N is the longest pattern an engine
// instruction may have; longer ones (DMA and DRAM patterns have no rank limit in the BIR rules)
// still work, on the heap.
//
// The interface is the part of std::vector the code uses, with the same meaning. Unlike
// std::vector, moving an inline vector copies its elements (and leaves the source empty).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <vector>

namespace bir {

template <class T, size_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "InlineVector copies its elements with memcpy");
  static_assert(N > 0 && N < UINT32_MAX);

 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  InlineVector() noexcept {}
  InlineVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  explicit InlineVector(size_t n, const T& v = T()) { resize(n, v); }
  template <class It, class = decltype(*std::declval<It>())>
  InlineVector(It first, It last) { assign(first, last); }
  // From and to std::vector: callers that build or keep patterns as vectors.
  explicit InlineVector(const std::vector<T>& v) { assign(v.data(), v.data() + v.size()); }
  explicit operator std::vector<T>() const { return std::vector<T>(begin(), end()); }

  InlineVector(const InlineVector& o) { assign(o.begin(), o.end()); }
  InlineVector(InlineVector&& o) noexcept { take(o); }
  InlineVector& operator=(const InlineVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  InlineVector& operator=(InlineVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  InlineVector& operator=(std::initializer_list<T> il) {
    assign(il.begin(), il.end());
    return *this;
  }
  InlineVector& operator=(const std::vector<T>& v) {
    assign(v.data(), v.data() + v.size());
    return *this;
  }
  ~InlineVector() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  static constexpr size_t inlineCapacity() { return N; }

  T* data() { return onHeap() ? heap_ : inline_; }
  const T* data() const { return onHeap() ? heap_ : inline_; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  const T* cbegin() const { return begin(); }
  const T* cend() const { return end(); }

  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  void resize(size_t n, const T& v = T()) {
    reserve(n);
    T* d = data();
    for (size_t i = size_; i < n; ++i) d[i] = v;
    size_ = static_cast<uint32_t>(n);
  }
  void push_back(const T& v) {
    if (size_ == cap_) {
      const T copy = v;  // (v may be an element of this vector)
      grow(size_t{cap_} * 2);
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = v;
  }
  template <class... A>
  T& emplace_back(A&&... a) {
    push_back(T{std::forward<A>(a)...});
    return back();
  }
  void pop_back() { --size_; }
  template <class It>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data());
    size_ = static_cast<uint32_t>(n);
  }
  // Inserts [first, last) before pos (which must not point into [first, last)).
  template <class It>
  T* insert(const T* pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - begin());
    const size_t n = static_cast<size_t>(std::distance(first, last));
    reserve(size_t{size_} + n);
    T* d = data();
    std::memmove(d + at + n, d + at, (size_ - at) * sizeof(T));
    std::copy(first, last, d + at);
    size_ += static_cast<uint32_t>(n);
    return d + at;
  }
  T* insert(const T* pos, const T& v) {
    const T copy = v;
    return insert(pos, &copy, &copy + 1);
  }
  T* erase(const T* first, const T* last) {
    T* d = data();
    const size_t at = static_cast<size_t>(first - d), n = static_cast<size_t>(last - first);
    std::memmove(d + at, d + at + n, (size_ - at - n) * sizeof(T));
    size_ -= static_cast<uint32_t>(n);
    return d + at;
  }
  T* erase(const T* pos) { return erase(pos, pos + 1); }

  friend bool operator==(const InlineVector& a, const InlineVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const InlineVector& a, const InlineVector& b) { return !(a == b); }
  friend bool operator==(const InlineVector& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const std::vector<T>& a, const InlineVector& b) { return b == a; }
  friend bool operator!=(const InlineVector& a, const std::vector<T>& b) { return !(a == b); }
  friend bool operator!=(const std::vector<T>& a, const InlineVector& b) { return !(b == a); }

 private:
  bool onHeap() const { return cap_ > N; }
  void grow(size_t n) {
    n = std::max(n, size_t{N} * 2);
    if (n >= UINT32_MAX) throw std::bad_alloc();
    T* p = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, data(), size_ * sizeof(T));
    release();
    heap_ = p;
    cap_ = static_cast<uint32_t>(n);
  }
  void release() {
    if (onHeap()) std::free(heap_);
    cap_ = N;
  }
  // Takes o's elements (this holds none), leaving o empty and inline.
  void take(InlineVector& o) noexcept {
    size_ = o.size_;
    if (o.onHeap()) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.cap_ = N;
    } else {
      cap_ = N;
      if (size_) std::memcpy(inline_, o.inline_, size_ * sizeof(T));
    }
    o.size_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t cap_ = N;  // N: the elements are inline; more: on the heap
  union {
    T inline_[N];
    T* heap_;
  };
};

}  // namespace bir
