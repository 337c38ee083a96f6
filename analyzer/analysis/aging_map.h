#pragma once

// A uint64 -> uint32 open-addressing hash map (linear probing) whose entries
// carry the tick they were last touched at, and which forgets entries that
// have not been touched for a while: a sweep walks a slice of the slots per
// call and erases the stale ones by backward shift (no tombstones, so lookups
// never slow down as entries come and go). Memory follows the entries alive,
// not the entries ever inserted; the table shrinks after a full pass that
// found it mostly empty.
//
// Ticks are the owner's clock in coarse steps, stored modulo 2^16; the owner
// must sweep every slot well within 2^15 ticks of its touch (PathTable does a
// full pass every few ticks and forgets everything after a longer jump).

#include <cstdint>
#include <utility>
#include <vector>

#include "analyzer/analysis/flat_map.h"

namespace hostmesh::analysis {

class AgingMap {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // a key never used
  using Tick = std::uint16_t;

  explicit AgingMap(std::size_t expected = 16) { Rehash(Capacity(expected)); }

  // The value of key, or nullptr; the tick is left alone.
  const std::uint32_t* Find(std::uint64_t key) const {
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }
  // The value of key, or nullptr; a found entry is stamped with `now`.
  std::uint32_t* Touch(std::uint64_t key, Tick now) {
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) {
        ticks_[i] = now;
        return &values_[i];
      }
      if (keys_[i] == kEmpty) return nullptr;
    }
  }
  // The value of key, inserting `value` first when absent; stamped with `now`
  // either way. second: inserted.
  std::pair<std::uint32_t*, bool> Insert(std::uint64_t key, std::uint32_t value, Tick now) {
    if ((size_ + 1) * 4 > keys_.size() * 3) Rehash(keys_.size() * 2);
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) {
        ticks_[i] = now;
        return {&values_[i], false};
      }
      if (keys_[i] == kEmpty) {
        keys_[i] = key;
        values_[i] = value;
        ticks_[i] = now;
        ++size_;
        return {&values_[i], true};
      }
    }
  }

  // Visits up to `slots` slots from where the last sweep stopped (wrapping
  // around), erasing every entry whose age (now - its tick, modulo 2^16)
  // exceeds max_age; on_erase(key, value) runs for each. Returns the slots
  // visited. Entries moved back by an erase are looked at again, so a pass of
  // capacity() slots sees every entry at least once.
  template <typename OnErase>
  std::size_t Sweep(std::size_t slots, Tick now, Tick max_age, OnErase&& on_erase) {
    if (slots > keys_.size()) slots = keys_.size();
    std::size_t visited = 0;
    while (visited < slots) {
      const std::size_t i = cursor_;
      if (keys_[i] != kEmpty && static_cast<Tick>(now - ticks_[i]) > max_age) {
        on_erase(keys_[i], values_[i]);
        EraseAt(i);
        continue;  // a later entry may have moved into i: look at it again
      }
      cursor_ = (cursor_ + 1) & mask_;
      ++visited;
      if (cursor_ == 0) MaybeShrink();
    }
    return visited;
  }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return keys_.size(); }
  std::size_t memory_bytes() const {
    return keys_.capacity() * (sizeof(std::uint64_t) + sizeof(std::uint32_t) + sizeof(Tick));
  }

 private:
  static std::size_t Capacity(std::size_t n) { return open_addressing::CapacityFor(n); }
  std::size_t Slot(std::uint64_t key) const { return open_addressing::Home(key, mask_); }
  // Linear probing's deletion: pull back every later entry of the run that
  // may not sit after the hole (its home slot is not cyclically in (hole, j]).
  void EraseAt(std::size_t hole) {
    keys_[hole] = kEmpty;
    --size_;
    for (std::size_t j = (hole + 1) & mask_; keys_[j] != kEmpty; j = (j + 1) & mask_) {
      const std::size_t home = Slot(keys_[j]);
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays) continue;
      keys_[hole] = keys_[j];
      values_[hole] = values_[j];
      ticks_[hole] = ticks_[j];
      keys_[j] = kEmpty;
      hole = j;
    }
  }
  // After a full pass: a table at under 3/16 load halves (so it is at most
  // 3/8 full after, well below the 3/4 that grows it).
  void MaybeShrink() {
    std::size_t capacity = keys_.size();
    while (capacity > 16 && size_ * 16 < capacity * 3) capacity /= 2;
    if (capacity != keys_.size()) Rehash(capacity);
  }
  void Rehash(std::size_t capacity) {
    std::vector<std::uint64_t> old_keys(capacity, kEmpty);
    std::vector<std::uint32_t> old_values(capacity);
    std::vector<Tick> old_ticks(capacity);
    old_keys.swap(keys_);
    old_values.swap(values_);
    old_ticks.swap(ticks_);
    mask_ = capacity - 1;
    size_ = 0;
    cursor_ = 0;
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] == kEmpty) continue;
      for (std::size_t j = Slot(old_keys[i]);; j = (j + 1) & mask_) {
        if (keys_[j] != kEmpty) continue;
        keys_[j] = old_keys[i];
        values_[j] = old_values[i];
        ticks_[j] = old_ticks[i];
        ++size_;
        break;
      }
    }
  }

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> values_;
  std::vector<Tick> ticks_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  std::size_t cursor_ = 0;  // where the next sweep starts
};

}  // namespace hostmesh::analysis
