// Bytes each agent may upload, as a token bucket per agent id: what one
// compromised host can make the analyzer store and judge. Pure: time comes in
// as an argument.
//
// Sized from what an honest agent sends: 8 NICs probing at 100/s each make
// about 40 KB/s of batches (10/s: 4 KB/s), and after an outage it resends its
// whole buffer (upload.buffer_budget, 64 MiB by default) at once. So the
// default refills at 1 MiB/s and holds a 256 MiB burst: an honest agent never
// meets it, and a hostile one stores at most 86 GB a day instead of whatever
// its link carries.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/base/clock.h"

namespace hostmesh::analyzer::ingest {

struct QuotaOptions {
  double bytes_per_second = 1 << 20;
  double burst_bytes = 256 << 20;
  // Buckets kept at most; past it the fullest are forgotten (a full bucket is
  // what a new one starts as, so forgetting it changes nothing).
  std::size_t max_agents = 100'000;
};

class AgentQuota {
 public:
  explicit AgentQuota(QuotaOptions options) : options_(options) {}

  // Takes `bytes` from the agent's bucket when they are there; false (nothing
  // taken) when the agent is over its quota.
  bool Take(std::string_view agent_id, std::size_t bytes, MonoTime now);

  std::size_t agents() const;

 private:
  struct Bucket {
    double tokens = 0;
    MonoTime at{};
  };
  void Refill(Bucket& b, MonoTime now) const;
  void ForgetFullest(MonoTime now);

  const QuotaOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace hostmesh::analyzer::ingest
