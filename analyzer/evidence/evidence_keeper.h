// Decides, after each judged window, what evidence each incident keeps, and
// hands it to the writer as events (evidence_event.h). Runs on the analyzer
// loop, beside the analysis, because it reads the path table: an incident's
// first capture follows a uniform sample of the 5-tuples whose known path
// crosses its suspect and its siblings (tuple_sampler.h). Every window that
// finds the incident adds its verdict; probes are captured from `before` the
// window that opened it to `after` its start, window by window as they are
// judged, so the evidence holds the moment the fault began within the
// windows that name it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/path_table.h"
#include "analyzer/analysis/window_report.h"
#include "analyzer/evidence/evidence_config.h"
#include "analyzer/evidence/evidence_event.h"

namespace hostmesh::analyzer::evidence {

class EvidenceKeeper {
 public:
  using AgentOf = std::function<std::string(analysis::HostId)>;

  explicit EvidenceKeeper(EvidenceConfig config) : config_(config) {}

  // `touched`: the incidents the window opened, updated or resolved
  // (IncidentTracker::Update). `paths` and `fabric` are the analysis's, as
  // of the window's judgement.
  std::vector<EvidenceEvent> OnWindow(const analysis::WindowReport& report,
                                      const std::vector<std::uint64_t>& touched,
                                      const analysis::IncidentTracker& incidents,
                                      const analysis::PathTable& paths,
                                      const analysis::FabricMap& fabric, const AgentOf& agent_of);

  // Incidents still capturing probes (tests, metrics).
  std::size_t capturing() const { return capturing_.size(); }

 private:
  // The first capture's targets, tuples and involved hosts.
  void Follow(const analysis::Incident& incident, const analysis::WindowReport& report,
              const analysis::PathTable& paths, const analysis::FabricMap& fabric,
              const AgentOf& agent_of, EvidenceEvent& event);

  const EvidenceConfig config_;
  // Incidents whose capture period is not over: their involved hosts.
  std::unordered_map<std::uint64_t, std::vector<std::string>> capturing_;
};

}  // namespace hostmesh::analyzer::evidence
