#include "analyzer/main/analysis_feed.h"

#include <utility>

#include "analyzer/analysis/topology_adapter.h"
#include "common/base/logging.h"

namespace hostmesh::analyzer::app {
namespace {

analysis::FabricMap FabricOf(const topology::Topology* topology) {
  return topology != nullptr ? analysis::FabricMapFrom(*topology) : analysis::FabricMap{};
}

}  // namespace

AnalysisFeed::AnalysisFeed(store::Store& store, analysis::AnalysisConfig config,
                           const topology::Topology* topology, std::size_t max_queued_results)
    : store_(store),
      topology_(topology),
      max_queued_results_(max_queued_results),
      analysis_(config, FabricOf(topology)) {
  if (topology_ != nullptr) resolver_.emplace(*topology_);
}

analysis::HostId AnalysisFeed::HostFor(std::string_view agent_id, std::uint64_t boot_id) {
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
  // A new boot may renumber NICs: re-read its Hello. Ingest accepted the batch,
  // so the Hello exists; if retention dropped it meanwhile, keep the old table.
  const std::optional<v1::AgentHello> hello = store_.GetHello(agent_id, boot_id);
  if (!hello) {
    ++stats_.no_hello;
    return id;
  }
  boots_[id] = boot_id;
  hosts_shared_.reset();
  api::HostInfo& info = hosts_[id];
  if (!hello->host().empty()) info.host = hello->host();
  info.nics.clear();
  std::vector<int> rails;
  for (const v1::Nic& nic : hello->nics()) {
    if (nic.id() >= analysis::kMaxNics) continue;
    if (info.nics.size() <= nic.id()) info.nics.resize(nic.id() + 1);
    info.nics[nic.id()] = {nic.name(), nic.ip(), static_cast<int>(nic.rail())};
    if (rails.size() <= nic.id()) {
      for (auto n = rails.size(); n <= nic.id(); ++n) rails.push_back(static_cast<int>(n));
    }
    rails[nic.id()] = static_cast<int>(nic.rail());
  }
  queue_.rails.emplace_back(id, std::move(rails));
  return id;
}

void AnalysisFeed::AddPath(analysis::HostId host, const v1::PathReport& report) {
  if (!resolver_) {
    ++stats_.paths_skipped;
    return;
  }
  const auto src = topology::ParseIpv4(report.src_ip());
  const auto dst = topology::ParseIpv4(report.dst_ip());
  if (!src || !dst || report.hops_size() > static_cast<int>(topology::PathResolver::kMaxHops)) {
    ++stats_.paths_unresolved;
    return;
  }
  std::vector<topology::Hop> hops;
  hops.reserve(static_cast<std::size_t>(report.hops_size()));
  for (const v1::Hop& hop : report.hops()) {
    hops.push_back(hop.address().empty() ? std::nullopt : topology::ParseIpv4(hop.address()));
  }
  resolver_->Resolve(*src, *dst, hops, &scratch_);
  if (scratch_.status == topology::PathStatus::kInconsistent) {
    ++stats_.paths_unresolved;
    return;
  }
  ++stats_.paths_resolved;
  analysis::PathRecord path;
  path.host = host;
  path.src_nic = report.src_nic();
  path.dst_nic = report.dst_nic();
  path.src_port = static_cast<std::uint16_t>(report.src_port());
  path.dst_port = static_cast<std::uint16_t>(report.dst_port());
  path.time_ns = report.time_ns();
  path.links = scratch_.links;  // ambiguous positions are kNone == kUnknown
  queue_.paths.push_back(std::move(path));
}

void AnalysisFeed::AddResult(analysis::HostId host, const v1::ProbeResult& p) {
  analysis::ProbeRecord r;
  r.host = host;
  r.src_nic = p.src_nic();
  r.dst_nic = p.dst_nic();
  r.src_port = static_cast<std::uint16_t>(p.src_port());
  r.dst_port = static_cast<std::uint16_t>(p.dst_port());
  r.sequence = p.sequence();
  r.send_time_ns = p.send_time_ns();
  r.t1_app_send_ns = p.app_send_ns();
  r.t2_nic_send_ns = p.nic_send_ns();
  r.t3_nic_recv_ns = p.nic_recv_ns();
  r.t4_app_recv_ns = p.app_recv_ns();
  r.timeout = p.timeout();
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

void AnalysisFeed::OnBatch(const v1::UploadBatch& batch) {
  std::lock_guard lock(mu_);
  ++stats_.batches;
  const analysis::HostId host = HostFor(batch.agent_id(), batch.boot_id());
  // Paths first: a batch's results may be the first of a freshly traced tuple.
  for (const v1::PathReport& report : batch.paths()) AddPath(host, report);
  for (const v1::ProbeResult& p : batch.results()) AddResult(host, p);
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

void AnalysisFeed::Drain() {
  {
    std::lock_guard lock(mu_);
    std::swap(queue_, applying_);
    warned_full_ = false;
  }
  for (auto& [host, rails] : applying_.rails) analysis_.SetRails(host, std::move(rails));
  for (const analysis::PathRecord& path : applying_.paths) analysis_.AddPath(path);
  for (const analysis::ProbeRecord& result : applying_.results) analysis_.AddResult(result);
  applying_.rails.clear();
  applying_.paths.clear();
  applying_.results.clear();
}

void AnalysisFeed::ReplayPath(std::string_view agent_id, std::uint64_t boot_id,
                              const v1::PathReport& path) {
  std::lock_guard lock(mu_);
  AddPath(HostFor(agent_id, boot_id), path);
}

void AnalysisFeed::ReplayResult(std::string_view agent_id, std::uint64_t boot_id,
                                const v1::ProbeResult& result) {
  bool drain = false;
  {
    std::lock_guard lock(mu_);
    AddResult(HostFor(agent_id, boot_id), result);
    drain = queue_.results.size() >= max_queued_results_ / 2;  // a long replay never fills it
  }
  if (drain) {
    std::lock_guard lock(analysis_mu_);
    Drain();
  }
}

std::vector<analysis::WindowReport> AnalysisFeed::Advance(std::int64_t now_ns) {
  std::lock_guard lock(analysis_mu_);
  Drain();
  return analysis_.Advance(now_ns);
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
