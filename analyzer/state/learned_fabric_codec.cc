#include "analyzer/state/learned_fabric_codec.h"

#include "hostmesh/v1/analyzer_state.pb.h"

namespace hostmesh::analyzer::state {

std::string EncodeLearnedFabric(const topology::LearnedFabric& fabric) {
  v1::state::LearnedFabric out;
  for (const auto& d : fabric.devices) {
    auto* device = out.add_devices();
    device->set_name(d.name);
    device->set_tier(static_cast<std::uint32_t>(d.tier));
    device->set_rail(d.rail);
    device->set_merged_into(d.merged_into);
  }
  for (const auto& p : fabric.ports) {
    auto* port = out.add_ports();
    port->set_ip(p.ip.value);
    port->set_device(p.device);
    port->set_name(p.name);
    port->set_rail(p.rail);
  }
  for (const auto& l : fabric.links) {
    auto* link = out.add_links();
    link->set_lower(l.lower.value);
    link->set_upper(l.upper.value);
    link->set_nic(l.kind == topology::LinkKind::kNic);
  }
  return out.SerializeAsString();
}

std::optional<topology::LearnedFabric> DecodeLearnedFabric(std::string_view bytes) {
  v1::state::LearnedFabric in;
  if (!in.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return std::nullopt;
  topology::LearnedFabric out;
  for (const auto& d : in.devices()) {
    if (d.tier() > static_cast<std::uint32_t>(topology::Tier::kSpine)) return std::nullopt;
    out.devices.push_back(
        {d.name(), static_cast<topology::Tier>(d.tier()), d.rail(), d.merged_into()});
  }
  for (const auto& p : in.ports()) {
    out.ports.push_back({topology::Ipv4{p.ip()}, p.device(), p.name(), p.rail()});
  }
  for (const auto& l : in.links()) {
    out.links.push_back({topology::Ipv4{l.lower()}, topology::Ipv4{l.upper()},
                         l.nic() ? topology::LinkKind::kNic : topology::LinkKind::kFabric});
  }
  return out;
}

}  // namespace hostmesh::analyzer::state
