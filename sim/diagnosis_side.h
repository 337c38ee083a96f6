#pragma once

// The analyzer's diagnosis in the simulation. Every host whose agent runs
// samples its NICs' counters on the agent's telemetry period (the counter
// models of telemetry_model.h, the agent's Diff and ToProto); after each
// judged window the samples of the window go through the analyzer's own
// TelemetryRollup (by end time, as the store's scan selects them) and its
// IncidentDiagnoser diagnoses the incidents the window found, with a
// FabricContext of the fleet's topology, as the analyzer does.

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/window_report.h"
#include "analyzer/diagnosis/fabric_context.h"
#include "analyzer/diagnosis/incident_diagnosis.h"
#include "analyzer/diagnosis/send_failures.h"
#include "hostmesh/v1/ingest.pb.h"
#include "sim/faults.h"
#include "sim/fleet.h"
#include "sim/telemetry_model.h"

namespace hostmesh::sim {

class DiagnosisSide {
 public:
  // The agent's default telemetry.period; samples end at phase + k period.
  static constexpr std::int64_t kPeriodNs = 10'000'000'000;
  static constexpr std::int64_t kPhaseNs = 5'000'000'000;

  DiagnosisSide(const Fleet& fleet, const FaultSet& faults, std::int64_t wall_offset_ns,
                std::int64_t window_ns);

  // A probe its RNIC could not send (ProbeResult.send_failed), as the
  // analyzer's feed tallies it for the diagnosis.
  void AddSendFailure(analysis::HostId host, analysis::NicId nic, std::int64_t send_time_ns) {
    send_failures_.Add(host, nic, send_time_ns);
  }

  // Samples due in (from, to] of simulation time, for the hosts whose agent runs.
  void Sample(std::int64_t from, std::int64_t to, const std::vector<std::uint8_t>& running);

  // After `report` was folded into `incidents`: diagnoses what it found.
  // fleet_host_of: the fleet host of each analyzer host id.
  void Diagnose(const analysis::WindowReport& report,
                const std::vector<std::uint32_t>& fleet_host_of,
                analysis::IncidentTracker& incidents);

 private:
  struct Stored {
    std::uint32_t host;
    v1::NicTelemetry sample;
  };
  const Fleet& fleet_;
  TelemetryModel model_;
  std::int64_t wall_offset_ns_;
  analyzer::diagnosis::FabricContext fabric_;
  analyzer::diagnosis::IncidentDiagnoser diagnoser_;
  analyzer::diagnosis::SendFailureTally send_failures_;
  std::deque<Stored> samples_;  // by end time
  std::unordered_map<std::string, std::uint32_t> host_by_name_;
};

}  // namespace hostmesh::sim
