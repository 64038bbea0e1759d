// bir::NameTable<V>, a Function's name -> value tables (tensors by name, allocations by name,
// instruction names in use).
//
// Why not std::unordered_map: that one allocates a node per name, and a traced module's
// thousands of names were thousands of separate frees when the module was freed (a sweep frees
// one module per configuration). Here the entries sit in one array, in insertion order, and the
// open-addressed index over them in another, and the names' characters in a few large blocks
// (NameText): building and freeing a table is a handful of allocations whatever its size and
// however long its names (as std::strings, names past 15 characters, "TensorScalarPtr.12" or a
// long tensor's "<name>_set", were a malloc and a free each). Nothing iterates a table, so its
// order is never seen.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "BlockArena.h"

namespace bir {

// The characters of a table's names, copied into blocks that never move (a name's view stays
// valid while its NameText lives) and are freed together.
class NameText {
 public:
  // A copy of `name` kept here.
  std::string_view keep(std::string_view name) {
    char* at = chars_.take(name.size());
    if (!name.empty()) std::memcpy(at, name.data(), name.size());
    return {at, name.size()};
  }

 private:
  BlockArena<char, size_t{1} << 10, size_t{1} << 16> chars_;
};

template <class V>
class NameTable {
 public:
  // The value of `name`, or null. The pointer stays valid until the next insertion.
  V* find(std::string_view name) { return const_cast<V*>(std::as_const(*this).find(name)); }
  const V* find(std::string_view name) const {
    if (slots_.empty()) return nullptr;
    const uint64_t h = hashOf(name);
    for (size_t s = h & mask();; s = (s + 1) & mask()) {
      const uint32_t at = slots_[s];
      if (at == kEmpty) return nullptr;
      if (at != kErased && entries_[at - 1].hash == h && entries_[at - 1].name == name)
        return &entries_[at - 1].value;
    }
  }
  bool contains(std::string_view name) const { return find(name) != nullptr; }

  // Adds `name` -> `value` unless `name` is present; returns the value it has (valid until the
  // next insertion) and whether it was added.
  std::pair<V*, bool> tryEmplace(std::string_view name, V value) {
    if ((entries_.size() + 1) * 2 > slots_.size()) rebuild(live_ + 1);
    const uint64_t h = hashOf(name);
    size_t free = SIZE_MAX;  // the first erased slot on the probe path: reused for a new name
    size_t s = h & mask();
    for (;; s = (s + 1) & mask()) {
      const uint32_t at = slots_[s];
      if (at == kEmpty) break;
      if (at == kErased) {
        if (free == SIZE_MAX) free = s;
      } else if (entries_[at - 1].hash == h && entries_[at - 1].name == name) {
        return {&entries_[at - 1].value, false};
      }
    }
    entries_.emplace_back(text_.keep(name), std::move(value), h);  // (the name copied once, into text_)
    slots_[free == SIZE_MAX ? s : free] = static_cast<uint32_t>(entries_.size());
    ++live_;
    return {&entries_.back().value, true};
  }

  // Removes `name`; false if it was absent. (Its entry's room, and its characters', are taken back
  // at the next rebuild.)
  bool erase(std::string_view name) {
    if (slots_.empty()) return false;
    const uint64_t h = hashOf(name);
    for (size_t s = h & mask();; s = (s + 1) & mask()) {
      const uint32_t at = slots_[s];
      if (at == kEmpty) return false;
      if (at != kErased && entries_[at - 1].hash == h && entries_[at - 1].name == name) {
        slots_[s] = kErased;
        entries_[at - 1].name = {};
        --live_;
        return true;
      }
    }
  }

  size_t size() const { return live_; }
  // Room for `n` names in all without rebuilding.
  void reserve(size_t n) {
    if (n * 2 > slots_.size()) rebuild(n);
  }

 private:
  struct Entry {
    Entry(std::string_view n, V v, uint64_t h) : name(n), value(std::move(v)), hash(h) {}
    std::string_view name;  // in text_
    V value;
    uint64_t hash;
  };
  static constexpr uint32_t kEmpty = 0;  // otherwise a slot holds its entry's index + 1
  static constexpr uint32_t kErased = UINT32_MAX;

  static uint64_t hashOf(std::string_view name) { return std::hash<std::string_view>{}(name); }
  size_t mask() const { return slots_.size() - 1; }

  // Drops erased entries (and their names' characters: the live names move to new blocks) and
  // makes an index with room for `n` entries at most half full.
  void rebuild(size_t n) {
    if (n < live_) n = live_;
    size_t capacity = 16;
    while (capacity < n * 2) capacity *= 2;
    std::vector<Entry> kept;
    kept.reserve(capacity / 2);
    if (live_ == entries_.size()) {
      for (Entry& e : entries_) kept.push_back(std::move(e));
    } else {  // the live entries are the ones a slot names, kept in their order
      std::vector<uint32_t> live;
      live.reserve(live_);
      for (uint32_t at : slots_)
        if (at != kEmpty && at != kErased) live.push_back(at - 1);
      std::sort(live.begin(), live.end());
      NameText text;
      for (uint32_t i : live) {
        kept.push_back(std::move(entries_[i]));
        kept.back().name = text.keep(kept.back().name);
      }
      text_ = std::move(text);
    }
    entries_ = std::move(kept);
    slots_.assign(capacity, kEmpty);
    for (size_t i = 0; i < entries_.size(); ++i) {
      size_t s = entries_[i].hash & mask();
      while (slots_[s] != kEmpty) s = (s + 1) & mask();
      slots_[s] = static_cast<uint32_t>(i + 1);
    }
  }

  NameText text_;  // the entries' names (first: freed after the entries that view it)
  std::vector<Entry> entries_;  // in insertion order; an erased one stays, unnamed, until a rebuild
  std::vector<uint32_t> slots_;  // open addressing, linear probing; a power of two in size
  size_t live_ = 0;
};

}  // namespace bir
