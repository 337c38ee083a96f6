#include "analyzer/evidence/evidence_keeper.h"

#include <algorithm>
#include <map>
#include <set>

#include "analyzer/evidence/tuple_sampler.h"
#include "analyzer/evidence/window_verdict.h"

namespace hostmesh::analyzer::evidence {

namespace {

using analysis::PathTable;

std::int64_t Ns(std::chrono::nanoseconds d) {
  return d.count();
}

}  // namespace

std::vector<EvidenceEvent> EvidenceKeeper::OnWindow(const analysis::WindowReport& report,
                                                    const std::vector<std::uint64_t>& touched,
                                                    const analysis::IncidentTracker& incidents,
                                                    const PathTable& paths,
                                                    const analysis::FabricMap& fabric,
                                                    const AgentOf& agent_of) {
  std::vector<EvidenceEvent> events;
  if (!config_.enabled) return events;
  // The touched ones, and those still capturing that this window left alone.
  std::set<std::uint64_t> ids(touched.begin(), touched.end());
  for (const auto& [id, hosts] : capturing_) ids.insert(id);
  for (const std::uint64_t id : ids) {
    const analysis::Incident* incident = incidents.Find(id);
    if (incident == nullptr) {
      capturing_.erase(id);
      continue;
    }
    EvidenceEvent event;
    event.incident_id = id;
    event.kind = std::string(analysis::IncidentKindName(incident->kind));
    event.summary = incident->summary;
    event.opened_ns = incident->evidence.first_seen_ns;
    if (incident->evidence.last_seen_ns == report.end_ns)
      event.verdict = VerdictOf(*incident, report);
    const std::int64_t from = event.opened_ns - Ns(config_.before);
    const std::int64_t until = event.opened_ns + Ns(config_.after);
    const bool young = incident->open && incident->merged_into == 0 && report.start_ns < until;
    if (young) {
      auto it = capturing_.find(id);
      if (it == capturing_.end()) {
        Follow(*incident, report, paths, fabric, agent_of, event);
        it = capturing_.emplace(id, event.counter_agents).first;
      }
      event.counter_agents = it->second;
      event.capture_from_ns = from;
      event.capture_to_ns = std::min(report.end_ns, until);
    }
    if (!young) capturing_.erase(id);
    event.closed = !incident->open;
    events.push_back(std::move(event));
  }
  return events;
}

void EvidenceKeeper::Follow(const analysis::Incident& incident,
                            const analysis::WindowReport& report, const PathTable& paths,
                            const analysis::FabricMap& fabric, const AgentOf& agent_of,
                            EvidenceEvent& event) {
  event.targets = TargetsOf(incident, fabric, report, config_.siblings);
  std::vector<std::uint32_t> limits;
  for (const Target& t : event.targets) {
    limits.push_back(t.sibling ? std::max<std::uint32_t>(1, config_.max_tuples / 4)
                               : config_.max_tuples);
    const bool own = t.kind == Target::Kind::kRnic || t.kind == Target::Kind::kHost;
    event.target_agents.push_back(own ? agent_of(t.id) : std::string());
  }
  const std::vector<TargetSample> samples = SampleTuples(paths, fabric, event.targets, limits);
  // Involved hosts: an RNIC's or host's own; else those whose sampled
  // 5-tuples cross the suspect, the most such first.
  std::map<analysis::HostId, std::uint32_t> crossing;
  for (std::size_t g = 0; g < samples.size(); ++g) {
    if (g == 0 && samples[g].capped()) event.tuples_capped = true;
    for (const SampledTuple& s : samples[g].tuples) {
      const analysis::HostId host = PathTable::KeyHost(s.key);
      if (g == 0) ++crossing[host];
      FollowedTuple& f = event.tuples.emplace_back();
      f.group = static_cast<std::uint32_t>(g);
      f.agent_id = agent_of(host);
      f.src_nic = PathTable::KeySrc(s.key);
      f.dst_nic = PathTable::KeyDst(s.key);
      f.src_port = PathTable::KeyPort(s.key);
      f.links.assign(s.links.begin(), s.links.end());
    }
  }
  std::vector<std::string> hosts;
  if (!event.target_agents.front().empty()) hosts.push_back(event.target_agents.front());
  std::vector<std::pair<std::uint32_t, analysis::HostId>> by_count;
  for (const auto& [host, n] : crossing) by_count.emplace_back(n, host);
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [n, host] : by_count) {
    if (hosts.size() >= config_.max_hosts) break;
    std::string agent = agent_of(host);
    if (!agent.empty() && std::find(hosts.begin(), hosts.end(), agent) == hosts.end()) {
      hosts.push_back(std::move(agent));
    }
  }
  event.counter_agents = hosts;
  event.flight_record_agents = std::move(hosts);
}

}  // namespace hostmesh::analyzer::evidence
