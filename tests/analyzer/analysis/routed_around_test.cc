// Links and switches routing avoids (route_watch.h): a spine whose every
// up-link is withdrawn is named as the switch, not as its links; a single
// withdrawn link is a culprit of the ranking too; and both are known as
// avoided before they are named, so stale paths do not resolve an incident.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "tests/analyzer/analysis/fleet_test_base.h"

namespace hostmesh::analysis::testing {
namespace {

class RoutedAroundTest : public FleetTest {
 protected:
  using RailSpinePair = std::pair<std::uint32_t, std::uint32_t>;

  // Fresh 5-tuples (ports from 16 on, `ports` per NIC pair) of every host,
  // traced as routing now sends them: over no (rail, spine) link in `gone`,
  // either way.
  void TraceFresh(const std::set<RailSpinePair>& gone, std::uint32_t ports) {
    const FleetShape& shape = fleet_.shape();
    for (HostId h = 0; h < shape.hosts; ++h) {
      for (NicId a = 0; a < shape.rails; ++a) {
        for (NicId b = 0; b < shape.rails; ++b) {
          if (a == b) continue;
          std::vector<std::uint32_t> spines;
          for (std::uint32_t s = 0; s < shape.spines; ++s) {
            if (!gone.count({a, s}) && !gone.count({b, s})) spines.push_back(s);
          }
          for (std::uint32_t i = 0; i < ports; ++i) {
            const std::uint16_t port = fleet_.Port(shape.ports + i);
            const std::uint32_t s = spines[fleet_.SpineOf(h, a, b, port) % spines.size()];
            analysis_.AddPath(PathRecord{h,
                                         a,
                                         b,
                                         port,
                                         4791,
                                         kT0,
                                         {fleet_.NicLink(h, a), fleet_.RailSpine(a, s),
                                          fleet_.RailSpine(b, s), fleet_.NicLink(h, b)}});
          }
        }
      }
    }
  }

  // Fresh 5-tuples as routing sends them with `spine` dead: over none of its links.
  void TraceWithoutSpine(std::uint32_t spine, std::uint32_t ports) {
    std::set<RailSpinePair> gone;
    for (std::uint32_t rail = 0; rail < fleet_.shape().rails; ++rail) gone.insert({rail, spine});
    TraceFresh(gone, ports);
  }
  // `spine` named down as the switch, first of the switches, and no link
  // named or ranked a culprit beside it.
  void ExpectDownSpine(const WindowReport& r, std::uint32_t spine) {
    const SwitchRank* named = Switch(r, fleet_.Spine(spine));
    ASSERT_NE(named, nullptr);
    EXPECT_TRUE(named->culprit);
    EXPECT_TRUE(named->routed_around);
    EXPECT_EQ(named->loss, 1.0);
    EXPECT_GT(named->raw_confidence, 0.99);
    EXPECT_EQ(r.loss.culprit_switches, std::vector<SwitchId>{fleet_.Spine(spine)});
    EXPECT_EQ(r.loss.switches.front().id, fleet_.Spine(spine)) << "culprits first";
    EXPECT_TRUE(BlamedLinks(r.loss).empty());
    for (const LinkRank& l : r.loss.links) EXPECT_FALSE(l.culprit) << "link " << l.link;
  }

