#include "agent/wiring/trace_plan.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace hostmesh::agent::wiring {
namespace {

std::optional<tracer::Ipv4> V4(const config::IpAddress& ip) {
  if (!ip.is_v4()) return std::nullopt;
  std::uint32_t network = 0;
  std::memcpy(&network, ip.bytes.data(), sizeof(network));
  return tracer::Ipv4{ntohl(network)};
}

}  // namespace

tracer::ContinuousConfig ContinuousConfigFrom(const AgentConfig& config, std::uint32_t session) {
  tracer::ContinuousConfig out;
  const TracerouteConfig& t = config.traceroute;
  out.refresh_period = t.refresh_period;
  // A periodic report at least every 5 minutes, or every refresh when slower.
  out.report_period = std::max<std::chrono::nanoseconds>(out.report_period, t.refresh_period);
  out.budget.probes_per_second = t.rate_per_second;
  out.budget.per_first_hop_per_second = t.per_switch_rate_per_second;
  out.loss_retrace_after = t.loss_retrace_after;
  out.gather = kTraceGather;
  // One trace per NIC at a time at most; the budgets usually allow fewer.
  out.max_in_flight = std::max<std::size_t>(config.nics.size(), 1);
  for (const NicConfig& nic : config.nics) out.netdevs.push_back(nic.netdev);
  out.request_template.max_ttl = t.max_ttl;
  out.request_template.probe_timeout = kTraceProbeTimeout;
  out.request_template.destination_swallows = true;  // our own receiver eats the last probe
  out.request_template.session = session;
  return out;
}

std::vector<tracer::TraceTarget> TraceTargetsFrom(
    const AgentConfig& config, const std::vector<std::vector<std::uint16_t>>& pool_ports) {
  std::vector<tracer::TraceTarget> out;
  const std::size_t n = std::min(config.nics.size(), pool_ports.size());
  // Sized once: a rotation hands over every 5-tuple of the host (896 with 8
  // NICs), and growing by doubling would hold twice that for a moment.
  std::size_t count = 0;
  for (std::size_t s = 0; s < n; ++s) count += pool_ports[s].size() * (config.nics.size() - 1);
  out.reserve(count);
  for (std::size_t s = 0; s < n; ++s) {
    const auto src = V4(config.nics[s].ip);
    if (!src) continue;
    for (std::size_t d = 0; d < config.nics.size(); ++d) {
      const auto dst = V4(config.nics[d].ip);
      if (d == s || !dst) continue;
      for (const std::uint16_t port : pool_ports[s]) {
        tracer::TraceTarget t;
        t.src_nic = static_cast<std::uint32_t>(s);
        t.dst_nic = static_cast<std::uint32_t>(d);
        t.tuple = {*src, *dst, port, config.probe.dst_port, tracer::kIpProtoUdp};
        out.push_back(std::move(t));
      }
    }
  }
  return out;
}

std::optional<tracer::FiveTuple> TraceTupleOf(const AgentConfig& config, std::uint32_t src,
                                              std::uint32_t dst, std::uint16_t src_port) {
  if (src >= config.nics.size() || dst >= config.nics.size()) return std::nullopt;
  const auto s = V4(config.nics[src].ip);
  const auto d = V4(config.nics[dst].ip);
  if (!s || !d) return std::nullopt;
  return tracer::FiveTuple{*s, *d, src_port, config.probe.dst_port, tracer::kIpProtoUdp};
}

double RefreshProbesPerSecond(std::size_t targets, std::chrono::nanoseconds refresh_period) {
  const double seconds = std::chrono::duration<double>(refresh_period).count();
  return seconds > 0 ? static_cast<double>(targets) * 4 / seconds : 0;
}

std::string DescribeTraceLoad(const AgentConfig& config, std::size_t targets, bool* over_budget) {
  const TracerouteConfig& t = config.traceroute;
  const double needed = RefreshProbesPerSecond(targets, t.refresh_period);
  // The budget, not the thread, is the limit: a trace of known length waits
  // about one round trip for its swallowed last probe (trace_engine.h).
  const double possible = t.rate_per_second;
  *over_budget = needed > possible;
  const auto refresh_s = std::chrono::duration_cast<std::chrono::seconds>(t.refresh_period).count();
  std::string line = std::to_string(targets) + " 5-tuples, a refresh every " +
                     std::to_string(refresh_s) + " s needs " +
                     std::to_string(static_cast<int>(needed + 0.5)) + " probes/s, " +
                     std::to_string(static_cast<int>(possible)) + " possible";
  if (*over_budget) {
    const double seconds = static_cast<double>(targets) * 4 / possible;
    line += ": each path is refreshed about every " +
            std::to_string(static_cast<long>(seconds + 0.5)) + " s instead";
  }
  return line;
}

void PathLengthHints::Learn(const tracer::TraceResult& result) {
  if (!result.reached_destination || result.hops.empty()) return;
  const int switches = static_cast<int>(result.hops.size()) - 1;
  by_pair_[Key(result.tuple)] = switches;
  last_ = switches;
}

int PathLengthHints::For(const tracer::FiveTuple& tuple) const {
  const auto it = by_pair_.find(Key(tuple));
  return it == by_pair_.end() ? last_ : it->second;
}

}  // namespace hostmesh::agent::wiring
