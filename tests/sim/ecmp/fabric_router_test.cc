#include "sim/ecmp/fabric_router.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "topology/generator.h"
#include "topology/inventory_loader.h"

namespace hostmesh::sim::ecmp {
namespace {

using topology::FabricShape;
using topology::Tier;

constexpr std::uint16_t kDport = 4791;

struct Fabric {
  explicit Fabric(const FabricShape& shape)
      : topo(topology::BuildTopology(topology::GenerateInventory(shape))) {
    for (LinkId l = 0; l < topo.links().size(); ++l) by_name[topo.link(l).name] = l;
  }
  LinkId Link(const std::string& name) const { return by_name.at(name); }
  Ipv4 Nic(int host, int rail) const {
    const topology::Device& d = topo.device(*topo.FindDevice(HostName(host)));
    return topo.interface(d.interfaces[static_cast<std::size_t>(rail)]).ip;
  }
  static std::string HostName(int h) {
    char name[16];
    std::snprintf(name, sizeof name, "h%03d", h);
    return name;
  }
  std::vector<std::string> Names(const PathLinks& path, std::size_t n) const {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) names.push_back(topo.link(path[i]).name);
    return names;
  }
  // The device both links touch (kNone if none): consecutive links must share one.
  DeviceId Shared(LinkId a, LinkId b) const {
    const topology::Link& x = topo.link(a);
    const topology::Link& y = topo.link(b);
    for (const InterfaceId i : {x.lower, x.upper}) {
      for (const InterfaceId j : {y.lower, y.upper}) {
        if (topo.DeviceOf(i) == topo.DeviceOf(j)) return topo.DeviceOf(i);
      }
    }
    return topology::kNone;
  }
  // The tiers of the devices the path enters, in order.
  std::vector<Tier> Tiers(const PathLinks& path, std::size_t n) const {
    std::vector<Tier> tiers;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      const DeviceId d = Shared(path[i], path[i + 1]);
      tiers.push_back(d == topology::kNone ? Tier::kHost : topo.TierOf(d));
    }
    return tiers;
  }
  topology::Topology topo;
  std::unordered_map<std::string, LinkId> by_name;
};

const FabricShape k8x4x4{8, 4, 4};

TEST(FabricRouter, SameRailSwitchGoesStraightAcross) {
  const Fabric f(k8x4x4);
  const FabricRouter router(f.topo, 1);
  PathLinks path{};
  const std::size_t n = router.Route(f.Nic(0, 0), f.Nic(1, 0), 50000, kDport, nullptr, path);
  EXPECT_EQ(f.Names(path, n), (std::vector<std::string>{"h000.nic0-p0r0", "h001.nic0-p0r0"}));
}

TEST(FabricRouter, TwoTierPathsClimbToOneSpineAndSpreadOverAll) {
  const Fabric f(k8x4x4);
  const FabricRouter router(f.topo, 1);
  std::map<std::string, int> uplinks;
  for (std::uint16_t sport = 49152; sport < 49152 + 1024; ++sport) {
    PathLinks path{};
    const std::size_t n = router.Route(f.Nic(2, 0), f.Nic(2, 3), sport, kDport, nullptr, path);
    ASSERT_EQ(n, 4U);
    EXPECT_EQ(f.Tiers(path, n), (std::vector<Tier>{Tier::kRail, Tier::kSpine, Tier::kRail}));
    EXPECT_EQ(path[0], f.Link("h002.nic0-p0r0"));
    EXPECT_EQ(path[3], f.Link("h002.nic3-p0r3"));
    ++uplinks[f.topo.link(path[1]).name];
  }
  ASSERT_EQ(uplinks.size(), 4U);
  for (const auto& [name, count] : uplinks) {
    EXPECT_GT(count, 200) << name;
    EXPECT_LT(count, 320) << name;
  }
}

