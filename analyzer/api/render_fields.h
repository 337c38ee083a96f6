// JSON pieces shared by the renderers (render.cc, render_history.cc,
// render_telemetry.cc).
#pragma once

#include "analyzer/analysis/window_report.h"
#include "analyzer/api/api_snapshot.h"
#include "analyzer/api/json_values.h"
#include "analyzer/telemetry/nic_counter_totals.h"

namespace hostmesh::analyzer::api {

// {"count":..,"p50":..,"p90":..,"p99":..,"p999":..}
Json QuantilesJson(const analysis::Quantiles& q);
// Adds the fields of one SLA row to `row` (an object the caller made).
void AddSlaFields(Json& row, const analysis::SlaRow& sla);
// {"link":id,"name":...}: the inventory's name, else "link <id>".
Json LinkNameJson(const ApiSnapshot& s, analysis::LinkId link);
// One NIC's totals as /api/v1/telemetry writes them (samples, period,
// counters, pause frames per priority, link and PCIe state); /api/v1/rnics
// writes the same beside each RNIC's verdict.
Json NicTotalsJson(const telemetry::NicCounterTotals& totals);

}  // namespace hostmesh::analyzer::api
