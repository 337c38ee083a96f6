#pragma once

#include <filesystem>
#include <functional>
#include <string_view>
#include <utility>

#include "topology/inventory.h"
#include "topology/topology.h"

namespace hostmesh::topology {

// Reads an inventory (the `fabric topology` format, topology/README.md) and
// checks it: keys and values, then every cross-reference. Throws
// config::ConfigError listing every problem with its line and key path: unknown
// key, bad value, unknown device, duplicate IP, link to a missing interface, NIC
// not on a rail switch, ends that disagree.
Topology LoadInventory(std::string_view text, std::string_view source_name);
Topology LoadInventoryFile(const std::filesystem::path& path);

// The schema part only (keys and value types), for tools that edit inventories.
Inventory ParseInventory(std::string_view text, std::string_view source_name);

// The line and column of a key path ("hosts[3].nics[1].switch"), 0 when unknown.
using Locator = std::function<std::pair<int, int>(std::string_view path)>;

// The cross-reference part: validates and builds. Issues carry positions from
// `locate` (none for inventories that never were text, such as generated ones).
Topology BuildTopology(const Inventory& inventory, std::string_view source_name = "inventory",
                       const Locator& locate = nullptr);

}  // namespace hostmesh::topology
