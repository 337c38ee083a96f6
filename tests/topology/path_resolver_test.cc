#include "topology/path_resolver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/topology/test_fabrics.h"
#include "topology/ecmp.h"
#include "topology/switch_graph.h"

namespace hostmesh::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::NicIp;

Ipv4 Ip(const char* text) {
  return *ParseIpv4(text);
}

LinkId LinkNamed(const Topology& t, std::string_view name) {
  for (LinkId id = 0; id < t.links().size(); ++id) {
    if (t.link(id).name == name) return id;
  }
  ADD_FAILURE() << "no link " << name;
  return kNone;
}

class PathResolverTest : public ::testing::Test {
 protected:
  // The testbed's 4 hosts x 4 rails x 4 spines, 2 pods.
  Topology topo_ = testing::Generated({.hosts = 4, .rails = 4, .spines = 4, .pods = 2});
  PathResolver resolver_{topo_};
  Ipv4 src_ = NicIp(topo_, 0, 0);  // h000 nic0
  Ipv4 dst_ = NicIp(topo_, 0, 1);  // h000 nic1

  // The path of h000 nic0 -> nic1 over `spine`, and its traceroute hops.
  std::vector<LinkId> Via(const std::string& spine) {
    return {LinkNamed(topo_, "h000.nic0-p0r0"), LinkNamed(topo_, "p0r0-" + spine),
            LinkNamed(topo_, "p0r1-" + spine), LinkNamed(topo_, "h000.nic1-p0r1")};
  }
};

// The README's truth-path example: 2 hosts x 2 rails x 2 spines, h001 nic0 -> nic1.
TEST(PathResolver, ReadmeTruthPathExample) {
  const Topology t = testing::Generated({.hosts = 2, .rails = 2, .spines = 2});
  const std::vector<Hop> hops{Ip("198.18.0.2"), Ip("198.19.0.1"), Ip("198.19.0.4"),
                              Ip("198.18.0.7")};
  const ResolvedPath p = PathResolver(t).Resolve(Ip("198.18.0.3"), Ip("198.18.0.7"), hops);
  ASSERT_EQ(p.status, PathStatus::kOk) << p.problem;
  std::vector<std::string> names;
  for (LinkId l : p.links) names.push_back(t.link(l).name);
  EXPECT_THAT(names, ElementsAre("h001.nic0-p0r0", "p0r0-s00", "p0r1-s00", "h001.nic1-p0r1"));
  EXPECT_EQ(p.filled, 0);
}

TEST_F(PathResolverTest, FullHopsWithAndWithoutTheDestinationsAnswer) {
  const std::vector<LinkId> truth = Via("s02");
  std::vector<Hop> hops = ExpectedHops(topo_, truth, src_);
  ASSERT_EQ(hops.size(), 3u);
  EXPECT_EQ(hops[0], Ip("198.18.0.0"));  // p0r0's port facing h000 nic0
  ResolvedPath p = resolver_.Resolve(src_, dst_, hops);
  EXPECT_EQ(p.status, PathStatus::kOk) << p.problem;
  EXPECT_EQ(p.links, truth);
  hops.emplace_back(dst_);  // traceroute also lists the destination's port unreachable
  p = resolver_.Resolve(src_, dst_, hops);
  EXPECT_EQ(p.status, PathStatus::kOk);
  EXPECT_EQ(p.links, truth);
}

TEST_F(PathResolverTest, FillsASilentHopWhenTheGraphLeavesOneChoice) {
  const std::vector<LinkId> truth = Via("s01");
  for (size_t silent = 0; silent < 3; ++silent) {
    SCOPED_TRACE(silent);
    std::vector<Hop> hops = ExpectedHops(topo_, truth, src_);
    hops[silent].reset();
    const ResolvedPath p = resolver_.Resolve(src_, dst_, hops);
    EXPECT_EQ(p.status, PathStatus::kOk) << p.problem;
    EXPECT_EQ(p.links, truth);
    // Hop 1 is the source NIC's own link: known without asking the graph.
    EXPECT_EQ(p.filled, silent == 0 ? 0 : 1);
  }
}

TEST_F(PathResolverTest, ReportsAmbiguityInsteadOfGuessing) {
  // Spine and last rail switch silent: any of the 4 spines fits.
  std::vector<Hop> hops = ExpectedHops(topo_, Via("s03"), src_);
  hops[1].reset();
  hops[2].reset();
  const ResolvedPath p = resolver_.Resolve(src_, dst_, hops);
  ASSERT_EQ(p.status, PathStatus::kAmbiguous);
  EXPECT_EQ(p.links[0], LinkNamed(topo_, "h000.nic0-p0r0"));
  EXPECT_EQ(p.links[1], kNone);
  EXPECT_EQ(p.links[2], kNone);
  EXPECT_EQ(p.links[3], LinkNamed(topo_, "h000.nic1-p0r1"));
  ASSERT_EQ(p.candidates.size(), 2u);
  EXPECT_EQ(p.candidates[0].position, 1u);
  EXPECT_EQ(p.candidates[0].links.size(), 4u);
  EXPECT_EQ(p.candidates[1].position, 2u);
  EXPECT_THAT(p.candidates[1].links,
              ElementsAre(LinkNamed(topo_, "p0r1-s00"), LinkNamed(topo_, "p0r1-s01"),
                          LinkNamed(topo_, "p0r1-s02"), LinkNamed(topo_, "p0r1-s03")));
}

