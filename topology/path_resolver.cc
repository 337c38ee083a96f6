#include "topology/path_resolver.h"

#include <algorithm>
#include <array>

#include "topology/switch_graph.h"

namespace hostmesh::topology {

std::string_view PathStatusName(PathStatus status) {
  switch (status) {
    case PathStatus::kOk:
      return "ok";
    case PathStatus::kAmbiguous:
      return "ambiguous";
    case PathStatus::kInconsistent:
      return "inconsistent";
  }
  return "?";
}

namespace {

void Fail(ResolvedPath* out, std::string why) {
  out->status = PathStatus::kInconsistent;
  out->problem = std::move(why);
}

// Depth-first over the switch graph: every loop-free, valley-free walk of
// exactly `length` links from `start` to `goal`. Valley-free because ECMP
// routing never goes down and then up again; without the rule a gap of two
// links between aggregation switches could also be "filled" through a rail switch.
class GapWalker {
 public:
  GapWalker(const Topology& topo, DeviceId before, DeviceId start, DeviceId goal, size_t length,
            bool descending, bool ascend_after, size_t max_walks,
            std::vector<std::vector<LinkId>>* per_position)
      : topo_(topo),
        graph_(topo.graph()),
        g_(graph_.g),
        goal_(goal),
        length_(length),
        ascend_after_(ascend_after),
        max_walks_(max_walks),
        per_position_(*per_position) {
    per_position_.assign(length, {});
    visited_[0] = before;
    visited_[1] = start;
    Walk(start, 0, descending);
  }

  size_t walks() const { return walks_; }

 private:
  void Walk(DeviceId cur, size_t depth, bool descending) {
    if (walks_ >= max_walks_) return;
    if (depth + 1 == length_) {
      // The last link ends on the goal: only the links between the two.
      for (const auto& [next, link] : graph_.LinksBetween(cur, goal_)) {
        const bool up = topo_.TierOf(next) > topo_.TierOf(cur);
        if (descending && up) continue;
        if (Visited(next, depth)) continue;
        const bool now_descending = descending || topo_.TierOf(next) < topo_.TierOf(cur);
        if (now_descending && ascend_after_) continue;  // the known link after the gap goes up
        links_[depth] = link;
        Record();
        if (walks_ >= max_walks_) return;
      }
      return;
    }
    for (auto [e, end] = boost::out_edges(cur, g_); e != end; ++e) {
      const auto next = static_cast<DeviceId>(boost::target(*e, g_));
      if (next == goal_) continue;  // only the last link may reach it
      const bool up = topo_.TierOf(next) > topo_.TierOf(cur);
      if (descending && up) continue;
      if (Visited(next, depth)) continue;
      links_[depth] = g_[*e].link;
      const bool now_descending = descending || topo_.TierOf(next) < topo_.TierOf(cur);
      visited_[depth + 2] = next;
      Walk(next, depth + 1, now_descending);
    }
  }

  bool Visited(DeviceId next, size_t depth) const {
    const auto end = visited_.begin() + static_cast<long>(depth) + 2;
    return std::find(visited_.begin(), end, next) != end;
  }

  void Record() {
    ++walks_;
    for (size_t i = 0; i < length_; ++i) {
      std::vector<LinkId>& seen = per_position_[i];
      if (std::find(seen.begin(), seen.end(), links_[i]) == seen.end()) seen.push_back(links_[i]);
    }
  }

