#pragma once

// A uint64 -> uint32 open-addressing hash map (linear probing, no erase): the
// per-result lookups of the analysis are a few of these, and std::unordered_map
// costs an allocation and a cache miss per node. A key and its value share a
// slot, so a lookup in a table larger than the cache costs one miss, not two.

#include <cstddef>
#include <cstdint>
#include <utility>

#include "analyzer/analysis/slot_array.h"

namespace hostmesh::analysis {

// Shared by the open-addressing tables (FlatMap, AgingMap).
namespace open_addressing {
// Slots for n keys at most 3/4 full: a power of two, at least 16.
inline std::size_t CapacityFor(std::size_t n) {
  std::size_t c = 16;
  while (c * 3 < n * 4) c *= 2;
  return c;
}
// The home slot of a key: murmur3's finalizer, since keys are packed ids
// whose low bits are alike.
inline std::size_t Home(std::uint64_t key, std::size_t mask) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return static_cast<std::size_t>(key) & mask;
}
// Asks for the cache line at p ahead of its use. The empty asm keeps p alive:
// GCC 12 drops a prefetch whose address comes from a hash otherwise.
inline void Prefetch(const void* p) {
  __builtin_prefetch(p, 0, 3);
  asm volatile("" ::"r"(p));
}
}  // namespace open_addressing

class FlatMap {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // a key never used

  explicit FlatMap(std::size_t expected = 16) { Rehash(Capacity(expected)); }

  // The value of key, or nullptr.
  const std::uint32_t* Find(std::uint64_t key) const {
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  // The value of key, inserting `value` first when absent; second: inserted.
  std::pair<std::uint32_t*, bool> Insert(std::uint64_t key, std::uint32_t value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.size() * 2);
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return {&slots_[i].value, false};
      if (slots_[i].key == kEmpty) {
        slots_[i].key = key;
        slots_[i].value = value;
        ++size_;
        return {&slots_[i].value, true};
      }
    }
  }
  // Starts loading key's home slot (a later Find or Insert of it is cheaper).
  void Prefetch(std::uint64_t key) const { open_addressing::Prefetch(slots_.data() + Slot(key)); }
  std::size_t size() const { return size_; }
  std::size_t memory_bytes() const { return slots_.size() * sizeof(Entry); }

  template <typename F>
  void ForEach(F&& f) const {
    for (const Entry& e : slots_) {
      if (e.key != kEmpty) f(e.key, e.value);
    }
  }

 private:
  struct Entry {
    std::uint64_t key = kEmpty;
    std::uint32_t value = 0;
  };
  static std::size_t Capacity(std::size_t n) { return open_addressing::CapacityFor(n); }
  std::size_t Slot(std::uint64_t key) const { return open_addressing::Home(key, mask_); }
  void Rehash(std::size_t capacity) {
    SlotArray<Entry> old(capacity, Entry{});
    old.swap(slots_);
    mask_ = capacity - 1;
    size_ = 0;
    for (const Entry& e : old) {
      if (e.key != kEmpty) Insert(e.key, e.value);
    }
  }

  SlotArray<Entry> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace hostmesh::analysis
