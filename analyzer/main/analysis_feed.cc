#include "analyzer/main/analysis_feed.h"

#include <utility>

#include "analyzer/analysis/topology_adapter.h"

namespace hostmesh::analyzer::app {
namespace {

analysis::FabricMap FabricOf(const topology::Topology* topology) {
  return topology != nullptr ? analysis::FabricMapFrom(*topology) : analysis::FabricMap{};
}

}  // namespace

AnalysisFeed::AnalysisFeed(const store::Store& store, analysis::AnalysisConfig config,
                           const topology::Topology* topology)
    : store_(store), topology_(topology), analysis_(config, FabricOf(topology)) {
  if (topology_ != nullptr) resolver_.emplace(*topology_);
}

std::optional<analysis::HostId> AnalysisFeed::HostFor(const v1::UploadBatch& batch) {
  auto [it, inserted] =
      host_ids_.try_emplace(batch.agent_id(), static_cast<analysis::HostId>(hosts_.size()));
  const analysis::HostId id = it->second;
  if (inserted) {
    hosts_.push_back({batch.agent_id(), batch.agent_id(), {}});
    boots_.push_back(0);
  }
  if (boots_[id] == batch.boot_id() && !inserted) return id;
  // A new boot may renumber NICs: re-read its Hello. Ingest accepted the batch,
  // so the Hello exists; if retention dropped it meanwhile, keep the old table.
  const std::optional<v1::AgentHello> hello = store_.GetHello(batch.agent_id(), batch.boot_id());
  if (!hello) {
    ++stats_.no_hello;
    return id;
  }
  boots_[id] = batch.boot_id();
  api::HostInfo& info = hosts_[id];
  if (!hello->host().empty()) info.host = hello->host();
  info.nics.clear();
  for (const v1::Nic& nic : hello->nics()) {
    if (nic.id() >= analysis::kMaxNics) continue;
    if (info.nics.size() <= nic.id()) info.nics.resize(nic.id() + 1);
    info.nics[nic.id()] = {nic.name(), nic.ip(), static_cast<int>(nic.rail())};
  }
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
  analysis_.AddPath(path);
}

void AnalysisFeed::OnBatch(const v1::UploadBatch& batch) {
  std::lock_guard lock(mu_);
  ++stats_.batches;
  const std::optional<analysis::HostId> host = HostFor(batch);
  if (!host) return;
  // Paths first: a batch's results may be the first of a freshly traced tuple.
  for (const v1::PathReport& report : batch.paths()) AddPath(*host, report);
  analysis::ProbeRecord r;
  r.host = *host;
  for (const v1::ProbeResult& p : batch.results()) {
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
    analysis_.AddResult(r);  // late/future/invalid are counted in analysis stats
  }
}

std::vector<analysis::WindowReport> AnalysisFeed::Advance(std::int64_t now_ns) {
  std::lock_guard lock(mu_);
  return analysis_.Advance(now_ns);
}

std::vector<api::HostInfo> AnalysisFeed::Hosts() const {
  std::lock_guard lock(mu_);
  return hosts_;
}

analysis::AnalysisStats AnalysisFeed::analysis_stats() const {
  std::lock_guard lock(mu_);
  return analysis_.stats();
}

FeedStats AnalysisFeed::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace hostmesh::analyzer::app