TEST(FabricRouter, RefusesWhatIsNotAFabricPath) {
  const Fabric f(k8x4x4);
  const FabricRouter router(f.topo, 1);
  PathLinks path{};
  EXPECT_EQ(router.Route(f.Nic(0, 0), f.Nic(0, 0), 50000, kDport, nullptr, path), 0U);
  const Ipv4 switch_port = *topology::ParseIpv4("198.18.0.0");  // p0r0's port to h000
  EXPECT_EQ(router.FindNic(switch_port), topology::kNone);
  EXPECT_EQ(router.Route(switch_port, f.Nic(0, 1), 50000, kDport, nullptr, path), 0U);
  EXPECT_EQ(
      router.Route(f.Nic(0, 1), *topology::ParseIpv4("10.0.0.1"), 50000, kDport, nullptr, path),
      0U);
  EXPECT_EQ(router.nic_count(), 32U);
  EXPECT_EQ(router.NicAddress(router.FindNic(f.Nic(3, 2))), f.Nic(3, 2));
}

TEST(FabricRouter, OnlySwitchesWithAChoiceHashSoOnlyTheirSeedsMatter) {
  const Fabric f(k8x4x4);
  const FabricRouter uniform(f.topo, 1);
  std::vector<std::uint32_t> spines_differ(f.topo.devices().size(), 1);
  std::vector<std::uint32_t> rails_differ(f.topo.devices().size(), 1);
  for (DeviceId d = 0; d < f.topo.devices().size(); ++d) {
    if (f.topo.TierOf(d) == Tier::kSpine) spines_differ[d] = 99;
    if (f.topo.TierOf(d) == Tier::kRail) rails_differ[d] = 99;
  }
  const FabricRouter spines(f.topo, spines_differ);
  const FabricRouter rails(f.topo, rails_differ);
  int moved = 0;
  for (std::uint16_t sport = 49152; sport < 49152 + 256; ++sport) {
    PathLinks a{}, b{}, c{};
    const std::size_t n = uniform.Route(f.Nic(1, 1), f.Nic(5, 2), sport, kDport, nullptr, a);
    ASSERT_EQ(spines.Route(f.Nic(1, 1), f.Nic(5, 2), sport, kDport, nullptr, b), n);
    EXPECT_EQ(f.Names(a, n), f.Names(b, n));  // spines have one route per rail switch
    ASSERT_EQ(rails.Route(f.Nic(1, 1), f.Nic(5, 2), sport, kDport, nullptr, c), n);
    moved += f.Names(a, n) != f.Names(c, n) ? 1 : 0;
  }
  EXPECT_GT(moved, 100);  // about 3/4 of the flows change spine
}

TEST(FabricRouter, DeadUplinkLeavesTheMultipathAndTheRestShareItsFlows) {
  const Fabric f(k8x4x4);
  const FabricRouter router(f.topo, 1);
  const DeadLinks dead = router.Reconverge(std::vector<LinkId>{f.Link("p0r0-s01")});
  EXPECT_TRUE(dead.dead(f.Link("p0r0-s01")));
  EXPECT_EQ(dead.count(), 1U);
  std::map<std::string, int> uplinks;
  for (std::uint16_t sport = 49152; sport < 49152 + 900; ++sport) {
    PathLinks path{};
    ASSERT_EQ(router.Route(f.Nic(4, 0), f.Nic(4, 1), sport, kDport, &dead, path), 4U);
    ++uplinks[f.topo.link(path[1]).name];
  }
  EXPECT_EQ(uplinks.count("p0r0-s01"), 0U);
  ASSERT_EQ(uplinks.size(), 3U);
  for (const auto& [name, count] : uplinks) EXPECT_GT(count, 240) << name;
}

// The testbed routes statically: a spine whose link down to p0r1 is dead would
// still be chosen by the other rail switches. After reconvergence no switch
// sends p0r1's traffic to s02 any more; everything else still may.
TEST(FabricRouter, DeadDownlinkIsAvoidedFromEveryRailSwitchAfterReconvergence) {
  const Fabric f(k8x4x4);
  const FabricRouter router(f.topo, 1);
  const DeadLinks dead = router.Reconverge(std::vector<LinkId>{f.Link("p0r1-s02")});
  std::set<std::string> to_p0r1, elsewhere;
  for (std::uint16_t sport = 49152; sport < 49152 + 256; ++sport) {
    for (const int rail : {0, 2, 3}) {
      PathLinks path{};
      ASSERT_EQ(router.Route(f.Nic(6, rail), f.Nic(3, 1), sport, kDport, &dead, path), 4U);
      to_p0r1.insert(f.topo.link(path[2]).name);
      ASSERT_EQ(router.Route(f.Nic(6, 1), f.Nic(3, rail), sport, kDport, &dead, path), 4U);
      elsewhere.insert(f.topo.link(path[1]).name);
    }
  }
  EXPECT_EQ(to_p0r1, (std::set<std::string>{"p0r1-s00", "p0r1-s01", "p0r1-s03"}));
  // p0r1's own uplink to s02 is the dead link: gone for its outbound flows too.
  EXPECT_EQ(elsewhere, (std::set<std::string>{"p0r1-s00", "p0r1-s01", "p0r1-s03"}));
  PathLinks path{};
  std::set<std::string> other_rails;
  for (std::uint16_t sport = 49152; sport < 49152 + 256; ++sport) {
    ASSERT_EQ(router.Route(f.Nic(6, 0), f.Nic(3, 2), sport, kDport, &dead, path), 4U);
    other_rails.insert(f.topo.link(path[1]).name);
  }
  EXPECT_TRUE(other_rails.count("p0r0-s02"));  // s02 still serves p0r2
}

