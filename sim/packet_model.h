#pragma once

// What the fabric does to one packet of a simulated probe or traceroute:
// the path its 5-tuple takes (the ECMP model), whether it gets through (every
// link by direction, every switch, both NICs) and how long it takes. Read-only
// while hosts run, so hosts of one time slice run in parallel; randomness comes
// from the caller's generator (one per host), so a run is reproducible.

#include <cstdint>
#include <span>
#include <vector>

#include "agent/core/rng.h"
#include "sim/congestion.h"
#include "sim/ecmp/fabric_router.h"
#include "sim/faults.h"
#include "sim/fleet.h"
#include "sim/information_limit.h"

namespace hostmesh::sim {

// Nanoseconds. Defaults: a RoCE fabric of 400G links, a few microseconds end to
// end, with rare congestion spikes on any hop and rare scheduling stalls on any
// host, so scattered slow probes are part of the background.
struct LatencyModel {
  std::int64_t per_hop_ns = 600;
  std::int64_t cable_spread_ns = 300;  // per-link constant, 0..spread
  std::int64_t hop_jitter_mean_ns = 150;
  double spike_probability = 1e-3;  // per hop: queueing behind a burst
  std::int64_t spike_mean_ns = 15'000;
  std::int64_t tx_ns = 1'500;  // (1) -> (2)
  std::int64_t rx_ns = 2'500;  // (3) -> (4)
  std::int64_t host_jitter_mean_ns = 1'500;
  double host_stall_probability = 0.002;  // per probe: the agent was descheduled
  std::int64_t host_stall_mean_ns = 200'000;
  // A latency fault's delay is a congested port's queue (congestion.h), and
  // ordinary congestion moves around the fabric.
  QueueModel queue;
  MovingCongestionModel moving;
};

using ecmp::kMaxPathLinks;
using ecmp::PathLinks;

struct Passage {
  bool delivered = false;
  std::size_t crossed = 0;  // links fully crossed (== count when delivered)
  std::int64_t one_way_ns = 0;
};

double Uniform01(agent::Rng& rng);
std::int64_t Exponential(agent::Rng& rng, std::int64_t mean_ns);

class PacketModel {
 public:
  PacketModel(const Fleet& fleet, const FaultSet& faults, const ecmp::FabricRouter& router,
              LatencyModel latency);

  // Between time slices only: the links routing avoids from now on (the
  // router's Reconverge result; null: none).
  void SetDeadLinks(const ecmp::DeadLinks* dead) { dead_ = dead; }
  // The run's moving congestion (null: none); it must outlive the model.
  void SetCongestion(const MovingCongestion* moving) { moving_ = moving; }

  // The links of this 5-tuple from NIC to NIC; 0 when unroutable.
  std::size_t Route(std::uint32_t host, std::uint32_t src_nic, std::uint32_t dst_nic,
                    std::uint16_t sport, std::uint16_t dport, PathLinks& out) const;

  // Sends one packet over links[0..limit) of a path of `count` links (the
  // first half up, the second down). The source NIC's drop applies always, the
  // destination NIC's when the packet reaches it (limit == count).
  Passage Cross(std::uint32_t host, std::uint32_t src_nic, std::uint32_t dst_nic,
                std::span<const LinkId> links, std::size_t count, std::size_t limit,
                std::uint16_t sport, std::int64_t t, agent::Rng& rng) const;

  // Counts a probe over links[0..count) at t in `tally` (indexed as
  // faults().faults()) for every active fault with a loss limit that it meets
  // (information_limit.h), once each, with the background loss of its path.
  void TallyExposure(std::uint32_t host, std::uint32_t src_nic, std::uint32_t dst_nic,
                     std::span<const LinkId> links, std::size_t count, std::int64_t t,
                     std::vector<FaultExposure>& tally) const;

  // The way back of a switch's ICMP reply from the switch after links[0..hop)
  // to the source: the reverse links, the other direction.
  bool ReplyGetsBack(std::span<const LinkId> links, std::size_t count, std::size_t hop,
                     std::int64_t t, agent::Rng& rng) const;

  // Host-side delays (1)->(2) and (3)->(4), the host's faults included.
  std::int64_t TxDelay(agent::Rng& rng) const;
  std::int64_t RxDelay(std::uint32_t host, std::int64_t t, agent::Rng& rng) const;

  const Fleet& fleet() const { return fleet_; }
  const FaultSet& faults() const { return faults_; }

 private:
  // `packet`: the probe's key, for the queue's hash-drawn wait.
  std::int64_t HopLatency(LinkId link, bool up, std::int64_t t, std::uint64_t packet,
                          agent::Rng& rng) const;

  const Fleet& fleet_;
  const FaultSet& faults_;
  const ecmp::FabricRouter& router_;
  LatencyModel latency_;
  const ecmp::DeadLinks* dead_ = nullptr;
  const MovingCongestion* moving_ = nullptr;
  std::vector<std::vector<std::uint32_t>> router_nic_;  // [host][nic] -> the router's NIC index
};

}  // namespace hostmesh::sim
