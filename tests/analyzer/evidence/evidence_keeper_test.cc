// What an incident's evidence follows, on the synthetic 8x4x4 fleet in
// virtual time: the suspect and its healthy siblings, 5-tuples that cross
// them, the capture range from before the fault to `after`, the verdicts.
#include "analyzer/evidence/evidence_keeper.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "analyzer/evidence/tuple_sampler.h"
#include "tests/analyzer/analysis/fleet_test_base.h"

namespace hostmesh::analyzer::evidence {
namespace {

using analysis::IncidentTracker;
using analysis::LinkId;
using analysis::PathTable;
using analysis::testing::Faults;
using analysis::testing::FleetTest;

std::string AgentOf(analysis::HostId h) {
  return "host-" + std::to_string(h);
}

class EvidenceKeeperTest : public FleetTest {
 protected:
  // Judges window w with `faults`, folds it into the tracker, and asks the keeper.
  // Then, as the analyzer's next turns do, reads the path table in slices of
  // `slots` until no incident awaits its 5-tuples; their first captures come
  // after the window's events.
  std::vector<EvidenceEvent> Window(int w, const Faults& faults, std::size_t slots = 1 << 20) {
    report_ = RunWindow(w, faults);
    const std::vector<std::uint64_t> touched = tracker_.Update(report_);
    std::vector<EvidenceEvent> events =
        keeper_.OnWindow(report_, touched, tracker_, analysis_.fabric(), AgentOf);
    while (keeper_.sampling() > 0) {
      for (EvidenceEvent& e : keeper_.Step(analysis_.paths(), analysis_.fabric(), AgentOf, slots)) {
        events.push_back(std::move(e));
      }
    }
    return events;
  }

