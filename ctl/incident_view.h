// hostmeshctl incident ID: one incident and the evidence the analyzer froze
// for it (/api/v1/incidents/ID and /api/v1/incidents/ID/evidence) as text:
// what, where, the diagnosis, each group's probes (suspect and siblings)
// with when the first one failed, the windows that found it with the rivals
// they beat, and the counters that moved. Exit code 1 while it is open.
// Pure: tested on fixture JSON.
#pragma once

#include "ctl/json_reader.h"
#include "ctl/oncall_view.h"

namespace hostmesh::ctl {

// `evidence` may be null (none kept: the view says so).
OncallView RenderIncident(const JsonNode& incident, const JsonNode* evidence);

}  // namespace hostmesh::ctl
