// Scorecard arithmetic on hand-made windows, faults and incidents.

#include "sim/scorecard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tests/sim/sim_test_util.h"

namespace hostmesh::sim {
namespace {

using testing::DeviceNamed;
using testing::kSecond;
using testing::kWindow;
using testing::LinkNamed;

class ScorecardTest : public ::testing::Test {
 protected:
  // Windows [0, 20 s), [20, 40 s), ... with what each method named.
  static std::vector<WindowRecord> Windows(const std::vector<std::vector<ComponentKey>>& ours,
                                           const std::vector<std::vector<ComponentKey>>& paper,
                                           std::uint32_t hosts = 4) {
    std::vector<WindowRecord> out(std::max(ours.size(), paper.size()));
    for (std::size_t w = 0; w < out.size(); ++w) {
      out[w].start_ns = static_cast<std::int64_t>(w) * kWindow;
      out[w].end_ns = out[w].start_ns + kWindow;
      out[w].hosts = hosts;
      if (w < ours.size()) out[w].ours.named = ours[w];
      if (w < paper.size()) out[w].paper.named = paper[w];
      if (!out[w].ours.named.empty()) out[w].ours.top_loss = out[w].ours.named.front();
      if (!out[w].paper.named.empty()) out[w].paper.top_loss = out[w].paper.named.front();
    }
    return out;
  }
  Fault LinkLoss(LinkId link, std::int64_t start, std::int64_t end) const {
    Fault f;
    f.kind = FaultKind::kLinkLoss;
    f.link = link;
    f.rate = 0.1;
    f.start_ns = start;
    f.end_ns = end;
    return f;
  }
  Scorecard Score(const std::vector<Fault>& faults, const std::vector<WindowRecord>& windows,
                  const std::vector<IncidentSpan>& ours = {},
                  const std::vector<double>& limit_windows = {}) const {
    return ScoreRun(fleet_, faults, windows, ours, kWindow, limit_windows);
  }