TEST(FabricRouter, DeadNicLinkOrEveryUplinkMakesFlowsUnroutable) {
  const Fabric f(k8x4x4);
  const FabricRouter router(f.topo, 1);
  PathLinks path{};
  const DeadLinks nic = router.Reconverge(std::vector<LinkId>{f.Link("h003.nic2-p0r2")});
  EXPECT_EQ(router.Route(f.Nic(3, 2), f.Nic(3, 0), 50000, kDport, &nic, path), 0U);
  EXPECT_EQ(router.Route(f.Nic(3, 0), f.Nic(3, 2), 50000, kDport, &nic, path), 0U);
  EXPECT_EQ(router.Route(f.Nic(3, 0), f.Nic(3, 1), 50000, kDport, &nic, path), 4U);

  std::vector<LinkId> uplinks;
  for (const char* name : {"p0r2-s00", "p0r2-s01", "p0r2-s02", "p0r2-s03"}) {
    uplinks.push_back(f.Link(name));
  }
  const DeadLinks cut = router.Reconverge(uplinks);
  EXPECT_EQ(router.Route(f.Nic(3, 2), f.Nic(3, 0), 50000, kDport, &cut, path), 0U);
  EXPECT_EQ(router.Route(f.Nic(3, 0), f.Nic(3, 2), 50000, kDport, &cut, path), 0U);
  EXPECT_EQ(router.Route(f.Nic(3, 2), f.Nic(5, 2), 50000, kDport, &cut, path), 2U);
  EXPECT_THROW(router.Reconverge(std::vector<LinkId>{9999}), std::invalid_argument);
}

TEST(FabricRouter, CrossPodPathsTurnAtTheSpine) {
  const Fabric f(FabricShape{8, 4, 3, 2});
  const FabricRouter router(f.topo, 1);
  PathLinks path{};
  // h001 is in pod 0, h006 in pod 1: same rail, different rail switches.
  const std::size_t n = router.Route(f.Nic(1, 2), f.Nic(6, 2), 50000, kDport, nullptr, path);
  ASSERT_EQ(n, 4U);
  EXPECT_EQ(f.Tiers(path, n), (std::vector<Tier>{Tier::kRail, Tier::kSpine, Tier::kRail}));
  EXPECT_EQ(f.topo.link(path[1]).name.substr(0, 5), "p0r2-");
  EXPECT_EQ(f.topo.link(path[2]).name.substr(0, 5), "p1r2-");
}

const FabricShape k3Tier{8, 4, 3, 2, 3, 3};  // 2 pods, 3 aggregation switches per rail

