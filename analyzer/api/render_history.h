// /api/v1/sla/history: the stored summaries of past windows (30 days by
// default), for SLA reports over any period and for what was wrong when.
#pragma once

#include <string>
#include <vector>

#include "analyzer/api/api_snapshot.h"
#include "hostmesh/v1/analyzer_state.pb.h"

namespace hostmesh::analyzer::api {

// Oldest first. `names`: the current snapshot, for link names. `truncated`:
// more windows matched than were returned (the caller's limit).
std::string RenderSlaHistory(const std::vector<v1::state::WindowSummary>& windows,
                             const ApiSnapshot& names, bool truncated);

}  // namespace hostmesh::analyzer::api