  const Topology& topo_;
  const SwitchGraph& graph_;
  const SwitchGraphType& g_;
  DeviceId goal_;
  size_t length_;
  bool ascend_after_;
  size_t max_walks_;
  std::vector<std::vector<LinkId>>& per_position_;
  std::array<DeviceId, PathResolver::kMaxHops + 2> visited_{};
  std::array<LinkId, PathResolver::kMaxHops + 1> links_{};
  size_t walks_ = 0;
};

}  // namespace

void PathResolver::Resolve(Ipv4 src_nic, Ipv4 dst_nic, std::span<const Hop> hops,
                           ResolvedPath* out) const {
  out->Clear();

  const auto nic = [&](Ipv4 ip) {
    const InterfaceId id = topo_.FindInterface(ip);
    if (id == kNone || topo_.TierOf(topo_.DeviceOf(id)) != Tier::kHost ||
        topo_.interface(id).link == kNone) {
      return kNone;
    }
    return id;
  };
  const InterfaceId src = nic(src_nic);
  const InterfaceId dst = nic(dst_nic);
  if (src == kNone) return Fail(out, "source " + src_nic.ToString() + " is not a linked NIC");
  if (dst == kNone) return Fail(out, "destination " + dst_nic.ToString() + " is not a linked NIC");
  // The destination's own answer (port unreachable) is not a switch hop.
  if (!hops.empty() && hops.back() == dst_nic) hops = hops.first(hops.size() - 1);
  if (hops.empty()) return Fail(out, "no hops: a path crosses at least one switch");
  if (hops.size() > kMaxHops) return Fail(out, "more than " + std::to_string(kMaxHops) + " hops");

  // Link k leaves device from[k] and enters into[k]; hop k (TTL k+1) names link k.
  const size_t n = hops.size() + 1;
  std::array<DeviceId, kMaxHops + 1> from{};
  std::array<DeviceId, kMaxHops + 1> into{};
  out->links.assign(n, kNone);
  out->links[0] = topo_.interface(src).link;
  from[0] = topo_.DeviceOf(src);
  into[0] = topo_.DeviceOf(topo_.Peer(src));
  out->links[n - 1] = topo_.interface(dst).link;
  from[n - 1] = topo_.DeviceOf(topo_.Peer(dst));
  into[n - 1] = topo_.DeviceOf(dst);

  for (size_t k = 0; k < hops.size(); ++k) {
    if (!hops[k]) continue;
    // Built only on failure: this loop runs for every probe.
    const auto where = [&] {
      return "hop " + std::to_string(k + 1) + " (" + hops[k]->ToString() + ")";
    };
    const InterfaceId in = topo_.FindInterface(*hops[k]);
    if (in == kNone) return Fail(out, where() + " is no address of the fabric");
    if (topo_.TierOf(topo_.DeviceOf(in)) == Tier::kHost) {
      return Fail(out, where() + " is a host's address, not a switch's");
    }
    const LinkId link = topo_.interface(in).link;
    if (link == kNone) return Fail(out, where() + " is on a port with no link");
    if (k == 0) {
      if (link != out->links[0]) {
        return Fail(out, where() + " is not the port the source NIC is wired to (" +
                             topo_.DescribeInterface(topo_.Peer(src)) + ")");
      }
      continue;
    }
    out->links[k] = link;
    from[k] = topo_.DeviceOf(topo_.Peer(in));
    into[k] = topo_.DeviceOf(in);
  }
  for (size_t k = 0; k + 1 < n; ++k) {
    if (out->links[k] != kNone && out->links[k + 1] != kNone && into[k] != from[k + 1]) {
      return Fail(out, "hops " + std::to_string(k + 1) + " and " + std::to_string(k + 2) +
                           " disagree: the first reaches " + topo_.device(into[k]).name +
                           ", the second leaves " + topo_.device(from[k + 1]).name);
    }
  }
  for (size_t k = 1; k + 1 < n; ++k) {
    if (out->links[k] != kNone) continue;
    size_t last = k;
    while (out->links[last + 1] == kNone) ++last;  // links[n-1] is always known
    FillGap(k, last, from.data(), into.data(), out);
    if (out->status == PathStatus::kInconsistent && !out->problem.empty()) return;
    k = last;
  }
  out->status = out->candidates.empty() ? PathStatus::kOk : PathStatus::kAmbiguous;
}

void PathResolver::ResolveTruncated(Ipv4 src_nic, Ipv4 dst_nic, std::span<const Hop> prefix,
                                    size_t max_more, ResolvedPath* out) const {
  out->status = PathStatus::kInconsistent;
  out->problem = "no hops";
  std::array<Hop, kMaxHops> hops{};
  const size_t known = std::min(prefix.size(), kMaxHops);
  std::copy_n(prefix.begin(), known, hops.begin());
  for (size_t more = 0; more <= max_more && known + more <= kMaxHops; ++more) {
    if (known + more == 0) continue;
    Resolve(src_nic, dst_nic, std::span<const Hop>(hops.data(), known + more), out);
    if (out->status != PathStatus::kInconsistent) {
      out->truncated = true;
      return;
    }
  }
  out->truncated = true;
  out->problem = "cut short after hop " + std::to_string(known) +
                 ", and no continuation of at most " + std::to_string(max_more) +
                 " more switch(es) fits (last: " + out->problem + ")";
}

void PathResolver::FillGap(size_t first, size_t last, const DeviceId* from, const DeviceId* into,
                           ResolvedPath* out) const {
  const DeviceId start = into[first - 1];
  const DeviceId goal = from[last + 1];
  const bool descending = topo_.TierOf(start) < topo_.TierOf(from[first - 1]);
  const bool ascend_after = topo_.TierOf(into[last + 1]) > topo_.TierOf(goal);
  std::vector<std::vector<LinkId>> per_position;
  const size_t length = last - first + 1;
  const GapWalker walker(topo_, from[first - 1], start, goal, length, descending, ascend_after,
                         kMaxWalks, &per_position);
  if (walker.walks() == 0) {
    return Fail(out, "no path of " + std::to_string(length) + " link(s) from " +
                         topo_.device(start).name + " to " + topo_.device(goal).name +
                         " fits the silent hops " + std::to_string(first + 1) + ".." +
                         std::to_string(last + 1));
  }
  for (size_t i = 0; i < length; ++i) {
    if (per_position[i].size() == 1) {
      out->links[first + i] = per_position[i][0];
      ++out->filled;
    } else {
      std::sort(per_position[i].begin(), per_position[i].end());
      out->candidates.push_back({first + i, std::move(per_position[i])});
    }
  }
}

std::vector<Hop> ExpectedHops(const Topology& topo, std::span<const LinkId> path, Ipv4 src_nic) {
  std::vector<Hop> hops;
  const InterfaceId src = topo.FindInterface(src_nic);
  if (src == kNone || path.empty()) return hops;
  DeviceId cur = topo.DeviceOf(src);
  for (size_t k = 0; k + 1 < path.size(); ++k) {
    const Link& l = topo.link(path[k]);
    const InterfaceId in = topo.DeviceOf(l.lower) == cur ? l.upper : l.lower;
    hops.emplace_back(topo.interface(in).ip);
    cur = topo.DeviceOf(in);
  }
  return hops;
}

}  // namespace hostmesh::topology
