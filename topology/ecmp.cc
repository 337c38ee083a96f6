#include "topology/ecmp.h"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>

#include "topology/switch_graph.h"

namespace hostmesh::topology {

namespace {

InterfaceId LinkedNic(const Topology& topo, Ipv4 ip) {
  const InterfaceId id = topo.FindInterface(ip);
  if (id == kNone || topo.TierOf(topo.DeviceOf(id)) != Tier::kHost ||
      topo.interface(id).link == kNone) {
    return kNone;
  }
  return id;
}

// Follows edges that bring the walk one step closer to the goal.
class ShortestWalks {
 public:
  ShortestWalks(const SwitchGraphType& g, const std::vector<int>& distance, size_t limit,
                std::vector<std::vector<LinkId>>* out)
      : g_(g), distance_(distance), limit_(limit), out_(*out) {}

  void Walk(DeviceId cur, std::vector<LinkId>& prefix, LinkId last_link) {
    if (out_.size() >= limit_) return;
    if (distance_[cur] == 0) {
      out_.push_back(prefix);
      out_.back().push_back(last_link);
      return;
    }
    for (auto [e, end] = boost::out_edges(cur, g_); e != end; ++e) {
      const auto next = static_cast<DeviceId>(boost::target(*e, g_));
      if (distance_[next] != distance_[cur] - 1) continue;
      prefix.push_back(g_[*e].link);
      Walk(next, prefix, last_link);
      prefix.pop_back();
    }
  }

 private:
  const SwitchGraphType& g_;
  const std::vector<int>& distance_;
  size_t limit_;
  std::vector<std::vector<LinkId>>& out_;
};

}  // namespace

std::vector<std::vector<LinkId>> EnumerateEcmpPaths(const Topology& topo, Ipv4 src_nic,
                                                    Ipv4 dst_nic, size_t limit) {
  std::vector<std::vector<LinkId>> paths;
  const InterfaceId src = LinkedNic(topo, src_nic);
  const InterfaceId dst = LinkedNic(topo, dst_nic);
  if (src == kNone || dst == kNone || src == dst) return paths;
  const DeviceId first = topo.DeviceOf(topo.Peer(src));
  const DeviceId goal = topo.DeviceOf(topo.Peer(dst));

  const SwitchGraphType& g = topo.graph().g;
  std::vector<int> distance(boost::num_vertices(g), -1);
  distance[goal] = 0;
  boost::breadth_first_search(g, goal,
                              boost::visitor(boost::make_bfs_visitor(boost::record_distances(
                                  distance.data(), boost::on_tree_edge()))));
  if (distance[first] < 0) return paths;

  std::vector<LinkId> prefix{topo.interface(src).link};
  ShortestWalks(g, distance, limit, &paths).Walk(first, prefix, topo.interface(dst).link);
  return paths;
}

void CoverageCounter::Add(std::span<const LinkId> path) {
  for (LinkId link : path) {
    if (link != kNone && link < crossings_.size()) ++crossings_[link];
  }
  ++paths_;
}

void CoverageCounter::Clear() {
  std::fill(crossings_.begin(), crossings_.end(), 0);
  paths_ = 0;
}

CoverageCounter::Summary CoverageCounter::Summarize() const {
  Summary s;
  for (LinkId id = 0; id < crossings_.size(); ++id) {
    (crossings_[id] > 0 ? s.crossed : s.never_crossed).push_back(id);
  }
  if (!crossings_.empty()) {
    s.covered_fraction =
        static_cast<double>(s.crossed.size()) / static_cast<double>(crossings_.size());
  }
  return s;
}

}  // namespace hostmesh::topology
