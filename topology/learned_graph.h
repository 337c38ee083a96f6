#pragma once

// The fabric learned from traceroutes, for fleets without a current inventory.
//
// A hop address is the ingress interface of a switch, so it names a link (its
// /31 subnet) whose other end, the /31 peer, is an egress port of the device
// before it. Two consecutive answers therefore tie two addresses to one
// switch: hop k's address and the peer of hop k+1's. The destination NIC's own
// answer ties nothing: the agent's NIC swallows the last probe, the tracer
// infers it, and a gray link after the last answering switch makes that
// inference wrong (every NIC is also a source, so its rail switch is tied from
// that side).
//
// Ids never change while the learner lives (and Export/Import carry them over
// a restart): links and devices are numbered in the order they are first seen.
// Two partly learned switches found to be one are merged into the older id;
// the younger stays as a device with no ports, marked merged_into. A merge
// needs kMergeConfirmations traces that tie the same two addresses, so one
// trace mixing two paths (a route change between its probes) does not join
// two switches; a tie that would put both ends of a link on one switch is
// refused (counted).
//
// Names come from what is known: a switch is named by the first address it
// answered from ("198.19.0.13"), a link by its two addresses, lower tier
// first ("198.19.0.12-198.19.0.13"), a host by the agent's host name, a NIC
// port by the agent's name for it. Tiers come from the position on the path
// (the middle of a valley-free path is the top tier); a NIC's rail from the
// agent's Hello names its rail switch's rail.
//
// Addressing assumed: every link, NIC links included, is a /31 (a trace whose
// first hop is not its source NIC's /31 peer is refused).

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topology/path_resolver.h"
#include "topology/topology.h"

namespace hostmesh::topology {

// What a learner knows, as plain data: to store it and to start from it again.
struct LearnedFabric {
  struct Device {
    std::string name{};  // a host's name, or a switch's first answering address
    Tier tier = Tier::kRail;
    int rail = -1;
    DeviceId merged_into = kNone;  // a switch found to be part of another
    friend bool operator==(const Device&, const Device&) = default;
  };
  struct Port {
    Ipv4 ip{};
    DeviceId device = kNone;
    std::string name{};  // NICs: the agent's name; switch ports are named by address
    int rail = -1;       // NICs: from the agent's Hello
    friend bool operator==(const Port&, const Port&) = default;
  };
  struct Link {
    Ipv4 lower{};  // the lower tier's end, as far as known
    Ipv4 upper{};
    LinkKind kind = LinkKind::kFabric;
    friend bool operator==(const Link&, const Link&) = default;
  };
  std::vector<Device> devices{};  // by DeviceId
  std::vector<Port> ports{};      // every placed address
  std::vector<Link> links{};      // by LinkId
  friend bool operator==(const LearnedFabric&, const LearnedFabric&) = default;
};

struct LearnerStats {
  std::uint64_t traces = 0;
  std::uint64_t refused = 0;         // traces that contradict the addressing (nothing learned)
  std::uint64_t merges = 0;          // partly learned switches found to be one
  std::uint64_t merges_refused = 0;  // ties that would put a link's two ends on one switch
  std::uint64_t refused_full = 0;  // traces with new addresses past max_switches (also in refused)
};

class FabricLearner {
 public:
  static constexpr int kMergeConfirmations = 2;
  // A trace cut short is continued by the shortest walk the graph allows, of
  // at most this many more switches.
  static constexpr std::size_t kMaxContinuation = PathResolver::kMaxContinuation;

  // Switches a fleet's traces may found, at most: what made-up traces can
  // make the analyzer hold. A rail-optimized fabric of 100,000 hosts (8 rails,
  // pods of 256) has about 3,500 switches; 16,384 leaves room for extra tiers
  // and for parts of one switch not yet merged. Past it a trace that names a
  // new address is refused (and counted): ids never change while the learner
  // lives, so nothing is evicted.
  static constexpr std::size_t kDefaultMaxSwitches = 16'384;

  explicit FabricLearner(std::size_t max_switches = kDefaultMaxSwitches)
      : max_switches_(max_switches) {}

