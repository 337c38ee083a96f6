#include "analyzer/feed/state_keeper.h"

#include <algorithm>
#include <map>

#include "analyzer/state/state_codec.h"
#include "common/base/logging.h"

namespace hostmesh::analyzer::app {
namespace {

// A window's summary is stored as two records: "cluster" (cluster and rail
// SLA, verdicts, coverage: what the history API serves) and "hosts" (one SLA
// row per host: 10,000 of them at fleet scale, which the history need not
// decode). Summaries stored before the split hold both in "cluster".
constexpr std::string_view kClusterScope = "cluster";
constexpr std::string_view kHostsScope = "hosts";

std::int64_t Ns(WallTime t) {
  return t.time_since_epoch().count();
}
WallTime At(std::int64_t ns) {
  return WallTime{std::chrono::nanoseconds{ns}};
}

}  // namespace

RestoreSummary StateKeeper::Restore(const RestoreOptions& options, AnalysisFeed& feed,
                                    analysis::IncidentTracker& incidents) {
  RestoreSummary out;
  const std::int64_t now = Ns(clock_.RealtimeNow());
  auto note_error = [&](const store::StoreStatus& status) {
    if (!status.ok() && out.error.empty()) out.error = status.error;
  };

  const auto index = store_.AgentIndex();
  feed.RestoreHosts(index);
  out.hosts = index.size();

  // Judging resumes after the last stored window, or, after a long outage,
  // at the oldest window whose results are still replayed.
  if (const auto last = store_.LastWindowSummary()) {
    if (const auto summary = state::DecodeWindowSummary(last->second)) {
      out.last_judged_end_ns = summary->end_ns();
    } else {
      ++out.bad_records;
    }
  }
  std::int64_t from = now - options.results.count();
  if (out.last_judged_end_ns > 0) {
    from = std::max(from, out.last_judged_end_ns);
    const std::int64_t width = options.window.count();
    if (width > 0) from -= ((from % width) + width) % width;  // a window start
    feed.ResumeAfter(from);
    out.resumed_at_ns = from;
  }

  note_error(store_.ScanPaths(At(now - options.paths.count()), At(now + 1),
                              [&](const store::StoredPath& p) {
                                feed.ReplayPath(p.agent_id, p.boot_id, *p.path);
                                ++out.paths;
                                return true;
                              }));
  note_error(store_.ScanResults(At(from), At(now + 1), [&](const store::StoredResult& r) {
    feed.ReplayResult(r.agent_id, r.boot_id, *r.result);
    ++out.results;
    return true;
  }));

  // Keyed by last activity: an incident updated across a crash may be there
  // twice (old key not yet deleted); the scan is in key order, the last wins.
  std::map<std::uint64_t, analysis::Incident> by_id;
  std::uint64_t next_id = 1;
  note_error(store_.ScanIncidents(At(0), At(now + 1),
                                  [&](WallTime at, std::uint64_t id, std::string_view bytes) {
                                    next_id = std::max(next_id, id + 1);
                                    auto inc = state::DecodeIncident(bytes);
                                    if (!inc) {
                                      ++out.bad_records;
                                      return true;
                                    }
                                    incident_keys_[id] = Ns(at);
                                    by_id[id] = std::move(*inc);
                                    return true;
                                  }));
  const std::int64_t visible_after = now - options.resolved_visible.count();
  std::vector<analysis::Incident> kept;
  for (auto& [id, inc] : by_id) {
    if (!inc.open && inc.resolved_ns < visible_after) continue;
    (inc.open ? out.open_incidents : out.resolved_incidents) += 1;
    kept.push_back(std::move(inc));
  }
  incidents.Restore(std::move(kept), next_id);
  return out;
}

std::vector<v1::state::WindowSummary> StateKeeper::History(std::int64_t from_ns, std::int64_t to_ns,
                                                           std::size_t limit,
                                                           bool* truncated) const {
  std::vector<v1::state::WindowSummary> out;
  *truncated = false;
  const auto status = store_.ScanWindowSummaries(
      At(from_ns), At(to_ns), [&](WallTime, std::string_view scope, std::string_view bytes) {
        if (scope != kClusterScope) return true;
        if (out.size() >= limit) {
          *truncated = true;
          return false;
        }
        if (auto summary = state::DecodeWindowSummary(bytes)) out.push_back(std::move(*summary));
        return true;
      });
  if (!status.ok()) GetLogger("analyzer")->warn("window history: {}", status.error);
  return out;
}

void StateKeeper::Save(const analysis::WindowReport& report,
                       const std::vector<std::uint64_t>& touched,
                       const analysis::IncidentTracker& incidents, const AnalysisFeed& feed) {
  const auto log = GetLogger("analyzer");
  v1::state::WindowSummary cluster =
      state::SummaryOf(report, [&](analysis::HostId host) { return feed.AgentOf(host); });
  v1::state::WindowSummary hosts;
  hosts.set_start_ns(cluster.start_ns());
  hosts.set_end_ns(cluster.end_ns());
  hosts.mutable_hosts()->Swap(cluster.mutable_hosts());
  for (const auto& [scope, part] :
       {std::pair{kClusterScope, &cluster}, std::pair{kHostsScope, &hosts}}) {
    if (const auto status =
            store_.PutWindowSummary(At(report.start_ns), scope, part->SerializeAsString());
        !status.ok()) {
      ++write_errors_;
      log->warn("window summary ({}) not stored: {}", scope, status.error);
    }
  }
  for (std::uint64_t id : touched) {
    const analysis::Incident* inc = incidents.Find(id);
    if (inc == nullptr) continue;
    // Keyed by its last activity, so retention counts from there: an RNIC
    // left broken for 40 days keeps its incident.
    const std::int64_t at = std::max(inc->evidence.last_seen_ns, inc->resolved_ns);
    auto status = store_.PutIncident(At(at), inc->id, state::EncodeIncident(*inc));
    if (!status.ok()) {
      ++write_errors_;
      log->warn("incident {} not stored: {}", id, status.error);
      continue;
    }
    const auto [old, inserted] = incident_keys_.try_emplace(id, at);
    if (inserted || old->second == at) continue;
    status = store_.DeleteIncident(At(old->second), id);
    old->second = at;
    if (!status.ok()) {
      ++write_errors_;  // a stale copy; the restore takes the newer one
      log->warn("old copy of incident {} not deleted: {}", id, status.error);
    }
  }
}

}  // namespace hostmesh::analyzer::app
