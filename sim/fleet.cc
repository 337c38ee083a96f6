#include "sim/fleet.h"

#include <algorithm>

#include "topology/inventory_loader.h"

namespace hostmesh::sim {

Fleet::Fleet(const topology::FabricShape& shape)
    : shape_(shape), topology_(topology::BuildTopology(topology::GenerateInventory(shape))) {
  const auto& topo = topology_;
  const std::size_t links = topo.links().size();
  lower_device_.resize(links);
  upper_device_.resize(links);
  nic_link_.assign(links, 0);
  nic_host_.assign(links, 0);
  nic_nic_.assign(links, 0);
  for (LinkId l = 0; l < links; ++l) {
    lower_device_[l] = topo.DeviceOf(topo.link(l).lower);
    upper_device_[l] = topo.DeviceOf(topo.link(l).upper);
  }
  // Links going up from each device, for the reachability walk below.
  std::vector<std::vector<LinkId>> up_links(topo.devices().size());
  for (LinkId l = 0; l < links; ++l) up_links[lower_device_[l]].push_back(l);

  hosts_per_switch_.assign(topo.devices().size(), 0);
  std::vector<std::uint32_t> seen(topo.devices().size(), 0);
  std::uint32_t stamp = 0;
  for (DeviceId d = 0; d < topo.devices().size(); ++d) {
    const topology::Device& dev = topo.device(d);
    if (dev.tier != topology::Tier::kHost) continue;
    FleetHost host;
    host.name = dev.name;
    for (const topology::InterfaceId i : dev.interfaces) {
      const topology::Interface& nic = topo.interface(i);
      if (nic.link == topology::kNone) continue;
      const auto id = static_cast<std::uint32_t>(host.nic_ips.size());
      host.nic_ips.push_back(nic.ip);
      host.rails.push_back(nic.rail);
      host.nic_links.push_back(nic.link);
      nic_link_[nic.link] = 1;
      nic_host_[nic.link] = static_cast<std::uint32_t>(hosts_.size());
      nic_nic_[nic.link] = id;
    }
    // Probes between a host's own NICs climb from its rail switches and come
    // back down to them: the switches they reach are the upward closure.
    ++stamp;
    std::vector<DeviceId> stack;
    for (const LinkId l : host.nic_links) stack.push_back(upper_device_[l]);
    while (!stack.empty()) {
      const DeviceId s = stack.back();
      stack.pop_back();
      if (seen[s] == stamp) continue;
      seen[s] = stamp;
      host.switches.push_back(s);
      ++hosts_per_switch_[s];
      for (const LinkId l : up_links[s]) stack.push_back(upper_device_[l]);
    }
    std::sort(host.switches.begin(), host.switches.end());
    hosts_.push_back(std::move(host));
  }
}

Ipv4 Fleet::IngressAddress(LinkId link, bool going_up) const {
  const topology::Link& l = topology_.link(link);
  return topology_.interface(going_up ? l.upper : l.lower).ip;
}

bool Fleet::is_switch(DeviceId device) const {
  return topology_.TierOf(device) != topology::Tier::kHost;
}

}  // namespace hostmesh::sim
