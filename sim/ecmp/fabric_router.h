#pragma once

// Which links a probe's UDP 5-tuple crosses in a rail-optimized fabric, as the
// testbed's Linux switches forward it (sim/ecmp/README.md). Built once per
// fabric; Route() runs per simulated probe, so everything but the hash and the
// nexthop choice is precomputed, and Route() never allocates.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/ecmp/linux_multipath_hash.h"
#include "topology/topology.h"

namespace hostmesh::sim::ecmp {

using topology::DeviceId;
using topology::InterfaceId;
using topology::Ipv4;
using topology::LinkId;

// NIC link, up to two links up, two down, NIC link: 6 in three tiers.
inline constexpr std::size_t kMaxPathLinks = 8;
using PathLinks = std::array<LinkId, kMaxPathLinks>;

// Links that routing avoids, with what every switch can still reach once a
// routing protocol has reconverged around them. Made by FabricRouter::Reconverge.
class DeadLinks {
 public:
  bool dead(LinkId link) const { return Bit(links_, link); }
  std::size_t count() const { return count_; }

 private:
  friend class FabricRouter;
  static bool Bit(const std::vector<std::uint64_t>& bits, std::size_t i) {
    return ((bits[i >> 6] >> (i & 63)) & 1U) != 0;
  }
  static void Set(std::vector<std::uint64_t>& bits, std::size_t i) {
    bits[i >> 6] |= std::uint64_t{1} << (i & 63);
  }
  std::vector<std::uint64_t> links_;
  // Bit (switch slot * rail switches + rail switch): that switch still delivers
  // to that rail switch's hosts over live links.
  std::vector<std::uint64_t> reaches_;
  // Same index: the route that switch takes towards that rail switch lost a
  // nexthop, so Route must pick among the survivors (the rest stay as healthy).
  std::vector<std::uint64_t> degraded_;
  std::size_t count_ = 0;
};

class FabricRouter {
 public:
  // `seed_by_device[d]` is the fib_multipath_hash_seed of switch d (host
  // entries are ignored); `hash_fields` is fib_multipath_hash_fields, the same
  // on every switch. A seed of 0 is hashed as 0: the kernel would draw a random
  // one instead, which no model can follow. Throws std::invalid_argument for a
  // topology this router cannot route (see README) or a short seed list.
  FabricRouter(const topology::Topology& topology, std::span<const std::uint32_t> seed_by_device,
               std::uint32_t hash_fields = kHashFiveTuple);
  // Every switch with the same seed, as `fabric up --hash-seed`.
  FabricRouter(const topology::Topology& topology, std::uint32_t seed,
               std::uint32_t hash_fields = kHashFiveTuple);

  // The links the packet crosses, the source NIC's link first and the
  // destination NIC's last, written to `out`; returns how many (0: unroutable:
  // an address that is not a NIC, the same NIC twice, a dead NIC link, or no
  // live path). `dead` (nullable) is this router's Reconverge() result.
  std::size_t Route(Ipv4 src_nic, Ipv4 dst_nic, std::uint16_t src_port, std::uint16_t dst_port,
                    const DeadLinks* dead, PathLinks& out) const;

  // The same by NIC index (0 .. nic_count()-1, see FindNic), saving the lookups.
  std::size_t RouteNics(std::uint32_t src_nic, std::uint32_t dst_nic, std::uint16_t src_port,
                        std::uint16_t dst_port, const DeadLinks* dead, PathLinks& out) const;

  // The NIC index of an address, or topology::kNone.
  std::uint32_t FindNic(Ipv4 ip) const;
  std::size_t nic_count() const { return nics_.size(); }
  Ipv4 NicAddress(std::uint32_t nic) const { return nics_[nic].ip; }

  // What answers a traceroute of that path: hop k (TTL k, 1-based) at
  // `out[k-1]` is the address of the interface the packet entered device k
  // by (icmp_errors_use_inbound_ifaddr=1 on every switch); the last is the
  // destination NIC (port unreachable). Returns path.size().
  std::size_t HopAddresses(Ipv4 src_nic, std::span<const LinkId> path, std::span<Ipv4> out) const;

  // The routing state once routing has reconverged around `dead` links.
  DeadLinks Reconverge(std::span<const LinkId> dead) const;

 private:
  struct Nic {
    Ipv4 ip;
    LinkId link = topology::kNone;
    DeviceId rail_switch = topology::kNone;
    std::uint32_t rail_slot = 0;  // index among rail switches
  };
  // One ECMP nexthop: the link and the device at its far end.
  struct Hop {
    LinkId link = topology::kNone;
    DeviceId next = topology::kNone;
  };
  // A multipath route: nexthops [begin, begin + count) of hops_, in the order
  // the testbed installs them (hash-threshold picks by position).
  struct Group {
    std::uint32_t begin = 0;
    std::uint32_t count = 0;
  };
  struct Switch {
    std::uint32_t hasher = 0;                  // index in hashers_: one per distinct seed
    std::uint32_t slot = topology::kNone;      // index among switches
    std::uint32_t down_row = topology::kNone;  // row of down_ (switches above the rail tier)
    Group up;                                  // the default route
  };
  struct LinkEnds {
    DeviceId lower_device = topology::kNone;
    DeviceId upper_device = topology::kNone;
    Ipv4 lower_ip;
    Ipv4 upper_ip;
  };

  void Build(const topology::Topology& topology, std::span<const std::uint32_t> seeds);
  Group AddGroup(const std::vector<Hop>& hops);
  // The multipath route `at` uses towards rail switch `rail_slot` (count 0: none).
  Group RouteTowards(DeviceId at, std::uint32_t rail_slot) const;
  bool Usable(const Hop& hop, DeviceId dst_switch, std::uint32_t dst_slot,
              const DeadLinks& dead) const;
  bool Reaches(const DeadLinks& dead, DeviceId from, std::uint32_t rail_slot) const;

  std::uint32_t hash_fields_;
  std::vector<MultipathHasher> hashers_;
  std::vector<Nic> nics_;
  std::vector<std::uint32_t> nic_by_ip_;  // open addressing: NIC index + 1, 0 = empty
  std::uint32_t nic_shift_ = 0;
  std::vector<Switch> switches_;      // by DeviceId (hosts unused)
  std::vector<DeviceId> switch_ids_;  // by slot, tiers bottom-up
  std::size_t rail_switches_ = 0;
  std::vector<Hop> hops_;
  // Per switch above the rail tier, per destination rail switch: the route
  // down towards it (count 0: it is not below, take the default route up).
  std::vector<Group> down_;
  std::vector<LinkEnds> link_ends_;
};

}  // namespace hostmesh::sim::ecmp