  EvidenceConfig config_;
  EvidenceKeeper keeper_{config_};
  IncidentTracker tracker_;
  analysis::WindowReport report_;
};

TEST_F(EvidenceKeeperTest, ALossyLinkFollowsItsCrossingTuplesAndHealthySiblingUplinks) {
  const LinkId bad = fleet_.RailSpine(1, 2);
  Faults lossy;
  lossy.link_loss[bad] = 0.2;
  EXPECT_TRUE(Window(0, {}).empty());
  const std::vector<EvidenceEvent> events = Window(1, lossy);
  // The window's verdict at once, without probes; the first capture once
  // the path table was read.
  ASSERT_EQ(events.size(), 2u);
  const EvidenceEvent& verdict = events.front();
  EXPECT_EQ(verdict.kind, "link_loss");
  ASSERT_TRUE(verdict.verdict.has_value());
  EXPECT_GT(verdict.verdict->failures(), 0u);
  EXPECT_GT(verdict.verdict->loss(), 0.05);
  EXPECT_TRUE(verdict.targets.empty());
  EXPECT_EQ(verdict.capture_to_ns, 0) << "no probe captured before the 5-tuples are known";
  const EvidenceEvent& e = events.back();
  EXPECT_EQ(e.incident_id, verdict.incident_id);
  EXPECT_FALSE(e.verdict.has_value());

  // The suspect, then the other uplinks of rail switch 1 (spines 3, 0, 1).
  ASSERT_EQ(e.targets.size(), 4u);
  EXPECT_EQ(e.targets[0], (Target{Target::Kind::kLink, bad}));
  for (std::size_t i = 1; i < e.targets.size(); ++i) {
    EXPECT_TRUE(e.targets[i].sibling);
    EXPECT_EQ(analysis_.fabric().links[e.targets[i].id].lower, fleet_.RailSwitch(1));
    EXPECT_NE(e.targets[i].id, bad);
  }
  EXPECT_EQ(e.targets[1].id, fleet_.RailSpine(1, 3));

  // Every followed 5-tuple crosses its group's link, and every 5-tuple of
  // the table that crosses the suspect is followed (fewer than max_tuples).
  std::set<std::tuple<std::string, std::uint32_t, std::uint32_t, std::uint32_t>> suspect;
  for (const FollowedTuple& t : e.tuples) {
    const LinkId link = e.targets[t.group].id;
    EXPECT_NE(std::find(t.links.begin(), t.links.end(), link), t.links.end());
    if (t.group == 0) suspect.insert({t.agent_id, t.src_nic, t.dst_nic, t.src_port});
  }
  std::size_t crossing = 0;
  analysis_.paths().ForEachTuple([&](std::uint64_t key, analysis::MiddleId m) {
    const auto links = analysis_.paths().Middle(m);
    if (std::find(links.begin(), links.end(), bad) == links.end()) return;
    ++crossing;
    EXPECT_EQ(suspect.count({AgentOf(PathTable::KeyHost(key)), PathTable::KeySrc(key),
                             PathTable::KeyDst(key), PathTable::KeyPort(key)}),
              1u);
  });
  EXPECT_GT(crossing, 0u);
  EXPECT_EQ(suspect.size(), crossing);
  EXPECT_FALSE(e.tuples_capped);

  // From `before` the window that opened it, to the end of this window.
  EXPECT_EQ(e.opened_ns, kT0 + 20 * kSecond);
  EXPECT_EQ(e.capture_from_ns, e.opened_ns - 120 * kSecond);
  EXPECT_EQ(e.capture_to_ns, kT0 + 40 * kSecond);
  EXPECT_FALSE(e.counter_agents.empty());
  EXPECT_LE(e.counter_agents.size(), config_.max_hosts);
  EXPECT_EQ(e.flight_record_agents, e.counter_agents);
}

TEST_F(EvidenceKeeperTest, CapturesWindowByWindowUntilAfterThenOnlyVerdicts) {
  Faults lossy;
  lossy.link_loss[fleet_.RailSpine(2, 0)] = 0.2;
  std::int64_t captured_to = Window(0, lossy).back().capture_to_ns;
  EXPECT_EQ(captured_to, kT0 + 20 * kSecond);
  for (int w = 1; w < 6; ++w) {
    const std::vector<EvidenceEvent> events = Window(w, lossy);
    ASSERT_EQ(events.size(), 1u) << w;
    const EvidenceEvent& e = events.front();
    EXPECT_TRUE(e.verdict.has_value()) << w;
    EXPECT_TRUE(e.targets.empty()) << "followed once, at the first capture";
    const std::int64_t until = e.opened_ns + 60 * kSecond;
    if (kT0 + w * 20 * kSecond < until) {
      EXPECT_EQ(e.capture_to_ns, std::min(kT0 + (w + 1) * 20 * kSecond, until)) << w;
      EXPECT_GT(e.capture_to_ns, captured_to);
      captured_to = e.capture_to_ns;
    } else {
      EXPECT_EQ(e.capture_to_ns, 0) << "past `after`: no more probes";
    }
  }
  EXPECT_EQ(keeper_.capturing(), 0u);
  EXPECT_EQ(captured_to, kT0 + 60 * kSecond);
}

TEST_F(EvidenceKeeperTest, AnRnicIncidentFollowsItsHostsProbesAndItsOtherNics) {
  Faults lossy;
  lossy.nic_loss[{3, 2}] = 0.3;
  std::vector<EvidenceEvent> events = Window(0, lossy);
  ASSERT_EQ(events.size(), 1u) << "an RNIC's probes need no path table: captured at once";
  const EvidenceEvent& e = events.front();
  ASSERT_FALSE(e.targets.empty());
  EXPECT_EQ(e.targets[0], (Target{Target::Kind::kRnic, 3, 2}));
  EXPECT_EQ(e.capture_to_ns, kT0 + 20 * kSecond);
  EXPECT_EQ(e.target_agents[0], "host-3");
  EXPECT_TRUE(e.tuples.empty()) << "an RNIC's probes are told by its NICs";
  for (std::size_t i = 1; i < e.targets.size(); ++i) {
    EXPECT_EQ(e.targets[i].id, 3u);
    EXPECT_NE(e.targets[i].nic, 2u);
    EXPECT_TRUE(e.targets[i].sibling);
  }
  EXPECT_EQ(e.counter_agents, std::vector<std::string>{"host-3"});
}

TEST_F(EvidenceKeeperTest, AResolvedIncidentClosesItsEvidence) {
  Faults lossy;
  lossy.link_loss[fleet_.RailSpine(0, 1)] = 0.2;
  Window(0, lossy);
  bool closed = false;
  for (int w = 1; w < 12 && !closed; ++w) {
    for (const EvidenceEvent& e : Window(w, {})) {
      EXPECT_FALSE(e.verdict.has_value()) << "healthy windows name nothing";
      closed = closed || e.closed;
    }
  }
  EXPECT_TRUE(closed);
}

TEST_F(EvidenceKeeperTest, DisabledKeepsNothing) {
  EvidenceConfig off;
  off.enabled = false;
  EvidenceKeeper keeper(off);
  Faults lossy;
  lossy.link_loss[fleet_.RailSpine(1, 1)] = 0.2;
  report_ = RunWindow(0, lossy);
  const auto touched = tracker_.Update(report_);
  ASSERT_FALSE(touched.empty());
  EXPECT_TRUE(keeper.OnWindow(report_, touched, tracker_, analysis_.fabric(), AgentOf).empty());
  EXPECT_EQ(keeper.sampling(), 0u);
}

TEST_F(EvidenceKeeperTest, SmallSlicesOfThePathTableFollowTheSameTuplesAsOnePass) {
  Faults lossy;
  lossy.link_loss[fleet_.RailSpine(3, 1)] = 0.2;
  EvidenceKeeper sliced{config_};
  report_ = RunWindow(0, lossy);
  const std::vector<std::uint64_t> touched = tracker_.Update(report_);
  keeper_.OnWindow(report_, touched, tracker_, analysis_.fabric(), AgentOf);
  sliced.OnWindow(report_, touched, tracker_, analysis_.fabric(), AgentOf);
  const auto whole =
      keeper_.Step(analysis_.paths(), analysis_.fabric(), AgentOf, analysis_.paths().tuple_slots());
  ASSERT_EQ(whole.size(), 1u);
  std::vector<EvidenceEvent> parts;
  std::size_t steps = 0;
  while (parts.empty()) {
    parts = sliced.Step(analysis_.paths(), analysis_.fabric(), AgentOf, 100);
    ++steps;
  }
  EXPECT_EQ(steps, (analysis_.paths().tuple_slots() + 99) / 100);
  ASSERT_EQ(parts.size(), 1u);
  ASSERT_EQ(parts[0].tuples.size(), whole[0].tuples.size());
  for (std::size_t i = 0; i < parts[0].tuples.size(); ++i) {
    EXPECT_EQ(parts[0].tuples[i].src_port, whole[0].tuples[i].src_port);
    EXPECT_EQ(parts[0].tuples[i].agent_id, whole[0].tuples[i].agent_id);
  }
  EXPECT_EQ(sliced.sampling(), 0u);
}

TEST(TupleSampler, AnIncidentJoiningAPassUnderWayCompletesAfterAWholeTurn) {
  analysis::testing::SyntheticFleet fleet({.hosts = 8, .rails = 4, .spines = 4, .ports = 16});
  analysis::Analysis analysis(analysis::AnalysisConfig{}, fleet.Map());
  fleet.TracePaths(analysis, FleetTest::kT0);
  const std::size_t slots = analysis.paths().tuple_slots();
  const Target target{Target::Kind::kLink, fleet.RailSpine(0, 0)};
  TupleSampler sampler;
  sampler.Add(1, {target}, {100000});
  EXPECT_TRUE(sampler.Step(analysis.paths(), analysis.fabric(), slots / 2).empty());
  sampler.Add(2, {target}, {100000});
  auto done = sampler.Step(analysis.paths(), analysis.fabric(), slots);  // to the end
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].owner, 1u);
  done = sampler.Step(analysis.paths(), analysis.fabric(), slots / 2);  // wrapped around
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].owner, 2u);
  const std::uint32_t limit[] = {100000};
  const Target targets[] = {target};
  EXPECT_EQ(done[0].samples[0].tuples.size(),
            SampleTuples(analysis.paths(), analysis.fabric(), targets, limit)[0].tuples.size())
      << "both halves read: every crossing 5-tuple";
  EXPECT_TRUE(sampler.idle());
}

