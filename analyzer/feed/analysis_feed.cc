#include "analyzer/feed/analysis_feed.h"

#include <utility>

#include "analyzer/analysis/topology_adapter.h"
#include "analyzer/feed/feed_convert.h"
#include "analyzer/feed/topology_view.h"
#include "common/base/logging.h"

namespace hostmesh::analyzer::app {
namespace {

analysis::FabricMap FabricOf(const topology::Topology* topology) {
  return topology != nullptr ? analysis::FabricMapFrom(*topology) : analysis::FabricMap{};
}

// The agent's signals (agent/protect/rate_governor.h kSignalNames) that are
// about CPU: a host shedding for one of them is short of CPU by its own word.
bool IsCpuSignal(const std::string& signal) {
  return signal == "cpu" || signal == "cgroup_cpu" || signal == "cgroup_throttled" ||
         signal == "self_cpu_wait";
}

}  // namespace

AnalysisFeed::AnalysisFeed(store::Store& store, analysis::AnalysisConfig config,
                           const topology::Topology* topology, std::size_t max_queued_results)
    : store_(store),
      topology_(topology),
      max_queued_results_(max_queued_results),
      analysis_(config, FabricOf(topology)),
      send_failures_(config.window.count()) {
  if (topology_ != nullptr) {
    resolver_.emplace(*topology_);
  } else {
    learned_.emplace();
  }
}

bool AnalysisFeed::RestoreLearned(const topology::LearnedFabric& state, std::string* error) {
  std::lock_guard lock(mu_);
  if (!learned_) {
    *error = "an inventory is loaded";
    return false;
  }
  return learned_->Import(state, error);
}

analysis::HostId AnalysisFeed::HostFor(std::string_view agent_id, std::uint64_t boot_id,
                                       const v1::AgentHello* hello) {
  auto [it, inserted] =
      host_ids_.try_emplace(std::string(agent_id), static_cast<analysis::HostId>(hosts_.size()));
  const analysis::HostId id = it->second;
  if (inserted) {
    hosts_shared_.reset();
    hosts_.push_back({std::string(agent_id), std::string(agent_id), {}});
    boots_.push_back(0);
    if (const auto status = store_.PutAgentIndex(agent_id, id); !status.ok()) {
      ++stats_.index_write_errors;
      GetLogger("analyzer")
          ->warn("host id of {} not stored ({}): a restart may renumber it", agent_id,
                 status.error);
    }
  }
  if (boots_[id] == boot_id && !inserted) return id;
  // A new boot may renumber NICs. A replay reads its Hello from the store; if
  // retention dropped it meanwhile, the old table stays.
  std::optional<v1::AgentHello> stored;
  if (hello == nullptr) {
    stored = store_.GetHello(agent_id, boot_id);
    if (!stored) {
      ++stats_.no_hello;
      return id;
    }
    hello = &*stored;
  }
  boots_[id] = boot_id;
  TakeHello(id, *hello);
  return id;
}

void AnalysisFeed::TakeHello(analysis::HostId id, const v1::AgentHello& hello) {
  hosts_shared_.reset();
  api::HostInfo& info = hosts_[id];
  if (!hello.host().empty()) info.host = hello.host();
  info.nics.clear();
  for (const v1::Nic& nic : hello.nics()) {
    if (nic.id() >= analysis::kMaxNics) continue;
    if (info.nics.size() <= nic.id()) info.nics.resize(nic.id() + 1);
    info.nics[nic.id()] = {nic.name(), nic.ip(), static_cast<int>(nic.rail())};
  }
  if (learned_) learned_->AddHello(info.host, hello);
  queue_.rails.emplace_back(id, RailsFromHello(hello));
}

void AnalysisFeed::AddPath(analysis::HostId host, const v1::PathReport& report) {
  analysis::PathRecord path;
  // With an inventory the report is parsed once, for the resolver and the
  // inventory checks alike.
  ParsedTrace parsed;
  const bool parses = !learned_ && ParseTrace(report, &parsed);
  const PathConversion conversion =
      learned_ ? learned_->Convert(host, hosts_[host].host, report, path)
      : parses ? ToPathRecord(host, report, parsed, *resolver_, scratch_, path)
               : PathConversion::kUnresolved;
  switch (conversion) {
    case PathConversion::kUnresolved:
      ++stats_.paths_unresolved;
      if (parses) CheckAgainstInventory(host, report, parsed);
      return;
    case PathConversion::kCutShort:
      ++stats_.paths_cut_short;
      if (!path.links.empty()) queue_.paths.push_back(std::move(path));
      return;
    case PathConversion::kContinued:
      ++stats_.paths_continued;
      break;
    case PathConversion::kResolved:
      break;
  }
  if (parses && disagreements_.watching()) VouchForInventory(parsed);
  ++stats_.paths_resolved;
  queue_.paths.push_back(std::move(path));
}

void AnalysisFeed::VouchForInventory(const ParsedTrace& parsed) {
  for (const topology::Ipv4 where : topology::AgreeingAddresses(parsed.src, parsed.trace())) {
    disagreements_.Agree(where);
  }
}

void AnalysisFeed::CheckAgainstInventory(analysis::HostId host, const v1::PathReport& report,
                                         const ParsedTrace& parsed) {
  const auto found = topology::FindDisagreement(*topology_, parsed.src, parsed.dst, parsed.trace());
  if (!found) return;
  ++stats_.paths_disagreeing;
  const std::string& agent = hosts_[host].agent_id;
  const bool confirmed = disagreements_.Add(
      *found, {agent, report.src_ip(), report.dst_ip(), report.src_port(), report.time_ns()});
  const auto log = GetLogger("analyzer");
  if (confirmed) {
    log->warn(
        "the traced fabric disagrees with the inventory ({}): {} (agent {}, {} -> {} port {})",
        topology::DisagreementKindName(found->kind), found->description, agent, report.src_ip(),
        report.dst_ip(), report.src_port());
  }
  if (disagreements_.overflow() > 0 && !warned_places_full_) {
    warned_places_full_ = true;
    log->warn(
        "more than {} places where traces contradict the inventory: further ones are "
        "counted, not listed (is it the inventory of this fabric?)",
        DisagreementBook::kMaxPlaces);
  }
}

void AnalysisFeed::AddResult(analysis::HostId host, const v1::ProbeResult& p) {
  const analysis::ProbeRecord r = ToProbeRecord(host, p);
  if (r.send_failed) {
    // Whatever the queue does: the diagnosis' evidence that the RNIC is down.
    const std::uint64_t before = send_failures_.untallied();
    send_failures_.Add(r.host, r.src_nic, r.send_time_ns);
    if (send_failures_.untallied() > before) {
      ++stats_.send_failures_untallied;
      if (!warned_send_failures_) {
        warned_send_failures_ = true;
        GetLogger("analyzer")
            ->warn(
                "send failures of more than {} RNICs in the open windows: further RNICs' are not "
                "tallied for the diagnosis",
                diagnosis::SendFailureTally::kMaxEntries);
      }
    }
  }
  if (queue_.results.size() >= max_queued_results_) {
    ++stats_.queue_dropped;
    if (!warned_full_) {
      warned_full_ = true;
      GetLogger("analyzer")
          ->warn(
              "analysis queue full ({} results): the loop is stalled; results are stored but not "
              "analysed until it drains",
              max_queued_results_);
    }
    return;
  }
  queue_.results.push_back(r);  // late/future/invalid are counted when applied
}

void AnalysisFeed::OnBatch(const v1::UploadBatch& batch, const v1::AgentHello& hello) {
  std::lock_guard lock(mu_);
  ++stats_.batches;
  const analysis::HostId host = HostFor(batch.agent_id(), batch.boot_id(), &hello);
  // Paths first: a batch's results may be the first of a freshly traced tuple.
  for (const v1::PathReport& report : batch.paths()) AddPath(host, report);
  for (const v1::ProbeResult& p : batch.results()) AddResult(host, p);
  // Every batch repeats the state: only a change is queued, so a stalled
  // loop's queue grows with the agents' steps, not with their batches.
  if (batch.has_load_shedding()) {
    const v1::LoadShedding& s = batch.load_shedding();
    if (last_shedding_.size() <= host) last_shedding_.resize(std::size_t{host} + 1, {1.0, 0});
    auto& last = last_shedding_[host];
    if (last != std::pair{s.rate_fraction(), s.since_ns()}) {
      last = {s.rate_fraction(), s.since_ns()};
      queue_.shedding.push_back({host, batch.created_ns(), s.rate_fraction(), s.since_ns(),
                                 s.cause(), IsCpuSignal(s.signal())});
    }
  }
}

void AnalysisFeed::RestoreHosts(const std::vector<std::pair<std::string, std::uint32_t>>& index) {
  std::lock_guard lock(mu_);
  for (const auto& [agent_id, id] : index) {
    // Ids are dense from 0; an entry out of line (a damaged store) is skipped
    // and its agent numbered anew on its next batch.
    if (id >= analysis::kUnknown || host_ids_.count(agent_id)) continue;
    if (hosts_.size() <= id) {
      hosts_.resize(std::size_t{id} + 1);
      boots_.resize(std::size_t{id} + 1, 0);
    }
    if (!hosts_[id].agent_id.empty()) continue;
    hosts_[id] = {agent_id, agent_id, {}};
    host_ids_.emplace(agent_id, id);
    hosts_shared_.reset();
  }
}

void AnalysisFeed::ResumeAfter(std::int64_t end_ns) {
  std::lock_guard lock(analysis_mu_);
  Drain();
  analysis_.ResumeAfter(end_ns);
}

void AnalysisFeed::Drain(std::int64_t now_ns) {
  std::shared_ptr<const topology::Topology> learned;
  std::uint64_t version = 0;
  {
    std::lock_guard lock(mu_);
    std::swap(queue_, applying_);
    warned_full_ = false;
    if (learned_ && now_ns != 0) {
      learned = learned_->Refresh(now_ns);
      version = learned_->version();
    }
  }
  if (learned) {
    analysis::FabricMap fabric = analysis::FabricMapFrom(*learned);
    analysis_.SetFabric(std::move(fabric.links), fabric.switch_count);
    auto view = std::make_shared<const api::InventoryView>(ViewOf(*learned, true));
    std::lock_guard lock(mu_);
    learned_view_ = std::move(view);
    learned_graph_ = std::move(learned);
    learned_view_version_ = version;
  }
  for (auto& [host, rails] : applying_.rails) analysis_.SetRails(host, std::move(rails));
  for (const analysis::PathRecord& path : applying_.paths) analysis_.AddPath(path);
  analysis_.AddResults(applying_.results);
  for (const Queue::Shedding& s : applying_.shedding) {
    analysis_.NoteShedding(s.host, s.at_ns, s.fraction, s.since_ns, s.cause, s.cpu);
  }
  applying_.rails.clear();
  applying_.paths.clear();
  applying_.results.clear();
  applying_.shedding.clear();
}

void AnalysisFeed::ReplayPath(std::string_view agent_id, std::uint64_t boot_id,
                              const v1::PathReport& path) {
  std::lock_guard lock(mu_);
  AddPath(HostFor(agent_id, boot_id, nullptr), path);
}

void AnalysisFeed::ReplayResult(std::string_view agent_id, std::uint64_t boot_id,
                                const v1::ProbeResult& result) {
  bool drain = false;
  {
    std::lock_guard lock(mu_);
    AddResult(HostFor(agent_id, boot_id, nullptr), result);
    drain = queue_.results.size() >= max_queued_results_ / 2;  // a long replay never fills it
  }
  if (drain) {
    std::lock_guard lock(analysis_mu_);
    Drain();
  }
}

std::vector<analysis::WindowReport> AnalysisFeed::Advance(std::int64_t now_ns) {
  std::lock_guard lock(analysis_mu_);
  Drain(now_ns);
  WarnOfCrowdedHosts(now_ns);
  return analysis_.Advance(now_ns);
}

void AnalysisFeed::WarnOfCrowdedHosts(std::int64_t now_ns) {
  const analysis::PathTable& paths = analysis_.paths();
  if (paths.refused_for_host_cap() == crowded_refusals_warned_) return;
  if (crowded_warned_ns_ != 0 && now_ns - crowded_warned_ns_ < 60'000'000'000) return;
  const std::uint64_t refused = paths.refused_for_host_cap() - crowded_refusals_warned_;
  crowded_refusals_warned_ = paths.refused_for_host_cap();
  crowded_warned_ns_ = now_ns;
  std::string agents;
  {
    std::lock_guard lock(mu_);
    for (const analysis::HostId host : paths.crowded_hosts()) {
      if (host >= hosts_.size()) continue;
      if (!agents.empty()) agents += ", ";
      agents += hosts_[host].agent_id;
    }
  }
  GetLogger("analyzer")
      ->warn(
          "path reports of {} new 5-tuples refused: their agents hold max_paths_per_host ({}) "
          "traced 5-tuples; their idle ones are evicted early (agents: {})",
          refused, analysis_.config().max_paths_per_host, agents.empty() ? "none now" : agents);
}

diagnosis::SendFailures AnalysisFeed::TakeSendFailures(std::int64_t window_start_ns) {
  std::lock_guard lock(mu_);
  return send_failures_.Take(window_start_ns);
}

std::string AnalysisFeed::AgentOf(analysis::HostId host) const {
  std::lock_guard lock(mu_);
  return host < hosts_.size() ? hosts_[host].agent_id : std::string();
}

std::shared_ptr<const std::vector<api::HostInfo>> AnalysisFeed::Hosts() const {
  std::lock_guard lock(mu_);
  if (!hosts_shared_) hosts_shared_ = std::make_shared<const std::vector<api::HostInfo>>(hosts_);
  return hosts_shared_;
}

std::shared_ptr<const api::InventoryView> AnalysisFeed::LearnedView(std::uint64_t* version) const {
  std::lock_guard lock(mu_);
  *version = learned_view_version_;
  return learned_view_;
}

std::shared_ptr<const topology::Topology> AnalysisFeed::LearnedGraph() const {
  std::lock_guard lock(mu_);
  return learned_graph_;
}

std::optional<std::pair<std::uint64_t, topology::LearnedFabric>> AnalysisFeed::LearnedChangedSince(
    std::uint64_t stored_version) const {
  std::lock_guard lock(mu_);
  if (!learned_ || learned_->version() == stored_version) return std::nullopt;
  return std::make_pair(learned_->version(), learned_->Export());
}

topology::LearnerStats AnalysisFeed::learner_stats() const {
  std::lock_guard lock(mu_);
  return learned_ ? learned_->stats() : topology::LearnerStats{};
}

std::shared_ptr<const std::vector<api::TopologyDisagreement>> AnalysisFeed::Disagreements() const {
  std::lock_guard lock(mu_);
  return disagreements_.Confirmed();
}

std::array<std::uint64_t, topology::kDisagreementKinds> AnalysisFeed::DisagreeingTraces() const {
  std::lock_guard lock(mu_);
  return disagreements_.traces();
}

analysis::AnalysisStats AnalysisFeed::analysis_stats() {
  std::lock_guard lock(analysis_mu_);
  Drain();
  return analysis_.stats();
}

FeedStats AnalysisFeed::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace hostmesh::analyzer::app
