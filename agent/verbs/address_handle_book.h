#pragma once

// The address handles of one source NIC, as pure logic over the bounded
// BasicAddressHandleCache: ibv_create_ah may resolve a neighbour (a netlink
// round trip, seconds on a cold ARP entry), so a send never creates one. It
// only looks one up; the handles a NIC will need (every destination x the
// flow label of each port of its pool and of the pool's next rotation, or
// one per destination where the QP fixes the port) are asked for ahead
// (Want), built on the transport's builder thread (address_handle_builder.h)
// and put into the cache when they come back. A key whose build failed is
// refused (a send failure with the build's errno, never a timeout) until its
// retry is due, then asked for again.
//
// Templated on the owner type so tests run it with fake handles.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "agent/verbs/address_handle_cache.h"
#include "common/base/clock.h"

namespace hostmesh::agent::verbs {

template <typename Owner>
class BasicAddressHandleBook {
 public:
  using Cache = BasicAddressHandleCache<Owner>;
  using Handle = typename Cache::Handle;

  explicit BasicAddressHandleBook(std::size_t capacity = 1024,
                                  std::chrono::nanoseconds retry_after = std::chrono::seconds{1})
      : cache_(capacity), retry_after_(retry_after) {}

  enum class State : std::uint8_t {
    kReady,    // `ah` is the handle
    kWaiting,  // being built; `request`: not asked for yet, submit it now
    kFailed,   // its last build failed with `error`; retried once due
  };
  struct Lookup {
    State state = State::kWaiting;
    Handle ah = nullptr;
    int error = 0;
    bool request = false;
  };

  // What a send to `key` finds. A key never asked for (or whose failure is
  // due for a retry) is marked pending with `request` set.
  Lookup ForSend(const AddressHandleKey& key, MonoTime now) {
    if (Handle ah = cache_.Find(key)) return {State::kReady, ah, 0, false};
    if (pending_.contains(key)) return {State::kWaiting, nullptr, 0, false};
    if (auto it = failed_.find(key); it != failed_.end() && now < it->second.retry_at) {
      return {State::kFailed, nullptr, it->second.error, false};
    }
    pending_.insert(key);
    return {State::kWaiting, nullptr, 0, true};
  }

  // Of `keys`, the ones to submit now (not cached, not pending, not failed
  // with a retry still ahead); they are marked pending.
  std::vector<AddressHandleKey> Want(std::span<const AddressHandleKey> keys, MonoTime now) {
    std::vector<AddressHandleKey> out;
    for (const AddressHandleKey& key : keys) {
      if (cache_.Contains(key) || pending_.contains(key)) continue;
      if (auto it = failed_.find(key); it != failed_.end() && now < it->second.retry_at) continue;
      pending_.insert(key);
      out.push_back(key);
    }
    return out;
  }

  // A built handle: cached, evicting the least recently used idle handle
  // when full. False (the handle is dropped, the key may be asked again)
  // when every cached handle has sends in flight.
  bool OnBuilt(const AddressHandleKey& key, Owner owner) {
    pending_.erase(key);
    failed_.erase(key);
    if (cache_.Contains(key)) return true;
    if (!cache_.MakeRoom()) return false;
    cache_.Insert(key, std::move(owner));
    return true;
  }

  void OnFailed(const AddressHandleKey& key, int error, MonoTime now) {
    pending_.erase(key);
    failed_[key] = Failure{error, now + retry_after_};
  }

  // A submitted build that will never report (its job was dropped).
  void Abandon(const AddressHandleKey& key) { pending_.erase(key); }

  // Bracket every posted send that uses a handle (never evicted meanwhile).
  void AddInFlight(const AddressHandleKey& key) { cache_.AddInFlight(key); }
  void ReleaseInFlight(const AddressHandleKey& key) { cache_.ReleaseInFlight(key); }

  std::size_t size() const { return cache_.size(); }
  std::size_t pending() const { return pending_.size(); }
  std::size_t failed() const { return failed_.size(); }
  std::uint64_t evicted() const { return cache_.evicted(); }

 private:
  struct Failure {
    int error = 0;
    MonoTime retry_at{};
  };
  Cache cache_;
  std::chrono::nanoseconds retry_after_;
  std::set<AddressHandleKey> pending_;
  std::map<AddressHandleKey, Failure> failed_;
};

// The keys a source NIC wants built ahead: one per destination and flow
// label of each port where the AH's flow label sets the source port, one per
// destination (label 0) where the QP fixes it. `label_of` maps a port to its
// flow label (flow_label.h); ports it cannot map are left out.
template <typename LabelOf>
std::vector<AddressHandleKey> WantedAddressHandles(bool per_qp, NicId src,
                                                   std::span<const NicId> destinations,
                                                   std::span<const std::uint16_t> ports,
                                                   LabelOf label_of) {
  std::vector<AddressHandleKey> keys;
  for (NicId dst : destinations) {
    if (dst == src) continue;
    if (per_qp) {
      keys.push_back({dst, 0});
      continue;
    }
    for (std::uint16_t port : ports) {
      if (const auto label = label_of(port)) keys.push_back({dst, *label});
    }
  }
  return keys;
}

}  // namespace hostmesh::agent::verbs
