#pragma once

// Diagnoses every finding of one judged window at once: the RNICs, links and
// hosts the analysis blamed (a WindowReport reduced to ProbeEvidence) next to
// the NIC telemetry of the same window, looked up by (agent, NIC name) as
// TelemetryRollup produces it. Pure; the analysis fills the input.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/telemetry/telemetry_rollup.h"

namespace hostmesh::analyzer::diagnosis {

struct NicRef {
  std::string agent_id;
  std::string nic;  // the agent's NIC name
};

struct RnicFinding {
  NicRef nic;
  ProbeEvidence probes;
};

struct LinkFinding {
  std::uint32_t link = 0;  // the analysis' LinkId, passed through
  ProbeEvidence probes;
  // The NIC at the host end when this is a NIC access link.
  std::optional<NicRef> access_nic;
  // The NICs cabled to the rail switch of the link (for pause frames received).
  std::vector<NicRef> rail_nics;
};

struct HostFinding {
  std::string agent_id;
  ProbeEvidence probes;
};

struct WindowEvidence {
  std::vector<RnicFinding> rnics;
  std::vector<LinkFinding> links;
  std::vector<HostFinding> hosts;
};

using TelemetryByNic = std::map<std::pair<std::string, std::string>, telemetry::NicCounterTotals>;
TelemetryByNic IndexTelemetry(const std::vector<telemetry::NicTelemetryRow>& rows);

struct WindowDiagnosis {
  std::vector<Diagnosis> rnics;  // parallel to WindowEvidence::rnics
  std::vector<Diagnosis> links;
  std::vector<Diagnosis> hosts;
};

WindowDiagnosis DiagnoseWindow(const WindowEvidence& window, const TelemetryByNic& telemetry,
                               const DiagnosisConfig& config = {});

}  // namespace hostmesh::analyzer::diagnosis
