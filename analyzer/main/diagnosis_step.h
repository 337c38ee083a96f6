// After each judged window: the window's NIC telemetry read from the store,
// the incidents the window found diagnosed beside it (analyzer/diagnosis),
// the diagnoses attached to the incidents before they are stored.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/window_report.h"
#include "analyzer/api/api_snapshot.h"
#include "analyzer/diagnosis/fabric_context.h"
#include "analyzer/diagnosis/incident_diagnosis.h"
#include "analyzer/store/store.h"
#include "topology/topology.h"

namespace hostmesh::analyzer::app {

class DiagnosisStep {
 public:
  // `topology` may be null (no inventory): then no rail or uplink evidence.
  DiagnosisStep(const store::Store& store, const topology::Topology* topology);

  void Run(const analysis::WindowReport& report, const std::vector<api::HostInfo>& hosts,
           analysis::IncidentTracker& incidents);

  // Windows diagnosed without counters because the telemetry scan failed (warned).
  std::uint64_t telemetry_errors() const { return telemetry_errors_; }

 private:
  const store::Store& store_;
  std::optional<diagnosis::FabricContext> fabric_;
  diagnosis::IncidentDiagnoser diagnoser_;
  std::uint64_t telemetry_errors_ = 0;
};

}  // namespace hostmesh::analyzer::app
