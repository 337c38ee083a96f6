#pragma once

// Faults of the simulated fleet, each with a start, an end and parameters, any
// number at once, plus background loss on every link. Pure: the packet model
// asks what a packet meets at a time; nothing here draws random numbers but
// the background rates, drawn once per link from the seed.
//
// Times are simulation ns (0 = start of the run). "Up" on a link is from its
// lower end (a host NIC, or a rail switch towards a spine) to its upper end.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/fleet.h"

namespace hostmesh::sim {

enum class FaultKind : std::uint8_t {
  kLinkLoss,        // link drops `rate` of packets (one way or both)
  kLinkDown,        // link carries nothing; routing avoids it once reconverged
  kLinkFlap,        // link down for the first half of every `period`
  kRnicDown,        // a NIC sends and receives nothing
  kRnicLoss,        // a NIC (or its cable) drops `rate` each way: corruption
  kRnicFlap,        // a NIC down for the first half of every `period`
  kSwitchLoss,      // every packet through a switch dropped with `rate`
  kBlackhole,       // an ACL on a link drops source ports [port_min, port_max]
  kLinkLatency,     // a link adds `added_ns` (congestion)
  kHostProcessing,  // a host's agent is slow: its receive side adds ~`added_ns`
  kHostLeave,       // the host leaves (tenant): no agent until the end
  kAgentRestart,    // the agent restarts at start (new boot id)
  // Faults told apart by NIC counters (telemetry_model.h) as much as by probes.
  kMissingRoute,   // a NIC's address is not routed: nothing reaches it; port up, counters clean
  kPcieDowngrade,  // a NIC's PCIe link below its max: it drops `rate` and sends pause frames
  kPfcMisconfig,   // a link drops `rate` while congested (+`added_ns`), no pause frames sent
  kEcmpCollision,  // flows collide on a rail uplink: +`added_ns`, the rail's NICs paused
};
std::string_view FaultKindName(FaultKind kind);  // "link_loss", ...
bool FaultKindFromName(std::string_view name, FaultKind* kind);
// What a kind's parameters are: a link (with direction), a host's NIC, a rate, an added delay.
bool FaultOnLink(FaultKind kind);
bool FaultOnNic(FaultKind kind);
bool FaultHasRate(FaultKind kind);
bool FaultHasAdded(FaultKind kind);

enum Direction : std::uint8_t { kUp = 1, kDown = 2, kBoth = 3 };

struct Fault {
  FaultKind kind = FaultKind::kLinkLoss;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  LinkId link = topology::kNone;
  std::uint8_t direction = kBoth;
  std::uint32_t host = 0;
  std::uint32_t nic = 0;
  DeviceId switch_id = topology::kNone;
  double rate = 1.0;
  std::int64_t period_ns = 0;
  std::uint16_t port_min = 0;
  std::uint16_t port_max = 0;
  std::int64_t added_ns = 0;

  bool ActiveAt(std::int64_t t) const { return t >= start_ns && t < end_ns; }
  // Flapping kinds: down in the first half of each period since start.
  bool DownAt(std::int64_t t) const;
};
// Whether a link fault meets packets crossing its link in direction `up`.
bool AppliesInDirection(const Fault& f, bool up);

// Ambient loss: every directed link draws a rate log-uniformly in [min, max]
// (0 and 0: none).
struct BackgroundLoss {
  double min = 0;
  double max = 0;
};

class FaultSet {
 public:
  // Routing avoids a link this long after it went down (and uses it again as
  // soon as it is up): BFD + BGP reconvergence.
  static constexpr std::int64_t kReconvergeNs = 1'000'000'000;

  FaultSet(const Fleet& fleet, std::vector<Fault> faults, BackgroundLoss background,
           std::uint64_t seed);

  const std::vector<Fault>& faults() const { return faults_; }

  // Probability that a packet of source port `sport` is dropped crossing
  // `link` in direction `up` at t (background, link faults, ACLs).
  double LinkDrop(LinkId link, bool up, std::uint16_t sport, std::int64_t t) const {
    double pass = 1.0 - background_[link * 2 + (up ? 0 : 1)];
    if (!by_link_[link].empty()) pass *= LinkFaultPass(link, up, sport, t);
    return 1.0 - pass;
  }
  double SwitchDrop(DeviceId sw, std::int64_t t) const {
    return by_switch_[sw].empty() ? 0.0 : SwitchFaultDrop(sw, t);
  }
  // A NIC's own drop probability at t, for a packet it sends or receives.
  double RnicDrop(std::uint32_t host, std::uint32_t nic, std::int64_t t) const;
  // The NIC's port is down at t (rnic_down, a flap's down phase): the agent's
  // send fails on the host and the probe is a send failure, not a drop.
  bool RnicPortDown(std::uint32_t host, std::uint32_t nic, std::int64_t t) const;
  std::int64_t LinkLatency(LinkId link, bool up, std::int64_t t) const {
    return by_link_[link].empty() ? 0 : LinkFaultLatency(link, up, t);
  }
  std::int64_t ProcessingDelay(std::uint32_t host, std::int64_t t) const;
  bool HostAbsent(std::uint32_t host, std::int64_t t) const;
  // Agent restarts of `host` with start in [from, to).
  int RestartsBetween(std::uint32_t host, std::int64_t from, std::int64_t to) const;

  // dead[link] = 1 where routing avoids the link at t.
  void DeadLinksAt(std::int64_t t, std::vector<std::uint8_t>& dead) const;
  bool any_down_faults() const { return any_down_; }
  double background(LinkId link, bool up) const { return background_[link * 2 + (up ? 0 : 1)]; }
  // The faults on a component, as indices into faults() (any kind, active or not).
  const std::vector<std::uint32_t>& OnLink(LinkId link) const { return by_link_[link]; }
  const std::vector<std::uint32_t>& OnSwitch(DeviceId sw) const { return by_switch_[sw]; }
  const std::vector<std::uint32_t>* OnNic(std::uint32_t host, std::uint32_t nic) const;

 private:
  double LinkFaultPass(LinkId link, bool up, std::uint16_t sport, std::int64_t t) const;
  double SwitchFaultDrop(DeviceId sw, std::int64_t t) const;
  std::int64_t LinkFaultLatency(LinkId link, bool up, std::int64_t t) const;
  static std::uint64_t NicKey(std::uint32_t host, std::uint32_t nic) {
    return (std::uint64_t{host} << 32) | nic;
  }

  std::vector<Fault> faults_;
  std::vector<double> background_;  // [link * 2 + (up ? 0 : 1)]
  std::vector<std::vector<std::uint32_t>> by_link_;
  std::vector<std::vector<std::uint32_t>> by_switch_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_nic_;
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> by_host_;
  bool any_down_ = false;
};

}  // namespace hostmesh::sim
