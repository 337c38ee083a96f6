// RNIC-versus-network classification and link localization on a synthetic
// 8 x 4 x 4 fleet: the paper's cases, where the paper breaks, and beyond.

#include <gtest/gtest.h>

#include "tests/analyzer/analysis/fleet_test_base.h"

namespace hostmesh::analysis::testing {
namespace {

using LossTest = FleetTest;

TEST_F(LossTest, FullDropOnRailToSpineLinkBlamesTheLinkNotTheRnics) {
  const LinkId bad = fleet_.RailSpine(1, 2);
  const auto r = RunWindow(0, Faults{.link_loss = {{bad, 1.0}}});

  ASSERT_FALSE(r.loss.links.empty());
  EXPECT_EQ(r.loss.links.front().link, bad);
  EXPECT_EQ(BlamedLinks(r.loss), std::vector<LinkId>{bad});
  EXPECT_EQ(AnomalousRnics(r), 0);
  EXPECT_EQ(r.sla.cluster.rnic_drops, 0u);
  EXPECT_GT(r.sla.cluster.network_drops, 0u);
  // Where the paper breaks: ~1/4 of the probes to every rail-1 NIC time out,
  // so its 10% rule alone calls all eight anomalous; then all timeouts are RNIC
  // problems and Algorithm 1 has no abnormal path left to vote with.
  for (HostId h = 0; h < 8; ++h) EXPECT_TRUE(Rnic(r, h, 1)->paper_anomalous);
  EXPECT_TRUE(r.loss.baseline.empty());
}

TEST_F(LossTest, NicDownIsAnRnicProblemAndNoLinkIsBlamed) {
  const auto r = RunWindow(0, Faults{.nic_loss = {{{3, 2}, 1.0}}});

  const auto* nic = Rnic(r, 3, 2);
  ASSERT_NE(nic, nullptr);
  EXPECT_TRUE(nic->anomalous);
  EXPECT_EQ(nic->state, RnicState::kDown);
  EXPECT_TRUE(nic->paper_anomalous);
  EXPECT_EQ(AnomalousRnics(r), 1);
  EXPECT_TRUE(BlamedLinks(r.loss).empty());
  EXPECT_EQ(r.sla.cluster.network_drops, 0u);
  EXPECT_EQ(r.sla.cluster.rnic_drops, r.sla.cluster.timeouts);
}

TEST_F(LossTest, LinkFaultAndNicDownAtOnceOnTheSameRail) {
  const LinkId bad = fleet_.RailSpine(2, 1);
  const auto r = RunWindow(0, Faults{.link_loss = {{bad, 1.0}}, .nic_loss = {{{3, 2}, 1.0}}});

  EXPECT_EQ(BlamedLinks(r.loss), std::vector<LinkId>{bad});
  EXPECT_EQ(r.loss.links.front().link, bad);
  EXPECT_TRUE(Rnic(r, 3, 2)->anomalous);
  EXPECT_EQ(AnomalousRnics(r), 1);
}

TEST_F(LossTest, FivePercentLossIsRankedFirst) {
  const LinkId bad = fleet_.RailSpine(0, 3);
  const auto r = RunWindow(0, Faults{.link_loss = {{bad, 0.05}}});

  ASSERT_FALSE(r.loss.links.empty());
  EXPECT_EQ(r.loss.links.front().link, bad);
  EXPECT_EQ(BlamedLinks(r.loss), std::vector<LinkId>{bad});
  EXPECT_NEAR(r.loss.culprits.front().loss, 0.05, 0.03);
  EXPECT_EQ(AnomalousRnics(r), 0);
}

TEST_F(LossTest, SourcePortBlackholeOnOneLinkIsFound) {
  const LinkId bad = fleet_.RailSpine(3, 0);
  Faults f;
  for (std::uint32_t i : {3u, 9u}) f.blackholes.insert({bad, fleet_.Port(i)});  // a bad ACL
  const auto r = RunWindow(0, f);

  EXPECT_EQ(BlamedLinks(r.loss), std::vector<LinkId>{bad});
  EXPECT_EQ(AnomalousRnics(r), 0);
  ASSERT_FALSE(r.loss.culprits.empty());
  EXPECT_FALSE(r.loss.culprits.front().example_paths.empty());
}

TEST_F(LossTest, TwoConcurrentLinkFaults) {
  const LinkId a = fleet_.RailSpine(0, 0), b = fleet_.RailSpine(3, 2);
  const auto r = RunWindow(0, Faults{.link_loss = {{a, 1.0}, {b, 0.3}}});

  auto blamed = BlamedLinks(r.loss);
  std::sort(blamed.begin(), blamed.end());
  EXPECT_EQ(blamed, (std::vector<LinkId>{a, b}));
  EXPECT_EQ(AnomalousRnics(r), 0);
}

TEST_F(LossTest, HealthyFleetBlamesNothing) {
  const auto r = RunWindow(0, Faults{});
  EXPECT_TRUE(r.loss.culprits.empty());
  EXPECT_TRUE(r.latency.culprits.empty());
  EXPECT_TRUE(r.processing_flags.empty());
  EXPECT_EQ(r.sla.cluster.timeouts, 0u);
  EXPECT_EQ(r.coverage.never_crossed.size(), 0u);
  EXPECT_EQ(r.coverage.crossed.size(), fleet_.link_count());
}

// Half the 5-tuples untraced: their failures only name two RNICs, yet a link
// fault must not spill onto the RNICs of its rail.
TEST(LossUntraced, LinkFaultWithHalfThePathsUnknown) {
  SyntheticFleet fleet(FleetShape{});
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  const std::int64_t t0 = FleetTest::kT0;
  fleet.TracePaths(analysis, t0, 0.5);
  const LinkId bad = fleet.RailSpine(1, 1);
  fleet.ProbeInto(analysis, t0, Faults{.link_loss = {{bad, 1.0}}, .nic_loss = {{{5, 3}, 1.0}}});
  const auto reports = analysis.Advance(t0 + 30 * FleetTest::kSecond);
  ASSERT_EQ(reports.size(), 1u);
  const auto& r = reports.front();

  EXPECT_GT(r.coverage.untraced_probes, r.coverage.traced_probes / 3);
  std::vector<LinkId> blamed;
  for (const auto& c : r.loss.culprits) {
    if (c.component.kind == Component::Kind::kLink) blamed.push_back(c.component.link);
  }
  EXPECT_EQ(blamed, std::vector<LinkId>{bad});
  int anomalous = 0;
  for (const auto& s : r.rnics) {
    if (s.anomalous) {
      ++anomalous;
      EXPECT_EQ(s.host, 5u);
      EXPECT_EQ(s.nic, 3u);
    }
  }
  EXPECT_EQ(anomalous, 1);
}

TEST_F(LossTest, AnomalousRnicStaysStickyForSixtySeconds) {
  RunWindow(0, Faults{.nic_loss = {{{1, 1}, 1.0}}});
  const auto healed = RunWindow(1, Faults{});  // within 60 s of the fault's window
  EXPECT_TRUE(Rnic(healed, 1, 1)->anomalous);
  RunWindow(2, Faults{});
  EXPECT_TRUE(Rnic(RunWindow(3, Faults{}), 1, 1)->anomalous);
  const auto later = RunWindow(4, Faults{});  // starts 60 s after the fault's window ended
  EXPECT_FALSE(Rnic(later, 1, 1)->anomalous);
}

TEST_F(LossTest, PaperBaselineVotesStayAvailable) {
  const LinkId bad = fleet_.RailSpine(2, 3);
  const auto r = RunWindow(0, Faults{.link_loss = {{bad, 0.05}}});
  ASSERT_FALSE(r.loss.baseline.empty());
  // Algorithm 1 ties the faulty link with the NIC links of its failed paths or
  // not; it must at least give the faulty link the most votes among fabric links.
  LinkId top_fabric = kUnknown;
  for (const auto& l : r.loss.baseline) {
    if (l.link >= fleet_.RailSpine(0, 0)) {
      top_fabric = l.link;
      break;
    }
  }
  EXPECT_EQ(top_fabric, bad);
  ASSERT_FALSE(r.loss.switches.empty());
}

// The tracer reaches a 5-tuple after its first probes: paths reported while
// the window is still open place those probes when it is judged.
TEST(LossUntraced, PathsReportedAfterTheProbesStillPlaceThem) {
  SyntheticFleet fleet(FleetShape{});
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  const std::int64_t t0 = FleetTest::kT0;
  const LinkId bad = fleet.RailSpine(2, 0);
  fleet.ProbeInto(analysis, t0, Faults{.link_loss = {{bad, 1.0}}});
  fleet.TracePaths(analysis, t0 + 25 * FleetTest::kSecond);  // after the window, within grace
  const auto reports = analysis.Advance(t0 + 30 * FleetTest::kSecond);
  ASSERT_EQ(reports.size(), 1u);
  const auto& r = reports.front();

  EXPECT_EQ(r.coverage.untraced_probes, 0u);
  EXPECT_EQ(analysis.stats().resolved_late, r.coverage.traced_probes);
  ASSERT_FALSE(r.loss.culprits.empty());
  EXPECT_EQ(r.loss.culprits.front().component.link, bad);
  EXPECT_TRUE(std::none_of(r.rnics.begin(), r.rnics.end(),
                           [](const RnicStatus& s) { return s.anomalous; }));
}

// A path reported after its window was judged changes nothing of that window,
// and the next window's probes of the 5-tuple are traced from the start.
TEST(LossUntraced, PathsAfterTheWindowApplyToLaterWindowsOnly) {
  SyntheticFleet fleet(FleetShape{});
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  const std::int64_t t0 = FleetTest::kT0;
  const std::int64_t s = FleetTest::kSecond;
  fleet.ProbeInto(analysis, t0, Faults{});
  const auto first = analysis.Advance(t0 + 30 * s);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first.front().coverage.traced_probes, 0u);
  fleet.TracePaths(analysis, t0 + 30 * s);
  fleet.ProbeInto(analysis, t0 + 20 * s, Faults{});
  const auto second = analysis.Advance(t0 + 50 * s);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second.front().coverage.untraced_probes, 0u);
  EXPECT_EQ(analysis.stats().resolved_late, 0u);
}

}  // namespace
}  // namespace hostmesh::analysis::testing
