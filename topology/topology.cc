#include "topology/topology.h"

#include <algorithm>

#include "topology/switch_graph.h"

namespace hostmesh::topology {

std::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kHost:
      return "host";
    case Tier::kRail:
      return "rail";
    case Tier::kAggregation:
      return "aggregation";
    case Tier::kSpine:
      return "spine";
  }
  return "?";
}

std::string_view LinkKindName(LinkKind kind) {
  return kind == LinkKind::kNic ? "nic" : "fabric";
}

Topology::Topology() : graph_(std::make_shared<SwitchGraph>()) {}
Topology::~Topology() = default;
Topology::Topology(const Topology&) = default;
Topology& Topology::operator=(const Topology&) = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

std::optional<DeviceId> Topology::FindDevice(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

InterfaceId Topology::FindInterface(DeviceId device, std::string_view name) const {
  for (InterfaceId id : devices_[device].interfaces) {
    if (interfaces_[id].name == name) return id;
  }
  return kNone;
}

InterfaceId Topology::Peer(InterfaceId id) const {
  const LinkId link = interfaces_[id].link;
  if (link == kNone) return kNone;
  return links_[link].lower == id ? links_[link].upper : links_[link].lower;
}

std::string Topology::DescribeInterface(InterfaceId id) const {
  const Interface& i = interfaces_[id];
  return devices_[i.device].name + ":" + i.name + " (" + i.ip.ToString() + ")";
}

std::string Topology::Describe(LinkId id) const {
  const Link& l = links_[id];
  const Interface& lo = interfaces_[l.lower];
  const Interface& up = interfaces_[l.upper];
  return devices_[lo.device].name + ":" + lo.name + " - " + devices_[up.device].name + ":" +
         up.name;
}

size_t Topology::CountDevices(Tier tier) const {
  return static_cast<size_t>(std::count_if(devices_.begin(), devices_.end(),
                                           [&](const Device& d) { return d.tier == tier; }));
}

DeviceId TopologyBuilder::AddDevice(Device device) {
  const auto id = static_cast<DeviceId>(topology_.devices_.size());
  topology_.by_name_.emplace(device.name, id);
  topology_.devices_.push_back(std::move(device));
  return id;
}

InterfaceId TopologyBuilder::AddInterface(Interface interface) {
  const auto id = static_cast<InterfaceId>(topology_.interfaces_.size());
  topology_.by_ip_.emplace(interface.ip, id);
  topology_.devices_[interface.device].interfaces.push_back(id);
  topology_.interfaces_.push_back(std::move(interface));
  return id;
}

LinkId TopologyBuilder::AddLink(Link link) {
  const auto id = static_cast<LinkId>(topology_.links_.size());
  topology_.interfaces_[link.lower].link = id;
  topology_.interfaces_[link.upper].link = id;
  topology_.links_.push_back(std::move(link));
  return id;
}

Topology TopologyBuilder::Finish() && {
  auto graph = std::make_shared<SwitchGraph>();
  graph->g = SwitchGraphType(topology_.devices_.size());
  for (LinkId id = 0; id < topology_.links_.size(); ++id) {
    const Link& l = topology_.links_[id];
    const DeviceId a = topology_.interfaces_[l.lower].device;
    const DeviceId b = topology_.interfaces_[l.upper].device;
    if (topology_.devices_[a].tier == Tier::kHost || topology_.devices_[b].tier == Tier::kHost) {
      continue;
    }
    boost::add_edge(a, b, SwitchEdge{id}, graph->g);
  }
  graph->IndexPeers();
  topology_.graph_ = std::move(graph);
  return std::move(topology_);
}

}  // namespace hostmesh::topology
