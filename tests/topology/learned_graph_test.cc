#include "topology/learned_graph.h"

#include <gtest/gtest.h>

#include "tests/topology/test_fabrics.h"
#include "topology/ecmp.h"

namespace hostmesh::topology {
namespace {

using testing::NicIp;

// Traces of every path between every NIC pair of h000, with no inventory.
class LearnedGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b) {
        if (a == b) continue;
        for (const auto& path :
             EnumerateEcmpPaths(truth_, NicIp(truth_, 0, a), NicIp(truth_, 0, b))) {
          std::vector<Hop> hops = ExpectedHops(truth_, path, NicIp(truth_, 0, a));
          hops.emplace_back(NicIp(truth_, 0, b));  // the destination's answer
          learner_.Add("h000", NicIp(truth_, 0, a), NicIp(truth_, 0, b), hops);
        }
      }
    }
  }

  Topology truth_ = testing::Generated({.hosts = 4, .rails = 4, .spines = 4, .pods = 2});
  GraphLearner learner_;
};

TEST_F(LearnedGraphTest, LearnsSwitchesLinksAndTiers) {
  const Topology learned = learner_.Build();
  EXPECT_EQ(learned.CountDevices(Tier::kHost), 1u);
  EXPECT_EQ(learned.CountDevices(Tier::kRail), 4u);  // pod 0's rail switches
  EXPECT_EQ(learned.CountDevices(Tier::kSpine), 4u);
  EXPECT_EQ(learned.links().size(), 4u + 4u * 4);
  // Named after what is known: p0r0's lowest port address, /31 subnets for links.
  const InterfaceId port = learned.FindInterface(*ParseIpv4("198.19.0.1"));  // s00 from p0r0
  ASSERT_NE(port, kNone);
  EXPECT_EQ(learned.Describe(learned.interface(port).link),
            "sw198.18.0.0:198.19.0.0 - sw198.19.0.1:198.19.0.1");
  EXPECT_EQ(learned.link(learned.interface(port).link).name, "198.19.0.0/31");
}

TEST_F(LearnedGraphTest, ResolvesAndFillsLikeTheInventory) {
  const Topology learned = learner_.Build();
  const PathResolver by_learned(learned);
  const PathResolver by_inventory(truth_);
  const Ipv4 src = NicIp(truth_, 0, 2);
  const Ipv4 dst = NicIp(truth_, 0, 3);
  for (const auto& path : EnumerateEcmpPaths(truth_, src, dst)) {
    std::vector<Hop> hops = ExpectedHops(truth_, path, src);
    hops[1].reset();  // the spine stayed silent
    const ResolvedPath l = by_learned.Resolve(src, dst, hops);
    const ResolvedPath i = by_inventory.Resolve(src, dst, hops);
    ASSERT_EQ(l.status, PathStatus::kOk) << l.problem;
    ASSERT_EQ(i.status, PathStatus::kOk);
    ASSERT_EQ(l.links.size(), i.links.size());
    for (size_t k = 0; k < l.links.size(); ++k) {
      // Same link: the same pair of addresses.
      const Link& a = learned.link(l.links[k]);
      const Link& b = truth_.link(i.links[k]);
      EXPECT_EQ(learned.interface(a.lower).ip, truth_.interface(b.lower).ip);
      EXPECT_EQ(learned.interface(a.upper).ip, truth_.interface(b.upper).ip);
    }
  }
}

TEST(LearnedGraph, APortBehindASilentHopWaitsForEvidence) {
  const Topology truth = testing::Generated({.hosts = 2, .rails = 2, .spines = 2});
  const Ipv4 src = NicIp(truth, 0, 0);
  const Ipv4 dst = NicIp(truth, 0, 1);
  const auto path = EnumerateEcmpPaths(truth, src, dst)[0];
  std::vector<Hop> hops = ExpectedHops(truth, path, src);
  hops[1].reset();  // the spine: its ports are unknown, its egress peer is unplaced
  GraphLearner learner;
  learner.Add("h000", src, dst, hops);
  const Topology learned = learner.Build();
  // p0r0 (ingress pinned by /31 arithmetic from the NIC) and p0r1 (answered).
  EXPECT_EQ(learned.CountDevices(Tier::kRail) + learned.CountDevices(Tier::kSpine) +
                learned.CountDevices(Tier::kAggregation),
            2u);
  EXPECT_EQ(learned.links().size(), 2u);  // the two NIC links
}

}  // namespace
}  // namespace hostmesh::topology
