// FabricLearner on synthetic traces of generated fabrics (the inventory is the
// ground truth the learner never sees): what it learns, how it resolves whole,
// silent and truncated traces, that ids never change, and its stored form.
#include "topology/learned_graph.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/topology/test_fabrics.h"
#include "topology/ecmp.h"

namespace hostmesh::topology {
namespace {

using testing::NicIp;

std::string HostName(const Topology& truth, int host) {
  return truth.device(static_cast<DeviceId>(host)).name;
}

// The Hello of host h: its NICs by name, address and rail.
void Hello(FabricLearner& learner, const Topology& truth, int host, int rails) {
  for (int r = 0; r < rails; ++r) {
    learner.AddNic(HostName(truth, host), "nic" + std::to_string(r), NicIp(truth, host, r), r);
  }
}

// What a trace along `path` answers: every switch, then the destination (inferred).
std::vector<Hop> Answers(const Topology& truth, const std::vector<LinkId>& path, Ipv4 src,
                         Ipv4 dst) {
  std::vector<Hop> hops = ExpectedHops(truth, path, src);
  hops.emplace_back(dst);
  return hops;
}

// The addresses of the links of a resolved path, lower end first, "?" where unknown.
std::vector<std::string> Names(const Topology& topo, const std::vector<LinkId>& links) {
  std::vector<std::string> out;
  for (LinkId l : links) {
    if (l == kNone) {
      out.emplace_back("?");
      continue;
    }
    out.push_back(topo.interface(topo.link(l).lower).ip.ToString() + "-" +
                  topo.interface(topo.link(l).upper).ip.ToString());
  }
  return out;
}

// Live switches (not merged into another) and their tiers.
std::multiset<Tier> LiveSwitchTiers(const Topology& built) {
  std::multiset<Tier> tiers;
  for (const Device& d : built.devices()) {
    if (d.tier != Tier::kHost && !d.interfaces.empty()) tiers.insert(d.tier);
  }
  return tiers;
}

class LearnedFabricTest : public ::testing::Test {
 protected:
  void LearnFrom(const Topology& truth, int hosts, int rails, int rounds = 2) {
    for (int h = 0; h < hosts; ++h) Hello(learner_, truth, h, rails);
    for (int round = 0; round < rounds; ++round) {
      for (int h = 0; h < hosts; ++h) {
        for (int a = 0; a < rails; ++a) {
          for (int b = 0; b < rails; ++b) {
            if (a == b) continue;
            const Ipv4 src = NicIp(truth, h, a);
            const Ipv4 dst = NicIp(truth, h, b);
            for (const auto& path : EnumerateEcmpPaths(truth, src, dst)) {
              const std::vector<Hop> hops = Answers(truth, path, src, dst);
              learner_.Add(HostName(truth, h), src, dst, hops, nullptr, &out_);
              EXPECT_EQ(out_.status, PathStatus::kOk) << out_.problem;
              EXPECT_EQ(Names(learner_.Build(), out_.links), Names(truth, path));
            }
          }
        }
      }
    }
  }

