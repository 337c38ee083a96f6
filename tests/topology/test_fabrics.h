#pragma once

#include <string>

#include "topology/generator.h"
#include "topology/topology.h"

namespace hostmesh::topology::testing {

// What `deploy/testbed/fabric topology` prints for that size (runs the script).
std::string FabricTopologyOutput(int hosts, int rails, int spines, int pods);

// Generated inventory text (hostmeshctl's header) and its topology.
std::string GeneratedText(const FabricShape& shape);
Topology Generated(const FabricShape& shape);

// `text` without its leading "# ..." comment lines (the headers name the tool).
std::string WithoutHeader(const std::string& text);

// The NIC address of host h, rail r in a generated fabric.
Ipv4 NicIp(const Topology& topo, int host, int rail);

}  // namespace hostmesh::topology::testing
