#include "topology/trace_check.h"

#include <vector>

namespace hostmesh::topology {

std::string_view DisagreementKindName(DisagreementKind kind) {
  switch (kind) {
    case DisagreementKind::kUnknownNic:
      return "unknown_nic";
    case DisagreementKind::kUnknownAddress:
      return "unknown_address";
    case DisagreementKind::kUnlinkedPort:
      return "unlinked_port";
    case DisagreementKind::kMiscabledNic:
      return "miscabled_nic";
    case DisagreementKind::kMiscabledLink:
      return "miscabled_link";
  }
  return "?";
}

std::optional<TraceDisagreement> FindDisagreement(const Topology& topo, Ipv4 src, Ipv4 dst,
                                                  std::span<const Hop> hops) {
  using Kind = DisagreementKind;
  const auto nic_problem = [&](Ipv4 ip) -> std::optional<TraceDisagreement> {
    const InterfaceId id = topo.FindInterface(ip);
    if (id != kNone && topo.TierOf(topo.DeviceOf(id)) == Tier::kHost &&
        topo.interface(id).link != kNone) {
      return std::nullopt;
    }
    return TraceDisagreement{
        Kind::kUnknownNic, ip.ToString(),
        id == kNone ? "NIC " + ip.ToString() + " probes, but the inventory does not have it"
                    : "NIC " + topo.DescribeInterface(id) +
                          " probes, but the inventory lists it as no linked NIC",
        ip};
  };
  if (auto problem = nic_problem(src)) return problem;
  if (auto problem = nic_problem(dst)) return problem;
  const InterfaceId src_itf = topo.FindInterface(src);

  std::size_t end = hops.size();
  while (end > 0 && !hops[end - 1]) --end;
  if (end > 0 && hops[end - 1] == dst) --end;  // its own answer, maybe inferred
  // The device hop k answered from, once checked (kNone: silent).
  std::vector<DeviceId> at(end, kNone);
  for (std::size_t k = 0; k < end; ++k) {
    if (!hops[k]) continue;
    const Ipv4 ip = *hops[k];
    const std::string hop = "hop " + std::to_string(k + 1) + " answered from ";
    const std::string after =
        k > 0 && at[k - 1] != kNone ? " (the hop before: " + topo.device(at[k - 1]).name + ")" : "";
    const InterfaceId id = topo.FindInterface(ip);
    if (id == kNone) {
      return TraceDisagreement{
          Kind::kUnknownAddress, ip.ToString(),
          hop + ip.ToString() + ", an address the inventory does not have" + after, ip};
    }
    if (topo.TierOf(topo.DeviceOf(id)) == Tier::kHost) {
      return TraceDisagreement{Kind::kUnknownAddress, ip.ToString(),
                               hop + topo.DescribeInterface(id) +
                                   ", a host's address in the inventory, not a switch's" + after,
                               ip};
    }
    if (topo.interface(id).link == kNone) {
      return TraceDisagreement{
          Kind::kUnlinkedPort, ip.ToString(),
          hop + topo.DescribeInterface(id) + ", a port the inventory lists with no link" + after,
          ip};
    }
    at[k] = topo.DeviceOf(id);
    if (k == 0) {
      const InterfaceId cabled = topo.Peer(src_itf);
      if (id != cabled) {
        return TraceDisagreement{Kind::kMiscabledNic, src.ToString(),
                                 "NIC " + topo.DescribeInterface(src_itf) + " is cabled to " +
                                     topo.DescribeInterface(cabled) +
                                     " in the inventory, but its first hop answered from " +
                                     topo.DescribeInterface(id),
                                 src};
      }
      continue;
    }
    if (at[k - 1] == kNone) continue;
    const InterfaceId far = topo.Peer(id);
    if (topo.DeviceOf(far) != at[k - 1]) {
      const std::string reached = topo.device(at[k - 1]).name;
      return TraceDisagreement{Kind::kMiscabledLink, ip.ToString() + "<" + reached,
                               "traffic that reached " + reached + " (hop " + std::to_string(k) +
                                   ") next entered " + topo.DescribeInterface(id) +
                                   ", which the inventory cables to " +
                                   topo.DescribeInterface(far) + ", not to " + reached,
                               ip};
    }
  }
  return std::nullopt;
}

std::vector<Ipv4> AgreeingAddresses(Ipv4 src, std::span<const Hop> hops) {
  std::vector<Ipv4> out;
  if (!hops.empty() && hops[0]) out.push_back(src);
  for (std::size_t k = 1; k < hops.size(); ++k) {
    if (hops[k] && hops[k - 1]) out.push_back(*hops[k]);
  }
  return out;
}

}  // namespace hostmesh::topology
