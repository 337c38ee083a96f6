// The on-call page served at "/": one self-contained HTML document (inline CSS
// and script, no external assets, no build step) that polls the JSON API every
// 10 s and renders the SLA at a glance, the fabric as rails by spines with the
// suspects coloured, open incidents with their evidence and a timeline, RNIC
// and link tables, latency hotspots and SLA per rail, and says so when the
// analyzer stops answering (keeping the last data, greyed).
#pragma once

#include <string_view>

namespace hostmesh::analyzer::api {

std::string_view DashboardHtml();

// Served with the page: nothing may load from elsewhere; the script may only
// talk back to the analyzer.
inline constexpr std::string_view kDashboardCsp =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'";

}  // namespace hostmesh::analyzer::api
