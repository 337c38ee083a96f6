#pragma once

// The inventory exactly as the YAML file spells it (the format `fabric
// topology` prints, documented in topology/README.md): names refer to names, no
// cross-reference checked yet. The loader reads YAML into this, the generator
// produces it, the writer prints it, and BuildTopology (inventory_loader.h)
// validates it into a Topology.

#include <optional>
#include <string>
#include <vector>

#include "topology/ipv4.h"
#include "topology/model.h"

namespace hostmesh::topology {

inline constexpr int kInventoryVersion = 1;

struct InventoryManagement {
  std::string network{};  // "198.19.128.0/17"
  Ipv4 analyzer{};
  friend bool operator==(const InventoryManagement&, const InventoryManagement&) = default;
};

struct InventoryNic {
  std::string name{};
  int rail = 0;
  Ipv4 ip{};
  std::string netdev{};
  std::string switch_name{};  // key "switch": the rail switch it hangs off
  std::string switch_interface{};
  Ipv4 switch_ip{};
  friend bool operator==(const InventoryNic&, const InventoryNic&) = default;
};

struct InventoryHost {
  std::string name{};
  int pod = 0;
  std::optional<Ipv4> mgmt_ip;
  std::vector<InventoryNic> nics{};
  friend bool operator==(const InventoryHost&, const InventoryHost&) = default;
};

struct InventoryInterface {
  std::string name{};
  Ipv4 ip{};
  std::string peer{};
  std::string peer_interface{};
  Ipv4 peer_ip{};
  friend bool operator==(const InventoryInterface&, const InventoryInterface&) = default;
};

struct InventorySwitch {
  std::string name{};
  Tier tier = Tier::kRail;    // never kHost
  std::optional<int> pod{};   // rail switches
  std::optional<int> rail{};  // rail and rail aggregation switches
  std::vector<InventoryInterface> interfaces{};
  friend bool operator==(const InventorySwitch&, const InventorySwitch&) = default;
};

struct InventoryLinkEnd {
  std::string device{};
  std::string interface {};
  Ipv4 ip{};
  friend bool operator==(const InventoryLinkEnd&, const InventoryLinkEnd&) = default;
};

struct InventoryLink {
  std::string name{};
  LinkKind kind = LinkKind::kFabric;
  std::string subnet{};  // "198.18.0.0/31"
  InventoryLinkEnd a{};  // the lower tier
  InventoryLinkEnd b{};
  friend bool operator==(const InventoryLink&, const InventoryLink&) = default;
};

struct Inventory {
  int version = kInventoryVersion;
  std::optional<InventoryManagement> management{};
  std::vector<InventoryHost> hosts{};
  std::vector<InventorySwitch> switches{};
  std::vector<InventoryLink> links{};
  friend bool operator==(const Inventory&, const Inventory&) = default;
};

}  // namespace hostmesh::topology
