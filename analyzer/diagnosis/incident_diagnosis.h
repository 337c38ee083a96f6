#pragma once

// Diagnoses the incidents a judged window found: each incident's evidence in
// that window (its RNIC's status, its loss or latency culprit entry, its
// host's processing flag) becomes ProbeEvidence, the NICs it involves are
// looked up in the window's NIC telemetry, and Diagnose names the type.
// A type once named stays until another is named: counters move in the
// windows where the fault acts, and a quiet window (a flap's up phase) says
// nothing against it. An incident kind flapping (the analysis' flap watch) is
// diagnosed flapping whatever the counters say, so the two never disagree.
//
// Pure but for one piece of memory: which RNICs a probe ever reached, for
// unreachable_rnic ("failed since it first appeared"). An analyzer restart
// forgets it; the incidents keep the diagnoses they had.

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/types.h"
#include "analyzer/analysis/window_report.h"
#include "analyzer/diagnosis/send_failures.h"
#include "analyzer/diagnosis/window_diagnosis.h"

namespace hostmesh::analyzer::diagnosis {

// What the analyzer knows beside a report: names and the fabric.
struct DiagnosisContext {
  // The agent and NIC name of an analysis RNIC; nullopt when unknown.
  std::function<std::optional<NicRef>(analysis::HostId, analysis::NicId)> nic_of;
  // The host's NIC at the end of a NIC access link; nullopt for fabric links or unknown.
  std::function<std::optional<NicRef>(analysis::LinkId)> link_nic;
  // The NICs cabled to a switch (a rail switch's, for pause frames); may be empty.
  std::function<std::vector<NicRef>(analysis::SwitchId)> switch_nics;
  // "link p0r1-s02", "RNIC h003 nic1", "host h003", "switch p0r1" for sentences.
  std::function<std::string(const analysis::Incident&)> describe;
  // Link ends (FabricMap::links) to tell rail uplinks and their siblings; empty: unknown.
  std::vector<analysis::FabricMap::LinkEnds> links;
};

// The evidence of one incident in one window, and the NICs whose counters matter.
struct IncidentFinding {
  ProbeEvidence probes;
  std::optional<NicRef> nic;      // the suspect RNIC (or a NIC link's NIC)
  std::vector<NicRef> rail_nics;  // a link's or switch's: pause frames received
};

// nullopt when the window did not find the incident (resolved, or quiet).
// `send_failures`: the window's (SendFailureTally::Take); null when not known.
std::optional<IncidentFinding> FindingOf(const analysis::Incident& incident,
                                         const analysis::WindowReport& report,
                                         const DiagnosisContext& context, bool failed_from_start,
                                         const SendFailures* send_failures = nullptr);

// The diagnosis as stored with the incident: Diagnose's result and the
// counters that moved on the NIC read.
analysis::IncidentDiagnosis ToIncidentDiagnosis(const Diagnosis& diagnosis,
                                                const telemetry::NicCounterTotals* nic,
                                                std::int64_t window_start_ns);

// A new diagnosis over an old one: unclassified does not replace a named type.
analysis::IncidentDiagnosis Merge(const analysis::IncidentDiagnosis& old,
                                  analysis::IncidentDiagnosis fresh);

// The findings of one window's incidents, before the telemetry is read.
struct WindowFindings {
  struct Slot {
    const analysis::Incident* incident = nullptr;
    Subject subject = Subject::kRnic;
    std::size_t index = 0;  // into the window's rnics, links or hosts
    std::optional<NicRef> nic;
  };
  WindowEvidence window;
  std::vector<Slot> slots;

  // The agents whose telemetry the findings read, each once, most needed
  // first: the suspects' own NICs' hosts, then the rails' hosts (pause frames).
  std::vector<std::string> Agents() const;
};

class IncidentDiagnoser {
 public:
  explicit IncidentDiagnoser(DiagnosisConfig config = {}) : config_(config) {}

  // The findings of the incidents `report` found among `incidents`: what
  // telemetry to read (WindowFindings::Agents) for Diagnose. `send_failures`:
  // the probes the RNICs could not send in the window (null: not known).
  WindowFindings Find(const analysis::WindowReport& report,
                      const std::vector<const analysis::Incident*>& incidents,
                      const DiagnosisContext& context, const SendFailures* send_failures = nullptr);
  // Their diagnoses merged with what the incidents had: (incident id, diagnosis).
  std::vector<std::pair<std::uint64_t, analysis::IncidentDiagnosis>> Diagnose(
      const WindowFindings& findings, const TelemetryByNic& telemetry,
      std::int64_t window_start_ns) const;
  // What every judged window teaches, incidents or not (Find does it too):
  // the RNICs a probe reached, the cluster's tail latency. Returns the
  // window's cluster p99 over the median of the windows before it
  // (kTailWindows at most, 3 needed), 0 when unknown.
  double Observe(const analysis::WindowReport& report);
  // Both at once, with the telemetry of every NIC at hand.
  std::vector<std::pair<std::uint64_t, analysis::IncidentDiagnosis>> Diagnose(
      const analysis::WindowReport& report, const std::vector<const analysis::Incident*>& incidents,
      const TelemetryByNic& telemetry, const DiagnosisContext& context,
      const SendFailures* send_failures = nullptr);

 private:
  DiagnosisConfig config_;
  std::unordered_set<std::uint64_t> reached_;  // RNICs (RnicKey) a probe reached
  // The cluster's p99 latency of the last kTailWindows windows, oldest first:
  // its median is the baseline a window's tail is read against.
  static constexpr std::size_t kTailWindows = 30;
  std::deque<double> cluster_p99_;
};

}  // namespace hostmesh::analyzer::diagnosis
