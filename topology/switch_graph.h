#pragma once

// The Boost.Graph behind Topology: one vertex per device (vertex index ==
// DeviceId), one edge per switch-to-switch link. NIC links are left out on
// purpose: a host does not forward, so no path may pass through one.

#include <boost/graph/adjacency_list.hpp>

#include "topology/model.h"

namespace hostmesh::topology {

struct SwitchEdge {
  LinkId link = kNone;
};

using SwitchGraphType = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                              boost::no_property, SwitchEdge>;

struct SwitchGraph {
  SwitchGraphType g;
};

}  // namespace hostmesh::topology
