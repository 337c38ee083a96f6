#include "sim/components.h"

namespace hostmesh::sim {

std::string DescribeKey(const Fleet& fleet, ComponentKey key) {
  static constexpr const char* kCategory[] = {"loss", "latency", "host"};
  const auto& topo = fleet.topology();
  std::string out = kCategory[static_cast<int>(CategoryOf(key))];
  const std::uint64_t id = IdOf(key);
  switch (KindOf(key)) {
    case ComponentKind::kLink:
      return out + " link " +
             (id < topo.links().size() ? topo.link(static_cast<LinkId>(id)).name
                                       : std::to_string(id));
    case ComponentKind::kRnic: {
      const auto host = static_cast<std::uint32_t>(id >> 8);
      const auto nic = static_cast<std::uint32_t>(id & 0xFF);
      const std::string name =
          host < fleet.hosts().size() ? fleet.hosts()[host].name : std::to_string(host);
      return out + " rnic " + name + "/nic" + std::to_string(nic);
    }
    case ComponentKind::kSwitch:
      return out + " switch " +
             (id < topo.devices().size() ? topo.device(static_cast<DeviceId>(id)).name
                                         : std::to_string(id));
    case ComponentKind::kHost:
      return "host " + (id < fleet.hosts().size() ? fleet.hosts()[id].name : std::to_string(id));
  }
  return out;
}

}  // namespace hostmesh::sim
