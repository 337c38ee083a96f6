#pragma once

// Which RDMA devices this host has, for `transport: auto` (verbs for the NICs
// whose device exists, UDP for the rest) and for clear startup errors.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/verbs/verbs_status.h"

namespace hostmesh::agent::verbs {

struct RdmaDeviceInfo {
  std::string name;             // ibv_get_device_name: "mlx5_0", "rxe0"
  std::uint64_t node_guid = 0;  // host byte order
};

// Every device libibverbs sees. A host without an RDMA stack (no kernel
// support, no providers) yields an empty list, not an error: that is the
// normal case for `transport: auto` on a TCP cluster.
VerbsResult<std::vector<RdmaDeviceInfo>> ListRdmaDevices();

// True when ListRdmaDevices() has a device named `name` (false on errors).
bool HasRdmaDevice(std::string_view name);

}  // namespace hostmesh::agent::verbs
