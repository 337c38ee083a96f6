// One fault is one incident over many windows; it resolves after recovery.

#include "analyzer/analysis/incidents.h"

#include <gtest/gtest.h>

#include "tests/analyzer/analysis/fleet_test_base.h"

namespace hostmesh::analysis::testing {
namespace {

class IncidentsTest : public FleetTest {
 protected:
  std::vector<std::uint64_t> Window(int index, const Faults& f) {
    return tracker_.Update(RunWindow(index, f));
  }
  IncidentTracker tracker_;
};

TEST_F(IncidentsTest, ConfidenceIsTheCalibratedRawScore) {
  // A map that says every raw score is right 40% to 60% of the time: the
  // verdicts keep their raw score and carry the mapped value, and so does
  // the incident; the decisions are the default analysis's.
  AnalysisConfig config;
  config.confidence.loss = ConfidenceMap({{0.0, 0.4}, {1.0, 0.6}});
  Analysis calibrated(config, fleet_.Map());
  fleet_.TracePaths(calibrated, kT0);
  IncidentTracker tracker(config);
  const LinkId bad = fleet_.RailSpine(1, 3);
  const Faults fault{.link_loss = {{bad, 0.5}}};
  fleet_.ProbeInto(calibrated, kT0, fault);
  const auto reports = calibrated.Advance(kT0 + 30 * kSecond);
  ASSERT_EQ(reports.size(), 1u);
  const WindowReport ours = reports.back();
  const WindowReport plain = RunWindow(0, fault);
  ASSERT_EQ(BlamedLinks(ours.loss), BlamedLinks(plain.loss));
  ASSERT_FALSE(ours.loss.culprits.empty());
  const Suspect& s = ours.loss.culprits.front();
  EXPECT_GT(s.raw_confidence, 0.5);
  EXPECT_DOUBLE_EQ(s.raw_confidence, plain.loss.culprits.front().raw_confidence);
  EXPECT_DOUBLE_EQ(s.confidence, 0.4 + 0.2 * s.raw_confidence);
  tracker.Update(ours);
  ASSERT_EQ(tracker.all().size(), 1u);
  EXPECT_DOUBLE_EQ(tracker.all().front().confidence, s.confidence);
}

TEST_F(IncidentsTest, OneLinkFaultIsOneIncidentUntilResolved) {
  const LinkId bad = fleet_.RailSpine(1, 3);
  const Faults fault{.link_loss = {{bad, 0.5}}};
  for (int w = 0; w < 3; ++w) Window(w, fault);

  ASSERT_EQ(tracker_.all().size(), 1u);
  const Incident& inc = tracker_.all().front();
  EXPECT_TRUE(inc.open);
  EXPECT_EQ(inc.kind, IncidentKind::kLinkLoss);
  EXPECT_EQ(inc.suspect.link, bad);
  EXPECT_EQ(inc.summary, "link " + std::to_string(bad));
  EXPECT_EQ(inc.evidence.windows, 3);
  EXPECT_EQ(inc.evidence.first_seen_ns, kT0);
  EXPECT_EQ(inc.evidence.last_seen_ns, kT0 + 60 * kSecond);
  EXPECT_GT(inc.evidence.failures, 500u);
  EXPECT_GT(inc.evidence.votes, 0u);  // paper Algorithm 1, kept beside the verdict
  EXPECT_FALSE(inc.evidence.example_paths.empty());
  EXPECT_GT(inc.confidence, 0.8);

  Window(3, Faults{});  // healthy once: not yet resolved
  EXPECT_TRUE(tracker_.all().front().open);
  Window(4, Faults{});
  EXPECT_FALSE(tracker_.all().front().open);
  EXPECT_EQ(tracker_.all().front().resolved_ns, kT0 + 100 * kSecond);
  EXPECT_EQ(tracker_.all().size(), 1u);
  EXPECT_TRUE(tracker_.open().empty());

  Window(5, fault);  // it comes back: a new incident
  EXPECT_EQ(tracker_.all().size(), 2u);
}

// Hand-made windows: link 20 runs from rail switch 2 up to spine 5.
WindowReport Named(int index, bool link, std::vector<SwitchId> switches) {
  WindowReport r;
  r.start_ns = FleetTest::kT0 + index * 20 * FleetTest::kSecond;
  r.end_ns = r.start_ns + 20 * FleetTest::kSecond;
  r.coverage.crossed = {20};
  r.coverage.traced_probes = 1000;
  if (link) {
    Suspect s;
    s.component.link = 20;
    s.lower = 2;
    s.upper = 5;
    s.explained = 10;
    s.good = 300;
    s.loss = 0.03;
    r.loss.culprits.push_back(s);
  }
  for (const SwitchId id : switches) {
    r.loss.switches.push_back(SwitchRank{.id = id, .culprit = true, .loss = 0.02});
  }
  return r;
}

TEST(IncidentAdoption, AFaultFollowedFromALinkToItsSwitchAndBackIsOneIncident) {
  IncidentTracker tracker;
  tracker.Update(Named(0, true, {}));
  tracker.Update(Named(1, false, {5}));  // the spine explains it better now
  ASSERT_EQ(tracker.all().size(), 1u);
  const Incident& inc = tracker.all().front();
  EXPECT_TRUE(inc.open);
  EXPECT_EQ(inc.kind, IncidentKind::kSwitch);
  EXPECT_EQ(inc.suspect.link, 5u);
  EXPECT_EQ(inc.summary, "switch 5");
  EXPECT_EQ(inc.evidence.windows, 2);
  EXPECT_EQ(inc.evidence.first_seen_ns, FleetTest::kT0);
  tracker.Update(Named(2, true, {}));  // and back to the link
  ASSERT_EQ(tracker.all().size(), 1u);
  EXPECT_EQ(tracker.all().front().kind, IncidentKind::kLinkLoss);
  EXPECT_EQ(tracker.all().front().suspect.link, 20u);
  EXPECT_EQ(tracker.all().front().evidence.windows, 3);
}

TEST(IncidentAdoption, ALinkAndItsSwitchNamedTogetherOrAnotherSwitchAreIncidentsOfTheirOwn) {
  IncidentTracker tracker;
  tracker.Update(Named(0, true, {}));
  tracker.Update(Named(1, true, {5}));  // both: a link fault under a lossy spine
  EXPECT_EQ(tracker.open().size(), 2u);
  IncidentTracker other;
  other.Update(Named(0, true, {}));
  other.Update(Named(1, false, {7}));  // a switch the link does not touch
  EXPECT_EQ(other.all().size(), 2u);
}

// A hand-made window in which link 20 adds `added_ns` going up (0: not hot).
WindowReport Hot(int index, double added_ns) {
  WindowReport r = Named(index, false, {});
  if (added_ns > 0) {
    Suspect s;
    s.component.link = 20;
    s.component.direction = kUpward;
    s.added_latency_ns = added_ns;
    s.good = 400;
    r.latency.culprits.push_back(s);
  }
  return r;
}

TEST(IncidentHotspots, AModestHotspotBecomesAnIncidentOnlyOnceItHolds) {
  // 20 us over the link's baseline: moving congestion or a busy host's late
  // timestamps for a window or two; a fail-slow link once it holds 3 windows
  // in a row. The incident then dates from the first of them.
  IncidentTracker tracker;
  for (int w : {0, 1}) EXPECT_TRUE(tracker.Update(Hot(w, 20'000)).empty()) << "window " << w;
  tracker.Update(Hot(2, 0));  // a window without it starts the count over
  for (int w : {3, 4}) EXPECT_TRUE(tracker.Update(Hot(w, 20'000)).empty()) << "window " << w;
  EXPECT_TRUE(tracker.all().empty());
  const std::vector<std::uint64_t> opened = tracker.Update(Hot(5, 20'000));
  ASSERT_EQ(opened.size(), 1u);
  ASSERT_EQ(tracker.all().size(), 1u);
  const Incident& inc = tracker.all().front();
  EXPECT_EQ(inc.kind, IncidentKind::kLatencyHotspot);
  EXPECT_EQ(inc.suspect.link, 20u);
  EXPECT_EQ(inc.evidence.windows, 3);
  EXPECT_EQ(inc.evidence.first_seen_ns, Hot(3, 0).start_ns);
  EXPECT_EQ(inc.evidence.last_seen_ns, Hot(5, 0).end_ns);
  // Once open it is held like any other: one window without it does not end it.
  tracker.Update(Hot(6, 0));
  EXPECT_TRUE(tracker.all().front().open);
}

TEST(IncidentHotspots, AnOpenHotspotUnderTheBarButStillSlowIsHeldUntilItIsClean) {
  // A congested queue's level wanders: a fail-slow link has windows under the
  // hotspot bar, still half of it over its baseline. Those are not clean.
  IncidentTracker tracker;
  for (int w : {0, 1, 2}) tracker.Update(Hot(w, 20'000));
  ASSERT_EQ(tracker.open().size(), 1u);
  for (int w = 3; w < 23; ++w) {
    WindowReport r = Hot(w, 0);  // link 20 crossed, not hot
    r.coverage.slow = {20};
    tracker.Update(r);
    EXPECT_EQ(tracker.open().size(), 1u) << "window " << w;
  }
  tracker.Update(Hot(23, 20'000));  // hot again: the same incident
  EXPECT_EQ(tracker.all().size(), 1u);
  for (int w : {24, 25}) tracker.Update(Hot(w, 0));  // crossed, and not slow: clean
  EXPECT_TRUE(tracker.open().empty());
  EXPECT_EQ(tracker.all().size(), 1u);
}

TEST(IncidentHotspots, ALinkAddingMoreThanTheSlowProbeFloorIsAnIncidentAtOnce) {
  AnalysisConfig config;
  IncidentTracker tracker(config);
  const double floor = static_cast<double>(config.slow_latency_floor.count());
  EXPECT_TRUE(tracker.Update(Hot(0, floor)).empty()) << "at the floor: held";
  IncidentTracker blatant(config);
  ASSERT_EQ(blatant.Update(Hot(0, floor + 1)).size(), 1u);
  EXPECT_EQ(blatant.all().front().evidence.windows, 1);
  // The count is the operator's: 1 opens every hotspot at once.
  config.hotspot_open_windows = 1;
  IncidentTracker eager(config);
  EXPECT_EQ(eager.Update(Hot(0, 20'000)).size(), 1u);
}

// Hand-made: links 20 and 21 (from rail switches 2 and 3 up to spine 5)
// withdrawn and named one by one, or spine 5 named down in their place.
WindowReport Withdrawn(int index, std::vector<LinkId> links, bool spine_down) {
  WindowReport r = Named(index, false, {});
  r.coverage.crossed = {20, 21};  // by paths traced before routing moved them
  r.coverage.avoided = {20, 21};
  if (spine_down) r.coverage.avoided_switches = {5};
  for (const LinkId l : links) {
    Suspect s;
    s.component.link = l;
    s.lower = l == 20 ? 2 : 3;
    s.upper = 5;
    s.loss = 1.0;
    s.routed_around = true;
    r.loss.culprits.push_back(s);
  }
  if (spine_down) {
    r.loss.switches.push_back(
        SwitchRank{.id = 5, .culprit = true, .routed_around = true, .loss = 1.0});
  }
  return r;
}

TEST(IncidentAdoption, ADownSpinesLinksNamedOneByOneBecomeOneIncidentOnTheSpine) {
  IncidentTracker tracker;
  tracker.Update(Withdrawn(0, {20}, false));
  tracker.Update(Withdrawn(1, {20, 21}, false));
  ASSERT_EQ(tracker.open().size(), 2u);
  const std::vector<std::uint64_t> touched = tracker.Update(Withdrawn(2, {}, true));
  EXPECT_EQ(touched.size(), 2u);
  ASSERT_EQ(tracker.open().size(), 1u);
  const Incident& spine = *tracker.open().front();
  EXPECT_EQ(spine.kind, IncidentKind::kSwitch);
  EXPECT_EQ(spine.summary, "switch 5");
  EXPECT_TRUE(spine.evidence.routed_around);
  EXPECT_EQ(spine.evidence.first_seen_ns, Withdrawn(0, {}, false).start_ns) << "the first link's";
  const Incident* merged = tracker.Find(spine.id == 1 ? 2 : 1);
  ASSERT_NE(merged, nullptr);
  EXPECT_FALSE(merged->open);
  EXPECT_EQ(merged->merged_into, spine.id);
  EXPECT_EQ(merged->resolved_ns, Withdrawn(2, {}, true).end_ns);
}

TEST(IncidentResolution, PathsTracedBeforeRoutingMovedThemDoNotResolveAnIncident) {
  // The spine was blamed from its failures before routing withdrew it; its
  // stale paths' probes then arrive. While routing is seen to avoid it that
  // is no sign of health: it stays open (unobserved), and resolves only once
  // its links are in use again and healthy.
  IncidentTracker tracker;
  tracker.Update(Named(0, false, {5}));
  for (int w = 1; w <= 4; ++w) {
    WindowReport r = Withdrawn(w, {}, false);
    r.coverage.avoided_switches = {5};
    tracker.Update(r);
    ASSERT_EQ(tracker.open().size(), 1u) << "window " << w;
  }
  EXPECT_EQ(tracker.open().front()->unobserved_windows, 4);
  tracker.Update(Named(5, false, {}));
  EXPECT_EQ(tracker.open().size(), 1u);
  tracker.Update(Named(6, false, {}));
  EXPECT_TRUE(tracker.open().empty());

  // The same for a link.
  IncidentTracker link;
  link.Update(Named(0, true, {}));
  link.Update(Withdrawn(1, {}, false));
  link.Update(Withdrawn(2, {}, false));
  EXPECT_EQ(link.open().size(), 1u);
}

TEST(IncidentKinds, AnRnicTheWindowReadsDownIsDownWhateverItsLossEstimate) {
  // Its own probes never left it while half of those to it were lost: the
  // window judge reads it down though the estimate (over both ways) is 50%.
  WindowReport r = Named(0, false, {});
  Suspect s;
  s.component.kind = Component::Kind::kRnic;
  s.component.host = 3;
  s.component.nic = 1;
  s.loss = 0.5;
  s.explained = 100;
  r.loss.culprits.push_back(s);
  r.rnics.push_back(RnicStatus{.host = 3, .nic = 1, .probes = 200, .state = RnicState::kDown});
  IncidentTracker tracker;
  tracker.Update(r);
  ASSERT_EQ(tracker.all().size(), 1u);
  EXPECT_EQ(tracker.all().front().kind, IncidentKind::kRnicDown);
  r.rnics.front().state = RnicState::kLossy;
  IncidentTracker lossy;
  lossy.Update(r);
  EXPECT_EQ(lossy.all().front().kind, IncidentKind::kRnicLossy);
}

TEST_F(IncidentsTest, KindsForNicDownHostOverloadAndHotspot) {
  Window(0, Faults{.nic_loss = {{{2, 0}, 1.0}},
                   .link_delay_ns = {{fleet_.RailSpine(3, 3), 2'000'000}},
                   .host_processing_ns = {{6, 500'000}}});
  std::map<IncidentKind, std::string> seen;
  for (const auto* inc : tracker_.open()) seen[inc->kind] = inc->summary;
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[IncidentKind::kRnicDown], "host 2 nic 0");
  EXPECT_EQ(seen[IncidentKind::kHostProcessing], "host 6");
  EXPECT_EQ(seen[IncidentKind::kLatencyHotspot], "link " + std::to_string(fleet_.RailSpine(3, 3)));
  EXPECT_EQ(IncidentKindName(IncidentKind::kRnicDown), "rnic_down");
}

TEST_F(IncidentsTest, ALossyRnicOpensAnIncidentOfItsOwn) {
  // 5% loss on one RNIC (a corrupting cable): below the paper's 10% bar, but
  // conclusive evidence of an RNIC fault: an rnic_lossy incident with its loss,
  // and nothing else blamed.
  for (int w = 0; w < 3; ++w) Window(w, Faults{.nic_loss = {{{2, 0}, 0.05}}});
  ASSERT_EQ(tracker_.open().size(), 1u);
  const Incident& inc = *tracker_.open().front();
  EXPECT_EQ(inc.kind, IncidentKind::kRnicLossy);
  EXPECT_EQ(inc.summary, "host 2 nic 0");
  EXPECT_NEAR(inc.evidence.loss, 0.05, 0.03);
  Window(3, Faults{.nic_loss = {{{2, 0}, 0.5}}});
  ASSERT_EQ(tracker_.open().size(), 1u);  // the same fault, worse: still one incident
  EXPECT_EQ(tracker_.open().front()->id, inc.id);
}

TEST_F(IncidentsTest, UnobservedLinkStaysOpen) {
  const LinkId bad = fleet_.RailSpine(0, 1);
  Window(0, Faults{.link_loss = {{bad, 1.0}}});
  // Hosts all leave: nobody crosses the link, so nobody can say it healed.
  for (int w = 1; w < 4; ++w) Window(w, Faults{.absent = {0, 1, 2, 3, 4, 5, 6, 7}});
  ASSERT_EQ(tracker_.open().size(), 1u);
}

// A restarted analyzer restores its incidents: the open one goes on being
// updated under its id (not a second incident), new ones get fresh ids.
TEST_F(IncidentsTest, RestoredIncidentsContinueUnderTheirIds) {
  const LinkId bad = fleet_.RailSpine(2, 1);
  const Faults fault{.link_loss = {{bad, 1.0}}};
  Window(0, fault);
  Window(1, fault);
  ASSERT_EQ(tracker_.all().size(), 1u);
  const std::uint64_t id = tracker_.all().front().id;

  IncidentTracker restarted;
  restarted.Restore(tracker_.all(), 7);
  const auto touched = restarted.Update(RunWindow(2, fault));
  ASSERT_EQ(restarted.all().size(), 1u);
  EXPECT_EQ(touched, std::vector<std::uint64_t>{id});
  EXPECT_EQ(restarted.all().front().evidence.windows, 3);
  EXPECT_EQ(restarted.all().front().evidence.first_seen_ns, kT0);

  restarted.Update(RunWindow(3, Faults{.link_loss = {{bad, 1.0}}, .nic_loss = {{{4, 2}, 1.0}}}));
  ASSERT_EQ(restarted.all().size(), 2u);
  EXPECT_EQ(restarted.all().back().id, 7u);
  EXPECT_EQ(restarted.all().back().kind, IncidentKind::kRnicDown);
}

TEST_F(IncidentsTest, PruneForgetsOnlyLongResolvedIncidents) {
  const LinkId bad = fleet_.RailSpine(0, 2);
  Window(0, Faults{.link_loss = {{bad, 1.0}}});
  Window(1, Faults{});
  Window(2, Faults{});  // resolved at the end of window 2
  Window(3, Faults{.nic_loss = {{{3, 1}, 1.0}}});
  ASSERT_EQ(tracker_.all().size(), 2u);
  ASSERT_FALSE(tracker_.all().front().open);
  const std::string summary = tracker_.all().front().summary;
  ASSERT_FALSE(summary.empty());
  ASSERT_TRUE(
      tracker_.SetDiagnosis(tracker_.all().front().id, {"flapping", "flapping: ...", "", {}, 0}));
  tracker_.Prune(tracker_.all().front().resolved_ns);  // not before: kept
  EXPECT_EQ(tracker_.all().size(), 2u);
  // Kept whole: what stays in place is not moved onto itself (which empties strings).
  EXPECT_EQ(tracker_.all().front().summary, summary);
  EXPECT_EQ(tracker_.all().front().diagnosis.type, "flapping");
  tracker_.Prune(tracker_.all().front().resolved_ns + 1);
  ASSERT_EQ(tracker_.all().size(), 1u);
  EXPECT_TRUE(tracker_.all().front().open);
  EXPECT_EQ(tracker_.all().front().id, 2u);
  // The open RNIC incident is still found and updated after the prune.
  const auto touched = tracker_.Update(RunWindow(4, Faults{.nic_loss = {{{3, 1}, 1.0}}}));
  EXPECT_EQ(touched, std::vector<std::uint64_t>{2});
}

}  // namespace
}  // namespace hostmesh::analysis::testing
