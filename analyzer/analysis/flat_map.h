#pragma once

// A uint64 -> uint32 open-addressing hash map (linear probing, no erase): the
// per-result lookups of the analysis are a few of these, and std::unordered_map
// costs an allocation and a cache miss per node.

#include <cstdint>
#include <vector>

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
}  // namespace open_addressing

class FlatMap {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // a key never used

  explicit FlatMap(std::size_t expected = 16) { Rehash(Capacity(expected)); }

  // The value of key, or nullptr.
  const std::uint32_t* Find(std::uint64_t key) const {
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }
  // The value of key, inserting `value` first when absent; second: inserted.
  std::pair<std::uint32_t*, bool> Insert(std::uint64_t key, std::uint32_t value) {
    if ((size_ + 1) * 4 > keys_.size() * 3) Rehash(keys_.size() * 2);
    for (std::size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return {&values_[i], false};
      if (keys_[i] == kEmpty) {
        keys_[i] = key;
        values_[i] = value;
        ++size_;
        return {&values_[i], true};
      }
    }
  }
  std::size_t size() const { return size_; }
  std::size_t memory_bytes() const { return keys_.capacity() * 12; }

  template <typename F>
  void ForEach(F&& f) const {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] != kEmpty) f(keys_[i], values_[i]);
    }
  }

 private:
  static std::size_t Capacity(std::size_t n) { return open_addressing::CapacityFor(n); }
  std::size_t Slot(std::uint64_t key) const { return open_addressing::Home(key, mask_); }
  void Rehash(std::size_t capacity) {
    std::vector<std::uint64_t> old_keys(capacity, kEmpty);
    std::vector<std::uint32_t> old_values(capacity);
    old_keys.swap(keys_);
    old_values.swap(values_);
    mask_ = capacity - 1;
    size_ = 0;
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] != kEmpty) Insert(old_keys[i], old_values[i]);
    }
  }

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> values_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace hostmesh::analysis
