#include "analyzer/ingest/agent_quota.h"

#include <algorithm>

namespace hostmesh::analyzer::ingest {

void AgentQuota::Refill(Bucket& b, MonoTime now) const {
  const double seconds = std::chrono::duration<double>(now - b.at).count();
  if (seconds > 0) {
    b.tokens = std::min(options_.burst_bytes, b.tokens + seconds * options_.bytes_per_second);
    b.at = now;
  }
}

void AgentQuota::ForgetFullest(MonoTime now) {
  // Rare (max_agents distinct ids), so a pass over the map is fine: drop
  // every bucket that has refilled; if none has, the oldest.
  auto oldest = buckets_.end();
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    Refill(it->second, now);
    if (it->second.tokens >= options_.burst_bytes) {
      it = buckets_.erase(it);
      continue;
    }
    if (oldest == buckets_.end() || it->second.at < oldest->second.at) oldest = it;
    ++it;
  }
  if (buckets_.size() >= options_.max_agents && oldest != buckets_.end()) buckets_.erase(oldest);
}

AgentQuota::Taken AgentQuota::Charge(std::string_view agent_id, std::size_t bytes, MonoTime now) {
  std::lock_guard lock(mu_);
  auto it = buckets_.find(std::string(agent_id));
  if (it == buckets_.end()) {
    if (buckets_.size() >= options_.max_agents) ForgetFullest(now);
    it = buckets_.emplace(std::string(agent_id), Bucket{options_.burst_bytes, now}).first;
  }
  Bucket& b = it->second;
  Refill(b, now);
  const double need = static_cast<double>(bytes);
  const Taken taken = b.tokens < 0       ? Taken::kAlreadyOwed
                      : need <= b.tokens ? Taken::kHeld
                                         : Taken::kIntoDebt;
  b.tokens -= need;
  return taken;
}

bool AgentQuota::InDebt(std::string_view agent_id, MonoTime now) {
  std::lock_guard lock(mu_);
  const auto it = buckets_.find(std::string(agent_id));
  if (it == buckets_.end()) return false;
  Refill(it->second, now);
  return it->second.tokens < 0;
}

std::size_t AgentQuota::agents() const {
  std::lock_guard lock(mu_);
  return buckets_.size();
}

}  // namespace hostmesh::analyzer::ingest
