#include "analyzer/main/analyzer_metrics.h"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/api/render.h"
#include "analyzer/diagnosis/diagnose.h"
#include "common/base/logging.h"
#include "common/base/proc_stats.h"
#include "common/metrics/metric_table.h"

namespace hostmesh::analyzer::app {
namespace {

using metrics::MetricType;
using metrics::ScrapedValue;
using Rows = std::vector<std::pair<std::string, const analysis::SlaRow*>>;

// The SLA rows of one scope, each with its label value ("" for the cluster).
Rows RowsOf(const api::ApiSnapshot& s, std::string_view scope) {
  Rows rows;
  if (!s.report) return rows;
  const analysis::Sla& sla = s.report->sla;
  if (scope == "cluster") rows.emplace_back("", &sla.cluster);
  if (scope == "rail") {
    for (const auto& r : sla.rails) rows.emplace_back(std::to_string(r.rail), &r.sla);
  }
  if (scope == "host") {
    for (const auto& h : sla.hosts) {
      const std::string name =
          h.host < s.hosts().size() ? s.hosts()[h.host].host : "host-" + std::to_string(h.host);
      rows.emplace_back(name, &h.sla);
    }
  }
  return rows;
}

void RegisterScope(metrics::Registry& registry, const api::SnapshotHolder& holder,
                   const std::string& scope) {
  const bool labelled = scope != "cluster";
  auto labels = [&](std::vector<std::string> extra) {
    std::vector<std::string> names;
    if (labelled) names.push_back(scope);
    names.insert(names.end(), extra.begin(), extra.end());
    return names;
  };
  registry.AddCallbackFamily(
      MetricType::kGauge, "hostmesh_analyzer_" + scope + "_drop_ratio",
      "Share of probes lost in the latest judged window, by cause (rnic: to or from an "
      "anomalous RNIC; network: all other timeouts).",
      labels({"cause"}), [&holder, scope, labelled] {
        std::vector<ScrapedValue> out;
        const auto s = holder.Get();
        if (!s) return out;
        for (const auto& [id, row] : RowsOf(*s, scope)) {
          auto add = [&](const char* cause, double v) {
            ScrapedValue value;
            if (labelled) value.label_values.push_back(id);
            value.label_values.emplace_back(cause);
            value.value = v;
            out.push_back(std::move(value));
          };
          add("rnic", row->rnic_drop_rate);
          add("network", row->network_drop_rate);
        }
        return out;
      });
  registry.AddCallbackFamily(
      MetricType::kGauge, "hostmesh_analyzer_" + scope + "_latency_seconds",
      "Quantiles of the latest judged window: network latency (NIC to NIC) and processing "
      "delay (end to end minus network), from sketches with 1% relative error. The label "
      "is 'percentile', not 'quantile': Prometheus reserves that one for summaries.",
      labels({"kind", "percentile"}), [&holder, scope, labelled] {
        std::vector<ScrapedValue> out;
        const auto s = holder.Get();
        if (!s) return out;
        for (const auto& [id, row] : RowsOf(*s, scope)) {
          auto add = [&](const char* kind, const analysis::Quantiles& q) {
            if (q.count == 0) return;  // no sample: no quantile, rather than a fake 0
            const std::array<std::pair<const char*, double>, 4> qs = {
                {{"50", q.p50}, {"90", q.p90}, {"99", q.p99}, {"99.9", q.p999}}};
            for (const auto& [label, ns] : qs) {
              ScrapedValue value;
              if (labelled) value.label_values.push_back(id);
              value.label_values.emplace_back(kind);
              value.label_values.emplace_back(label);
              value.value = ns / 1e9;
              out.push_back(std::move(value));
            }
          };
          add("network", row->latency);
          add("processing", row->processing);
        }
        return out;
      });
}

// The readers of the tables below: each computes one family's series from
// the latest snapshot (null before the first).

std::vector<ScrapedValue> IncidentsOpen(const api::ApiSnapshot* s) {
  using analysis::IncidentKind;
  constexpr std::array kKinds = {IncidentKind::kRnicDown,       IncidentKind::kRnicLossy,
                                 IncidentKind::kLinkLoss,       IncidentKind::kSwitch,
                                 IncidentKind::kLatencyHotspot, IncidentKind::kHostProcessing,
                                 IncidentKind::kFlapping};
  std::vector<ScrapedValue> out;
  for (const IncidentKind kind : kKinds) {
    double open = 0;
    if (s) {
      for (const auto& inc : s->incidents) open += inc.open && inc.kind == kind ? 1 : 0;
    }
    out.push_back({{std::string(analysis::IncidentKindName(kind))}, open});
  }
  return out;
}

std::vector<ScrapedValue> IncidentsDiagnosed(const api::ApiSnapshot* s) {
  using analyzer::diagnosis::ProblemType;
  std::vector<ScrapedValue> out;
  for (auto t = static_cast<int>(ProblemType::kUnclassified);
       t <= static_cast<int>(ProblemType::kCpuOverload); ++t) {
    const std::string type(analyzer::diagnosis::ProblemTypeName(static_cast<ProblemType>(t)));
    double open = 0;
    if (s) {
      for (const auto& inc : s->incidents) open += inc.open && inc.diagnosis.type == type;
    }
    out.push_back({{type}, open});
  }
  return out;
}

std::vector<ScrapedValue> RnicsByState(const api::ApiSnapshot* s) {
  std::array<double, 3> ours{}, paper{};
  if (s && s->report) {
    for (const auto& r : s->report->rnics) {
      ours[static_cast<std::size_t>(r.state)] += 1;
      paper[r.paper_anomalous ? 2 : 0] += 1;
    }
  }
  std::vector<ScrapedValue> out;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string state(api::RnicStateName(static_cast<analysis::RnicState>(i)));
    out.push_back({{"inference", state}, ours[i]});
    if (i != 1) out.push_back({{"paper", i == 2 ? "anomalous" : "ok"}, paper[i]});
  }
  return out;
}

std::vector<ScrapedValue> SuspectLinks(const api::ApiSnapshot* s) {
  std::vector<ScrapedValue> out;
  if (!s || !s->report) return out;
  for (const auto& [ranking, loc] :
       {std::pair{"loss", &s->report->loss}, std::pair{"latency", &s->report->latency}}) {
    for (const analysis::LinkRank& l : loc->links) {
      if (!l.culprit) continue;
      std::string name =
          l.link < s->links().size() ? s->links()[l.link].name : "link " + std::to_string(l.link);
      out.push_back({{std::move(name), ranking}, l.loss});
    }
  }
  return out;
}

std::vector<ScrapedValue> AnomalousRnics(const api::ApiSnapshot* s) {
  std::vector<ScrapedValue> out;
  if (!s || !s->report) return out;
  for (const analysis::RnicStatus& r : s->report->rnics) {
    if (r.state == analysis::RnicState::kOk) continue;
    const api::HostInfo* host = r.host < s->hosts().size() ? &s->hosts()[r.host] : nullptr;
    const api::NicInfo* nic =
        host != nullptr && r.nic < host->nics.size() ? &host->nics[r.nic] : nullptr;
    out.push_back({{host != nullptr ? host->host : "host-" + std::to_string(r.host),
                    nic != nullptr ? nic->name : "nic" + std::to_string(r.nic),
                    std::to_string(nic != nullptr ? nic->rail : -1),
                    std::string(api::RnicStateName(r.state))},
                   r.loss});
  }
  return out;
}

std::vector<ScrapedValue> ResultsByOutcome(const api::ApiSnapshot* s) {
  const analysis::AnalysisStats st = s ? s->stats : analysis::AnalysisStats{};
  return {{{"accepted"}, static_cast<double>(st.accepted)},
          {{"late"}, static_cast<double>(st.late)},
          {{"future"}, static_cast<double>(st.future)},
          {{"invalid"}, static_cast<double>(st.invalid)},
          {{"send_failed"}, static_cast<double>(st.send_failed)}};
}

// One series per (label value, count) of the snapshot's `Counts`.
template <std::vector<std::pair<std::string, std::uint64_t>> api::ApiSnapshot::*Counts>
std::vector<ScrapedValue> CountsOf(const api::ApiSnapshot* s) {
  std::vector<ScrapedValue> out;
  if (!s) return out;
  for (const auto& [label, n] : s->*Counts) out.push_back({{label}, static_cast<double>(n)});
  return out;
}

std::vector<ScrapedValue> TopologyDisagreements(const api::ApiSnapshot* s) {
  std::vector<ScrapedValue> out;
  if (!s) return out;
  for (const auto& [kind, n] : s->disagreeing_traces) {
    double places = 0;
    for (const auto& d : s->topology_disagreements()) places += d.kind == kind ? 1 : 0;
    out.push_back({{kind}, places});
  }
  return out;
}

std::vector<ScrapedValue> TopologySize(const api::ApiSnapshot* s) {
  std::vector<ScrapedValue> out;
  if (!s || !s->inventory) return out;
  std::vector<char> linked(s->devices().size(), 0);
  for (const api::LinkInfo& l : s->links()) {
    for (const api::LinkEnd* end : {&l.lower, &l.upper}) {
      if (end->device_id < linked.size()) linked[end->device_id] = 1;
    }
  }
  double switches = 0;
  for (std::size_t d = 0; d < linked.size(); ++d) {
    switches += linked[d] && s->devices()[d].tier != "host" ? 1 : 0;
  }
  out.push_back({{s->topology_source, "links"}, static_cast<double>(s->links().size())});
  out.push_back({{s->topology_source, "switches"}, switches});
  return out;
}

using Family = metrics::FamilyRow<api::ApiSnapshot>;
using Value = metrics::ValueRow<api::ApiSnapshot>;
constexpr MetricType kCounter = MetricType::kCounter;
constexpr MetricType kGauge = MetricType::kGauge;

// The analyzer's families read from the latest snapshot, beside the SLA
// scopes (RegisterScope) and the few that read the clock or the process.
const Family kFamilies[] = {
    {kGauge,
     "hostmesh_analyzer_incidents_open",
     "Open incidents by kind.",
     {"kind"},
     IncidentsOpen},
    {kGauge,
     "hostmesh_analyzer_incidents_diagnosed",
     "Open incidents by the problem type their diagnosis named (unclassified: none).",
     {"type"},
     IncidentsDiagnosed},
    {kGauge,
     "hostmesh_analyzer_rnics",
     "RNICs of the latest judged window by verdict (state), paper rule beside it.",
     {"method", "state"},
     RnicsByState},
    {kGauge,
     "hostmesh_analyzer_suspect_link_ratio",
     "Links the latest judged window blames, by ranking: loss (share of the traced probes "
     "through the link that were lost) or latency (share that were slow). Only blamed links "
     "have a series: a healthy fabric has none.",
     {"link", "ranking"},
     SuspectLinks},
    {kGauge,
     "hostmesh_analyzer_anomalous_rnic_loss_ratio",
     "RNICs the latest judged window finds lossy or down, with their own loss estimate. Only "
     "those have a series.",
     {"host", "nic", "rail", "state"},
     AnomalousRnics},
    {kCounter,
     "hostmesh_analyzer_results_total",
     "Probe results offered to the analysis, by outcome (late: for a window already judged; "
     "send_failed: the agent's NIC could not send it, kept out of the loss figures).",
     {"outcome"},
     ResultsByOutcome},
    {kCounter,
     "hostmesh_analyzer_feed_events_total",
     "Stored batches on their way into the analysis, by event: batches, path reports "
     "resolved to links or not (bad hops), cut short by a gray link (the previous path "
     "stands) or continued by the one shortest way on, contradicting the inventory, batches "
     "whose Hello is gone, host ids not stored, results dropped because the analysis queue "
     "was full; without an inventory also the learner's refused traces and merged or refused "
     "switches.",
     {"event"},
     CountsOf<&api::ApiSnapshot::feed_events>},
    {kCounter,
     "hostmesh_analyzer_evidence_events_total",
     "The evidence writer's work, by event: window events applied, probe captures, events "
     "dropped for a full queue, incidents whose evidence was dropped for the disk cap or "
     "expired, store errors, probe successes thinned to fit an incident's budget, and the "
     "agents' flight recorders asked for (requested, sent on an ack, refused, expired with "
     "no stream of the agent to carry them).",
     {"event"},
     CountsOf<&api::ApiSnapshot::evidence_events>},
    {kCounter,
     "hostmesh_analyzer_topology_disagreeing_traces_total",
     "Path reports whose answers contradict the inventory, by kind (unknown_nic, "
     "unknown_address, unlinked_port, miscabled_nic, miscabled_link). Only with an inventory.",
     {"kind"},
     CountsOf<&api::ApiSnapshot::disagreeing_traces>},
    {kGauge,
     "hostmesh_analyzer_topology_disagreements",
     "Places where the traced fabric contradicts the inventory, by kind: shown by two traces "
     "or more, and by more than agree with it there (listed at "
     "/api/v1/topology/disagreements).",
     {"kind"},
     TopologyDisagreements},
    {kGauge,
     "hostmesh_analyzer_topology_size",
     "Links and switches of the fabric the analysis works on, from the inventory or learned "
     "from traceroutes (source); a learned fabric grows until every link was crossed.",
     {"source", "what"},
     TopologySize},
};

template <typename T>
double Number(T n) {
  return static_cast<double>(n);
}

// Single numbers of the latest snapshot, 0 before the first.
constexpr Value kValues[] = {
    {kGauge, "hostmesh_analyzer_agents_known", "Agents seen since start.",
     [](const api::ApiSnapshot& s) { return Number(s.hosts().size()); }},
    {kGauge, "hostmesh_analyzer_agents_present",
     "Agents that reported in the latest judged window.",
     [](const api::ApiSnapshot& s) {
       return Number(s.report ? s.report->present_hosts.size() : std::size_t{0});
     }},
    {kGauge, "hostmesh_analyzer_hosts_shedding",
     "Hosts whose agents shed load (self-protection: a reduced probe rate under host pressure) "
     "in the latest judged window.",
     [](const api::ApiSnapshot& s) {
       return Number(s.report ? s.report->shedding.size() : std::size_t{0});
     }},
    {kCounter, "hostmesh_analyzer_windows_judged_total", "Windows judged.",
     [](const api::ApiSnapshot& s) { return Number(s.stats.windows_judged); }},
    {kCounter, "hostmesh_analyzer_results_resolved_late_total",
     "Results untraced when they arrived whose path was reported before their window closed.",
     [](const api::ApiSnapshot& s) { return Number(s.stats.resolved_late); }},
    {kCounter, "hostmesh_analyzer_results_untraced_overflow_total",
     "Untraced results a window could not keep per 5-tuple (too many untraced 5-tuples); "
     "they stay untraced even if their path arrives.",
     [](const api::ApiSnapshot& s) { return Number(s.stats.untraced_overflow); }},
    {kCounter, "hostmesh_analyzer_port_tally_untallied_probes_total",
     "Probes through links watched for flapping and ACLs whose source port was past the "
     "per-link port tally's cap (1024 ports); the ACL rule reads the ports tallied.",
     [](const api::ApiSnapshot& s) { return Number(s.stats.port_probes_untallied); }},
    {kCounter, "hostmesh_analyzer_paths_aged_out_total",
     "Probe 5-tuples whose traced path was forgotten: neither reported nor probed for "
     "path_ttl (their source port rotated out of the agent's pool).",
     [](const api::ApiSnapshot& s) { return Number(s.stats.paths_aged_out); }},
    {kCounter, "hostmesh_analyzer_paths_refused_host_cap_total",
     "Path reports of new probe 5-tuples refused because their agent already held "
     "max_paths_per_host traced 5-tuples (a misconfigured or hostile agent).",
     [](const api::ApiSnapshot& s) { return Number(s.stats.paths_refused_host_cap); }},
    {kCounter, "hostmesh_analyzer_paths_evicted_host_cap_total",
     "Probe 5-tuples of agents at max_paths_per_host forgotten early (idle a quarter of "
     "path_ttl) to make room.",
     [](const api::ApiSnapshot& s) { return Number(s.stats.paths_evicted_host_cap); }},
    {kGauge, "hostmesh_analyzer_path_table_entries",
     "Probe 5-tuples with a known path (the live port pools, plus path_ttl of rotation).",
     [](const api::ApiSnapshot& s) { return Number(s.stats.paths_live); }},
    {kGauge, "hostmesh_analyzer_path_table_bytes",
     "Memory of the path table (5-tuples, interned fabric paths).",
     [](const api::ApiSnapshot& s) { return Number(s.stats.path_table_bytes); }},
    {kGauge, "hostmesh_analyzer_route_draws_awaiting",
     "New probe 5-tuples whose first trace was cut short past the rail switch, awaiting "
     "a probe outcome that tells a rate-limited trace from one a gray link ate.",
     [](const api::ApiSnapshot& s) { return Number(s.stats.route_draws_awaiting); }},
    {kCounter, "hostmesh_analyzer_route_draws_overflow_total",
     "Cut-short first traces counted at once as possibly over any up-link because the "
     "route watch's cap of awaited ones was full: withdrawn links are named later.",
     [](const api::ApiSnapshot& s) { return Number(s.stats.route_draws_overflow); }},
    {kGauge, "hostmesh_analyzer_evidence_bytes",
     "Bytes of all incidents' evidence in the store (first-failure capture), against "
     "evidence.disk_cap_bytes.",
     [](const api::ApiSnapshot& s) { return Number(s.evidence_bytes); }},
    {kGauge, "hostmesh_analyzer_evidence_incidents", "Incidents whose evidence is in the store.",
     [](const api::ApiSnapshot& s) { return Number(s.evidence_incidents); }},
    {kCounter, "hostmesh_analyzer_state_write_errors_total",
     "Window summaries and incidents that could not be stored (a restart would miss them).",
     [](const api::ApiSnapshot& s) { return Number(s.state_write_errors); }},
};

// Series left out for repeating another's labels: counted, and warned of at
// most every 10 minutes when the count moved.
std::function<double()> SeriesConflicts(const metrics::Registry& registry, const Clock& clock) {
  return [&registry, &clock, warned = std::make_shared<std::pair<std::uint64_t, MonoTime>>()] {
    const std::uint64_t n = registry.series_conflicts();
    const MonoTime now = clock.MonotonicNow();
    if (n != warned->first &&
        (warned->first == 0 || now - warned->second >= std::chrono::minutes{10})) {
      GetLogger("analyzer")
          ->warn(
              "/metrics left out {} series that repeated another's labels (two agents with "
              "one host name?); see /api/v1/rnics",
              n - warned->first);
      *warned = {n, now};
    }
    return static_cast<double>(n);
  };
}

}  // namespace

