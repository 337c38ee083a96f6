#include "analyzer/evidence/evidence_keeper.h"

#include <algorithm>
#include <map>

#include "analyzer/evidence/window_verdict.h"

namespace hostmesh::analyzer::evidence {

namespace {

using analysis::PathTable;

bool OwnProbes(const Target& t) {
  return t.kind == Target::Kind::kRnic || t.kind == Target::Kind::kHost;
}

}  // namespace

std::vector<EvidenceEvent> EvidenceKeeper::OnWindow(const analysis::WindowReport& report,
                                                    const std::vector<std::uint64_t>& touched,
                                                    const analysis::IncidentTracker& incidents,
                                                    const analysis::FabricMap& fabric,
                                                    const AgentOf& agent_of) {
  std::vector<EvidenceEvent> events;
  if (!config_.enabled) return events;
  judged_until_ns_ = std::max(judged_until_ns_, report.end_ns);
  // The touched ones, and those still capturing that this window left alone.
  std::set<std::uint64_t> ids(touched.begin(), touched.end());
  for (const auto& [id, capture] : capturing_) ids.insert(id);
  for (const std::uint64_t id : ids) {
    const analysis::Incident* incident = incidents.Find(id);
    if (incident == nullptr) {
      capturing_.erase(id);
      continue;
    }
    // Resolved while its 5-tuples are read: its first capture closes it.
    if (auto waiting = sampling_.find(id); waiting != sampling_.end() && !incident->open) {
      waiting->second.closed = true;
    }
    EvidenceEvent event;
    event.incident_id = id;
    event.kind = std::string(analysis::IncidentKindName(incident->kind));
    event.summary = incident->summary;
    event.opened_ns = incident->evidence.first_seen_ns;
    if (incident->evidence.last_seen_ns == report.end_ns) {
      event.verdict = VerdictOf(*incident, report);
    }
    const bool young = incident->open && incident->merged_into == 0 &&
                       report.start_ns < event.opened_ns + config_.after.count();
    auto it = capturing_.find(id);
    if (young && it == capturing_.end() && sampling_.count(id) == 0) {
      Follow(*incident, report, fabric, agent_of, event);
      if (sampling_.count(id) == 0) {
        it = capturing_.emplace(id, Capture{event.opened_ns, true, event.counter_agents}).first;
      }
    }
    if (young && it != capturing_.end() && it->second.followed) SetCapture(id, it->second, event);
    if (!young && it != capturing_.end()) capturing_.erase(it);
    event.closed = !incident->open;
    events.push_back(std::move(event));
  }
  return events;
}

void EvidenceKeeper::SetCapture(std::uint64_t, const Capture& c, EvidenceEvent& event) const {
  event.counter_agents = c.hosts;
  event.capture_from_ns = c.opened_ns - config_.before.count();
  event.capture_to_ns = std::min(judged_until_ns_, c.opened_ns + config_.after.count());
}

void EvidenceKeeper::Follow(const analysis::Incident& incident,
                            const analysis::WindowReport& report, const analysis::FabricMap& fabric,
                            const AgentOf& agent_of, EvidenceEvent& event) {
  event.targets = TargetsOf(incident, fabric, report, config_.siblings);
  std::vector<std::uint32_t> limits;
  bool by_path = false;
  for (const Target& t : event.targets) {
    limits.push_back(t.sibling ? std::max<std::uint32_t>(1, config_.max_tuples / 4)
                               : config_.max_tuples);
    event.target_agents.push_back(OwnProbes(t) ? agent_of(t.id) : std::string());
    by_path = by_path || !OwnProbes(t);
  }
  if (!by_path) {  // an RNIC's or host's own probes: its host is the one involved
    event.counter_agents = {event.target_agents.front()};
    event.flight_record_agents = event.counter_agents;
    return;
  }
  // The targets go with the first capture, once the sample is taken.
  EvidenceEvent first;
  first.incident_id = event.incident_id;
  first.kind = event.kind;
  first.summary = event.summary;
  first.opened_ns = event.opened_ns;
  first.targets = std::move(event.targets);
  first.target_agents = std::move(event.target_agents);
  event.targets.clear();
  event.target_agents.clear();
  sampler_.Add(event.incident_id, first.targets, std::move(limits));
  sampling_.emplace(event.incident_id, std::move(first));
}

std::vector<EvidenceEvent> EvidenceKeeper::Step(const PathTable& paths,
                                                const analysis::FabricMap& fabric,
                                                const AgentOf& agent_of, std::size_t slots) {
  std::vector<EvidenceEvent> events;
  if (sampler_.idle()) return events;
  for (TupleSampler::Done& done : sampler_.Step(paths, fabric, slots)) {
    auto it = sampling_.find(done.owner);
    if (it == sampling_.end()) continue;
    EvidenceEvent event = std::move(it->second);
    sampling_.erase(it);
    TakeSample(done, agent_of, event);
    Capture capture{event.opened_ns, true, event.counter_agents};
    SetCapture(event.incident_id, capture, event);
    // Still young: later windows capture on; else this was its one capture.
    if (judged_until_ns_ < event.opened_ns + config_.after.count()) {
      capturing_[event.incident_id] = std::move(capture);
    }
    events.push_back(std::move(event));
  }
  return events;
}

void EvidenceKeeper::TakeSample(TupleSampler::Done& done, const AgentOf& agent_of,
                                EvidenceEvent& event) {
  // Involved hosts: those whose sampled 5-tuples cross the suspect, the most
  // such first.
  std::map<analysis::HostId, std::uint32_t> crossing;
  for (std::size_t g = 0; g < done.samples.size(); ++g) {
    if (g == 0 && done.samples[g].capped()) event.tuples_capped = true;
    for (SampledTuple& s : done.samples[g].tuples) {
      const analysis::HostId host = PathTable::KeyHost(s.key);
      if (g == 0) ++crossing[host];
      FollowedTuple& f = event.tuples.emplace_back();
      f.group = static_cast<std::uint32_t>(g);
      f.agent_id = agent_of(host);
      f.src_nic = PathTable::KeySrc(s.key);
      f.dst_nic = PathTable::KeyDst(s.key);
      f.src_port = PathTable::KeyPort(s.key);
      f.links = std::move(s.links);
    }
  }
  std::vector<std::pair<std::uint32_t, analysis::HostId>> by_count;
  for (const auto& [host, n] : crossing) by_count.emplace_back(n, host);
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> hosts;
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
