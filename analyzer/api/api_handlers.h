// Mounts the read-only JSON API (/api/v1/...) on a router. Handlers are thin:
// take the current snapshot, render it.
#pragma once

#include <functional>
#include <memory>

#include "analyzer/api/api_snapshot.h"
#include "common/base/clock.h"
#include "common/http/router.h"

namespace hostmesh::analyzer::api {

// Returns the latest snapshot; called once per request from server threads,
// so it must be thread-safe (a mutex-guarded shared_ptr copy).
using SnapshotSource = std::function<std::shared_ptr<const ApiSnapshot>()>;

// Mounts /api/v1/{status,rnics,links,switches,coverage,topology,incidents,sla}
// and the on-call page at "/". `clock` (for uptime and window lag) must
// outlive the router.
void MountApi(http::Router& router, SnapshotSource source, const Clock& clock);

}  // namespace hostmesh::analyzer::api
