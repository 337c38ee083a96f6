#pragma once

#include <span>
#include <string>
#include <vector>

#include "topology/path_resolver.h"
#include "topology/topology.h"

namespace hostmesh::topology {

// Builds a Topology from traceroutes alone, for fabrics without an inventory.
// A hop address is the ingress interface of a switch, so it names a link whose
// other end is its /31 peer (address ^ 1), an egress port of the previous
// device. Consecutive hops therefore tie addresses to one device: hop k's
// address and the peer of hop k+1's address sit on the same switch.
//
// What cannot be learned is named after what is known: a switch is
// "sw<lowest ingress address>", its ports are named by their addresses, a
// link by its /31 subnet. Tiers come from the position on the path (the middle
// of a valley-free path is the top tier). A port whose device no trace has
// revealed yet (only its peer answered, and the hop before was silent) is left
// out until one does.
class GraphLearner {
 public:
  // `host` names the agent that traced (every probe is between two NICs of
  // that host); `hops` as for PathResolver.
  void Add(const std::string& host, Ipv4 src_nic, Ipv4 dst_nic, std::span<const Hop> hops);

  Topology Build() const;

 private:
  struct Trace {
    std::string host;
    Ipv4 src;
    Ipv4 dst;
    std::vector<Hop> hops;
  };
  std::vector<Trace> traces_{};
};

}  // namespace hostmesh::topology
