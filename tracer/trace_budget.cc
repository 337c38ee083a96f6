#include "tracer/trace_budget.h"

#include <algorithm>

namespace hostmesh::tracer {

TraceBudget::TraceBudget(TraceBudgetConfig config, MonoTime now)
    : config_(config), global_(config.probes_per_second, config.burst, now) {}

TokenBucket& TraceBudget::HopBucket(Ipv4 key, MonoTime now) {
  auto it = per_hop_.find(key);
  if (it == per_hop_.end()) {
    it = per_hop_
             .emplace(key, TokenBucket(config_.per_first_hop_per_second,
                                       config_.per_first_hop_burst, now))
             .first;
  }
  return it->second;
}

double TraceBudget::Capped(int probes) const {
  return std::min({static_cast<double>(std::max(probes, 1)), global_.burst(),
                   std::max(config_.per_first_hop_burst, 1.0)});
}

double TraceBudget::TryReserve(Ipv4 key, int probes, MonoTime now) {
  const double n = Capped(probes);
  TokenBucket& hop = HopBucket(key, now);
  if (global_.Tokens(now) + 1e-9 < n || hop.Tokens(now) + 1e-9 < n) return 0;
  global_.TryTake(n, now);
  hop.TryTake(n, now);
  return n;
}

void TraceBudget::Settle(Ipv4 key, double reserved, int used, MonoTime now) {
  const double extra = static_cast<double>(used) - reserved;
  global_.Charge(extra, now);
  HopBucket(key, now).Charge(extra, now);
}

void TraceBudget::Rekey(Ipv4 from, Ipv4 to, MonoTime now) {
  const auto it = per_hop_.find(from);
  if (it == per_hop_.end() || from == to) return;
  if (const auto target = per_hop_.find(to); target == per_hop_.end()) {
    per_hop_.emplace(to, it->second);
  } else {
    target->second.Charge(it->second.burst() - it->second.Tokens(now), now);
  }
  per_hop_.erase(it);
}

MonoTime TraceBudget::WhenAvailable(Ipv4 key, int probes, MonoTime now) {
  const double n = Capped(probes);
  return std::max(global_.WhenAvailable(n, now), HopBucket(key, now).WhenAvailable(n, now));
}

}  // namespace hostmesh::tracer