  const Fleet fleet_{{4, 2, 2, 1, 2, 0}};
  const LinkId a_ = LinkNamed(fleet_, "p0r0-s00");
  const LinkId b_ = LinkNamed(fleet_, "p0r1-s01");
  const ComponentKey A = LinkKey(Category::kLoss, a_);
  const ComponentKey B = LinkKey(Category::kLoss, b_);
};

TEST_F(ScorecardTest, PrecisionRecallF1TopOneAndWindowsToDetect) {
  const std::vector<Fault> faults{LinkLoss(a_, 0, 3 * kWindow)};
  const auto windows = Windows({{}, {A}, {B, A}}, {{B}, {}, {}});
  const Scorecard card = Score(faults, windows);

  const MethodScore& o = card.ours;
  EXPECT_EQ(o.tp, 2u);
  EXPECT_EQ(o.fp, 1u);
  EXPECT_EQ(o.fn, 1u);
  EXPECT_DOUBLE_EQ(o.precision(), 2.0 / 3);
  EXPECT_DOUBLE_EQ(o.recall(), 2.0 / 3);
  EXPECT_DOUBLE_EQ(o.f1(), 2.0 / 3);
  // Top-1: every window has a loss fault; only window 1 puts A first.
  EXPECT_EQ(o.top1_windows, 3u);
  EXPECT_EQ(o.top1_hits, 1u);
  EXPECT_DOUBLE_EQ(o.top1(), 1.0 / 3);
  // Found one window after the one it started in.
  EXPECT_EQ(o.faults, 1u);
  EXPECT_EQ(o.detected, 1u);
  EXPECT_DOUBLE_EQ(o.windows_to_detect(), 1.0);
  EXPECT_DOUBLE_EQ(o.detection_rate(), 1.0);

  const MethodScore& p = card.paper;
  EXPECT_EQ(p.tp, 0u);
  EXPECT_EQ(p.fp, 1u);
  EXPECT_EQ(p.fn, 3u);
  EXPECT_EQ(p.precision(), 0.0);
  EXPECT_EQ(p.recall(), 0.0);
  EXPECT_EQ(p.f1(), 0.0);
  EXPECT_EQ(p.top1(), 0.0);
  EXPECT_EQ(p.faults, 1u);
  EXPECT_EQ(p.detected, 0u);
  EXPECT_EQ(p.detection_rate(), 0.0);
  EXPECT_EQ(p.windows_to_detect(), 0.0);  // a mean over no detected fault
}

TEST_F(ScorecardTest, LossAndLatencyVerdictsAreScoredApart) {
  // A link adding delay while another loses: the latency verdict is right
  // in both windows, the loss verdict in one, and a loss verdict on the slow
  // link is a loss false positive, not a latency hit.
  Fault slow;
  slow.kind = FaultKind::kLinkLatency;
  slow.link = b_;
  slow.added_ns = 50'000;
  slow.start_ns = 0;
  slow.end_ns = 2 * kWindow;
  const std::vector<Fault> faults{LinkLoss(a_, 0, 2 * kWindow), slow};
  const ComponentKey b_slow = LinkKey(Category::kLatency, b_);
  const auto windows = Windows({{A, b_slow}, {B, b_slow}}, {});
  const MethodScore o = Score(faults, windows).ours;
  const Counts& loss = o.by_category[static_cast<std::size_t>(Category::kLoss)];
  const Counts& latency = o.by_category[static_cast<std::size_t>(Category::kLatency)];
  EXPECT_EQ(loss.tp, 1u);
  EXPECT_EQ(loss.fp, 1u);
  EXPECT_EQ(loss.fn, 1u);
  EXPECT_DOUBLE_EQ(loss.f1(), 0.5);
  EXPECT_EQ(latency.tp, 2u);
  EXPECT_EQ(latency.fp + latency.fn, 0u);
  EXPECT_DOUBLE_EQ(latency.f1(), 1.0);
  EXPECT_TRUE(o.by_category[static_cast<std::size_t>(Category::kHost)].empty());
  // The categories add up to the whole.
  EXPECT_EQ(loss.tp + latency.tp, o.tp);
  EXPECT_EQ(loss.fp + latency.fp, o.fp);
  EXPECT_EQ(loss.fn + latency.fn, o.fn);
  MethodScore twice = o;
  twice += o;
  EXPECT_EQ(twice.by_category[static_cast<std::size_t>(Category::kLatency)].tp, 4u);
}

TEST_F(ScorecardTest, F1IsTheHarmonicMean) {
  MethodScore s;
  s.tp = 3;
  s.fp = 1;  // precision 0.75
  s.fn = 3;  // recall 0.5
  EXPECT_DOUBLE_EQ(s.f1(), 2 * 0.75 * 0.5 / 1.25);
}

TEST_F(ScorecardTest, NothingToFindAndNothingNamedIsPerfect) {
  const MethodScore s;
  EXPECT_EQ(s.precision(), 1.0);
  EXPECT_EQ(s.recall(), 1.0);
  EXPECT_EQ(s.f1(), 1.0);
  EXPECT_EQ(s.top1(), 1.0);
  EXPECT_EQ(s.detection_rate(), 1.0);
  EXPECT_EQ(s.false_incidents_per_khh(), 0.0);
  EXPECT_EQ(s.incidents_per_fault(), 0.0);
}

TEST_F(ScorecardTest, AFaultActiveLessThanHalfAWindowIsDontCareThere) {
  // Active 5 s of window 0, all of windows 1 and 2, 5 s of window 3, not in 4.
  const std::vector<Fault> faults{LinkLoss(a_, 15 * kSecond, 65 * kSecond)};
  // Ours names A in every window; the paper never does.
  const auto windows = Windows({{A}, {A}, {A}, {A}, {A}}, {{}, {}, {}, {}, {}});
  const Scorecard card = Score(faults, windows);
  EXPECT_EQ(card.ours.tp, 2u);  // windows 1 and 2
  EXPECT_EQ(card.ours.fp, 1u);  // window 4: no fault at all
  EXPECT_EQ(card.ours.fn, 0u);
  EXPECT_EQ(card.paper.fn, 2u);  // not naming it in windows 0 and 3 is no miss
  EXPECT_EQ(card.paper.fp, 0u);
  // Windows to detect count from the window the fault started in (0).
  EXPECT_EQ(card.ours.detected, 1u);
  EXPECT_DOUBLE_EQ(card.ours.windows_to_detect(), 0.0);
  EXPECT_EQ(card.ours.top1_windows, 2u);
}

TEST_F(ScorecardTest, HalfAWindowIsEnoughToBeJudged) {
  const std::vector<Fault> faults{LinkLoss(a_, 10 * kSecond, 30 * kSecond)};
  const auto windows = Windows({{}, {}}, {{A}, {}});
  const Scorecard card = Score(faults, windows);
  EXPECT_EQ(card.ours.fn, 2u);
  EXPECT_EQ(card.paper.tp, 1u);
  EXPECT_EQ(card.paper.fn, 1u);
  EXPECT_EQ(card.paper.faults, 1u);
}

TEST_F(ScorecardTest, AFaultTooShortForAnyWindowIsNotCounted) {
  const std::vector<Fault> faults{LinkLoss(a_, 15 * kSecond, 24 * kSecond)};
  const auto windows = Windows({{}, {}, {}}, {{A}, {A}, {}});
  const Scorecard card = Score(faults, windows);
  EXPECT_EQ(card.ours.faults, 0u);
  EXPECT_EQ(card.paper.faults, 0u);
  EXPECT_EQ(card.paper.tp + card.paper.fp + card.paper.fn, 0u);  // don't care in 0 and 1
  EXPECT_EQ(card.ours.top1_windows, 0u);
  // Windows it touched are not fault-free: only window 2 counts.
  EXPECT_DOUBLE_EQ(card.ours.fault_free_host_hours, 4 * 20.0 / 3600);
}

TEST_F(ScorecardTest, AFaultySwitchMakesItsLinksDontCare) {
  const DeviceId rail = DeviceNamed(fleet_, "p0r0");
  Fault f;
  f.kind = FaultKind::kSwitchLoss;
  f.switch_id = rail;
  f.rate = 0.02;
  f.end_ns = 2 * kWindow;
  const FaultTruth truth = TruthOf(fleet_, f);
  ASSERT_EQ(truth.components, std::vector<ComponentKey>{SwitchKey(Category::kLoss, rail)});
  // Its uplinks and its hosts' NIC links (named as their RNICs).
  EXPECT_EQ(truth.dont_care.size(), 2u + 4u);
  const auto dont_care = [&](ComponentKey k) {
    return std::find(truth.dont_care.begin(), truth.dont_care.end(), k) != truth.dont_care.end();
  };
  EXPECT_TRUE(dont_care(A));
  EXPECT_TRUE(dont_care(LinkKey(Category::kLoss, LinkNamed(fleet_, "p0r0-s01"))));
  EXPECT_TRUE(dont_care(RnicKey(Category::kLoss, 3, 0)));
  EXPECT_FALSE(dont_care(B));
  EXPECT_FALSE(dont_care(RnicKey(Category::kLoss, 3, 1)));

  const ComponentKey sw = SwitchKey(Category::kLoss, rail);
  const auto windows = Windows({{A, sw}, {RnicKey(Category::kLoss, 2, 0)}},
                               {{A}, {B, RnicKey(Category::kLoss, 2, 1)}});
  const Scorecard card = Score({f}, windows);
  EXPECT_EQ(card.ours.tp, 1u);
  EXPECT_EQ(card.ours.fp, 0u);  // its link and its RNIC: neither right nor wrong
  EXPECT_EQ(card.ours.fn, 1u);
  EXPECT_EQ(card.ours.top1_hits, 0u);  // window 0 puts its link first, not the switch
  EXPECT_EQ(card.paper.tp, 0u);
  EXPECT_EQ(card.paper.fp, 2u);  // another rail's link and RNIC
  EXPECT_EQ(card.paper.fn, 2u);
  EXPECT_EQ(card.paper.detected, 0u);
}

TEST_F(ScorecardTest, WhatEachFaultKindMakesWrong) {
  const LinkId nic_link = LinkNamed(fleet_, "h002.nic1-p0r1");
  Fault f = LinkLoss(nic_link, 0, kWindow);
  // A fault on a NIC's link is the RNIC's (the analyzer cannot tell them apart).
  EXPECT_EQ(TruthOf(fleet_, f).components,
            std::vector<ComponentKey>{RnicKey(Category::kLoss, 2, 1)});
  for (const FaultKind kind : {FaultKind::kLinkDown, FaultKind::kLinkFlap, FaultKind::kBlackhole}) {
    f.kind = kind;
    f.link = a_;
    EXPECT_EQ(TruthOf(fleet_, f).components, std::vector<ComponentKey>{A});
  }
  f.kind = FaultKind::kLinkLatency;
  EXPECT_EQ(TruthOf(fleet_, f).components,
            std::vector<ComponentKey>{LinkKey(Category::kLatency, a_)});
  f.link = nic_link;
  EXPECT_EQ(TruthOf(fleet_, f).components,
            std::vector<ComponentKey>{RnicKey(Category::kLatency, 2, 1)});
  f.host = 3;
  f.nic = 0;
  for (const FaultKind kind : {FaultKind::kRnicDown, FaultKind::kRnicLoss, FaultKind::kRnicFlap}) {
    f.kind = kind;
    EXPECT_EQ(TruthOf(fleet_, f).components,
              std::vector<ComponentKey>{RnicKey(Category::kLoss, 3, 0)});
  }
  f.kind = FaultKind::kHostProcessing;
  EXPECT_EQ(TruthOf(fleet_, f).components, std::vector<ComponentKey>{HostKey(3)});
  for (const FaultKind kind : {FaultKind::kHostLeave, FaultKind::kAgentRestart}) {
    f.kind = kind;
    EXPECT_TRUE(TruthOf(fleet_, f).components.empty());
    EXPECT_TRUE(TruthOf(fleet_, f).dont_care.empty());
  }
  EXPECT_TRUE(TruthOf(fleet_, LinkLoss(topology::kNone, 0, kWindow)).components.empty());
}

TEST_F(ScorecardTest, HostsLeavingAndAgentsRestartingAreNotFaults) {
  Fault leave;
  leave.kind = FaultKind::kHostLeave;
  leave.host = 1;
  leave.end_ns = 2 * kWindow;
  const auto windows = Windows({{RnicKey(Category::kLoss, 1, 0)}, {}}, {{}, {}});
  const std::vector<IncidentSpan> incidents{{RnicKey(Category::kLoss, 1, 0), 0, kWindow}};
  const Scorecard card = Score({leave}, windows, incidents);
  EXPECT_EQ(card.ours.fp, 1u);
  EXPECT_EQ(card.ours.faults, 0u);
  EXPECT_DOUBLE_EQ(card.ours.fault_free_host_hours, 2 * 4 * 20.0 / 3600);
  EXPECT_EQ(card.ours.false_incidents_fault_free, 1u);
}

TEST_F(ScorecardTest, FalseIncidentsPerThousandHostHoursOfFaultFreeWindows) {
  // Ten windows of 64 hosts; a fault on A in windows 3 and 4 only.
  const std::vector<Fault> faults{LinkLoss(a_, 3 * kWindow, 5 * kWindow)};
  std::vector<std::vector<ComponentKey>> none(10);
  const auto windows = Windows(none, none, 64);
  const std::vector<IncidentSpan> incidents{
      {B, 1 * kWindow, 2 * kWindow},            // fault-free window 1: false
      {B, 7 * kWindow + kSecond, 9 * kWindow},  // starts inside window 7: false
      {A, 3 * kWindow, 5 * kWindow},            // during the fault
      {B, 4 * kWindow, 6 * kWindow},            // wrong, but not fault-free time
  };
  const Scorecard card = Score(faults, windows, incidents);
  const double host_hours = 8 * 64 * 20.0 / 3600;  // 8 fault-free windows
  EXPECT_DOUBLE_EQ(card.ours.fault_free_host_hours, host_hours);
  EXPECT_EQ(card.ours.incidents, 4u);
  EXPECT_EQ(card.ours.false_incidents_fault_free, 2u);
  EXPECT_DOUBLE_EQ(card.ours.false_incidents_per_khh(), 1000.0 * 2 / host_hours);
  // The paper's incidents are runs of its own verdicts: none here.
  EXPECT_EQ(card.paper.incidents, 0u);
  EXPECT_DOUBLE_EQ(card.paper.fault_free_host_hours, host_hours);
}

TEST_F(ScorecardTest, IncidentsPerFault) {
  const std::vector<Fault> faults{LinkLoss(a_, 0, 3 * kWindow), LinkLoss(b_, 0, 3 * kWindow),
                                  LinkLoss(LinkNamed(fleet_, "p0r0-s01"), 0, 3 * kWindow)};
  std::vector<std::vector<ComponentKey>> none(8);
  const auto windows = Windows(none, none);
  const std::vector<IncidentSpan> incidents{
      {A, 0, kWindow},                              // A: split in two incidents
      {A, 2 * kWindow, 3 * kWindow},                // ...
      {A, 4 * kWindow + kSecond, 5 * kWindow},      // opened within 2 windows after the end
      {A, 5 * kWindow, 6 * kWindow},                // later: not this fault's
      {B, kWindow, 3 * kWindow},                    // B: one
      {RnicKey(Category::kLoss, 0, 0), 0, kWindow}  // nobody's
  };
  const Scorecard card = Score(faults, windows, incidents);
  // A: 3, B: 1; the third fault got none and is left out of the mean.
  EXPECT_EQ(card.ours.faults_with_incident, 2u);
  EXPECT_DOUBLE_EQ(card.ours.incidents_per_fault_sum, 4.0);
  EXPECT_DOUBLE_EQ(card.ours.incidents_per_fault(), 2.0);
}

TEST_F(ScorecardTest, RunsOfConsecutiveWindowsAreThePapersIncidents) {
  const ComponentKey r = RnicKey(Category::kLoss, 1, 1);
  const auto windows = Windows({{}, {}, {}, {}, {}}, {{A}, {A, B}, {B}, {}, {A, r}});
  const std::vector<IncidentSpan> runs = RunsOf(windows, true);
  ASSERT_EQ(runs.size(), 4u);
  const auto is = [](const IncidentSpan& s, ComponentKey k, std::int64_t first, std::int64_t last) {
    return s.key == k && s.first_ns == first && s.last_ns == last;
  };
  EXPECT_TRUE(is(runs[0], A, 0, 2 * kWindow));
  EXPECT_TRUE(is(runs[1], B, kWindow, 3 * kWindow));
  EXPECT_TRUE(is(runs[2], A, 4 * kWindow, 5 * kWindow));
  EXPECT_TRUE(is(runs[3], r, 4 * kWindow, 5 * kWindow));
  EXPECT_TRUE(RunsOf(windows, false).empty());  // ours named nothing

  // In the scorecard: a fault on A over windows 0-4 is two paper incidents.
  const Scorecard card = Score({LinkLoss(a_, 0, 5 * kWindow)}, windows);
  EXPECT_EQ(card.paper.incidents, 4u);
  EXPECT_DOUBLE_EQ(card.paper.incidents_per_fault(), 2.0);
}

TEST_F(ScorecardTest, OurIncidentsByFleetHostAndSimulationTime) {
  const std::int64_t offset = 1'000 * kSecond;
  std::vector<analysis::Incident> incidents(6);
  const auto set = [&](std::size_t i, analysis::IncidentKind kind, analysis::Component c) {
    incidents[i].kind = kind;
    incidents[i].suspect = c;
    incidents[i].evidence.first_seen_ns = offset + static_cast<std::int64_t>(i) * kWindow;
    incidents[i].evidence.last_seen_ns = offset + static_cast<std::int64_t>(i + 2) * kWindow;
  };
  using Kind = analysis::Component::Kind;
  set(0, analysis::IncidentKind::kRnicDown, {Kind::kRnic, analysis::kUnknown, 0, 1});
  set(1, analysis::IncidentKind::kRnicLossy, {Kind::kRnic, analysis::kUnknown, 1, 0});
  set(2, analysis::IncidentKind::kLinkLoss, {Kind::kLink, a_, 0, 0});
  set(3, analysis::IncidentKind::kSwitch, {Kind::kLink, 7, 0, 0});  // link = switch id
  set(4, analysis::IncidentKind::kLatencyHotspot, {Kind::kLink, b_, 0, 0});
  set(5, analysis::IncidentKind::kHostProcessing, {Kind::kRnic, analysis::kUnknown, 1, 0});
  // Analyzer host 0 is fleet host 3, host 1 is fleet host 2.
  const std::vector<IncidentSpan> spans = OurIncidents(incidents, {3, 2}, offset);
  ASSERT_EQ(spans.size(), 6u);
  EXPECT_EQ(spans[0].key, RnicKey(Category::kLoss, 3, 1));
  EXPECT_EQ(spans[1].key, RnicKey(Category::kLoss, 2, 0));
  EXPECT_EQ(spans[2].key, A);
  EXPECT_EQ(spans[3].key, SwitchKey(Category::kLoss, 7));
  EXPECT_EQ(spans[4].key, LinkKey(Category::kLatency, b_));
  EXPECT_EQ(spans[5].key, HostKey(2));
  for (std::size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i].first_ns, static_cast<std::int64_t>(i) * kWindow);
    EXPECT_EQ(spans[i].last_ns, static_cast<std::int64_t>(i + 2) * kWindow);
  }
}

