// What one judged window said of an incident's suspect, for its evidence:
// the estimate, the probe counts, the confidence, the diagnosis, and the
// rival explanations the same inference ranked below it. Pure.
#pragma once

#include <cstddef>

#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/window_report.h"
#include "hostmesh/v1/evidence.pb.h"

namespace hostmesh::analyzer::evidence {

// Rivals kept per window: links, and switches.
inline constexpr std::size_t kRivalLinks = 3;
inline constexpr std::size_t kRivalSwitches = 2;

// `incident` as updated by `report` (and diagnosed).
v1::evidence::WindowVerdict VerdictOf(const analysis::Incident& incident,
                                      const analysis::WindowReport& report);

}  // namespace hostmesh::analyzer::evidence
