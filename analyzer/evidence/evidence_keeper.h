// Decides, after each judged window, what evidence each incident keeps, and
// hands it to the writer as events (evidence_event.h). Every window that
// finds an incident adds its verdict; probes are captured from `before` the
// window that opened it to `after` its start, window by window as they are
// judged, so the evidence holds the moment the fault began within the
// windows that name it.
//
// A link's or switch's evidence follows a uniform sample of the 5-tuples
// whose known path crosses it and its siblings (tuple_sampler.h). Reading
// the path table for them takes a pass over every live 5-tuple, so it is
// not done as the window is judged but in slices on later turns of the
// analyzer's loop (Step): judging is never delayed, and a turn reads a
// bounded part of the table. The incident's first capture follows once its
// pass is complete; RNIC and host incidents need none and capture at once.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/path_table.h"
#include "analyzer/analysis/window_report.h"
#include "analyzer/evidence/evidence_config.h"
#include "analyzer/evidence/evidence_event.h"
#include "analyzer/evidence/tuple_sampler.h"

namespace hostmesh::analyzer::evidence {

class EvidenceKeeper {
 public:
  using AgentOf = std::function<std::string(analysis::HostId)>;

  // Path-table slots one Step reads: about 16 MB of the table, tens of
  // milliseconds, so a 10,000-host fleet's table (16 M slots) takes 16 turns.
  static constexpr std::size_t kSlotsPerStep = std::size_t{1} << 20;

  explicit EvidenceKeeper(EvidenceConfig config) : config_(config) {}

  // `touched`: the incidents the window opened, updated or resolved
  // (IncidentTracker::Update); `fabric` the analysis's.
  std::vector<EvidenceEvent> OnWindow(const analysis::WindowReport& report,
                                      const std::vector<std::uint64_t>& touched,
                                      const analysis::IncidentTracker& incidents,
                                      const analysis::FabricMap& fabric, const AgentOf& agent_of);
  // Reads up to `slots` slots of the path table for the incidents awaiting
  // their 5-tuples; the first captures of those whose pass is complete.
  std::vector<EvidenceEvent> Step(const analysis::PathTable& paths,
                                  const analysis::FabricMap& fabric, const AgentOf& agent_of,
                                  std::size_t slots = kSlotsPerStep);

  // Incidents still capturing probes, and those awaiting their 5-tuples.
  std::size_t capturing() const { return capturing_.size(); }
  std::size_t sampling() const { return sampling_.size(); }

 private:
  struct Capture {
    std::int64_t opened_ns = 0;
    bool followed = false;           // its first capture is made
    std::vector<std::string> hosts;  // involved: counters and flight recorders
  };
  // The first event of an incident: its targets, and for an RNIC or host at
  // once its hosts; a link or switch waits for its 5-tuples (sampling_).
  void Follow(const analysis::Incident& incident, const analysis::WindowReport& report,
              const analysis::FabricMap& fabric, const AgentOf& agent_of, EvidenceEvent& event);
  // The 5-tuples sampled for an incident into its first capture.
  void TakeSample(TupleSampler::Done& done, const AgentOf& agent_of, EvidenceEvent& event);
  void SetCapture(std::uint64_t id, const Capture& c, EvidenceEvent& event) const;

  const EvidenceConfig config_;
  std::unordered_map<std::uint64_t, Capture> capturing_;
  std::unordered_map<std::uint64_t, EvidenceEvent> sampling_;  // first events awaiting tuples
  TupleSampler sampler_;
  std::int64_t judged_until_ns_ = 0;  // end of the last judged window
};

}  // namespace hostmesh::analyzer::evidence
