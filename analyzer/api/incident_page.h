// The incident's own page, /incidents/ID (linked from the on-call page's
// incidents table): one self-contained HTML document like the on-call page
// (dashboard.h: same look and helpers, no external assets, the same CSP)
// that reads /api/v1/incidents/ID and its evidence, refreshes every 10 s, and
// shows what made the verdict: a timeline of the suspect's loss against its
// siblings and the fleet's background, the 5-tuples' paths drawn hop by hop
// with the suspect marked, our verdict beside the paper's per window, the
// involved NICs' counters, the agents' flight-recorder events, and the
// diagnosis with its rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hostmesh::analyzer::api {

std::string_view IncidentPageHtml();

// The id of "/incidents/ID" (after the prefix): a positive decimal number.
std::optional<std::uint64_t> IncidentPageId(std::string_view rest);

}  // namespace hostmesh::analyzer::api
