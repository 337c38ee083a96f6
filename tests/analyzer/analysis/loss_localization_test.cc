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

// An RNIC whose port goes down `down_from` into window `index`: the probes it
// sends from then on fail to leave it (send_failed), those to it time out;
// with `sends_fail` false only the latter (its sends fine, its receive side dead).
WindowReport RunNicDown(SyntheticFleet& fleet, Analysis& analysis, int index, HostId host,
                        NicId nic, std::int64_t down_from, bool sends_fail = true) {
  const std::int64_t start = FleetTest::kT0 + index * 20 * FleetTest::kSecond;
  fleet.Probe(start, 20, Faults{}, [&](ProbeRecord p) {
    if (p.host == host && p.send_time_ns >= start + down_from) {
      if (p.src_nic == nic && sends_fail) {
        p.send_failed = true;
        p.timeout = false;
        p.t2_nic_send_ns = p.t3_nic_recv_ns = p.t4_app_recv_ns = 0;
      } else if (p.dst_nic == nic) {
        p.timeout = true;
        p.t2_nic_send_ns = p.t3_nic_recv_ns = p.t4_app_recv_ns = 0;
      }
    }
    analysis.AddResult(p);
  });
  auto reports = analysis.Advance(start + 30 * FleetTest::kSecond);
  return reports.empty() ? WindowReport{} : reports.back();
}

TEST_F(LossTest, RnicThatCannotSendIsDownFromItsFirstWindow) {
  // Down for the last 15 s of the window: 3/4 of the probes to it are lost,
  // below the inference's "down" bar, and 3/4 of its own could not be sent.
  RunWindow(0, Faults{});
  const auto r = RunNicDown(fleet_, analysis_, 1, 3, 2, 5 * kSecond);

  const auto* nic = Rnic(r, 3, 2);
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->state, RnicState::kDown);
  EXPECT_TRUE(nic->anomalous);
  EXPECT_GT(nic->anomalous_until_ns, r.end_ns);
  // One probe of its own every 100 ms: 150 never left it, 50 were sent
  // before. Send failures never enter loss: neither its counts nor the SLA's.
  EXPECT_EQ(nic->send_failures, 150u);
  EXPECT_EQ(nic->probes - nic->probes_to, 50u);
  EXPECT_EQ(nic->timeouts, nic->timeouts_to);
  EXPECT_EQ(r.sla.cluster.timeouts, nic->timeouts_to);
  EXPECT_EQ(r.sla.cluster.rnic_drops, r.sla.cluster.timeouts);
  EXPECT_TRUE(BlamedLinks(r.loss).empty());
  for (const auto& c : r.loss.culprits) EXPECT_LT(c.loss, 0.9);  // the estimate alone: lossy
}

TEST_F(LossTest, RnicLosingProbesToItButSendingIsNotDownBySendFailures) {
  RunWindow(0, Faults{});
  const auto r = RunNicDown(fleet_, analysis_, 1, 3, 2, 5 * kSecond, /*sends_fail=*/false);

  const auto* nic = Rnic(r, 3, 2);
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->send_failures, 0u);
  EXPECT_EQ(nic->state, RnicState::kLossy);
}

TEST_F(LossTest, SendFailuresWithoutLossToTheRnicLeaveItOk) {
  // A QP in error on the sending side only: nothing to it is lost.
  std::uint64_t failed = 0;
  fleet_.Probe(kT0, 20, Faults{}, [&](ProbeRecord p) {
    if (p.host == 3 && p.src_nic == 2) {
      p.send_failed = true;
      p.timeout = false;
      ++failed;
    }
    analysis_.AddResult(p);
  });
  const auto reports = analysis_.Advance(kT0 + 30 * kSecond);
  ASSERT_EQ(reports.size(), 1u);
  const auto* nic = Rnic(reports.front(), 3, 2);
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->send_failures, failed);
  EXPECT_EQ(nic->state, RnicState::kOk);
  EXPECT_FALSE(nic->anomalous);
  EXPECT_EQ(reports.front().sla.cluster.timeouts, 0u);
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

// A gray link eats the traceroutes that cross it. Of the 5-tuples it fails on
// the way up, half were traced only as far as their rail switch (every uplink
// a candidate), and half not at all: the tracer is slowest for exactly these,
// so the untraced probes of a window are mostly failing ones. Of the other
// 5-tuples only one in ten is traced (tracing lags behind port rotation), too
// few for an RNIC to be judged on traced probes alone. Nothing but the link
// may be blamed: not the RNICs the untraced failures name, not the sibling
// uplinks the cut-short traces list beside it.
// On a large fabric ICMP rate limits cut many traces short: each lists every
// spine as a candidate. Their failures (ambient loss here, no fault) are
// shared among the candidates, not counted whole against each: counted
// whole, every spine collected every cut-short path's failures and one was
// named in every window (1,000 hosts, background up to 1e-3 per link).
TEST(LossUntraced, ManyCutShortTracesUnderAmbientLossNameNoSpine) {
  const FleetShape shape;
  SyntheticFleet fleet(shape);
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  const std::int64_t t0 = FleetTest::kT0;
  using Traced = SyntheticFleet::Traced;
  fleet.TracePathsAs(analysis, t0, [](HostId, NicId, NicId, std::uint32_t i) {
    return i % 4 != 0 ? Traced::kCutShort : Traced::kWhole;  // three in four cut short
  });
  Faults ambient;
  for (std::uint32_t r = 0; r < shape.rails; ++r) {
    for (std::uint32_t sp = 0; sp < shape.spines; ++sp)
      ambient.link_loss[fleet.RailSpine(r, sp)] = 0.002;
  }
  for (int window = 0; window < 15; ++window) {
    const std::int64_t start = t0 + window * 20 * FleetTest::kSecond;
    fleet.ProbeInto(analysis, start, ambient);
    for (const auto& r : analysis.Advance(start + 30 * FleetTest::kSecond)) {
      EXPECT_TRUE(r.loss.culprit_switches.empty()) << "window " << window;
      EXPECT_TRUE(r.loss.culprits.empty()) << "window " << window;
    }
  }
}

