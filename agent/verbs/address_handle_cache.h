#pragma once

// One address handle per (destination NIC, flow label) of a source NIC, so
// each probe's RoCEv2 source port is the one the port pool chose. Bounded:
// pool rotation keeps introducing labels, and NICs have a limited AH table.
// An AH that a posted send still uses is never evicted (the send WR points at
// it until its completion), so Insert may refuse when everything is busy.
//
// Templated on the owner type so tests run it with fake handles.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

#include "agent/core/probe_types.h"

namespace hostmesh::agent::verbs {

struct AddressHandleKey {
  NicId dst = 0;
  std::uint32_t flow_label = 0;
  friend auto operator<=>(const AddressHandleKey&, const AddressHandleKey&) = default;
};

template <typename Owner>
class BasicAddressHandleCache {
 public:
  explicit BasicAddressHandleCache(std::size_t capacity = 1024)
      : capacity_(capacity == 0 ? 1 : capacity) {}

  using Handle = decltype(std::declval<const Owner&>().get());

  // The cached handle (marked as just used), or null.
  Handle Find(const AddressHandleKey& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    it->second.last_used = ++tick_;
    return it->second.owner.get();
  }

  bool Contains(const AddressHandleKey& key) const { return entries_.contains(key); }

  // Makes room by evicting the least recently used idle handle when full.
  // False when the cache is full of handles with sends in flight.
  bool MakeRoom() {
    if (entries_.size() < capacity_) return true;
    auto victim = entries_.end();
    std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.in_flight == 0 && it->second.last_used < oldest) {
        oldest = it->second.last_used;
        victim = it;
      }
    }
    if (victim == entries_.end()) return false;
    entries_.erase(victim);
    ++evicted_;
    return true;
  }

  // Call MakeRoom first; replaces nothing if the key is present.
  void Insert(const AddressHandleKey& key, Owner owner) {
    entries_.try_emplace(key, Entry{std::move(owner), ++tick_, 0});
  }

  // Bracket every posted send that uses the key's handle.
  void AddInFlight(const AddressHandleKey& key) {
    if (auto it = entries_.find(key); it != entries_.end()) ++it->second.in_flight;
  }
  void ReleaseInFlight(const AddressHandleKey& key) {
    if (auto it = entries_.find(key); it != entries_.end() && it->second.in_flight > 0) {
      --it->second.in_flight;
    }
  }

  std::size_t size() const { return entries_.size(); }
  std::size_t capacity() const { return capacity_; }
  std::uint64_t evicted() const { return evicted_; }

 private:
  struct Entry {
    Owner owner;
    std::uint64_t last_used = 0;
    std::uint32_t in_flight = 0;
  };
  std::size_t capacity_;
  std::map<AddressHandleKey, Entry> entries_;
  std::uint64_t tick_ = 0;
  std::uint64_t evicted_ = 0;
};

}  // namespace hostmesh::agent::verbs
