// JSON bodies of the /api/v1/ endpoints, from a snapshot. Pure functions:
// tested on hand-built snapshots, field by field.
#pragma once

#include <cstdint>
#include <string>

#include "analyzer/api/api_snapshot.h"

namespace hostmesh::analyzer::api {

std::string RenderStatus(const ApiSnapshot& snapshot, std::int64_t now_ns);
std::string RenderRnics(const ApiSnapshot& snapshot);
// `suspicious_only`: just the links the better method blamed.
std::string RenderLinks(const ApiSnapshot& snapshot, bool suspicious_only);
std::string RenderIncidents(const ApiSnapshot& snapshot);
std::string RenderSla(const ApiSnapshot& snapshot);

std::string_view RnicStateName(analysis::RnicState state);  // "ok", "lossy", "down"

}  // namespace hostmesh::analyzer::api