// A rail uplink losing 21.7% one way under ambient loss of 0.1% a link, on a
// fabric where nine in ten traces between the other rails are cut short (ICMP
// rate limits at 10,000 hosts; sim/scenarios/scale-uplink-siblings-10000).
// A seventh of the flows on the links down from its spine to the other rails
// cross it, so counted whole their paths lost about 3%, thirty times their
// own loss; the cut-short paths' ambient failures, shared among candidates
// by those rates, landed on them, and the uplink, no candidate of those
// paths, could not explain them: the spine and some of those downlinks were
// named beside it in every window. Rates are each link's own now.
TEST(LossUntraced, ALossyLinksSiblingsDoNotTakeTheCutShortFailuresOfOtherRails) {
  const FleetShape shape{.hosts = 64, .rails = 8, .spines = 4, .ports = 16};
  SyntheticFleet fleet(shape);
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  const std::int64_t t0 = FleetTest::kT0;
  constexpr std::uint32_t kRail = 3, kSpine = 2;
  const LinkId bad = fleet.RailSpine(kRail, kSpine);
  using Traced = SyntheticFleet::Traced;
  fleet.TracePathsAs(analysis, t0, [](HostId h, NicId a, NicId b, std::uint32_t i) {
    if (a == kRail || b == kRail) return Traced::kWhole;
    return (h + i) % 10 != 0 ? Traced::kCutShort : Traced::kWhole;
  });
  Faults faults;
  for (std::uint32_t r = 0; r < shape.rails; ++r) {
    for (std::uint32_t sp = 0; sp < shape.spines; ++sp) {
      faults.link_loss[fleet.RailSpine(r, sp)] = 0.001;
    }
  }
  faults.uplink_loss[bad] = 0.217;
  int named = 0;
  for (int window = 0; window < 15; ++window) {
    const std::int64_t start = t0 + window * 20 * FleetTest::kSecond;
    fleet.ProbeInto(analysis, start, faults);
    for (const auto& r : analysis.Advance(start + 30 * FleetTest::kSecond)) {
      EXPECT_TRUE(r.loss.culprit_switches.empty()) << "window " << window;
      for (const auto& c : r.loss.culprits) {
        EXPECT_EQ(c.component.kind, Component::Kind::kLink) << "window " << window;
        EXPECT_EQ(c.component.link, bad) << "window " << window;
        named += c.component.link == bad;
      }
    }
  }
  EXPECT_EQ(named, 15);
}

TEST(LossUntraced, AGrayLinkThatEatsItsTraceroutesStaysTheOnlyCulprit) {
  const FleetShape shape;
  SyntheticFleet fleet(shape);
  Analysis analysis(AnalysisConfig{}, fleet.Map());
  const std::int64_t t0 = FleetTest::kT0;
  const std::uint32_t gray_rail = 1, gray_spine = 2;
  const LinkId bad = fleet.RailSpine(gray_rail, gray_spine);
  std::size_t cut = 0, untraced = 0;
  using Traced = SyntheticFleet::Traced;
  fleet.TracePathsAs(analysis, t0, [&](HostId h, NicId a, NicId b, std::uint32_t i) {
    if (a == gray_rail && fleet.PathOf(h, a, b, fleet.Port(i))[1] == bad) {
      ++(i % 2 == 1 ? untraced : cut);
      return i % 2 == 1 ? Traced::kNot : Traced::kCutShort;
    }
    return (h * 7 + a * 3 + b + i) % 10 == 0 ? Traced::kWhole : Traced::kNot;
  });
  ASSERT_GT(cut, 10u);
  ASSERT_GT(untraced, 10u);

  for (int window = 0; window < 4; ++window) {
    const std::int64_t start = t0 + window * 20 * FleetTest::kSecond;
    fleet.ProbeInto(analysis, start, Faults{.link_loss = {{bad, 1.0}}});
    const auto reports = analysis.Advance(start + 30 * FleetTest::kSecond);
    ASSERT_EQ(reports.size(), 1u);
    const WindowReport& r = reports.front();
    EXPECT_GT(r.coverage.untraced_probes, 3 * r.coverage.traced_probes);
    ASSERT_FALSE(r.loss.culprits.empty()) << "window " << window;
    for (const auto& c : r.loss.culprits) {
      EXPECT_EQ(c.component.kind, Component::Kind::kLink) << "window " << window;
      EXPECT_EQ(c.component.link, bad) << "window " << window;
    }
    for (const auto& s : r.rnics) {
      EXPECT_FALSE(s.anomalous) << "h" << s.host << "/nic" << s.nic << " in window " << window;
    }
  }
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