void RegisterAnalyzerMetrics(metrics::Registry& registry, const api::SnapshotHolder& holder,
                             const Clock& clock) {
  for (const char* scope : {"cluster", "rail", "host"}) RegisterScope(registry, holder, scope);
  const auto latest = [&holder] { return holder.Get(); };
  metrics::AddFamilyRows<api::ApiSnapshot>(registry, kFamilies, latest);
  metrics::AddValueRows<api::ApiSnapshot>(registry, kValues, latest);

  registry.AddCallbackFamily(
      MetricType::kGauge, "hostmesh_analyzer_window_lag_seconds",
      "Now minus the end of the latest judged window (window + grace when healthy).", {},
      [&holder, &clock] {
        std::vector<ScrapedValue> out;
        const auto s = holder.Get();
        if (!s || !s->report) return out;
        const auto now = clock.RealtimeNow().time_since_epoch().count();
        out.push_back({{}, static_cast<double>(now - s->report->end_ns) / 1e9});
        return out;
      });
  registry.AddCallbackCounter(
      "hostmesh_analyzer_series_conflicts_total",
      "Series left out of /metrics because another had the same labels (two agents reporting "
      "one host name, say).",
      SeriesConflicts(registry, clock));
  registry.AddCallbackCounter("hostmesh_analyzer_process_cpu_seconds_total",
                              "User and system CPU time of the analyzer process.", [] {
                                const auto stats = ReadSelfProcStats();
                                return stats ? stats->cpu_seconds : 0.0;
                              });
  registry.AddCallbackGauge(
      "hostmesh_analyzer_process_open_fds",
      "Open file descriptors of the analyzer: one per agent connection, beside the store's "
      "files. At the limit gRPC stops accepting agents (see "
      "hostmesh_ingest_listener_restarts_total).",
      [] {
        const auto open = CountOpenFiles();
        return open ? static_cast<double>(*open) : 0.0;
      });
  registry.AddCallbackGauge("hostmesh_analyzer_process_max_fds",
                            "The analyzer's open-files limit (soft RLIMIT_NOFILE).", [] {
                              const auto limit = OpenFilesLimit();
                              return limit ? static_cast<double>(*limit) : 0.0;
                            });
  registry.AddCallbackGauge("hostmesh_analyzer_process_resident_memory_bytes",
                            "Resident memory of the analyzer process.", [] {
                              const auto stats = ReadSelfProcStats();
                              return stats ? stats->resident_bytes : 0.0;
                            });
}

void RegisterStoreMetrics(metrics::Registry& registry, const store::Store& store) {
  registry.AddCallbackFamily(
      MetricType::kGauge, "hostmesh_analyzer_store_bytes",
      "Bytes of the store per column family: compressed files on disk (sst) and data not yet "
      "flushed (memtable). raw_results and path_reports are kept retention.raw, windows and "
      "incidents retention.summaries.",
      {"family", "kind"}, [&store] {
        std::vector<ScrapedValue> out;
        for (const store::FamilyUsage& u : store.Usage()) {
          out.push_back({{u.name, "sst"}, static_cast<double>(u.sst_bytes)});
          out.push_back({{u.name, "memtable"}, static_cast<double>(u.memtable_bytes)});
        }
        return out;
      });
}

}  // namespace hostmesh::analyzer::app
