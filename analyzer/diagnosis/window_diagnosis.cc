#include "analyzer/diagnosis/window_diagnosis.h"

namespace hostmesh::analyzer::diagnosis {
namespace {

const telemetry::NicCounterTotals* Find(const TelemetryByNic& telemetry, const NicRef& nic) {
  const auto it = telemetry.find({nic.agent_id, nic.nic});
  return it == telemetry.end() ? nullptr : &it->second;
}

// Pause frames received by the rail's NICs; nullopt when none of them counts
// pause frames (then "no pause frames" cannot be told from "not counted").
std::optional<std::uint64_t> RailPause(const TelemetryByNic& telemetry,
                                       const std::vector<NicRef>& nics) {
  std::optional<std::uint64_t> total;
  for (const NicRef& nic : nics) {
    const telemetry::NicCounterTotals* t = Find(telemetry, nic);
    if (t == nullptr) continue;
    if (const auto received = t->PauseFrames(true)) total = total.value_or(0) + *received;
  }
  return total;
}

}  // namespace

TelemetryByNic IndexTelemetry(const std::vector<telemetry::NicTelemetryRow>& rows) {
  TelemetryByNic index;
  for (const telemetry::NicTelemetryRow& row : rows) index[{row.agent_id, row.nic}] = row.totals;
  return index;
}

WindowDiagnosis DiagnoseWindow(const WindowEvidence& window, const TelemetryByNic& telemetry,
                               const DiagnosisConfig& config) {
  WindowDiagnosis out;
  for (const RnicFinding& f : window.rnics) {
    out.rnics.push_back(Diagnose(f.probes, {Find(telemetry, f.nic), std::nullopt}, config));
  }
  for (const LinkFinding& f : window.links) {
    TelemetryEvidence t;
    if (f.access_nic) t.nic = Find(telemetry, *f.access_nic);
    t.rail_pause_received = RailPause(telemetry, f.rail_nics);
    out.links.push_back(Diagnose(f.probes, t, config));
  }
  for (const HostFinding& f : window.hosts) {
    out.hosts.push_back(Diagnose(f.probes, {}, config));
  }
  return out;
}

}  // namespace hostmesh::analyzer::diagnosis
