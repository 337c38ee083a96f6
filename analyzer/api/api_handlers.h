// Mounts the read-only JSON API (/api/v1/...) on a router. Handlers are thin:
// take the current snapshot, render it.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "analyzer/api/api_snapshot.h"
#include "analyzer/api/render_evidence.h"
#include "analyzer/api/render_telemetry.h"
#include "common/base/clock.h"
#include "common/http/router.h"
#include "hostmesh/v1/analyzer_state.pb.h"

namespace hostmesh::analyzer::api {

// Returns the latest snapshot; called once per request from server threads,
// so it must be thread-safe (a mutex-guarded shared_ptr copy).
using SnapshotSource = std::function<std::shared_ptr<const ApiSnapshot>()>;

// Stored window summaries with from_ns <= start < to_ns, oldest first, at most
// `limit`; sets *truncated when more matched. Called from server threads.
using HistorySource = std::function<std::vector<v1::state::WindowSummary>(
    std::int64_t from_ns, std::int64_t to_ns, std::size_t limit, bool* truncated)>;

// Per-NIC telemetry summed over a range (store scan). Called from server threads.
using TelemetrySource = std::function<TelemetryAnswer(const TelemetryQuery& query)>;

// Mounts /api/v1/{status,rnics,links,switches,coverage,topology,incidents,sla},
// /api/v1/topology/disagreements and the on-call page at "/",
// /api/v1/sla/history when `history` is set and /api/v1/telemetry when
// `telemetry` is; with `telemetry`, /api/v1/rnics shows each RNIC's counter
// deltas over the judged window beside its verdict. `clock` (for uptime, window lag and the default
// periods) must outlive the router. /api/v1/incidents/{id} serves one
// incident, and with `evidence` /api/v1/incidents/{id}/evidence its evidence.
void MountApi(http::Router& router, SnapshotSource source, const Clock& clock,
              HistorySource history = {}, TelemetrySource telemetry = {},
              EvidenceSource evidence = {});

}  // namespace hostmesh::analyzer::api
