#pragma once

// The simulated fleet's fabric: a generated rail-optimized topology (the same
// generator, names and addresses as the testbed), its hosts with their NICs,
// and what the packet and traceroute models ask of links and switches.

#include <cstdint>
#include <string>
#include <vector>

#include "topology/generator.h"
#include "topology/topology.h"

namespace hostmesh::sim {

using topology::DeviceId;
using topology::Ipv4;
using topology::LinkId;

struct FleetHost {
  std::string name;
  std::vector<Ipv4> nic_ips;       // by NIC id (= rail order of the inventory)
  std::vector<int> rails;          // by NIC id
  std::vector<LinkId> nic_links;   // by NIC id
  std::vector<DeviceId> switches;  // every switch a probe of this host can reach
};

class Fleet {
 public:
  // Throws std::invalid_argument for a shape the generator cannot address.
  explicit Fleet(const topology::FabricShape& shape);

  const topology::FabricShape& shape() const { return shape_; }
  const topology::Topology& topology() const { return topology_; }
  const std::vector<FleetHost>& hosts() const { return hosts_; }
  std::size_t link_count() const { return lower_device_.size(); }
  std::size_t device_count() const { return hosts_per_switch_.size(); }

  DeviceId lower_device(LinkId link) const { return lower_device_[link]; }
  DeviceId upper_device(LinkId link) const { return upper_device_[link]; }
  bool is_nic_link(LinkId link) const { return nic_link_[link] != 0; }
  // The host and NIC on a NIC link (only when is_nic_link).
  std::uint32_t nic_link_host(LinkId link) const { return nic_host_[link]; }
  std::uint32_t nic_link_nic(LinkId link) const { return nic_nic_[link]; }
  // The address a switch answers traceroute from when a packet reaches it over
  // `link` (icmp_errors_use_inbound_ifaddr: its interface on that link).
  Ipv4 IngressAddress(LinkId link, bool going_up) const;
  // Hosts whose probes can reach a switch: they share its ICMP budget.
  std::uint32_t hosts_reaching(DeviceId sw) const { return hosts_per_switch_[sw]; }
  bool is_switch(DeviceId device) const;

 private:
  topology::FabricShape shape_;
  topology::Topology topology_;
  std::vector<FleetHost> hosts_;
  std::vector<DeviceId> lower_device_, upper_device_;
  std::vector<std::uint8_t> nic_link_;
  std::vector<std::uint32_t> nic_host_, nic_nic_;
  std::vector<std::uint32_t> hosts_per_switch_;
};

}  // namespace hostmesh::sim
