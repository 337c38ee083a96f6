#pragma once

// The fabric as plain structs: devices (hosts and switches), their interfaces,
// and the point-to-point links between interfaces. Ids are indexes, assigned in
// the order the inventory lists things, so the same inventory always yields the
// same ids.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "topology/ipv4.h"

namespace hostmesh::topology {

using DeviceId = std::uint32_t;
using InterfaceId = std::uint32_t;
using LinkId = std::uint32_t;
inline constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// Ordered bottom-up, so "going up" a link means a larger tier.
enum class Tier : std::uint8_t {
  kHost = 0,
  kRail = 1,         // leaf: NIC r of every host of a pod hangs off rail switch r
  kAggregation = 2,  // rail aggregation (3-tier fabrics): joins one rail's switches
  kSpine = 3,        // the top tier
};

enum class LinkKind : std::uint8_t {
  kNic,     // host NIC to rail switch
  kFabric,  // switch to switch
};

std::string_view TierName(Tier tier);       // "host", "rail", "aggregation", "spine"
std::string_view LinkKindName(LinkKind k);  // "nic", "fabric"

struct Device {
  std::string name{};
  Tier tier = Tier::kHost;
  int pod = -1;                           // hosts and rail switches
  int rail = -1;                          // rail switches and rail aggregation switches
  std::vector<InterfaceId> interfaces{};  // in inventory order (a host's NICs by rail)
};

struct Interface {
  std::string name{};
  DeviceId device = kNone;
  Ipv4 ip{};
  LinkId link = kNone;
  int rail = -1;  // NICs only
};

// Side `lower` is the lower tier: the host NIC, or the rail switch towards a spine.
struct Link {
  std::string name{};
  LinkKind kind = LinkKind::kFabric;
  InterfaceId lower = kNone;
  InterfaceId upper = kNone;
};

}  // namespace hostmesh::topology
