#pragma once

// The Boost.Graph behind Topology: one vertex per device (vertex index ==
// DeviceId), one edge per switch-to-switch link. NIC links are left out on
// purpose: a host does not forward, so no path may pass through one.

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <span>
#include <utility>
#include <vector>

#include "topology/model.h"

namespace hostmesh::topology {

struct SwitchEdge {
  LinkId link = kNone;
};

using SwitchGraphType = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                              boost::no_property, SwitchEdge>;

struct SwitchGraph {
  SwitchGraphType g;
  // Per device, its edges as (far end, link), sorted by far end and, among
  // parallel links, in out-edge order: the links between two switches
  // without walking all of a spine's edges (a path resolver's gap ends on one).
  std::vector<std::vector<std::pair<DeviceId, LinkId>>> by_peer;

  // Fills by_peer from g; call once g is complete.
  void IndexPeers() {
    by_peer.assign(boost::num_vertices(g), {});
    for (std::size_t v = 0; v < by_peer.size(); ++v) {
      auto& peers = by_peer[v];
      for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
        peers.emplace_back(static_cast<DeviceId>(boost::target(*e, g)), g[*e].link);
      }
      std::stable_sort(peers.begin(), peers.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
  }
  // The links from a to b, in a's out-edge order.
  std::span<const std::pair<DeviceId, LinkId>> LinksBetween(DeviceId a, DeviceId b) const {
    if (a >= by_peer.size()) return {};
    const auto& peers = by_peer[a];
    const auto [lo, hi] =
        std::equal_range(peers.begin(), peers.end(), std::pair<DeviceId, LinkId>{b, 0},
                         [](const auto& x, const auto& y) { return x.first < y.first; });
    return {lo, hi};
  }
};

}  // namespace hostmesh::topology