TEST_F(ScorecardTest, ScoresAddUp) {
  MethodScore a, b;
  a.tp = 1;
  a.fp = 2;
  a.fn = 3;
  a.detected = 1;
  a.faults = 2;
  a.windows_to_detect_sum = 2;
  a.fault_free_host_hours = 1.5;
  a.false_incidents_fault_free = 1;
  b = a;
  b.detected = 2;
  b.windows_to_detect_sum = 4;
  a += b;
  EXPECT_EQ(a.tp, 2u);
  EXPECT_EQ(a.fp, 4u);
  EXPECT_EQ(a.fn, 6u);
  EXPECT_EQ(a.faults, 4u);
  EXPECT_DOUBLE_EQ(a.windows_to_detect(), 2.0);  // (2 + 4) / 3: a mean over faults, not runs
  EXPECT_DOUBLE_EQ(a.false_incidents_per_khh(), 1000.0 * 2 / 3.0);
}

// Per fault kind: found, recall over the windows each fault was judged in,
// windows to its first correct verdict; the kinds add up across runs.
TEST_F(ScorecardTest, DetectionIsScoredPerFaultKind) {
  Fault rnic;
  rnic.kind = FaultKind::kRnicLoss;
  rnic.host = 1;
  rnic.nic = 0;
  rnic.rate = 0.05;
  rnic.start_ns = 0;
  rnic.end_ns = 4 * kWindow;
  const ComponentKey R = RnicKey(Category::kLoss, 1, 0);
  // Link a: judged in windows 0-1, named in 1. Link b: judged in 2-3, never
  // named. The RNIC: judged in 0-3, named in 2 and 3.
  const std::vector<Fault> faults{LinkLoss(a_, 0, 2 * kWindow),
                                  LinkLoss(b_, 2 * kWindow, 4 * kWindow), rnic};
  const Scorecard card = Score(faults, Windows({{}, {A}, {R}, {R}}, {}));
  ASSERT_EQ(card.ours.by_kind.size(), 2u);
  const KindScore& link = card.ours.by_kind.at(FaultKind::kLinkLoss);
  EXPECT_EQ(link.faults, 2u);
  EXPECT_EQ(link.detected, 1u);
  EXPECT_EQ(link.windows, 4u);
  EXPECT_EQ(link.windows_named, 1u);
  EXPECT_DOUBLE_EQ(link.recall(), 0.25);
  EXPECT_DOUBLE_EQ(link.windows_to_detect(), 1.0);
  const KindScore& nic = card.ours.by_kind.at(FaultKind::kRnicLoss);
  EXPECT_EQ(nic.faults, 1u);
  EXPECT_EQ(nic.detected, 1u);
  EXPECT_DOUBLE_EQ(nic.recall(), 0.5);
  EXPECT_DOUBLE_EQ(nic.windows_to_detect(), 2.0);
  EXPECT_EQ(card.paper.by_kind.at(FaultKind::kLinkLoss).detected, 0u);
  EXPECT_EQ(card.ours.faults, 3u);  // the totals are the kinds' sums
  EXPECT_EQ(card.ours.detected, 2u);

  MethodScore twice = card.ours;
  twice += card.ours;
  EXPECT_EQ(twice.by_kind.at(FaultKind::kLinkLoss).windows, 8u);
  EXPECT_DOUBLE_EQ(twice.by_kind.at(FaultKind::kRnicLoss).windows_to_detect(), 2.0);
}

