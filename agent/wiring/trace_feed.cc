#include "agent/wiring/trace_feed.h"

#include "agent/wiring/trace_plan.h"

namespace hostmesh::agent::wiring {

std::optional<std::vector<tracer::TraceTarget>> TraceFeed::TargetsIfRotated(
    const Scheduler& scheduler) {
  const std::size_t n = config_.nics.size();
  if (handed_.size() == n && scheduler.pool_changes() == handed_changes_) return std::nullopt;
  handed_changes_ = scheduler.pool_changes();
  bool rotated = handed_.size() != n;
  for (NicId nic = 0; nic < n && !rotated; ++nic) {
    rotated = scheduler.pool(nic).generation() != handed_[nic];
  }
  if (!rotated) return std::nullopt;
  std::vector<std::vector<std::uint16_t>> ports(n);
  handed_.resize(n);
  for (NicId nic = 0; nic < n; ++nic) {
    const PortPool& pool = scheduler.pool(nic);
    ports[nic].assign(pool.ports().begin(), pool.ports().end());
    handed_[nic] = pool.generation();
  }
  return TraceTargetsFrom(config_, ports);
}

std::optional<tracer::FiveTuple> TraceFeed::RetraceFor(const ProbeResult& result) const {
  if (!result.timeout) return std::nullopt;
  return TraceTupleOf(config_, result.src_nic, result.dst_nic, result.src_port);
}

}  // namespace hostmesh::agent::wiring
