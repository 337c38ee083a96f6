// The API's view of a fabric (devices and links with their names), from the
// inventory or from the learned fabric.
#pragma once

#include "analyzer/api/api_snapshot.h"
#include "topology/topology.h"

namespace hostmesh::analyzer::app {

// Links are named "p0r0:s00 - s00:p0r0" (device and port) for an inventory,
// by their two addresses ("198.19.0.12-198.19.0.13") for a learned fabric,
// whose devices and ports are named by address.
api::InventoryView ViewOf(const topology::Topology& topology, bool learned);

}  // namespace hostmesh::analyzer::app