  // Starts from a stored state; false with *error (and an empty learner) when
  // it does not hold together (ids out of range, an address twice).
  bool Import(const LearnedFabric& state, std::string* error);
  LearnedFabric Export() const;

  // A NIC from the agent's Hello: its host and its link exist from now on.
  void AddNic(std::string_view host, std::string_view name, Ipv4 ip, int rail);

  // Learns from one traceroute of an agent on `host` between two of its NICs,
  // then resolves it into `out` with the learned link ids, NIC link to NIC
  // link. `hops` are TTL 1..n, silent hops included; trailing silent hops and
  // the destination's own answer may be there. A silent hop is filled from
  // `graph` (the last Build; may be null) when it leaves one choice. A trace
  // that did not reach the destination was cut short, and so was one the
  // tracer ended by inferring the destination after a gray link ate the
  // rest: it leaves an even number of switches (between two NICs of one host
  // a valley-free path climbs as far as it descends), its last answer is
  // above the rail tier or from another switch than the destination NIC's,
  // or one switch joins NICs of two rails. Then out->truncated, and the
  // links after its last answer are the graph's shortest continuation
  // (ambiguous where several fit).
  void Add(std::string_view host, Ipv4 src_nic, Ipv4 dst_nic, std::span<const Hop> hops,
           const Topology* graph, ResolvedPath* out);

  // The fabric as a Topology whose device and link ids are the learned ones.
  // Ports whose switch is not known yet sit on one extra device of tier host,
  // named kUnplacedDevice, after the learned ones (so their links are in no
  // walk and their switch end is unknown to the analysis).
  Topology Build() const;
  static constexpr std::string_view kUnplacedDevice = "(not yet learned)";

  // Changes whenever Build would give something else.
  std::uint64_t version() const { return version_; }
  const LearnerStats& stats() const { return stats_; }
  std::size_t link_count() const { return links_.size(); }
  std::size_t device_count() const { return devices_.size(); }
  std::size_t switch_count() const { return devices_.size() - hosts_.size(); }
  // The device holding `ip`, or kNone.
  DeviceId DeviceOf(Ipv4 ip) const;
  // The link of `ip`'s /31, or kNone.
  LinkId LinkOf(Ipv4 ip) const;

 private:
  struct Dev {
    std::string name;
    Tier tier = Tier::kRail;
    int rail = -1;
    DeviceId merged_into = kNone;
    std::vector<Ipv4> ports;
  };

  void Changed() { ++version_; }
  DeviceId AddDevice(std::string name, Tier tier);
  DeviceId HostDevice(std::string_view host);
  // Puts `ip` on `device`; false if that would join the two ends of a link.
  bool Place(Ipv4 ip, DeviceId device);
  // A switch port answered: placed on a new switch unless known.
  void PlaceAnswer(Ipv4 ip);
  LinkId EnsureLink(Ipv4 ip, LinkKind kind, bool ip_is_upper);
  // `a` (placed) and `b` are ports of one switch.
  void Tie(Ipv4 a, Ipv4 b);
  void Merge(DeviceId keep, DeviceId gone);
  void RaiseTier(DeviceId device, Tier tier);
  void NoteRail(Ipv4 switch_port);

  std::vector<Dev> devices_;
  std::vector<LearnedFabric::Link> links_;
  std::unordered_map<Ipv4, DeviceId> device_of_;       // every placed address
  std::unordered_map<std::uint32_t, LinkId> link_of_;  // by /31 subnet (even address)
  std::unordered_map<Ipv4, std::string> nic_names_;
  std::unordered_map<Ipv4, int> nic_rails_;
  std::unordered_map<std::string, DeviceId> hosts_;
  std::map<std::pair<Ipv4, Ipv4>, int> pending_merges_;  // cleared beyond kMaxPendingMerges
  static constexpr std::size_t kMaxPendingMerges = std::size_t{1} << 16;
  ResolvedPath scratch_;
  std::uint64_t version_ = 0;
  LearnerStats stats_;
  std::size_t max_switches_ = kDefaultMaxSwitches;
};

}  // namespace hostmesh::topology
