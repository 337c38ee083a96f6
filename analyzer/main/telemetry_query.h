// /api/v1/telemetry's data: scans the stored NIC telemetry of a range and
// sums it per (agent, NIC name), names from the stored Hellos.
#pragma once

#include "analyzer/api/render_telemetry.h"
#include "analyzer/store/store.h"

namespace hostmesh::analyzer::app {

api::TelemetryAnswer QueryTelemetry(const store::Store& store, const api::TelemetryQuery& query);

}  // namespace hostmesh::analyzer::app
