#pragma once

// The one place the analysis meets topology::Topology: link ids are the
// topology's LinkIds, switch ids its DeviceIds. A path for PathRecord::links is
// topology::PathResolver's ResolvedPath::links (kNone == kUnknown).

#include "analyzer/analysis/types.h"
#include "topology/topology.h"

namespace hostmesh::analysis {

static_assert(kUnknown == topology::kNone);

// Link ends and switch count. Rails per host are left to ingest, which knows
// which agent is which host (FabricMap::rails).
FabricMap FabricMapFrom(const topology::Topology& topology);

}  // namespace hostmesh::analysis
