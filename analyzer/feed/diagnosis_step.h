// After each judged window: the incidents the window found reduced to
// findings (analyzer/diagnosis), the NIC telemetry of the hosts they involve
// read from the store (their RNICs' hosts, the hosts at the ends of their
// access links, the hosts on their rails), the diagnoses attached to the
// incidents before they are stored. The fabric context comes from the
// inventory or, without one, from the fabric learned from traceroutes.
#pragma once

#include <cstdint>
#include <memory>
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
  // Hosts whose telemetry one window reads at the most. A switch incident on
  // a rail of 10,000 hosts would otherwise read them all; the suspects' own
  // hosts come first, so a capped window loses rail pause frames, never the
  // suspect's counters (unless incidents alone involve more hosts).
  static constexpr std::size_t kMaxTelemetryHosts = 512;

  // `inventory` may be null (no inventory): then the learned fabric passed to
  // Run gives the context, and until there is one, diagnosis has none.
  DiagnosisStep(const store::Store& store, const topology::Topology* inventory,
                std::size_t max_telemetry_hosts = kMaxTelemetryHosts);

  // `learned`: the fabric the analysis judged `report` on, without an
  // inventory (null: not learned yet, or with an inventory).
  // `send_failures`: the probes the RNICs could not send in the report's
  // window (AnalysisFeed::TakeSendFailures).
  void Run(const analysis::WindowReport& report, const std::vector<api::HostInfo>& hosts,
           analysis::IncidentTracker& incidents,
           const std::shared_ptr<const topology::Topology>& learned = nullptr,
           const diagnosis::SendFailures& send_failures = {});

  // Windows diagnosed without counters because the telemetry scan failed (warned).
  std::uint64_t telemetry_errors() const { return telemetry_errors_; }
  // Hosts whose telemetry a window needed past max_telemetry_hosts (warned).
  std::uint64_t telemetry_hosts_capped() const { return telemetry_hosts_capped_; }
  bool has_fabric_context() const { return fabric_.has_value(); }

 private:
  const store::Store& store_;
  const bool inventory_;
  const std::size_t max_telemetry_hosts_;
  std::optional<diagnosis::FabricContext> fabric_;
  const topology::Topology* learned_ = nullptr;  // the one fabric_ was built from
  diagnosis::IncidentDiagnoser diagnoser_;
  std::uint64_t telemetry_errors_ = 0;
  std::uint64_t telemetry_hosts_capped_ = 0;
  bool warned_capped_ = false;  // warn once per run of capped windows
};

}  // namespace hostmesh::analyzer::app