TEST_F(PathResolverTest, RejectsInconsistentHops) {
  const std::vector<Hop> good = ExpectedHops(topo_, Via("s00"), src_);
  struct Case {
    std::vector<Hop> hops;
    const char* problem;
  };
  // Down from s00 into p0r1, but hop 3 came from s01.
  const Hop p0r1_from_s01 = ExpectedHops(topo_, Via("s01"), src_)[2];
  // A path in pod 1, whose last hop (p1r1's port from s00) cannot follow p0r0.
  const std::vector<LinkId> pod1{LinkNamed(topo_, "h002.nic0-p1r0"), LinkNamed(topo_, "p1r0-s00"),
                                 LinkNamed(topo_, "p1r1-s00"), LinkNamed(topo_, "h002.nic1-p1r1")};
  const Hop p1r1_from_s00 = ExpectedHops(topo_, pod1, NicIp(topo_, 2, 0))[2];
  const std::vector<Case> cases{
      {{good[0], good[1], p0r1_from_s01}, "hops 2 and 3 disagree"},
      {{good[0], Ip("10.0.0.1"), good[2]}, "hop 2 (10.0.0.1) is no address of the fabric"},
      {{good[0], dst_, good[2]}, "is a host's address"},
      {{Ip("198.18.0.8"), good[1], good[2]}, "not the port the source NIC is wired to"},
      {{good[0], good[1]}, "disagree"},  // one hop short: s00 is not the destination's switch
      {{}, "no hops"},
      // Silent spine, then p1r1: it is not the destination NIC's rail switch.
      {{good[0], std::nullopt, p1r1_from_s00}, "disagree"},
  };
  for (const Case& c : cases) {
    const ResolvedPath p = resolver_.Resolve(src_, dst_, c.hops);
    EXPECT_EQ(p.status, PathStatus::kInconsistent) << c.problem;
    EXPECT_THAT(p.problem, HasSubstr(c.problem));
  }
  EXPECT_THAT(resolver_.Resolve(Ip("10.1.1.1"), dst_, good).problem, HasSubstr("source"));
}

TEST_F(PathResolverTest, SilentHopsThatNoPathFitsAreInconsistent) {
  // Two silent hops where the fabric has one switch between p0r0 and p0r1.
  std::vector<Hop> hops = ExpectedHops(topo_, Via("s00"), src_);
  hops.insert(hops.begin() + 1, std::nullopt);
  hops[2].reset();
  const ResolvedPath p = resolver_.Resolve(src_, dst_, hops);
  EXPECT_EQ(p.status, PathStatus::kInconsistent);
  EXPECT_THAT(p.problem,
              HasSubstr("no path of 2 link(s) from p0r0 to s00 fits the silent hops 2..3"));
}

TEST(PathResolverThreeTiers, FillsTheSilentSpineAndReportsAmbiguousAggregation) {
  const Topology t = testing::Generated(
      {.hosts = 2, .rails = 2, .spines = 2, .pods = 1, .tiers = 3, .aggregations = 2});
  const PathResolver resolver(t);
  const Ipv4 src = NicIp(t, 0, 0);
  const Ipv4 dst = NicIp(t, 0, 1);
  const auto paths = EnumerateEcmpPaths(t, src, dst);
  ASSERT_EQ(paths.size(), 2u * 2 * 2);  // aggregation x spine x aggregation
  const std::vector<LinkId>& truth = paths[5];
  std::vector<Hop> hops = ExpectedHops(t, truth, src);
  ASSERT_EQ(hops.size(), 5u);
  hops[2].reset();  // the spine
  ResolvedPath p = resolver.Resolve(src, dst, hops);
  EXPECT_EQ(p.status, PathStatus::kOk) << p.problem;
  EXPECT_EQ(p.links, truth);
  hops = ExpectedHops(t, truth, src);
  hops[1].reset();  // first aggregation switch and spine silent
  hops[2].reset();
  p = resolver.Resolve(src, dst, hops);
  EXPECT_EQ(p.status, PathStatus::kAmbiguous);
  EXPECT_EQ(p.links[3], truth[3]);  // the spine is pinned by the aggregation switch after it
}

// The resolver's gap filling reads the links between two switches from the
// graph's index: it must hold exactly the graph's edges, each pair's in
// out-edge order, and nothing for switches that are not adjacent.
TEST(SwitchGraphIndex, LinksBetweenAreTheGraphsEdgesInOrder) {
  const Topology t = testing::Generated(
      {.hosts = 4, .rails = 2, .spines = 3, .pods = 2, .tiers = 3, .aggregations = 2});
  const SwitchGraph& graph = t.graph();
  std::size_t edges = 0;
  for (DeviceId a = 0; a < t.devices().size(); ++a) {
    for (DeviceId b = 0; b < t.devices().size(); ++b) {
      std::vector<std::pair<DeviceId, LinkId>> want;
      for (auto [e, end] = boost::out_edges(a, graph.g); e != end; ++e) {
        if (boost::target(*e, graph.g) == b) want.emplace_back(b, graph.g[*e].link);
      }
      const auto got = graph.LinksBetween(a, b);
      EXPECT_EQ(std::vector(got.begin(), got.end()), want) << a << " -> " << b;
      edges += want.size();
    }
  }
  EXPECT_EQ(edges, 2 * boost::num_edges(graph.g));  // every edge, from both ends
  EXPECT_GT(edges, 0u);
  EXPECT_TRUE(graph.LinksBetween(static_cast<DeviceId>(t.devices().size()), 0).empty());
}

}  // namespace
}  // namespace hostmesh::topology
