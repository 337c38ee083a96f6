#pragma once

// The last known path of every traced probe 5-tuple. A path is stored as its
// fabric part (links between the two NIC links), interned: a fleet of 10,000
// hosts has tens of millions of NIC-to-NIC paths but only rails^2 x spines
// fabric parts per pod, and per-window counters are kept per fabric part.
// The NIC links are learned per RNIC (the first link of a path it sends on).

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/flat_map.h"
#include "analyzer/analysis/types.h"

namespace hostmesh::analysis {

using MiddleId = std::uint32_t;

class PathTable {
 public:
  // Fabric parts beyond this many are not interned (their probes count as untraced).
  static constexpr MiddleId kMaxMiddles = (1u << 22) - 1;
  static constexpr MiddleId kNoPath = kMaxMiddles;

  // The destination port is RoCEv2's fixed 4791, so the source port alone tells
  // 5-tuples of one NIC pair apart.
  static std::uint64_t Key(HostId host, NicId src, NicId dst, std::uint16_t src_port) {
    return (std::uint64_t{host} << 26) | (std::uint64_t{src} << 21) | (std::uint64_t{dst} << 16) |
           src_port;
  }

  // Replaces the 5-tuple's path. Precondition: nic ids < kMaxNics.
  void Add(const PathRecord& path);

  MiddleId Lookup(HostId host, NicId src, NicId dst, std::uint16_t src_port) const {
    const auto* v = paths_.Find(Key(host, src, dst, src_port));
    return v ? *v : kNoPath;
  }
  std::span<const LinkId> Middle(MiddleId id) const { return middles_[id]; }
  std::size_t middle_count() const { return middles_.size(); }
  // The link of a NIC, learned from paths; kUnknown until one was seen.
  LinkId NicLink(HostId host, NicId nic) const {
    const auto* v = nic_links_.Find(std::uint64_t{host} * kMaxNics + nic);
    return v ? *v : kUnknown;
  }
  // One more than the largest link id seen.
  std::size_t link_span() const { return link_span_; }
  std::size_t size() const { return paths_.size(); }
  std::size_t memory_bytes() const;

 private:
  MiddleId Intern(std::span<const LinkId> middle);

  FlatMap paths_;  // 5-tuple key -> MiddleId
  FlatMap nic_links_;
  std::vector<std::vector<LinkId>> middles_;
  std::unordered_map<std::string, MiddleId> middle_ids_;
  std::size_t link_span_ = 0;
};

}  // namespace hostmesh::analysis
