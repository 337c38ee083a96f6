#pragma once

// A uint64 -> uint32 open-addressing hash map (linear probing) whose entries
// carry the tick they were last touched at, and which forgets entries that
// have not been touched for a while: a sweep walks a slice of the slots per
// call and erases the stale ones by backward shift (no tombstones, so lookups
// never slow down as entries come and go). Memory follows the entries alive,
// not the entries ever inserted; the table shrinks after a full pass that
// found it mostly empty. Key, value and tick share a 16-byte slot: a lookup in
// a table of millions costs one cache miss.
//
// Ticks are the owner's clock in coarse steps, stored modulo 2^16; the owner
// must sweep every slot well within 2^15 ticks of its touch (PathTable does a
// full pass every few ticks and forgets everything after a longer jump).

#include <algorithm>
#include <cstdint>
#include <utility>

#include "analyzer/analysis/flat_map.h"
#include "analyzer/analysis/slot_array.h"

namespace hostmesh::analysis {

class AgingMap {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // a key never used
  using Tick = std::uint16_t;

  explicit AgingMap(std::size_t expected = 16) { Rehash(Capacity(expected)); }

  // The value of key, or nullptr; the tick is left alone.
  const std::uint32_t* Find(std::uint64_t key) const {
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  // The same, to change it in place (the tick still left alone).
  std::uint32_t* FindToChange(std::uint64_t key) {
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  // The value of key, or nullptr; a found entry is stamped with `now`.
  std::uint32_t* Touch(std::uint64_t key, Tick now) {
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) {
        slots_[i].tick = now;
        return &slots_[i].value;
      }
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  // The value of key, inserting `value` first when absent; stamped with `now`
  // either way. second: inserted.
  std::pair<std::uint32_t*, bool> Insert(std::uint64_t key, std::uint32_t value, Tick now) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.size() * 2);
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      Entry& e = slots_[i];
      if (e.key == key) {
        e.tick = now;
        return {&e.value, false};
      }
      if (e.key == kEmpty) {
        e = {key, value, now};
        ++size_;
        return {&e.value, true};
      }
    }
  }
  // Starts loading key's home slot (a later Touch of it is cheaper).
  void Prefetch(std::uint64_t key) const { open_addressing::Prefetch(slots_.data() + Slot(key)); }

  // Visits up to `slots` slots from where the last sweep stopped (wrapping
  // around), erasing every entry whose age (now - its tick, modulo 2^16)
  // exceeds max_age; on_erase(key, value) runs for each. Returns the slots
  // visited. Entries moved back by an erase are looked at again, so a pass of
  // capacity() slots sees every entry at least once.
  template <typename OnErase>
  std::size_t Sweep(std::size_t slots, Tick now, Tick max_age, OnErase&& on_erase) {
    return SweepBy(
        slots, now, [max_age](std::uint64_t) { return max_age; }, std::forward<OnErase>(on_erase));
  }
  // The same with a maximum age per key (max_age_of(key)).
  template <typename MaxAgeOf, typename OnErase>
  std::size_t SweepBy(std::size_t slots, Tick now, MaxAgeOf&& max_age_of, OnErase&& on_erase) {
    if (slots > slots_.size()) slots = slots_.size();
    std::size_t visited = 0;
    while (visited < slots) {
      const std::size_t i = cursor_;
      const Entry& e = slots_[i];
      if (e.key != kEmpty && static_cast<Tick>(now - e.tick) > max_age_of(e.key)) {
        on_erase(e.key, e.value);
        EraseAt(i);
        continue;  // a later entry may have moved into i: look at it again
      }
      cursor_ = (cursor_ + 1) & mask_;
      ++visited;
      if (cursor_ == 0) MaybeShrink();
    }
    return visited;
  }
  // The entries in slots [begin, end) (clamped to capacity()), in slot order,
  // ages untouched: a pass over the map in slices, between which it may
  // change (a rehash moves entries, so such a pass may miss or repeat some).
  template <typename Visit>
  void ForEachInSlots(std::size_t begin, std::size_t end, Visit&& visit) const {
    end = std::min(end, slots_.size());
    for (std::size_t i = begin; i < end; ++i) {
      if (slots_[i].key != kEmpty) visit(slots_[i].key, slots_[i].value);
    }
  }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return slots_.size(); }
  std::size_t memory_bytes() const { return slots_.size() * sizeof(Entry); }

 private:
  struct Entry {
    std::uint64_t key = kEmpty;
    std::uint32_t value = 0;
    Tick tick = 0;
  };
  static_assert(sizeof(Entry) == 16);

  static std::size_t Capacity(std::size_t n) { return open_addressing::CapacityFor(n); }
  std::size_t Slot(std::uint64_t key) const { return open_addressing::Home(key, mask_); }
  // Linear probing's deletion: pull back every later entry of the run that
  // may not sit after the hole (its home slot is not cyclically in (hole, j]).
  void EraseAt(std::size_t hole) {
    slots_[hole].key = kEmpty;
    --size_;
    for (std::size_t j = (hole + 1) & mask_; slots_[j].key != kEmpty; j = (j + 1) & mask_) {
      const std::size_t home = Slot(slots_[j].key);
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      slots_[j].key = kEmpty;
      hole = j;
    }
  }
  // After a full pass: a table at under 3/16 load halves (so it is at most
  // 3/8 full after, well below the 3/4 that grows it).
  void MaybeShrink() {
    std::size_t capacity = slots_.size();
    while (capacity > 16 && size_ * 16 < capacity * 3) capacity /= 2;
    if (capacity != slots_.size()) Rehash(capacity);
  }
  void Rehash(std::size_t capacity) {
    SlotArray<Entry> old(capacity, Entry{});
    old.swap(slots_);
    mask_ = capacity - 1;
    size_ = 0;
    cursor_ = 0;
    for (const Entry& e : old) {
      if (e.key == kEmpty) continue;
      for (std::size_t j = Slot(e.key);; j = (j + 1) & mask_) {
        if (slots_[j].key != kEmpty) continue;
        slots_[j] = e;
        ++size_;
        break;
      }
    }
  }

  SlotArray<Entry> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  std::size_t cursor_ = 0;  // where the next sweep starts
};

}  // namespace hostmesh::analysis
