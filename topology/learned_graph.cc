#include "topology/learned_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace hostmesh::topology {

namespace {

// Union-find over switch port addresses: one class per switch.
class Devices {
 public:
  void Add(Ipv4 ip) { parent_.try_emplace(ip, ip); }
  Ipv4 Find(Ipv4 ip) {
    Ipv4 root = ip;
    while (parent_.at(root) != root) root = parent_.at(root);
    while (parent_.at(ip) != root) ip = std::exchange(parent_.at(ip), root);
    return root;
  }
  void Union(Ipv4 a, Ipv4 b) {
    Add(a);
    Add(b);
    const Ipv4 ra = Find(a);
    const Ipv4 rb = Find(b);
    // The lower address stays root, so a switch's name does not depend on trace order.
    if (ra != rb) parent_[std::max(ra, rb)] = std::min(ra, rb);
  }
  bool Has(Ipv4 ip) const { return parent_.contains(ip); }

 private:
  std::map<Ipv4, Ipv4> parent_;  // ordered: ids follow addresses, not arrival
};

Tier TierAt(size_t position, size_t switches) {
  // Switch k of m (1-based) on a valley-free path; the middle is the top.
  const size_t level = std::min(position, switches + 1 - position);
  const size_t top = (switches + 1) / 2;
  if (level == 1 && top > 1) return Tier::kRail;
  if (level == top) return switches == 1 ? Tier::kRail : Tier::kSpine;
  return Tier::kAggregation;
}

}  // namespace

void GraphLearner::Add(const std::string& host, Ipv4 src_nic, Ipv4 dst_nic,
                       std::span<const Hop> hops) {
  if (!hops.empty() && hops.back() == dst_nic) hops = hops.first(hops.size() - 1);
  traces_.push_back({host, src_nic, dst_nic, {hops.begin(), hops.end()}});
}

Topology GraphLearner::Build() const {
  Devices devices;
  std::map<Ipv4, Tier> tier;            // per switch port address
  std::set<Ipv4> ingress;               // addresses that answered, or that /31 arithmetic pins
  std::map<Ipv4, std::string> host_of;  // NIC address -> host
  const auto raise = [&](Ipv4 ip, Tier t) {
    auto [it, fresh] = tier.emplace(ip, t);
    if (!fresh && t > it->second) it->second = t;
  };
  for (const Trace& t : traces_) {
    host_of[t.src] = t.host;
    host_of[t.dst] = t.host;
    const size_t m = t.hops.size();
    // in[k]: ingress address of switch k (1-based); switch 1's is the source NIC's peer.
    std::vector<Hop> in(m + 2);
    in[1] = t.src.Peer31();
    for (size_t k = 1; k < m; ++k) in[k + 1] = t.hops[k];
    for (size_t k = 1; k <= m; ++k) {
      if (!in[k]) continue;
      devices.Add(*in[k]);
      ingress.insert(*in[k]);
      raise(*in[k], TierAt(k, m));
      // The egress of switch k is the peer of switch k+1's ingress (or of the
      // destination NIC after the last switch).
      const Hop egress =
          k == m ? Hop{t.dst.Peer31()} : (in[k + 1] ? Hop{in[k + 1]->Peer31()} : Hop{});
      if (egress) devices.Union(*in[k], *egress);
    }
  }

  TopologyBuilder b;
  std::map<std::string, DeviceId> hosts;
  for (const auto& [ip, host] : host_of) hosts.try_emplace(host, kNone);
  for (auto& [name, id] : hosts) id = b.AddDevice({.name = name, .tier = Tier::kHost});
  std::map<Ipv4, DeviceId> switches;  // by root address
  std::unordered_map<Ipv4, InterfaceId> port;
  for (const auto& [ip, host] : host_of) {
    port[ip] = b.AddInterface({.name = ip.ToString(), .device = hosts.at(host), .ip = ip});
  }
  // Only classes holding an ingress address are switches we know; a lone peer
  // address belongs to a device no answer has shown.
  std::map<Ipv4, std::vector<Ipv4>> members;
  for (Ipv4 ip : ingress) members[devices.Find(ip)];
  // Collect every known address of every class (ingress and egress ports).
  for (const Trace& t : traces_) {
    for (Ipv4 ip : {t.src.Peer31(), t.dst.Peer31()}) {
      if (devices.Has(ip)) members[devices.Find(ip)].push_back(ip);
    }
    for (const Hop& h : t.hops) {
      if (!h) continue;
      for (Ipv4 ip : {*h, h->Peer31()}) {
        if (devices.Has(ip)) members[devices.Find(ip)].push_back(ip);
      }
    }
  }
  for (auto& [root, ips] : members) {
    std::sort(ips.begin(), ips.end());
    ips.erase(std::unique(ips.begin(), ips.end()), ips.end());
    Tier top = Tier::kRail;
    for (Ipv4 ip : ips) {
      if (auto it = tier.find(ip); it != tier.end()) top = std::max(top, it->second);
    }
    const DeviceId id = b.AddDevice({.name = "sw" + root.ToString(), .tier = top});
    switches[root] = id;
    for (Ipv4 ip : ips) {
      if (port.contains(ip)) continue;
      port[ip] = b.AddInterface({.name = ip.ToString(), .device = id, .ip = ip});
    }
  }
  // A link per /31 whose both ends are known, lower tier first.
  std::vector<Ipv4> addresses;
  addresses.reserve(port.size());
  for (const auto& [ip, id] : port) addresses.push_back(ip);
  std::sort(addresses.begin(), addresses.end());
  for (Ipv4 ip : addresses) {
    if ((ip.value & 1U) != 0 || !port.contains(ip.Peer31())) continue;
    InterfaceId a = port.at(ip);
    InterfaceId z = port.at(ip.Peer31());
    const Topology& partial = b.partial();
    if (partial.TierOf(partial.DeviceOf(z)) < partial.TierOf(partial.DeviceOf(a))) std::swap(a, z);
    const bool nic = partial.TierOf(partial.DeviceOf(a)) == Tier::kHost;
    b.AddLink({.name = ip.ToString() + "/31",
               .kind = nic ? LinkKind::kNic : LinkKind::kFabric,
               .lower = a,
               .upper = z});
  }
  return std::move(b).Finish();
}

}  // namespace hostmesh::topology