  FabricLearner learner_;
  ResolvedPath out_;
};

TEST_F(LearnedFabricTest, LearnsEverySwitchLinkTierAndRailOfATwoTierFabric) {
  const Topology truth = testing::Generated({.hosts = 4, .rails = 4, .spines = 4});
  LearnFrom(truth, 4, 4);
  const Topology learned = learner_.Build();
  EXPECT_EQ(LiveSwitchTiers(learned),
            (std::multiset<Tier>{Tier::kRail, Tier::kRail, Tier::kRail, Tier::kRail, Tier::kSpine,
                                 Tier::kSpine, Tier::kSpine, Tier::kSpine}));
  // Every link of the truth, with its ends on devices of the truth's tiers, by address.
  ASSERT_EQ(learned.links().size(), truth.links().size());
  for (const Link& t : truth.links()) {
    const Ipv4 lower = truth.interface(t.lower).ip;
    const Ipv4 upper = truth.interface(t.upper).ip;
    const LinkId id = learner_.LinkOf(lower);
    ASSERT_NE(id, kNone) << lower.ToString();
    const Link& l = learned.link(id);
    EXPECT_EQ(l.name, lower.ToString() + "-" + upper.ToString());
    EXPECT_EQ(l.kind, t.kind);
    for (InterfaceId end : {l.lower, l.upper}) {
      const InterfaceId truth_end = truth.FindInterface(learned.interface(end).ip);
      EXPECT_EQ(learned.TierOf(learned.DeviceOf(end)), truth.TierOf(truth.DeviceOf(truth_end)));
    }
  }
  // A rail switch has the rail of its NICs; a NIC port the agent's name.
  const Ipv4 nic = NicIp(truth, 2, 3);
  const InterfaceId port = learned.FindInterface(nic);
  EXPECT_EQ(learned.interface(port).name, "nic3");
  EXPECT_EQ(learned.device(learned.DeviceOf(learned.Peer(port))).rail, 3);
  EXPECT_EQ(learner_.stats().merges_refused, 0u);
  EXPECT_EQ(learner_.stats().refused, 0u);
}

TEST_F(LearnedFabricTest, LearnsTheAggregationTierOfAThreeTierFabric) {
  const Topology truth =
      testing::Generated({.hosts = 2, .rails = 2, .spines = 2, .tiers = 3, .aggregations = 2});
  LearnFrom(truth, 2, 2);
  const Topology learned = learner_.Build();
  // Rail 0 and 1 switches, two aggregations per rail, two spines.
  EXPECT_EQ(
      LiveSwitchTiers(learned),
      (std::multiset<Tier>{Tier::kRail, Tier::kRail, Tier::kAggregation, Tier::kAggregation,
                           Tier::kAggregation, Tier::kAggregation, Tier::kSpine, Tier::kSpine}));
}

TEST_F(LearnedFabricTest, IdsNeverChangeAndMergedSwitchesPointToTheSurvivor) {
  const Topology truth = testing::Generated({.hosts = 4, .rails = 4, .spines = 4});
  // Learn from host 0 first: ids are handed out; then from every host.
  LearnFrom(truth, 1, 4, 1);
  std::map<Ipv4, LinkId> links;
  std::map<Ipv4, DeviceId> devices;
  for (const Interface& i : learner_.Build().interfaces()) {
    links[i.ip] = learner_.LinkOf(i.ip);
    devices[i.ip] = learner_.DeviceOf(i.ip);
  }
  LearnFrom(truth, 4, 4);
  const Topology learned = learner_.Build();
  for (const auto& [ip, id] : links) EXPECT_EQ(learner_.LinkOf(ip), id) << ip.ToString();
  for (const auto& [ip, id] : devices) {
    // A port stays on its switch, or on the older one that switch was merged into.
    const DeviceId now = learner_.DeviceOf(ip);
    EXPECT_LE(now, id) << ip.ToString();
    if (now != id) {
      EXPECT_NE(learned.device(id).name.find("(merged into " + learned.device(now).name + ")"),
                std::string::npos);
    }
  }
  EXPECT_GT(learner_.stats().merges, 0u);  // host 0 alone showed parts of the rail switches
}

TEST_F(LearnedFabricTest, SilentHopsAreFilledWhenTheLearnedGraphLeavesOneChoice) {
  const Topology truth = testing::Generated({.hosts = 4, .rails = 4, .spines = 4});
  LearnFrom(truth, 4, 4);
  const Topology graph = learner_.Build();
  const Ipv4 src = NicIp(truth, 1, 0);
  const Ipv4 dst = NicIp(truth, 1, 2);
  const auto path = EnumerateEcmpPaths(truth, src, dst)[1];
  std::vector<Hop> hops = Answers(truth, path, src, dst);
  hops[1].reset();  // the spine: its link from the rail switch is the one to the next hop's spine
  learner_.Add("h001", src, dst, hops, &graph, &out_);
  EXPECT_EQ(out_.status, PathStatus::kOk) << out_.problem;
  EXPECT_EQ(out_.filled, 1);
  EXPECT_EQ(Names(graph, out_.links), Names(truth, path));

  hops = Answers(truth, path, src, dst);
  hops[1].reset();
  hops[2].reset();  // spine and the rail switch down: any of the four spines
  learner_.Add("h001", src, dst, hops, &graph, &out_);
  EXPECT_EQ(out_.status, PathStatus::kAmbiguous);
  EXPECT_EQ(Names(graph, out_.links)[1], "?");
  ASSERT_EQ(out_.candidates.size(), 2u);
  EXPECT_EQ(out_.candidates[0].links.size(), 4u);
}

TEST_F(LearnedFabricTest, SilentHopsStayUnknownBeforeAGraphIsBuilt) {
  const Topology truth = testing::Generated({.hosts = 2, .rails = 2, .spines = 2});
  const Ipv4 src = NicIp(truth, 0, 0);
  const Ipv4 dst = NicIp(truth, 0, 1);
  const auto path = EnumerateEcmpPaths(truth, src, dst)[0];
  std::vector<Hop> hops = Answers(truth, path, src, dst);
  hops[1].reset();
  learner_.Add("h000", src, dst, hops, nullptr, &out_);
  EXPECT_EQ(out_.status, PathStatus::kAmbiguous);
  const std::vector<std::string> names = Names(learner_.Build(), out_.links);
  const std::vector<std::string> truth_names = Names(truth, path);
  EXPECT_EQ(names, (std::vector<std::string>{truth_names[0], "?", truth_names[2], truth_names[3]}));
  // The spine's port towards the next rail switch is known only by its address:
  // its switch is not, so that link's upper end waits on the unplaced device.
  const Topology built = learner_.Build();
  const Link& down = built.link(out_.links[2]);
  EXPECT_EQ(built.device(built.DeviceOf(down.upper)).name, FabricLearner::kUnplacedDevice);
}

// A gray link eats the probes that would cross it: the trace goes silent (or
// the tracer infers the destination right after the last answer).
TEST_F(LearnedFabricTest, ATraceCutShortIsContinuedWhereTheGraphLeavesOneWay) {
  const Topology truth = testing::Generated({.hosts = 4, .rails = 4, .spines = 4});
  LearnFrom(truth, 4, 4);
  const Topology graph = learner_.Build();
  const std::size_t merges = learner_.stats().merges;
  const Ipv4 src = NicIp(truth, 3, 1);
  const Ipv4 dst = NicIp(truth, 3, 2);
  const auto path = EnumerateEcmpPaths(truth, src, dst)[2];
  const std::vector<Hop> whole = Answers(truth, path, src, dst);

  // Gray spine-to-rail link: the spine answers, then silence to the end.
  std::vector<Hop> silent{whole[0], whole[1], std::nullopt, std::nullopt, std::nullopt};
  learner_.Add("h003", src, dst, silent, &graph, &out_);
  EXPECT_TRUE(out_.truncated);
  EXPECT_EQ(out_.status, PathStatus::kOk) << out_.problem;
  EXPECT_EQ(Names(graph, out_.links), Names(truth, path));

  // The same, with the destination inferred after the spine's answer: no
  // switch is tied to the destination's rail switch on that word.
  std::vector<Hop> inferred{whole[0], whole[1], dst};
  for (int i = 0; i < 3; ++i) learner_.Add("h003", src, dst, inferred, &graph, &out_);
  EXPECT_TRUE(out_.truncated);
  EXPECT_EQ(out_.status, PathStatus::kOk) << out_.problem;
  EXPECT_EQ(Names(graph, out_.links), Names(truth, path));
  EXPECT_EQ(learner_.stats().merges, merges);
  EXPECT_EQ(LiveSwitchTiers(learner_.Build()).size(), 8u);

  // Gray rail-to-spine link: only the rail switch answers; any spine fits.
  // The tracer may infer the destination right after it: that is no path
  // through one switch (the NICs are on two rails, and so are their switches).
  for (const std::vector<Hop>& first_only :
       {std::vector<Hop>{whole[0], std::nullopt, std::nullopt, std::nullopt},
        std::vector<Hop>{whole[0], dst}}) {
    learner_.Add("h003", src, dst, first_only, &graph, &out_);
    EXPECT_TRUE(out_.truncated);
    EXPECT_EQ(out_.status, PathStatus::kAmbiguous);
    EXPECT_EQ(out_.links.size(), 4u);
    EXPECT_EQ(out_.links[1], kNone);
  }
  FabricLearner fresh;  // before anything is learned, the rails from the Hellos tell
  Hello(fresh, truth, 3, 4);
  fresh.Add("h003", src, dst, std::vector<Hop>{whole[0], dst}, nullptr, &out_);
  EXPECT_TRUE(out_.truncated);
}

TEST_F(LearnedFabricTest, OneTraceMixingTwoPathsDoesNotJoinTwoSwitches) {
  const Topology truth = testing::Generated({.hosts = 4, .rails = 4, .spines = 4});
  LearnFrom(truth, 4, 4);
  const Ipv4 src = NicIp(truth, 0, 0);
  const Ipv4 dst = NicIp(truth, 0, 1);
  const auto paths = EnumerateEcmpPaths(truth, src, dst);
  const std::vector<Hop> a = Answers(truth, paths[0], src, dst);
  const std::vector<Hop> b = Answers(truth, paths[1], src, dst);
  // Routes changed between TTL 2 and 3: spine of path 0, then the rail switch
  // entered from the spine of path 1.
  const std::vector<Hop> mixed{a[0], a[1], b[2], dst};
  learner_.Add("h000", src, dst, mixed, nullptr, &out_);
  EXPECT_EQ(LiveSwitchTiers(learner_.Build()).size(), 8u);
  EXPECT_NE(learner_.DeviceOf(*a[1]), learner_.DeviceOf(*b[1]));
}

TEST_F(LearnedFabricTest, ATieThatWouldPutBothEndsOfALinkOnOneSwitchIsRefused) {
  const Topology truth = testing::Generated({.hosts = 2, .rails = 2, .spines = 2});
  LearnFrom(truth, 2, 2);
  const Ipv4 src = NicIp(truth, 0, 0);
  const Ipv4 dst = NicIp(truth, 0, 1);
  const auto paths = EnumerateEcmpPaths(truth, src, dst);
  const std::vector<Hop> a = Answers(truth, paths[0], src, dst);  // p0r0, sA, p0r1
  // "sA's ingress, then an answer whose peer is on p0r1": would make sA and p0r1 one.
  const std::vector<Hop> bad{a[0], a[1], a[2]->Peer31(), std::nullopt};
  const auto before = learner_.stats().merges_refused;
  for (int i = 0; i < 2; ++i) learner_.Add("h000", src, dst, bad, nullptr, &out_);
  EXPECT_GT(learner_.stats().merges_refused, before);
  EXPECT_NE(learner_.DeviceOf(*a[1]), learner_.DeviceOf(*a[2]));
}

TEST_F(LearnedFabricTest, TracesThatBreakTheAddressingAreRefused) {
  const Topology truth = testing::Generated({.hosts = 2, .rails = 2, .spines = 2});
  const Ipv4 src = NicIp(truth, 0, 0);
  const Ipv4 dst = NicIp(truth, 0, 1);
  const std::vector<Hop> hops = Answers(truth, EnumerateEcmpPaths(truth, src, dst)[0], src, dst);
  std::vector<Hop> wrong_first = hops;
  wrong_first[0] = Ipv4{wrong_first[0]->value + 2};  // not the NIC's /31 peer
  learner_.Add("h000", src, dst, wrong_first, nullptr, &out_);
  EXPECT_EQ(out_.status, PathStatus::kInconsistent);
  EXPECT_NE(out_.problem.find("/31"), std::string::npos) << out_.problem;
  std::vector<Hop> nic_middle = hops;
  nic_middle[1] = src;  // a host's address in the middle of the path
  learner_.Add("h000", src, dst, nic_middle, nullptr, &out_);
  EXPECT_EQ(out_.status, PathStatus::kInconsistent);
  EXPECT_EQ(learner_.stats().refused, 2u);
  EXPECT_EQ(learner_.link_count(), 2u);  // the NIC links only
  const std::vector<Hop> silent(4);
  learner_.Add("h000", src, dst, silent, nullptr, &out_);
  EXPECT_EQ(out_.status, PathStatus::kInconsistent);
  EXPECT_EQ(out_.problem, "no hop answered");
}

TEST_F(LearnedFabricTest, ExportImportKeepsEveryIdAndName) {
  const Topology truth = testing::Generated({.hosts = 4, .rails = 4, .spines = 4});
  LearnFrom(truth, 4, 4);
  const LearnedFabric state = learner_.Export();
  FabricLearner restored;
  std::string error;
  ASSERT_TRUE(restored.Import(state, &error)) << error;
  const Topology a = learner_.Build();
  const Topology b = restored.Build();
  ASSERT_EQ(a.devices().size(), b.devices().size());
  for (DeviceId d = 0; d < a.devices().size(); ++d) {
    EXPECT_EQ(a.device(d).name, b.device(d).name);
    EXPECT_EQ(a.device(d).tier, b.device(d).tier);
    EXPECT_EQ(a.device(d).rail, b.device(d).rail);
  }
  ASSERT_EQ(a.links().size(), b.links().size());
  for (LinkId l = 0; l < a.links().size(); ++l) EXPECT_EQ(a.Describe(l), b.Describe(l));
  // It goes on learning where it stopped: a known trace changes nothing.
  const std::uint64_t version = restored.version();
  const Ipv4 src = NicIp(truth, 0, 0);
  const Ipv4 dst = NicIp(truth, 0, 1);
  restored.Add("h000", src, dst, Answers(truth, EnumerateEcmpPaths(truth, src, dst)[0], src, dst),
               &b, &out_);
  EXPECT_EQ(out_.status, PathStatus::kOk);
  EXPECT_EQ(restored.version(), version);

  LearnedFabric damaged = state;
  damaged.ports[0].device = static_cast<DeviceId>(damaged.devices.size());
  EXPECT_FALSE(restored.Import(damaged, &error));
  EXPECT_NE(error.find("unknown device"), std::string::npos) << error;
  EXPECT_EQ(restored.link_count(), 0u);
}

// 2,000 made-up traces once grew a learned fabric from 5 devices to 4,006,
// kept across restarts: the learner founds at most max_switches switches.
TEST(learned_fabric_bound, TracesNamingNewAddressesPastTheCapAreRefused) {
  const Topology truth = testing::Generated({.hosts = 4, .rails = 4, .spines = 4});
  FabricLearner learner(64);  // the truth's 8 switches (and parts of them) fit
  for (int h = 0; h < 4; ++h) Hello(learner, truth, h, 4);
  ResolvedPath out;
  for (int h = 0; h < 4; ++h) {
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b) {
        if (a == b) continue;
        const Ipv4 src = NicIp(truth, h, a);
        const Ipv4 dst = NicIp(truth, h, b);
        for (const auto& path : EnumerateEcmpPaths(truth, src, dst)) {
          learner.Add(HostName(truth, h), src, dst, Answers(truth, path, src, dst), nullptr, &out);
        }
      }
    }
  }
  EXPECT_EQ(learner.stats().refused_full, 0u);
  EXPECT_LE(learner.switch_count(), 64u);

  // Made-up hops from a real source: a /31 peer first, then addresses of no switch.
  const Ipv4 src = NicIp(truth, 0, 0);
  const Ipv4 dst = NicIp(truth, 0, 1);
  for (std::uint32_t i = 0; i < 50; ++i) {
    const std::vector<Hop> forged = {src.Peer31(), Ipv4{0x0A630000u + 2 * i},
                                     Ipv4{0x0A640000u + 2 * i}, dst};
    learner.Add(HostName(truth, 0), src, dst, forged, nullptr, &out);
  }
  EXPECT_LE(learner.switch_count(), 64u);
  EXPECT_GE(learner.stats().refused_full, 1u);
  EXPECT_NE(out.problem.find("holds its limit of 64 switches"), std::string::npos) << out.problem;
}

}  // namespace
}  // namespace hostmesh::topology
