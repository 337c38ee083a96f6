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
//
// Every byte read is paid for: a batch over what the bucket holds is refused
// and charged all the same (gRPC has read it), so the bucket goes into debt,
// and a peer in debt has its next streams refused at their start, before a
// byte of them is read, until it has paid. What a peer can make the analyzer
// read is then its rate, plus one message per stream it may open.
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

  // What taking `bytes` found: enough, not enough (the bucket goes into debt
  // by this take), or a bucket already in debt before it.
  enum class Taken { kHeld, kIntoDebt, kAlreadyOwed };
  // Takes `bytes` from the agent's bucket, always: what was not there is debt.
  Taken Charge(std::string_view agent_id, std::size_t bytes, MonoTime now);
  // Charge, held or not: false when the bytes were not there (the agent is
  // over its quota).
  bool Take(std::string_view agent_id, std::size_t bytes, MonoTime now) {
    return Charge(agent_id, bytes, now) == Taken::kHeld;
  }
  // Whether the agent's bucket is in debt (a bucket never taken from is not).
  bool InDebt(std::string_view agent_id, MonoTime now);

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