// Time to name against the limit: per kind and rate bucket, over the named
// faults with a limit, from the fault's start to the end of the window that
// named it, beside the limit's time in the same terms.
TEST_F(ScorecardTest, TimeToNameIsScoredAgainstTheLimitPerKindAndRate) {
  Fault small = LinkLoss(a_, kWindow / 2, 6 * kWindow);  // 1%: the 0.5-2% bucket
  small.rate = 0.01;
  Fault big = LinkLoss(b_, 2 * kWindow, 6 * kWindow);  // 10%
  Fault unnamed = LinkLoss(a_, 0, 6 * kWindow);
  unnamed.link = LinkNamed(fleet_, "p0r1-s00");
  unnamed.rate = 0.015;
  // A named in window 2 (2.5 windows after it began), B in window 2 (its first).
  const auto windows = Windows({{}, {}, {A, B}, {A, B}, {A, B}, {A, B}}, {});
  const Scorecard card = Score({small, big, unnamed}, windows, {}, {1.2, 0.1, 3.0});
  const auto& times = card.ours.name_times;
  ASSERT_EQ(times.size(), 2u);
  const NameTimeScore& s = times.at({FaultKind::kLinkLoss, RateBucket(0.01)});
  EXPECT_EQ(s.faults, 2u);  // the small one and the unnamed one
  EXPECT_EQ(s.named, 1u);
  EXPECT_DOUBLE_EQ(s.measured(), 2.5);
  EXPECT_DOUBLE_EQ(s.limit(), 1.5);  // 1.2 windows from 0.5: the end of window 1
  EXPECT_DOUBLE_EQ(s.ratio(), 2.5 / 1.5);
  const NameTimeScore& b = times.at({FaultKind::kLinkLoss, RateBucket(0.1)});
  EXPECT_EQ(b.named, 1u);
  EXPECT_DOUBLE_EQ(b.measured(), 1.0);
  EXPECT_DOUBLE_EQ(b.ratio(), 1.0);
  // Without limits (or for kinds without one) there is no table.
  EXPECT_TRUE(Score({small, big}, windows).ours.name_times.empty());
  EXPECT_EQ(RateBucket(0.004), 0);
  EXPECT_EQ(RateBucket(0.005), 1);
  EXPECT_EQ(RateBucket(1.0), 3);
  EXPECT_EQ(RateBucketName(1), "0.5-2%");
  EXPECT_EQ(RateBucketName(3), ">=10%");
}

TEST_F(ScorecardTest, DescribeKeyNamesComponents) {
  EXPECT_EQ(DescribeKey(fleet_, A), "loss link p0r0-s00");
  EXPECT_EQ(DescribeKey(fleet_, LinkKey(Category::kLatency, b_)), "latency link p0r1-s01");
  EXPECT_EQ(DescribeKey(fleet_, RnicKey(Category::kLoss, 2, 1)), "loss rnic h002/nic1");
  EXPECT_EQ(DescribeKey(fleet_, SwitchKey(Category::kLoss, DeviceNamed(fleet_, "s01"))),
            "loss switch s01");
  EXPECT_EQ(DescribeKey(fleet_, HostKey(3)), "host h003");
  EXPECT_EQ(CategoryOf(HostKey(3)), Category::kHost);
  EXPECT_EQ(KindOf(RnicKey(Category::kLatency, 2, 1)), ComponentKind::kRnic);
  EXPECT_EQ(IdOf(RnicKey(Category::kLatency, 2, 1)), (2u << 8) | 1u);
}

}  // namespace
}  // namespace hostmesh::sim
