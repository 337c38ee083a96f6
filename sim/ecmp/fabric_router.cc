#include "sim/ecmp/fabric_router.h"

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>
#include <string>

namespace hostmesh::sim::ecmp {

namespace {

using topology::kNone;
using topology::LinkKind;
using topology::Tier;

// Above this many (switch, destination rail switch) routes the dense table
// would take hundreds of megabytes; no realistic fabric comes near it.
constexpr std::size_t kMaxDownRoutes = std::size_t{1} << 26;

std::uint32_t IpSlot(Ipv4 ip, std::uint32_t shift) {
  return static_cast<std::uint32_t>((ip.value * 0x9E3779B97F4A7C15ULL) >> shift);
}

}  // namespace

FabricRouter::FabricRouter(const topology::Topology& topology,
                           std::span<const std::uint32_t> seed_by_device, std::uint32_t hash_fields)
    : hash_fields_(hash_fields) {
  Build(topology, seed_by_device);
}

FabricRouter::FabricRouter(const topology::Topology& topology, std::uint32_t seed,
                           std::uint32_t hash_fields)
    : hash_fields_(hash_fields) {
  const std::vector<std::uint32_t> seeds(topology.devices().size(), seed);
  Build(topology, seeds);
}

FabricRouter::Group FabricRouter::AddGroup(const std::vector<Hop>& hops) {
  const Group group{static_cast<std::uint32_t>(hops_.size()),
                    static_cast<std::uint32_t>(hops.size())};
  hops_.insert(hops_.end(), hops.begin(), hops.end());
  return group;
}

void FabricRouter::Build(const topology::Topology& topo, std::span<const std::uint32_t> seeds) {
  const auto devices = topo.devices();
  if (seeds.size() < devices.size()) {
    throw std::invalid_argument("FabricRouter: " + std::to_string(seeds.size()) + " seeds for " +
                                std::to_string(devices.size()) + " devices");
  }
  const auto tier_of_interface = [&](InterfaceId i) { return topo.TierOf(topo.DeviceOf(i)); };

  link_ends_.reserve(topo.links().size());
  for (const topology::Link& link : topo.links()) {
    link_ends_.push_back({topo.DeviceOf(link.lower), topo.DeviceOf(link.upper),
                          topo.interface(link.lower).ip, topo.interface(link.upper).ip});
  }

  // Switch slots bottom-up: rail switches first, so a rail switch's slot is
  // also its index among rail switches.
  switches_.resize(devices.size());
  for (const Tier tier : {Tier::kRail, Tier::kAggregation, Tier::kSpine}) {
    for (DeviceId d = 0; d < devices.size(); ++d) {
      if (devices[d].tier != tier) continue;
      switches_[d].slot = static_cast<std::uint32_t>(switch_ids_.size());
      const auto same_seed = [&](const MultipathHasher& h) { return h.seed() == seeds[d]; };
      const auto known = std::find_if(hashers_.begin(), hashers_.end(), same_seed);
      switches_[d].hasher = static_cast<std::uint32_t>(known - hashers_.begin());
      if (known == hashers_.end()) hashers_.emplace_back(seeds[d], hash_fields_);
      switch_ids_.push_back(d);
    }
    if (tier == Tier::kRail) rail_switches_ = switch_ids_.size();
  }

  // NICs: every linked host interface, hanging off a rail switch.
  for (DeviceId d = 0; d < devices.size(); ++d) {
    if (devices[d].tier != Tier::kHost) continue;
    for (const InterfaceId i : devices[d].interfaces) {
      const topology::Interface& nic = topo.interface(i);
      if (nic.link == kNone) continue;
      const DeviceId sw = topo.DeviceOf(topo.Peer(i));
      if (topo.TierOf(sw) != Tier::kRail) {
        throw std::invalid_argument("FabricRouter: NIC " + topo.DescribeInterface(i) +
                                    " does not hang off a rail switch");
      }
      nics_.push_back({nic.ip, nic.link, sw, switches_[sw].slot});
    }
  }
  const std::uint32_t capacity =
      std::bit_ceil(std::max<std::uint32_t>(16, static_cast<std::uint32_t>(nics_.size()) * 2));
  nic_shift_ = static_cast<std::uint32_t>(64 - std::countr_zero(capacity));
  nic_by_ip_.assign(capacity, 0);
  for (std::uint32_t n = 0; n < nics_.size(); ++n) {
    std::uint32_t slot = IpSlot(nics_[n].ip, nic_shift_);
    while (nic_by_ip_[slot] != 0) slot = (slot + 1) & (capacity - 1);
    nic_by_ip_[slot] = n + 1;
  }

  // Default routes: one nexthop per uplink, in the switch's port order (the
  // testbed's `nexthop via` order: spine 0, 1, ...).
  for (const DeviceId d : switch_ids_) {
    std::vector<Hop> up;
    for (const InterfaceId i : devices[d].interfaces) {
      const LinkId l = topo.interface(i).link;
      if (l == kNone || topo.link(l).lower != i || topo.link(l).kind != LinkKind::kFabric) continue;
      const InterfaceId far = topo.link(l).upper;
      if (tier_of_interface(far) <= devices[d].tier) {
        throw std::invalid_argument("FabricRouter: link " + topo.link(l).name +
                                    " does not lead to a higher tier");
      }
      up.push_back({l, topo.DeviceOf(far)});
    }
    switches_[d].up = AddGroup(up);
  }

  // Routes down: per switch above the rail tier, towards each rail switch
  // below it, every down port whose far end is that rail switch or has it
  // below. Bottom-up, so the lower switches' rows exist.
  const std::size_t rows = switch_ids_.size() - rail_switches_;
  if (rows * rail_switches_ > kMaxDownRoutes) {
    throw std::invalid_argument("FabricRouter: " + std::to_string(rows) + " upper switches x " +
                                std::to_string(rail_switches_) +
                                " rail switches is too many routes to tabulate");
  }
  down_.assign(rows * rail_switches_, Group{});
  // Spines of a 3-tier fabric reach a whole rail through the same ports: one group.
  std::map<std::vector<std::uint64_t>, Group> shared;
  for (std::size_t slot = rail_switches_; slot < switch_ids_.size(); ++slot) {
    const DeviceId d = switch_ids_[slot];
    switches_[d].down_row = static_cast<std::uint32_t>(slot - rail_switches_);
    std::vector<Hop> down_ports;
    for (const InterfaceId i : devices[d].interfaces) {
      const LinkId l = topo.interface(i).link;
      if (l == kNone || topo.link(l).upper != i) continue;
      down_ports.push_back({l, topo.DeviceOf(topo.link(l).lower)});
    }
    for (std::uint32_t rail = 0; rail < rail_switches_; ++rail) {
      std::vector<Hop> hops;
      for (const Hop& port : down_ports) {
        const Switch& below = switches_[port.next];
        if (port.next == switch_ids_[rail] ||
            (below.down_row != kNone &&
             down_[std::size_t{below.down_row} * rail_switches_ + rail].count > 0)) {
          hops.push_back(port);
        }
      }
      if (hops.empty()) continue;
      std::vector<std::uint64_t> key;
      for (const Hop& hop : hops) key.push_back((std::uint64_t{hop.link} << 32) | hop.next);
      auto [it, added] = shared.try_emplace(std::move(key));
      if (added) it->second = AddGroup(hops);
      down_[std::size_t{switches_[d].down_row} * rail_switches_ + rail] = it->second;
    }
  }
}

std::uint32_t FabricRouter::FindNic(Ipv4 ip) const {
  const auto mask = static_cast<std::uint32_t>(nic_by_ip_.size() - 1);
  for (std::uint32_t slot = IpSlot(ip, nic_shift_);; slot = (slot + 1) & mask) {
    const std::uint32_t entry = nic_by_ip_[slot];
    if (entry == 0) return kNone;
    if (nics_[entry - 1].ip == ip) return entry - 1;
  }
}

FabricRouter::Group FabricRouter::RouteTowards(DeviceId at, std::uint32_t rail_slot) const {
  const Switch& sw = switches_[at];
  if (sw.down_row != kNone) {
    const Group& down = down_[std::size_t{sw.down_row} * rail_switches_ + rail_slot];
    if (down.count > 0) return down;
  }
  return sw.up;
}

bool FabricRouter::Reaches(const DeadLinks& dead, DeviceId from, std::uint32_t rail_slot) const {
  return DeadLinks::Bit(dead.reaches_,
                        std::size_t{switches_[from].slot} * rail_switches_ + rail_slot);
}

bool FabricRouter::Usable(const Hop& hop, DeviceId dst_switch, std::uint32_t dst_slot,
                          const DeadLinks& dead) const {
  return !dead.dead(hop.link) && (hop.next == dst_switch || Reaches(dead, hop.next, dst_slot));
}

std::size_t FabricRouter::Route(Ipv4 src_nic, Ipv4 dst_nic, std::uint16_t src_port,
                                std::uint16_t dst_port, const DeadLinks* dead,
                                PathLinks& out) const {
  const std::uint32_t src = FindNic(src_nic);
  const std::uint32_t dst = FindNic(dst_nic);
  if (src == kNone || dst == kNone) return 0;
  return RouteNics(src, dst, src_port, dst_port, dead, out);
}

std::size_t FabricRouter::RouteNics(std::uint32_t src_nic, std::uint32_t dst_nic,
                                    std::uint16_t src_port, std::uint16_t dst_port,
                                    const DeadLinks* dead, PathLinks& out) const {
  if (src_nic == dst_nic) return 0;
  const Nic& src = nics_[src_nic];
  const Nic& dst = nics_[dst_nic];
  if (dead != nullptr && (dead->dead(src.link) || dead->dead(dst.link))) return 0;
  const FlowTuple flow{src.ip.value, dst.ip.value, src_port, dst_port, kIpProtoUdp};
  // The hash depends on the switch only through its seed: hash again only
  // where the seed changes.
  std::uint32_t hasher = kNone;
  std::uint32_t hash = 0;

  std::size_t n = 0;
  out[n++] = src.link;
  DeviceId at = src.rail_switch;
  while (n < kMaxPathLinks) {
    if (at == dst.rail_switch) {
      out[n++] = dst.link;
      return n;
    }
    const Switch& sw = switches_[at];
    const Group group = RouteTowards(at, dst.rail_slot);
    if (group.count == 0) return 0;
    if (hasher != sw.hasher) {
      hasher = sw.hasher;
      hash = hashers_[hasher](flow);
    }
    const Hop* hops = hops_.data() + group.begin;
    const Hop* chosen = nullptr;
    if (dead == nullptr ||
        !DeadLinks::Bit(dead->degraded_, std::size_t{sw.slot} * rail_switches_ + dst.rail_slot)) {
      chosen = hops + SelectNexthop(hash, group.count);
    } else {
      // fib_rebalance: dead nexthops get no share, the bounds are spread over
      // the alive ones in their order.
      std::uint32_t alive = 0;
      for (std::uint32_t i = 0; i < group.count; ++i) {
        alive += Usable(hops[i], dst.rail_switch, dst.rail_slot, *dead) ? 1 : 0;
      }
      if (alive == 0) return 0;
      std::uint32_t position = SelectNexthop(hash, alive);
      for (std::uint32_t i = 0; chosen == nullptr; ++i) {
        if (Usable(hops[i], dst.rail_switch, dst.rail_slot, *dead) && position-- == 0) {
          chosen = hops + i;
        }
      }
    }
    out[n++] = chosen->link;
    at = chosen->next;
  }
  return 0;  // no delivery within kMaxPathLinks: not a tiered fabric
}

std::size_t FabricRouter::HopAddresses(Ipv4 src_nic, std::span<const LinkId> path,
                                       std::span<Ipv4> out) const {
  const std::uint32_t src = FindNic(src_nic);
  if (src == kNone || out.size() < path.size()) {
    throw std::invalid_argument("FabricRouter::HopAddresses: " + src_nic.ToString() +
                                " is not a NIC or the output is too short");
  }
  // Walk the path: each link is entered from the device the last one reached.
  DeviceId at = link_ends_[nics_[src].link].lower_device;
  for (std::size_t k = 0; k < path.size(); ++k) {
    const LinkEnds& ends = link_ends_[path[k]];
    const bool upward = ends.lower_device == at;
    out[k] = upward ? ends.upper_ip : ends.lower_ip;
    at = upward ? ends.upper_device : ends.lower_device;
  }
  return path.size();
}

DeadLinks FabricRouter::Reconverge(std::span<const LinkId> dead_links) const {
  DeadLinks dead;
  dead.links_.assign((link_ends_.size() + 63) / 64, 0);
  for (const LinkId l : dead_links) {
    if (l >= link_ends_.size()) {
      throw std::invalid_argument("FabricRouter::Reconverge: no link " + std::to_string(l));
    }
    if (!dead.dead(l)) ++dead.count_;
    DeadLinks::Set(dead.links_, l);
  }
  const std::size_t rails = rail_switches_;
  dead.reaches_.assign((switch_ids_.size() * rails + 63) / 64, 0);
  const auto reach = [&](std::size_t slot, std::size_t rail) {
    return DeadLinks::Bit(dead.reaches_, slot * rails + rail);
  };
  const auto any_usable = [&](Group group, std::size_t rail) {
    for (std::uint32_t i = 0; i < group.count; ++i) {
      const Hop& hop = hops_[group.begin + i];
      if (!dead.dead(hop.link) &&
          (hop.next == switch_ids_[rail] || reach(switches_[hop.next].slot, rail))) {
        return true;
      }
    }
    return false;
  };
  // Down first, bottom-up (a rail switch reaches its own hosts); then the
  // default routes top-down, since they lean on the switches above.
  for (std::size_t slot = 0; slot < switch_ids_.size(); ++slot) {
    const Switch& sw = switches_[switch_ids_[slot]];
    for (std::size_t rail = 0; rail < rails; ++rail) {
      bool ok = slot == rail;
      if (!ok && sw.down_row != kNone) {
        const Group down = down_[std::size_t{sw.down_row} * rails + rail];
        ok = down.count > 0 && any_usable(down, rail);
      }
      if (ok) DeadLinks::Set(dead.reaches_, slot * rails + rail);
    }
  }
  for (std::size_t slot = switch_ids_.size(); slot-- > 0;) {
    const Switch& sw = switches_[switch_ids_[slot]];
    for (std::size_t rail = 0; rail < rails; ++rail) {
      if (slot == rail) continue;
      if (sw.down_row != kNone && down_[std::size_t{sw.down_row} * rails + rail].count > 0) {
        continue;  // a route down exists: the default route is never used for it
      }
      if (any_usable(sw.up, rail)) DeadLinks::Set(dead.reaches_, slot * rails + rail);
    }
  }
  dead.degraded_.assign(dead.reaches_.size(), 0);
  for (std::size_t slot = 0; slot < switch_ids_.size(); ++slot) {
    const DeviceId at = switch_ids_[slot];
    for (std::size_t rail = 0; rail < rails; ++rail) {
      if (slot == rail) continue;  // delivered: its own hosts
      const Group group = RouteTowards(at, static_cast<std::uint32_t>(rail));
      for (std::uint32_t i = 0; i < group.count; ++i) {
        if (!Usable(hops_[group.begin + i], switch_ids_[rail], static_cast<std::uint32_t>(rail),
                    dead)) {
          DeadLinks::Set(dead.degraded_, slot * rails + rail);
          break;
        }
      }
    }
  }
  return dead;
}

}  // namespace hostmesh::sim::ecmp
