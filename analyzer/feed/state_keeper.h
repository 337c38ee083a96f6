// What the analyzer keeps of its own judgement across restarts. As windows are
// judged it stores a summary of each and every incident the window changed;
// at start it reads back the host ids, the incidents, where judging stopped,
// and replays the paths and the durable-but-unjudged results into the feed.
// Agents resend only what was not acknowledged, so without the replay a
// restart would lose the results of the windows still open when it died.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/window_report.h"
#include "analyzer/feed/analysis_feed.h"
#include "analyzer/store/store.h"
#include "common/base/clock.h"
#include "hostmesh/v1/analyzer_state.pb.h"

namespace hostmesh::analyzer::app {

struct RestoreOptions {
  std::chrono::nanoseconds window{};
  std::chrono::nanoseconds grace{};
  std::chrono::nanoseconds paths{};             // path reports replayed this far back
  std::chrono::nanoseconds results{};           // unjudged results replayed at most this far back
  std::chrono::nanoseconds resolved_visible{};  // resolved incidents restored
};

struct RestoreSummary {
  std::size_t hosts = 0;
  std::uint64_t paths = 0;
  std::uint64_t results = 0;
  std::size_t open_incidents = 0;
  std::size_t resolved_incidents = 0;
  std::uint64_t bad_records = 0;        // stored summaries or incidents that did not parse
  std::int64_t last_judged_end_ns = 0;  // 0: nothing judged before
  std::int64_t resumed_at_ns = 0;       // judging goes on from this window start
  std::string error;                    // a scan failed: restored partly
};

class StateKeeper {
 public:
  StateKeeper(store::Store& store, const Clock& clock) : store_(store), clock_(clock) {}

  // At start, before ingest accepts batches.
  RestoreSummary Restore(const RestoreOptions& options, AnalysisFeed& feed,
                         analysis::IncidentTracker& incidents);

  // After each judged window: its summary and the incidents it opened,
  // updated or resolved. A failed write is warned and counted; the analysis
  // goes on (only a restart would miss it).
  void Save(const analysis::WindowReport& report, const std::vector<std::uint64_t>& touched,
            const analysis::IncidentTracker& incidents, const AnalysisFeed& feed);

  // Stored summaries of windows starting in [from_ns, to_ns), oldest first, at
  // most `limit` (*truncated when more). Thread-safe: only reads the store.
  std::vector<v1::state::WindowSummary> History(std::int64_t from_ns, std::int64_t to_ns,
                                                std::size_t limit, bool* truncated) const;

  std::uint64_t write_errors() const { return write_errors_; }

 private:
  store::Store& store_;
  const Clock& clock_;
  std::uint64_t write_errors_ = 0;
  // Incident id -> the time its stored copy is keyed by (its last activity).
  std::unordered_map<std::uint64_t, std::int64_t> incident_keys_;
};

}  // namespace hostmesh::analyzer::app
