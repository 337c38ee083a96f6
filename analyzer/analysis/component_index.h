#pragma once

// The dense numbering of one window's components that the window judge and
// the inference problem share: each link three times (climbing, coming down,
// both ways), then the switches, then the window's RNICs; and the keys that
// name a component the same in every window. Internal to analyzer/analysis.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "analyzer/analysis/flat_map.h"
#include "analyzer/analysis/path_table.h"
#include "analyzer/analysis/types.h"
#include "analyzer/analysis/window_report.h"

namespace hostmesh::analysis {

inline std::uint64_t RnicKey(HostId host, NicId nic) {
  return std::uint64_t{host} * kMaxNics + nic;
}

struct GroupKey {
  HostId host;
  NicId src;
  NicId dst;
  MiddleId middle;
};
// A failure group's key (FailureGroups::keys) taken apart.
inline GroupKey DecodeGroup(std::uint64_t key) {
  return {static_cast<HostId>(key >> 32), static_cast<NicId>((key >> 27) & 31),
          static_cast<NicId>((key >> 22) & 31),
          static_cast<MiddleId>(key & PathTable::kMaxMiddles)};
}

struct ComponentIndex {
  // Components: each link three times (climbing, coming down, and both ways:
  // a one-way fault is explained best by its direction, a bad cable by the
  // link), then the switches, then the RNICs of the window.
  std::size_t links = 0;
  std::size_t switches = 0;
  FlatMap rnic{256};
  std::vector<std::uint64_t> rnic_keys;
  FlatMap pair{256};

  std::size_t network() const { return 3 * links + switches; }
  std::size_t components() const { return network() + rnic_keys.size(); }
  std::uint32_t LinkComponent(LinkId l, bool up) const {
    return static_cast<std::uint32_t>(2 * l + (up ? 0 : 1));
  }
  std::uint32_t BothWaysComponent(LinkId l) const {
    return static_cast<std::uint32_t>(2 * links + l);
  }
  std::uint32_t SwitchComponent(SwitchId s) const {
    return static_cast<std::uint32_t>(3 * links + s);
  }
  bool IsLink(std::uint32_t c) const { return c < 3 * links; }
  bool IsSwitch(std::uint32_t c) const { return c >= 3 * links && c < network(); }
  bool IsRnic(std::uint32_t c) const { return c >= network(); }
  LinkId LinkOf(std::uint32_t c) const {
    return static_cast<LinkId>(c < 2 * links ? c / 2 : c - 2 * links);
  }
  SwitchId SwitchOf(std::uint32_t c) const { return static_cast<SwitchId>(c - 3 * links); }
  std::uint32_t Rnic(HostId host, NicId nic) {
    auto [v, inserted] =
        rnic.Insert(RnicKey(host, nic), static_cast<std::uint32_t>(rnic_keys.size()));
    if (inserted) rnic_keys.push_back(RnicKey(host, nic));
    return *v;
  }
  std::uint32_t RnicComponent(HostId host, NicId nic) const {
    return static_cast<std::uint32_t>(network()) + *rnic.Find(RnicKey(host, nic));
  }
  std::uint64_t RnicKeyOf(std::uint32_t c) const { return rnic_keys[c - network()]; }
  std::uint32_t Pair(HostId host, NicId src, NicId dst) const {
    return *pair.Find((std::uint64_t{host} << 10) | (src << 5) | dst);
  }
  Component ComponentOf(std::uint32_t c) const {
    Component out;
    if (IsLink(c)) {
      out.link = LinkOf(c);
      out.direction = c >= 2 * links ? kBothWays : c % 2 == 0 ? kUpward : kDownward;
      return out;
    }
    const auto key = RnicKeyOf(c);
    out.kind = Component::Kind::kRnic;
    out.host = static_cast<HostId>(key / kMaxNics);
    out.nic = static_cast<NicId>(key % kMaxNics);
    return out;
  }
  // The same component in every window: the key of its evidence.
  static std::uint64_t DirectedKey(LinkId link, bool up) {
    return (std::uint64_t{1} << 60) | (2 * std::uint64_t{link} + (up ? 0 : 1));
  }
  static std::uint64_t BothWaysKey(LinkId link) { return (std::uint64_t{4} << 60) | link; }
  std::uint64_t StableKey(std::uint32_t c) const {
    if (c < 2 * links) return DirectedKey(static_cast<LinkId>(c / 2), c % 2 == 0);
    if (IsLink(c)) return BothWaysKey(LinkOf(c));
    if (IsSwitch(c)) return (std::uint64_t{2} << 60) | SwitchOf(c);
    return (std::uint64_t{3} << 60) | RnicKeyOf(c);
  }
};

}  // namespace hostmesh::analysis
