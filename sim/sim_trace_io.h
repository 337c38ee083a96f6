#pragma once

// The tracer's TraceIo over the simulated fabric: a TTL-limited probe follows
// its 5-tuple's path and meets the same faults as a probe (a gray link eats it);
// the switch where the TTL runs out answers with a real ICMP Time Exceeded
// from the interface it came in on, if its ICMP rate limit allows and the
// reply finds its way back; the destination NIC swallows what reaches it
// (the agent's own receiver), as on a real host. The real trace engine
// (RunTrace) and ContinuousTracer run on top.
//
// ICMP rate limit: a switch answers at most `switch_icmp_per_second`
// (burst `switch_icmp_burst`), shared fairly among the hosts whose probes
// reach it, so each host's share is a token bucket of its own and hosts
// simulated in parallel stay independent and reproducible.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent/core/rng.h"
#include "common/base/clock.h"
#include "sim/host_clock.h"
#include "sim/packet_model.h"
#include "tracer/trace_io.h"

namespace hostmesh::sim {

struct IcmpModel {
  double switch_icmp_per_second = 1000;  // Linux icmp_msgs_per_sec
  double switch_icmp_burst = 50;
  std::int64_t switch_cpu_ns = 50'000;  // the switch CPU's answer time (mean)
};

class SimTraceIo final : public tracer::TraceIo {
 public:
  SimTraceIo(std::uint32_t host, const PacketModel& model, IcmpModel icmp, VirtualClock& clock,
             std::uint64_t seed);

  std::string Open(const tracer::FiveTuple& tuple, const std::string& netdev) override;
  // One trace at a time (the simulated host runs RunTrace): Open starts it
  // afresh, Send takes only the open 5-tuple.
  std::string Send(const tracer::FiveTuple& tuple, int ttl,
                   std::span<const std::uint8_t> payload) override;
  bool Receive(MonoTime deadline, std::vector<std::uint8_t>& packet,
               MonoTime& received_at) override;
  void SleepUntil(MonoTime until) override;

  std::uint64_t rate_limited() const { return rate_limited_; }

 private:
  struct Bucket {
    double tokens = 0;
    std::int64_t at_ns = 0;
  };
  bool TakeToken(DeviceId sw, std::int64_t t);

  std::uint32_t host_;
  const PacketModel& model_;
  IcmpModel icmp_;
  VirtualClock& clock_;
  agent::Rng rng_;
  std::vector<Bucket> buckets_;  // parallel to FleetHost::switches
  tracer::FiveTuple tuple_;
  std::uint32_t src_nic_ = 0, dst_nic_ = 0;
  bool routed_ = false;
  PathLinks links_{};
  std::size_t count_ = 0;
  std::multimap<MonoTime, std::vector<std::uint8_t>> pending_;
  std::uint64_t rate_limited_ = 0;
};

}  // namespace hostmesh::sim
