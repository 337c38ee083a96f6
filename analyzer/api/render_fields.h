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
// Host name, or "host-<id>" when the snapshot does not know it.
std::string HostName(const ApiSnapshot& s, analysis::HostId host);
// Adds host, nic, nic_name, ip and rail of an RNIC to `j`.
void AddRnicRef(Json& j, const ApiSnapshot& s, analysis::HostId host, analysis::NicId nic);
// Adds link, name and ends of a link to `j`.
void AddLinkRef(Json& j, const ApiSnapshot& s, analysis::LinkId link);
// Adds switch, name, tier, pod and rail of a switch to `j`.
void AddSwitchRef(Json& j, const ApiSnapshot& s, analysis::SwitchId id);
// One incident as /api/v1/incidents lists it.
Json IncidentJson(const ApiSnapshot& s, const analysis::Incident& inc);

}  // namespace hostmesh::analyzer::api
