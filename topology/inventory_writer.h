#pragma once

#include <span>
#include <string>

#include "topology/inventory.h"

namespace hostmesh::topology {

// The inventory as block YAML, byte for byte what `fabric topology` prints
// (same keys, order, indentation and quoting), after `header` as "# " comments.
std::string WriteInventoryYaml(const Inventory& inventory, std::span<const std::string> header);

}  // namespace hostmesh::topology
