#include "analyzer/diagnosis/fabric_context.h"

#include "analyzer/analysis/topology_adapter.h"

namespace hostmesh::analyzer::diagnosis {

FabricContext::FabricContext(const topology::Topology& topology)
    : topology_(topology),
      links_(analysis::FabricMapFrom(topology).links),
      switch_nics_(topology.devices().size()),
      link_nics_(topology.links().size()) {
  for (topology::LinkId l = 0; l < topology.links().size(); ++l) {
    const topology::Link& link = topology.link(l);
    if (link.kind != topology::LinkKind::kNic) continue;
    const topology::Interface& nic = topology.interface(link.lower);
    const topology::DeviceId sw = topology.DeviceOf(link.upper);
    HostNic host_nic{topology.device(nic.device).name, nic.name};
    if (sw < switch_nics_.size()) switch_nics_[sw].push_back(host_nic);
    link_nics_[l] = std::move(host_nic);
  }
}

FabricContext::FabricContext(std::shared_ptr<const topology::Topology> topology)
    : FabricContext(*topology) {
  owned_ = std::move(topology);
}

DiagnosisContext FabricContext::Context(
    std::function<std::string(const std::string&)> agent_of,
    std::function<std::optional<NicRef>(analysis::HostId, analysis::NicId)> nic_of,
    std::function<std::string(analysis::HostId)> host_name) const {
  DiagnosisContext ctx;
  ctx.links = links_;
  ctx.nic_of = nic_of;
  ctx.link_nic = [this, agent_of](analysis::LinkId link) -> std::optional<NicRef> {
    if (link >= link_nics_.size() || !link_nics_[link]) return std::nullopt;
    std::string agent = agent_of(link_nics_[link]->first);
    if (agent.empty()) return std::nullopt;
    return NicRef{std::move(agent), link_nics_[link]->second};
  };
  ctx.switch_nics = [this, agent_of](analysis::SwitchId sw) {
    std::vector<NicRef> out;
    if (sw >= switch_nics_.size()) return out;
    for (const auto& [host, nic] : switch_nics_[sw]) {
      std::string agent = agent_of(host);
      if (!agent.empty()) out.push_back({std::move(agent), nic});
    }
    return out;
  };
  ctx.describe = [this, nic_of, host_name](const analysis::Incident& inc) -> std::string {
    const analysis::Component& c = inc.suspect;
    switch (inc.kind) {
      case analysis::IncidentKind::kSwitch:
        return c.link < topology_.devices().size() ? "switch " + topology_.device(c.link).name
                                                   : inc.summary;
      case analysis::IncidentKind::kHostProcessing:
        return "host " + host_name(c.host);
      default:
        break;
    }
    if (c.kind == analysis::Component::Kind::kRnic) {
      const std::optional<NicRef> nic = nic_of(c.host, c.nic);
      return "RNIC " + host_name(c.host) + " " + (nic ? nic->nic : "nic" + std::to_string(c.nic));
    }
    return c.link < topology_.links().size() ? "link " + topology_.link(c.link).name : inc.summary;
  };
  return ctx;
}

}  // namespace hostmesh::analyzer::diagnosis
