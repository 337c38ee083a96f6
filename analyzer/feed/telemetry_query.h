// /api/v1/telemetry's data: scans the stored NIC telemetry of a range and
// sums it per (agent, NIC name), names from the stored Hellos.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/api/render_telemetry.h"
#include "analyzer/store/store.h"

namespace hostmesh::analyzer::app {

api::TelemetryAnswer QueryTelemetry(const store::Store& store, const api::TelemetryQuery& query);

// The same for [from_ns, to_ns) and the given agents only (the store seeks to
// each): what diagnosis reads of a window. Not limited: the caller bounds `agents`.
api::TelemetryAnswer QueryAgentsTelemetry(const store::Store& store, std::int64_t from_ns,
                                          std::int64_t to_ns,
                                          const std::vector<std::string>& agents);

}  // namespace hostmesh::analyzer::app
