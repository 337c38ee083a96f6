#pragma once

// How well the analyzer's diagnosis names each fault kind: per fault, the
// incidents naming one of its components while it lasts (as "incidents per
// fault" counts them) and the types their diagnoses gave. A fault is named
// right when its expected type is among them and no other type is (the eight
// types); a look-alike (a fault that is none of them: a gray fabric link, a
// lossy switch, a plain latency fault) is right when none of its incidents
// was given a type. A down RNIC is an unreachable one (named from its send
// failures), like an RNIC without a route.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/faults.h"
#include "sim/fleet.h"
#include "sim/scorecard.h"

namespace hostmesh::sim {

// The type diagnosis should name for a fault kind; "unclassified" for look-alikes.
std::string_view ExpectedDiagnosis(FaultKind kind);

struct DiagnosisRow {
  std::uint64_t faults = 0;         // active for a window at least
  std::uint64_t with_incident = 0;  // an incident named one of its components
  std::uint64_t right = 0;
  std::map<std::string, std::uint64_t> named_instead;  // wrong verdicts by type
  double accuracy() const {
    return with_incident == 0 ? 0 : static_cast<double>(right) / static_cast<double>(with_incident);
  }
};
using DiagnosisScore = std::map<FaultKind, DiagnosisRow>;

// Adds one run's faults to `score`; `incidents` are ours (OurIncidents).
void ScoreDiagnosis(const Fleet& fleet, const std::vector<Fault>& faults,
                    const std::vector<IncidentSpan>& incidents, std::int64_t window_ns,
                    DiagnosisScore& score);

void PrintDiagnosisScore(std::ostream& out, const DiagnosisScore& score);
nlohmann::json DiagnosisScoreJson(const DiagnosisScore& score);

}  // namespace hostmesh::sim
