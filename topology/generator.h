#pragma once

#include <string>

#include "topology/inventory.h"

namespace hostmesh::topology {

// A standard rail-optimized shape. Two tiers (the testbed's): rail switch p,r
// per pod and rail, every rail switch joined to every spine. Three tiers: rail
// switches join `aggregations` rail aggregation switches of their rail, which
// join every spine; traffic between rails still crosses the spines, so probes
// between the NICs of one host reach every tier.
struct FabricShape {
  int hosts = 0;
  int rails = 0;
  int spines = 0;
  int pods = 1;
  int tiers = 2;         // 2 or 3
  int aggregations = 0;  // per rail, 3 tiers only; 0 means as many as spines
};

// The inventory of `shape`, with the names and addresses of the testbed
// (deploy/testbed/hmfabric/layout.py) for two tiers; topology/README.md
// documents both. Throws std::invalid_argument for a shape the addressing cannot
// express (the same limits as the testbed's).
Inventory GenerateInventory(const FabricShape& shape);

// "4 hosts x 4 rails x 4 spines, 2 pods" (the testbed's wording), plus
// ", 3 tiers (2 aggregation switches per rail)" for three tiers.
std::string DescribeShape(const FabricShape& shape);

}  // namespace hostmesh::topology
