// /api/v1/telemetry: per-NIC counter deltas summed over a time range, with the
// link state at its end (see "NIC telemetry" in docs/agent.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/telemetry/telemetry_rollup.h"

namespace hostmesh::analyzer::api {

struct TelemetryQuery {
  std::int64_t from_ns = 0;
  std::int64_t to_ns = 0;
  std::string agent_id;      // empty: all
  std::string nic;           // empty: all
  std::size_t limit = 1000;  // NIC rows
};

struct TelemetryAnswer {
  std::vector<telemetry::NicTelemetryRow> rows;  // at most limit
  bool truncated = false;                        // more NICs matched
  std::string error;                             // the store failed
};

std::string RenderTelemetry(const TelemetryQuery& query, const TelemetryAnswer& answer);

}  // namespace hostmesh::analyzer::api
