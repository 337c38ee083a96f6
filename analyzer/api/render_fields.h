// JSON pieces shared by the renderers (render.cc, render_history.cc).
#pragma once

#include <string_view>

#include "analyzer/analysis/window_report.h"
#include "analyzer/api/api_snapshot.h"
#include "analyzer/api/json_writer.h"

namespace hostmesh::analyzer::api {

// "key":{"count":..,"p50":..,"p90":..,"p99":..,"p999":..}
void WriteQuantiles(JsonWriter& w, std::string_view key, const analysis::Quantiles& q);
// The fields of one SLA row (inside an object the caller opened).
void WriteSlaFields(JsonWriter& w, const analysis::SlaRow& row);
// {"link":id,"name":...}: the inventory's name, else "link <id>".
void WriteLinkName(JsonWriter& w, const ApiSnapshot& s, analysis::LinkId link);

}  // namespace hostmesh::analyzer::api
