#include "analyzer/feed/topology_view.h"

namespace hostmesh::analyzer::app {
namespace {

api::LinkEnd EndOf(const topology::Topology& topo, topology::InterfaceId id) {
  if (id == topology::kNone) return {};
  const topology::Interface& itf = topo.interface(id);
  return {topo.device(itf.device).name, itf.name, itf.ip.ToString(), itf.device};
}

}  // namespace

api::InventoryView ViewOf(const topology::Topology& topo, bool learned) {
  api::InventoryView view;
  view.devices.reserve(topo.devices().size());
  for (const topology::Device& d : topo.devices()) {
    view.devices.push_back({d.name, std::string(topology::TierName(d.tier)), d.pod, d.rail});
  }
  view.links.reserve(topo.links().size());
  for (topology::LinkId id = 0; id < topo.links().size(); ++id) {
    const topology::Link& link = topo.link(id);
    view.links.push_back({learned ? link.name : topo.Describe(id), EndOf(topo, link.lower),
                          EndOf(topo, link.upper), std::string(topology::LinkKindName(link.kind))});
  }
  return view;
}

}  // namespace hostmesh::analyzer::app
