#pragma once

// Whether two scenarios are the same run: every setting a scenario file
// holds (sim/README.md), field by field, faults in order.

#include "sim/scenario.h"

namespace hostmesh::sim::testing {

inline bool SameFault(const Fault& a, const Fault& b) {
  return a.kind == b.kind && a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.link == b.link &&
         a.direction == b.direction && a.host == b.host && a.nic == b.nic &&
         a.switch_id == b.switch_id && a.rate == b.rate && a.period_ns == b.period_ns &&
         a.port_min == b.port_min && a.port_max == b.port_max && a.added_ns == b.added_ns;
}

inline bool SameScenario(const Scenario& a, const Scenario& b) {
  const SimConfig &x = a.config, &y = b.config;
  const auto& s = x.shape;
  const auto& t = y.shape;
  if (a.name != b.name || x.seed != y.seed || x.hash_seed != y.hash_seed ||
      x.duration_ns != y.duration_ns || x.threads != y.threads ||
      x.analysis.window != y.analysis.window || s.hosts != t.hosts || s.rails != t.rails ||
      s.spines != t.spines || s.pods != t.pods || s.tiers != t.tiers ||
      s.aggregations != t.aggregations || x.background.min != y.background.min ||
      x.background.max != y.background.max || x.faults.size() != y.faults.size()) {
    return false;
  }
  const AgentSettings &p = x.agent, &q = y.agent;
  if (p.probe.interval != q.probe.interval || p.probe.timeout != q.probe.timeout ||
      p.ports.pool_size != q.ports.pool_size ||
      p.ports.rotation_period != q.ports.rotation_period ||
      p.traceroute.refresh_period != q.traceroute.refresh_period ||
      p.traceroute.rate_per_second != q.traceroute.rate_per_second ||
      p.traceroute.enabled != q.traceroute.enabled) {
    return false;
  }
  const MovingCongestionModel &m = x.latency.moving, &n = y.latency.moving;
  const QueueModel &u = x.latency.queue, &v = y.latency.queue;
  if (m.share != n.share || m.min_added_ns != n.min_added_ns || m.max_added_ns != n.max_added_ns ||
      m.min_duration_ns != n.min_duration_ns || m.max_duration_ns != n.max_duration_ns ||
      u.sigma != v.sigma || u.knot_ns != v.knot_ns || u.busy != v.busy || u.tail != v.tail) {
    return false;
  }
  for (std::size_t i = 0; i < x.faults.size(); ++i) {
    if (!SameFault(x.faults[i], y.faults[i])) return false;
  }
  return true;
}

}  // namespace hostmesh::sim::testing
