// Room for many short runs of T, taken from a few large blocks that never move and are all freed
// with the arena: one allocation per block instead of one per run (a run that grows is taken
// again, its old room left unused until the arena goes). A name table's characters
// (NameTable.h) and a dependency scan's entry lists and edges (sim/ListSchedule.cpp) live in one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace bir {

// Blocks start at kFirstBlock elements and double up to kMaxBlock (a run longer than that gets a
// block of its own size).
template <class T, size_t kFirstBlock, size_t kMaxBlock>
class BlockArena {
 public:
  // Room for `n` elements (default-initialized: uninitialized for a trivial T).
  T* take(size_t n) {
    if (n > left_) {
      const size_t size = std::max(n, nextBlock_);
      nextBlock_ = std::min(nextBlock_ * 2, kMaxBlock);  // (a small arena's blocks stay small)
      blocks_.push_back(std::make_unique_for_overwrite<T[]>(size));
      next_ = blocks_.back().get();
      left_ = size;
    }
    T* at = next_;
    next_ += n;
    left_ -= n;
    return at;
  }

 private:
  size_t nextBlock_ = kFirstBlock;
  std::vector<std::unique_ptr<T[]>> blocks_;
  T* next_ = nullptr;
  size_t left_ = 0;
};

}  // namespace bir
