#pragma once

// How many traceroute probes a host may send: a global token bucket and one
// per first-hop switch (keyed by the first hop's address, the switch every
// probe of that source NIC crosses; by the source address until the first
// hop has answered once). A trace reserves its expected probe count from both
// before it starts and settles the difference when it ends, so bursts are at
// most one or two traces long and the long-run rates hold exactly.
//
// Why the defaults are safe. Each probe asks exactly one device for one ICMP
// reply (the switch where its TTL runs out, or the destination). Linux
// routers generate at most ~1000 ICMP/s with bursts of 50 (icmp_msgs_per_sec,
// icmp_msgs_burst); switch CPUs (CoPP) are in the same range.
//   Host with 8 NICs, 16 ports per ordered pair: 8 * 7 * 16 = 896 5-tuples.
//   A same-host trace in a two-tier rail fabric is 4 probes (source rail
//   switch, spine, destination rail switch, destination).
//   Global 20 probes/s, burst 8  -> at most 20 replies/s and 8 back to back
//     asked of any one switch by this host: 2% of 1000/s, 16% of a burst of 50.
//     A full refresh of 896 5-tuples takes 896 * 4 / 20 = 179 s; port rotation
//     (a quarter of 16 ports per pair per minute: 224 5-tuples/min = 15
//     probes/s) goes first, refreshes use what is left.
//   Per first hop 5 probes/s, burst 4 -> one trace (1 reply from the first
//     hop) per 0.8 s per NIC: the NIC's rail switch answers this host's TTL-1
//     probes at 1.25/s.
//   Fleet view, pods of 32 hosts: a rail switch is first hop for one NIC of
//     each host (32 * 1.25 = 40/s) and last hop for traces towards them (about
//     the same), ~80/s; a spine sees the TTL-2 probes of every host, 5/s per
//     host spread over the spines, 160/s even if all went to one spine.
// Linux also limits per destination (icmp_ratelimit, 1 s: about one Time
// Exceeded per second per (router, probe source), bursts of 6): routers with
// that setting will leave some hops silent, which the tracer reports as
// unknown, never as drops. The testbed's --icmp-unlimited lifts it.

#include <map>

#include "common/base/clock.h"
#include "tracer/ipv4.h"
#include "tracer/token_bucket.h"

namespace hostmesh::tracer {

struct TraceBudgetConfig {
  double probes_per_second = 20;
  double burst = 8;
  double per_first_hop_per_second = 5;
  double per_first_hop_burst = 4;
};

class TraceBudget {
 public:
  TraceBudget(TraceBudgetConfig config, MonoTime now);

  // Takes `probes` (capped at the smaller burst) from both buckets, or from none.
  // Returns the amount reserved, 0 when refused.
  double TryReserve(Ipv4 first_hop_key, int probes, MonoTime now);
  // After the trace: `used` probes were sent against `reserved`.
  void Settle(Ipv4 first_hop_key, double reserved, int used, MonoTime now);
  // The first hop of a source became known: what was charged to the source's
  // key now counts against the first hop's bucket.
  void Rekey(Ipv4 from, Ipv4 to, MonoTime now);
  // When the global bucket is full again (waiting until then loses no token).
  MonoTime WhenGlobalFull(MonoTime now) const {
    return global_.WhenAvailable(global_.burst(), now);
  }
  // When TryReserve(key, probes) would succeed.
  MonoTime WhenAvailable(Ipv4 first_hop_key, int probes, MonoTime now);

  const TraceBudgetConfig& config() const { return config_; }

 private:
  TokenBucket& HopBucket(Ipv4 key, MonoTime now);
  double Capped(int probes) const;

  TraceBudgetConfig config_;
  TokenBucket global_;
  std::map<Ipv4, TokenBucket> per_hop_;
};

}  // namespace hostmesh::tracer
