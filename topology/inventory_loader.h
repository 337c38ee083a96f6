#pragma once

#include <filesystem>
#include <functional>
#include <string_view>
#include <utility>

#include "common/config/value_types.h"
#include "topology/inventory.h"
#include "topology/topology.h"

namespace hostmesh::topology {

// Reads an inventory (the `fabric topology` format, topology/README.md) and
// checks it: keys and values, then every cross-reference. Throws
// config::ConfigError listing every problem with its line and key path: unknown
// key, bad value, unknown device, duplicate IP, link to a missing interface, NIC
// not on a rail switch, ends that disagree.
Topology LoadInventory(std::string_view text, std::string_view source_name);
// A file over kMaxInventoryFileBytes is refused before it is parsed.
Topology LoadInventoryFile(const std::filesystem::path& path);

// The largest inventory file read. The inventory `hostmeshctl topology
// generate` writes for 10,000 hosts x 8 rails x 64 spines is 39.6 MiB
// (bench/config_errors_bench prints it; a unit test keeps a fleet of that
// size under half the cap): room for longer names, comments, a third tier.
inline constexpr config::ByteSize kMaxInventoryFileBytes = config::MiB(128);

// The schema part only (keys and value types), for tools that edit inventories.
Inventory ParseInventory(std::string_view text, std::string_view source_name);

// The line and column of a key path ("hosts[3].nics[1].switch"), 0 when unknown.
using Locator = std::function<std::pair<int, int>(std::string_view path)>;

// The cross-reference part: validates and builds. Issues carry positions from
// `locate` (none for inventories that never were text, such as generated ones).
Topology BuildTopology(const Inventory& inventory, std::string_view source_name = "inventory",
                       const Locator& locate = nullptr);

}  // namespace hostmesh::topology
