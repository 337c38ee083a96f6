#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "topology/model.h"

namespace hostmesh::topology {

struct SwitchGraph;  // Boost.Graph of the switch-to-switch links (switch_graph.h)

// An immutable fabric with its lookups: address -> interface, name -> device,
// and a graph of the switches for path queries. Cheap to copy (the graph is shared).
class Topology {
 public:
  Topology();
  ~Topology();
  Topology(const Topology&);
  Topology& operator=(const Topology&);
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  std::span<const Device> devices() const { return devices_; }
  std::span<const Interface> interfaces() const { return interfaces_; }
  std::span<const Link> links() const { return links_; }

  const Device& device(DeviceId id) const { return devices_[id]; }
  const Interface& interface(InterfaceId id) const { return interfaces_[id]; }
  const Link& link(LinkId id) const { return links_[id]; }

  // The interface holding `ip`, or kNone.
  InterfaceId FindInterface(Ipv4 ip) const {
    const auto it = by_ip_.find(ip);
    return it == by_ip_.end() ? kNone : it->second;
  }
  std::optional<DeviceId> FindDevice(std::string_view name) const;
  // The interface `name` of `device`, or kNone.
  InterfaceId FindInterface(DeviceId device, std::string_view name) const;

  // The far end of the interface's link, or kNone when it has no link.
  InterfaceId Peer(InterfaceId id) const;
  // The device an interface sits on.
  DeviceId DeviceOf(InterfaceId id) const { return interfaces_[id].device; }
  Tier TierOf(DeviceId id) const { return devices_[id].tier; }

  // "p0r0:s00 - s00:p0r0": the link named by device and port, lower end first.
  std::string Describe(LinkId id) const;
  // "p0r0:s00 (198.19.0.0)".
  std::string DescribeInterface(InterfaceId id) const;

  size_t CountDevices(Tier tier) const;

  const SwitchGraph& graph() const { return *graph_; }

 private:
  friend class TopologyBuilder;

  std::vector<Device> devices_;
  std::vector<Interface> interfaces_;
  std::vector<Link> links_;
  std::unordered_map<Ipv4, InterfaceId> by_ip_;
  std::unordered_map<std::string, DeviceId> by_name_;
  std::shared_ptr<const SwitchGraph> graph_;
};

// Assembles a Topology. The builder checks nothing beyond what its
// preconditions say; the inventory loader and the generator validate first.
class TopologyBuilder {
 public:
  DeviceId AddDevice(Device device);
  // Appends the interface to its device's list. Precondition: the IP is unique.
  InterfaceId AddInterface(Interface interface);
  // Precondition: both interfaces exist and have no link yet.
  LinkId AddLink(Link link);

  // Read access while building (the loader cross-checks against it).
  const Topology& partial() const { return topology_; }

  // Builds the graph; the builder is spent afterwards.
  Topology Finish() &&;

 private:
  Topology topology_;
};

}  // namespace hostmesh::topology
