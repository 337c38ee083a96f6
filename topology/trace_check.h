#pragma once

// Where a traceroute shows the inventory to be wrong. Only answers count as
// evidence: a silent hop, a trace cut short (a gray link eats it) or the
// destination's inferred answer say nothing about the cabling. The
// destination NIC is not checked either: every NIC is also a source, and the
// first hop of its own traces checks its cable.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "topology/path_resolver.h"
#include "topology/topology.h"

namespace hostmesh::topology {

enum class DisagreementKind : std::uint8_t {
  kUnknownNic,      // a probing NIC the inventory lacks, or lists with no link
  kUnknownAddress,  // a hop answered from an address the inventory lacks (or a host's)
  kUnlinkedPort,    // a hop answered from a port the inventory lists with no link
  kMiscabledNic,    // a NIC's first hop is another port than its inventory cable's
  kMiscabledLink,   // two hops met on a link the inventory cables elsewhere
};
inline constexpr int kDisagreementKinds = 5;

// "unknown_nic", "unknown_address", "unlinked_port", "miscabled_nic", "miscabled_link".
std::string_view DisagreementKindName(DisagreementKind kind);

struct TraceDisagreement {
  DisagreementKind kind = DisagreementKind::kUnknownAddress;
  // The same for every trace showing the same fault (the addresses and devices involved).
  std::string key{};
  std::string description{};  // for on call, with inventory names
  // The address it is about (the hop's, or the NIC's): a trace that answers
  // from it in agreement with the inventory speaks against it (AgreeingAddresses).
  Ipv4 where{};
};

// The first disagreement of the trace from src_nic to dst_nic (hops as for
// PathResolver), or nullopt when its answers agree with the inventory.
std::optional<TraceDisagreement> FindDisagreement(const Topology& inventory, Ipv4 src_nic,
                                                  Ipv4 dst_nic, std::span<const Hop> hops);

// Of a trace that agrees with the inventory: the addresses it vouches for,
// the source NIC when hop 1 answered and every answer after an answer (a
// disagreement's `where` is one of these kinds).
std::vector<Ipv4> AgreeingAddresses(Ipv4 src_nic, std::span<const Hop> hops);

}  // namespace hostmesh::topology