TEST(FabricRouter, ThreeTierPathsGoUpToASpineAndBackDown) {
  const Fabric f(k3Tier);
  std::vector<std::uint32_t> seeds(f.topo.devices().size());
  for (DeviceId d = 0; d < seeds.size(); ++d) seeds[d] = 1000 + d;  // no polarization
  const FabricRouter router(f.topo, seeds);
  std::set<std::string> middles;
  for (std::uint16_t sport = 49152; sport < 49152 + 512; ++sport) {
    PathLinks path{};
    const std::size_t n = router.Route(f.Nic(1, 0), f.Nic(6, 3), sport, kDport, nullptr, path);
    ASSERT_EQ(n, 6U);
    EXPECT_EQ(f.Tiers(path, n), (std::vector<Tier>{Tier::kRail, Tier::kAggregation, Tier::kSpine,
                                                   Tier::kAggregation, Tier::kRail}));
    middles.insert(f.topo.link(path[1]).name + " " + f.topo.link(path[2]).name + " " +
                   f.topo.link(path[3]).name);
  }
  EXPECT_EQ(middles.size(), 27U);  // A x S x A paths, all used
  // Same rail, other pod: up to an aggregation switch of the rail and down.
  PathLinks path{};
  const std::size_t n = router.Route(f.Nic(1, 2), f.Nic(6, 2), 50000, kDport, nullptr, path);
  ASSERT_EQ(n, 4U);
  EXPECT_EQ(f.Tiers(path, n), (std::vector<Tier>{Tier::kRail, Tier::kAggregation, Tier::kRail}));
}

// With one seed on every switch each hop hashes the same value: with as many
// aggregation switches as spines, the spine index always equals the
// aggregation index (hash polarization, as real Linux switches would show).
TEST(FabricRouter, OneSeedEverywherePolarizesThreeTiers) {
  const Fabric f(k3Tier);
  const FabricRouter router(f.topo, 1);
  std::set<std::string> middles;
  for (std::uint16_t sport = 49152; sport < 49152 + 512; ++sport) {
    PathLinks path{};
    ASSERT_EQ(router.Route(f.Nic(1, 0), f.Nic(6, 3), sport, kDport, nullptr, path), 6U);
    const std::string up = f.topo.link(path[2]).name;  // "r0aXX-sYY"
    EXPECT_EQ(up.substr(3, 2), up.substr(7, 2)) << up;
    middles.insert(up);
  }
  EXPECT_EQ(middles.size(), 3U);
}

TEST(FabricRouter, ThreeTierDeadLinksAreRoutedAround) {
  const Fabric f(k3Tier);
  const FabricRouter router(f.topo, 7);
  // r3a01 loses its spine s02, and pod 1's rail 3 switch loses r3a00.
  const DeadLinks dead =
      router.Reconverge(std::vector<LinkId>{f.Link("r3a01-s02"), f.Link("p1r3-r3a00")});
  std::set<std::string> used;
  for (std::uint16_t sport = 49152; sport < 49152 + 512; ++sport) {
    PathLinks path{};
    const std::size_t n = router.Route(f.Nic(1, 0), f.Nic(6, 3), sport, kDport, &dead, path);
    ASSERT_EQ(n, 6U);
    for (std::size_t i = 0; i < n; ++i) used.insert(f.topo.link(path[i]).name);
  }
  EXPECT_EQ(used.count("r3a01-s02"), 0U);
  EXPECT_EQ(used.count("p1r3-r3a00"), 0U);
  EXPECT_EQ(used.count("r3a00-s00"), 0U);  // r3a00 cannot reach p1r3 any more
  EXPECT_EQ(used.count("r3a01-s00"), 1U);
  EXPECT_EQ(used.count("r3a02-s02"), 1U);
}

// The README's truth-path example: a 2x2x2 fabric, h001 nic0 -> nic1 via s00.
TEST(FabricRouter, HopAddressesAreTheIngressInterfaces) {
  const Fabric f(FabricShape{2, 2, 2});
  const FabricRouter router(f.topo, 1);
  const std::vector<LinkId> path = {f.Link("h001.nic0-p0r0"), f.Link("p0r0-s00"),
                                    f.Link("p0r1-s00"), f.Link("h001.nic1-p0r1")};
  std::vector<Ipv4> hops(path.size());
  ASSERT_EQ(router.HopAddresses(f.Nic(1, 0), path, hops), 4U);
  std::vector<std::string> text;
  for (const Ipv4 ip : hops) text.push_back(ip.ToString());
  EXPECT_EQ(text,
            (std::vector<std::string>{"198.18.0.2", "198.19.0.1", "198.19.0.4", "198.18.0.7"}));
}

TEST(FabricRouter, RejectsTooFewSeeds) {
  const Fabric f(k8x4x4);
  EXPECT_THROW(FabricRouter(f.topo, std::vector<std::uint32_t>(3, 1)), std::invalid_argument);
}

}  // namespace
}  // namespace hostmesh::sim::ecmp