TEST(TupleSampler, KeepsTheSmallestHashesAndCountsEveryCrossing) {
  analysis::testing::SyntheticFleet fleet({.hosts = 16, .rails = 4, .spines = 4, .ports = 32});
  analysis::Analysis analysis(analysis::AnalysisConfig{}, fleet.Map());
  fleet.TracePaths(analysis, FleetTest::kT0);
  const Target spine0{Target::Kind::kSwitch, fleet.Spine(0)};
  const Target link{Target::Kind::kLink, fleet.RailSpine(0, 0)};
  const Target targets[] = {spine0, link};
  const std::uint32_t small[] = {10, 10};
  const std::uint32_t large[] = {100000, 100000};
  const auto few = SampleTuples(analysis.paths(), analysis.fabric(), targets, small);
  const auto all = SampleTuples(analysis.paths(), analysis.fabric(), targets, large);
  ASSERT_EQ(few.size(), 2u);
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(few[t].tuples.size(), 10u);
    EXPECT_TRUE(few[t].capped());
    EXPECT_EQ(few[t].crossing, all[t].crossing);
    EXPECT_EQ(all[t].tuples.size(), all[t].crossing);
    EXPECT_FALSE(all[t].capped());
    // The small sample is the head of the full one: the same hash order.
    for (std::size_t i = 0; i < few[t].tuples.size(); ++i) {
      EXPECT_EQ(few[t].tuples[i].key, all[t].tuples[i].key);
    }
  }
  // Counted against the fleet's own ECMP: every 5-tuple through spine 0, and
  // those of them that start or end on rail 0 for its link to rail 0.
  std::uint64_t via_spine = 0, via_link = 0;
  for (analysis::HostId h = 0; h < 16; ++h) {
    for (analysis::NicId a = 0; a < 4; ++a) {
      for (analysis::NicId b = 0; b < 4; ++b) {
        for (std::uint32_t i = 0; a != b && i < 32; ++i) {
          if (fleet.SpineOf(h, a, b, fleet.Port(i)) != 0) continue;
          ++via_spine;
          via_link += (a == 0 || b == 0) ? 1 : 0;
        }
      }
    }
  }
  EXPECT_EQ(all[0].crossing, via_spine);
  EXPECT_EQ(all[1].crossing, via_link);
}

}  // namespace
}  // namespace hostmesh::analyzer::evidence
