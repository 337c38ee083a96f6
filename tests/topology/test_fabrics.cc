#include "tests/topology/test_fabrics.h"

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "topology/inventory_loader.h"
#include "topology/inventory_writer.h"

namespace hostmesh::topology::testing {

std::string FabricTopologyOutput(int hosts, int rails, int spines, int pods) {
  const std::string command = std::string(HOSTMESH_PYTHON3) + " " + HOSTMESH_SOURCE_DIR +
                              "/deploy/testbed/fabric topology --hosts " + std::to_string(hosts) +
                              " --rails " + std::to_string(rails) + " --spines " +
                              std::to_string(spines) + " --pods " + std::to_string(pods);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string out;
  char buffer[65536];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) out.append(buffer, n);
  return out;
}

std::string GeneratedText(const FabricShape& shape) {
  const std::string header = "generated for a test: " + DescribeShape(shape);
  return WriteInventoryYaml(GenerateInventory(shape), std::span(&header, 1));
}

Topology Generated(const FabricShape& shape) {
  return BuildTopology(GenerateInventory(shape));
}

std::string WithoutHeader(const std::string& text) {
  size_t pos = 0;
  while (text.compare(pos, 1, "#") == 0) pos = text.find('\n', pos) + 1;
  return text.substr(pos);
}

Ipv4 NicIp(const Topology& topo, int host, int rail) {
  const Device& d = topo.device(static_cast<DeviceId>(host));
  return topo.interface(d.interfaces[static_cast<size_t>(rail)]).ip;
}

}  // namespace hostmesh::topology::testing
