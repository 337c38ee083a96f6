#include "analyzer/analysis/topology_adapter.h"

namespace hostmesh::analysis {

FabricMap FabricMapFrom(const topology::Topology& topology) {
  FabricMap map;
  map.switch_count = topology.devices().size();
  map.links.reserve(topology.links().size());
  auto switch_of = [&](topology::InterfaceId i) -> SwitchId {
    if (i == topology::kNone) return kUnknown;
    const auto d = topology.DeviceOf(i);
    return topology.TierOf(d) == topology::Tier::kHost ? kUnknown : d;
  };
  for (const auto& link : topology.links()) {
    map.links.push_back({switch_of(link.lower), switch_of(link.upper)});
  }
  return map;
}

}  // namespace hostmesh::analysis