  static const SwitchRank* Switch(const WindowReport& r, SwitchId id) {
    for (const SwitchRank& s : r.loss.switches) {
      if (s.id == id) return &s;
    }
    return nullptr;
  }
  static const LinkRank* Rank(const WindowReport& r, LinkId link) {
    for (const LinkRank& l : r.loss.links) {
      if (l.link == link) return &l;
    }
    return nullptr;
  }
};

TEST_F(RoutedAroundTest, ASpineWithEveryUplinkWithdrawnIsNamedAsTheSwitchNotItsLinks) {
  TraceWithoutSpine(2, 8);  // 8 hosts x 3 destinations x 8 ports: 192 draws per rail switch
  const WindowReport r = RunWindow(0, {});
  ExpectDownSpine(r, 2);
  EXPECT_EQ(r.coverage.avoided_switches, std::vector<SwitchId>{fleet_.Spine(2)});
  EXPECT_EQ(r.coverage.avoided.size(), 4u);
}

TEST_F(RoutedAroundTest, OneWithdrawnUplinkIsALinkCulpritAndRankedAsOne) {
  TraceFresh({{0, 1}}, 8);
  const WindowReport r = RunWindow(0, {});
  const LinkId down = fleet_.RailSpine(0, 1);
  ASSERT_EQ(BlamedLinks(r.loss), std::vector<LinkId>{down});
  EXPECT_TRUE(r.loss.culprits.front().routed_around);
  EXPECT_TRUE(r.loss.culprit_switches.empty());
  // Its stale paths' probes all arrived, so nothing ranked it before it was named.
  const LinkRank* rank = Rank(r, down);
  ASSERT_NE(rank, nullptr);
  EXPECT_TRUE(rank->culprit);
  EXPECT_EQ(rank->loss, 1.0);
  EXPECT_EQ(r.loss.links.front().link, down) << "culprits first";
  EXPECT_TRUE(r.coverage.avoided_switches.empty());
  EXPECT_TRUE(std::binary_search(r.coverage.avoided.begin(), r.coverage.avoided.end(), down));
}

// A spine named by its loss whose links routing then withdraws one by one
// (the e2e's dead spine): the first withdrawn link is the switch's, not a
// culprit and an incident of its own beside it.
TEST_F(RoutedAroundTest, AWithdrawnLinkOfASwitchNamedByItsLossIsTheSwitchs) {
  const std::uint32_t spine = 1;
  Faults faults;
  for (std::uint32_t rail = 0; rail < fleet_.shape().rails; ++rail) {
    faults.link_loss[fleet_.RailSpine(rail, spine)] = 0.03;
  }
  int w = 0;
  for (; w < 10; ++w) {
    const WindowReport r = RunWindow(w, faults);
    if (r.loss.culprit_switches == std::vector<SwitchId>{fleet_.Spine(spine)}) break;
  }
  ASSERT_LT(w, 10) << "a spine losing 3% on every link named as the switch";
  TraceFresh({{0, spine}}, 8);
  const WindowReport r = RunWindow(w + 1, faults);
  EXPECT_EQ(r.loss.culprit_switches, std::vector<SwitchId>{fleet_.Spine(spine)});
  EXPECT_TRUE(BlamedLinks(r.loss).empty()) << "a withdrawn link named beside its switch";
}

// A dead spine rehashes its 5-tuples at every rail switch at once: 72 draws
// at each leave every link at 0.75^72 = 1e-9, none withdrawn alone (1e-12),
// but two of them still in use would have been missed with 1e-18.
TEST_F(RoutedAroundTest, ASpineEveryRailSwitchAvoidsIsDownBeforeAnyLinkIsWithdrawn) {
  TraceWithoutSpine(2, 3);  // 8 hosts x 3 destinations x 3 ports
  ExpectDownSpine(RunWindow(0, {}), 2);
}

// Two cables into one spine avoided as far (1e-9 each), the spine's other
// links in use: two links not yet withdrawn, and no switch.
TEST_F(RoutedAroundTest, TwoAvoidedLinksOfASpineInUseAreNotTheSpine) {
  TraceFresh({{0, 2}, {1, 2}}, 3);
  const WindowReport r = RunWindow(0, {});
  EXPECT_TRUE(r.loss.culprit_switches.empty());
  EXPECT_TRUE(BlamedLinks(r.loss).empty());
  EXPECT_EQ(r.coverage.avoided,
            (std::vector<LinkId>{fleet_.RailSpine(0, 2), fleet_.RailSpine(1, 2)}));
}

TEST_F(RoutedAroundTest, ALinkIsAvoidedBeforeItIsWithdrawn) {
  // 48 draws per rail switch: past route_avoided_alpha (0.75^48 = 1e-6 <
  // 1e-3), far from withdrawal (0.75^97 = 1e-12).
  TraceFresh({{0, 1}}, 2);
  const WindowReport r = RunWindow(0, {});
  EXPECT_TRUE(BlamedLinks(r.loss).empty());
  EXPECT_EQ(r.coverage.avoided, std::vector<LinkId>{fleet_.RailSpine(0, 1)});
}

}  // namespace
}  // namespace hostmesh::analysis::testing
