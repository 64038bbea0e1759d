#include "PanelCache.h"

#include <algorithm>
#include <limits>

namespace sim {

namespace {
int64_t keyBytes(const PanelCache::Key& k) { return int64_t{k.k} * k.width * 4; }

bool contains(std::span<const float* const> panels, const float* p) {
  return std::find(panels.begin(), panels.end(), p) != panels.end();
}

size_t keyHash(const PanelCache::Key& k) {
  uint64_t h = reinterpret_cast<uintptr_t>(k.rows);
  for (uint64_t v : {static_cast<uint64_t>(k.pitch), static_cast<uint64_t>(k.dtype), static_cast<uint64_t>(k.k),
                     static_cast<uint64_t>(k.width)})
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 40);
}
}  // namespace

PanelCache::PanelCache() : ghosts_(kGhosts) { entries_.reserve(kMaxEntries); }

PanelCache::Entry* PanelCache::lookup(const Key& key) {
  for (Entry& e : entries_)
    if (e.valid && e.key == key) return &e;
  return nullptr;
}

PanelCache::Ghost& PanelCache::ghost(const Key& key) { return ghosts_[keyHash(key) % kGhosts]; }

const float* PanelCache::find(const Key& key) {
  ++tick_;
  clock_ += static_cast<uint64_t>(keyBytes(key));
  Ghost& g = ghost(key);
  // Admissible: seen before, with at most a budget's worth of tiles since; or, on a first
  // sighting, while most tiles have been coming back that soon.
  const bool same = g.used && g.key == key;
  const bool soon = same && !g.wasted && clock_ - g.seenAt <= static_cast<uint64_t>(budget_);
  soonRate_ += ((soon ? kOne : 0) - soonRate_) / kRateWindow;
  admissible_ = soon || soonRate_ > kOne / 2;
  admissibleKey_ = key;
  g = {key, clock_, true, same && g.wasted};
  if (Entry* e = lookup(key)) {
    e->lastUse = tick_;
    ++e->hits;
    return e->panels.data();
  }
  return nullptr;
}

float* PanelCache::admit(const Key& key, const SbufTile& where, int64_t floats, std::span<const float* const> inUse) {
  if (!admissible_ || !(admissibleKey_ == key)) return nullptr;
  admissible_ = false;
  const int64_t bytes = floats * 4;
  if (bytes > budget_) return nullptr;
  Entry* e = nullptr;
  for (Entry& x : entries_)
    if (!x.valid && static_cast<int64_t>(x.panels.size()) >= floats && !contains(inUse, x.panels.data())) {
      e = &x;
      break;
    }
  while (!e) {
    if (held_ + bytes <= budget_ && entries_.size() < kMaxEntries) {
      e = &entries_.emplace_back();  // reserved: no reallocation moves the others
      e->panels.resize(static_cast<size_t>(floats));
      held_ += bytes;
      break;
    }
    // Make room: an unused entry first, else the least recently used one, whose storage is
    // reused when it is large enough.
    const size_t victim = leastUseful(inUse);
    if (victim == entries_.size()) return nullptr;
    if (static_cast<int64_t>(entries_[victim].panels.size()) >= floats) {
      e = &entries_[victim];
      break;
    }
    release(victim);
  }
  e->key = key;
  e->where = where;
  e->valid = true;
  e->lastUse = tick_;
  e->hits = 0;
  recomputeBounds();
  return e->panels.data();
}

void PanelCache::drop(const Key& key) {
  if (Entry* e = lookup(key)) {
    e->valid = false;
    recomputeBounds();
  }
}

void PanelCache::invalidateSlow(uint8_t quadrants, int64_t lo, int64_t hi) {
  for (Entry& e : entries_)
    if (e.valid && (e.where.quadrants & quadrants) && e.where.lo < hi && lo < e.where.hi) {
      e.valid = false;
      // Overwritten before any reuse (a weight tile whose buffer is reloaded): do not keep the
      // address again.
      Ghost& g = ghost(e.key);
      if (!e.hits && g.used && g.key == e.key) g.wasted = true;
    }
  recomputeBounds();
}

void PanelCache::recomputeBounds() {
  quadrants_ = 0;
  lo_ = std::numeric_limits<int64_t>::max();
  hi_ = std::numeric_limits<int64_t>::min();
  for (const Entry& e : entries_)
    if (e.valid) {
      quadrants_ |= e.where.quadrants;
      lo_ = std::min(lo_, e.where.lo);
      hi_ = std::max(hi_, e.where.hi);
    }
}

void PanelCache::clear() {
  for (Entry& e : entries_) e.valid = false;
  recomputeBounds();
  std::fill(ghosts_.begin(), ghosts_.end(), Ghost{});
  clock_ = 0;
  soonRate_ = 0;
  admissible_ = false;
}

size_t PanelCache::leastUseful(std::span<const float* const> inUse) const {
  size_t victim = entries_.size();
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& x = entries_[i];
    if (contains(inUse, x.panels.data())) continue;
    if (victim == entries_.size()) {
      victim = i;
      continue;
    }
    const Entry& v = entries_[victim];
    if (v.valid && (!x.valid || x.lastUse < v.lastUse)) victim = i;
  }
  return victim;
}

void PanelCache::release(size_t i) {
  held_ -= static_cast<int64_t>(entries_[i].panels.size()) * 4;
  if (i + 1 != entries_.size()) entries_[i] = std::move(entries_.back());
  entries_.pop_back();
}

void PanelCache::setBudget(int64_t bytes) {
  budget_ = std::max<int64_t>(bytes, 0);
  while (held_ > budget_) {
    const size_t victim = leastUseful();
    release(victim);
  }
  recomputeBounds();
}

}  // namespace sim
