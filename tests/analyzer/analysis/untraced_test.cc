// What untraced probes tell of their RNICs (loss_inference.h:
// UntracedExplainer, Unexplained), by hand and on the synthetic fleet.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analyzer/analysis/loss_inference.h"
#include "analyzer/analysis/sequential_inference.h"
#include "tests/analyzer/analysis/fleet_test_base.h"

namespace hostmesh::analysis::testing {
namespace {

// Link 0 and RNICs 1 and 2, one NIC pair in one ECMP group. The group's
// traced probes took ten routes of 10 probes each; `on_link` of them (a
// route of weight `weight`: 1, or a cut-short trace's share) crossed the link.
// The pair sent 400 untraced probes, `bad` of which failed.
constexpr std::uint32_t kLink = 0, kSrc = 1, kDst = 2, kUntraced = 400;
InferenceProblem OneGroup(std::uint32_t on_link, float weight, std::uint32_t bad) {
  InferenceProblem p;
  p.Reset(3);
  p.is_link[kLink] = true;
  p.rail_pairs = 1;
  p.pairs.push_back(
      {.traced = 100, .untraced = kUntraced, .rail_pair = 0, .src_rnic = kSrc, .dst_rnic = kDst});
  for (std::uint32_t r = 0; r < 10; ++r) {
    const std::uint32_t crossing[] = {kLink};
    const float w[] = {weight};
    if (r < on_link) {
      p.AddRoute(0, crossing, w, 10);
    } else {
      p.AddRoute(0, {}, {}, 10);
    }
  }
  const std::uint32_t ends[] = {kSrc, kDst};
  p.AddGroup(0, bad, false, ends);
  p.good_untraced[kSrc] = p.good_untraced[kDst] = kUntraced - bad;
  return p;
}

struct Explained {
  double failures = 0;   // of the untraced group
  double ambiguous = 0;  // successes of kSrc that do not count
};
Explained Explain(const InferenceProblem& p, double ambiguous_above, double loss) {
  UntracedExplainer x(p, ambiguous_above);
  x.Blamed(p, kLink, loss);
  std::vector<double> explained(p.groups.size(), 0), ambiguous(p.components, 0);
  x.Explain(p, explained, ambiguous);
  return {explained[0], ambiguous[kSrc]};
}

TEST(UntracedExplainer, ASmallAddedLossTakesOnlyItsExpectedFailures) {
  // A tenth of the group's probes cross a link losing 1%: 0.1% added, under
  // a bar of 0.15%. Of 400 untraced probes, 0.4 failures are the link's.
  const Explained e = Explain(OneGroup(1, 1.0f, 12), 0.0015, 0.01);
  EXPECT_NEAR(e.failures, 0.4, 1e-9);
  EXPECT_EQ(e.ambiguous, 0) << "the untraced successes still count for the RNICs";
}

TEST(UntracedExplainer, ALargeAddedLossMakesTheGroupAmbiguous) {
  // The same share of a link losing 50% adds 5%: past the bar, every
  // untraced failure is the link's as far as the RNICs are concerned.
  const Explained e = Explain(OneGroup(1, 1.0f, 30), 0.0015, 0.5);
  EXPECT_EQ(e.failures, 30);
  EXPECT_EQ(e.ambiguous, kUntraced - 30);
}

TEST(UntracedExplainer, WithNoBarAnyShareIsAmbiguous) {
  // The window inference (Infer) keeps the all-or-nothing rule.
  const Explained e = Explain(OneGroup(1, 1.0f, 12), 0, 0.01);
  EXPECT_EQ(e.failures, 12);
  EXPECT_EQ(e.ambiguous, kUntraced - 12);
}

TEST(UntracedExplainer, ACutShortRouteCrossesEachCandidateByItsShare) {
  // Four routes that may each have crossed the link by 1/4 weigh like one
  // that surely did.
  const Explained quarter = Explain(OneGroup(4, 0.25f, 12), 0.0015, 0.01);
  EXPECT_NEAR(quarter.failures, 0.4, 1e-6);
  // Eight that surely did: 0.8% added, ambiguous.
  EXPECT_EQ(Explain(OneGroup(8, 1.0f, 12), 0.0015, 0.01).failures, 12);
}

TEST(UntracedExplainer, ALinkOnNoRouteOfTheGroupTakesNothing) {
  const Explained e = Explain(OneGroup(0, 1.0f, 12), 0, 1.0);
  EXPECT_EQ(e.failures, 0);
  EXPECT_EQ(e.ambiguous, 0);
}

// Two NIC pairs of one ECMP group (RNICs 1-2 and 3-4), 400 untraced probes
// each, nothing traced and nothing blamed.
std::vector<double> PeersExplain(std::uint32_t bad0, std::uint32_t bad1) {
  InferenceProblem p;
  p.Reset(5);
  p.rail_pairs = 1;
  p.pairs.push_back({.untraced = kUntraced, .rail_pair = 0, .src_rnic = 1, .dst_rnic = 2});
  p.pairs.push_back({.untraced = kUntraced, .rail_pair = 0, .src_rnic = 3, .dst_rnic = 4});
  const std::uint32_t a[] = {1, 2}, b[] = {3, 4};
  p.AddGroup(0, bad0, false, a);
  p.AddGroup(1, bad1, false, b);
  UntracedExplainer x(p, 0.0015, true);
  std::vector<double> explained(p.groups.size(), 0), ambiguous(p.components, 0);
  x.Explain(p, explained, ambiguous);
  return explained;
}

TEST(UntracedExplainer, APairsPeersInTheGroupTellWhatAPathFaultNoTraceSawFails) {
  // A gray link that ate every trace across it fails a quarter of both
  // pairs' untraced probes: each pair's failures are what its peer's rate
  // expects of it, up to its own.
  const auto gray = PeersExplain(110, 100);
  EXPECT_DOUBLE_EQ(gray[0], 100);
  EXPECT_DOUBLE_EQ(gray[1], 100);
  // An RNIC fault fails its own pair only: its peer is clean, nothing is
  // explained away.
  const auto rnic = PeersExplain(12, 0);
  EXPECT_DOUBLE_EQ(rnic[0], 0);
}

TEST(PoissonUpperBound, IsTheMeanUnderWhichTheCountIsJustUnlikelyToBeSoLow) {
  EXPECT_NEAR(PoissonUpperBound(0, 0.95), -std::log(0.05), 1e-9);
  for (const double k : {1.0, 4.0, 20.0}) {
    const double u = PoissonUpperBound(k, 0.95);
    EXPECT_GT(u, k);
    // P(X <= k | u) = 0.05.
    double cdf = 0, term = std::exp(-u);
    for (int i = 0; i <= static_cast<int>(k); ++i) {
      cdf += term;
      term *= u / (i + 1);
    }
    EXPECT_NEAR(cdf, 0.05, 1e-9) << k;
  }
}

// RNIC 1 with 200 traced probes (`traced_bad` failed, all on a path through
// link 0) and 300 untraced ones (`untraced_bad` failed, with RNIC 2).
InferenceProblem AnRnic(std::uint32_t traced_bad, std::uint32_t untraced_bad) {
  InferenceProblem p;
  p.Reset(3);
  p.is_link[kLink] = true;
  p.rail_pairs = 1;
  p.pairs.push_back(
      {.traced = 200, .untraced = 300, .rail_pair = 0, .src_rnic = kSrc, .dst_rnic = kDst});
  p.good[kSrc] = p.good[kDst] = p.good[kLink] = 200 - traced_bad;
  p.good_untraced[kSrc] = p.good_untraced[kDst] = 300 - untraced_bad;
  const std::uint32_t path[] = {kSrc, kLink, kDst};
  if (traced_bad > 0) p.AddGroup(0, traced_bad, true, path);
  const std::uint32_t ends[] = {kSrc, kDst};
  if (untraced_bad > 0) p.AddGroup(0, untraced_bad, false, ends);
  return p;
}

// The counts RNIC 1 is judged on, and those one window alone must show.
struct Judgement {
  std::pair<double, double> counts, alone;
};
Judgement Judged(const InferenceProblem& p, bool corroborate) {
  Unexplained left(p, {.min_traced = 50,
                       .ambiguous_above = 0.0015,
                       .corroborate = corroborate,
                       .background = 1e-3});
  left.Recount();
  return {left.Counts(kSrc), left.Alone(kSrc)};
}

TEST(Unexplained, AnRnicsUntracedFailuresCountAsFarAsItsTracedOnesBearThemOut) {
  // Losing 3% traced and untraced alike: 6 traced failures of 200 are far
  // beyond the background's 0.2, and make up to 5.9% plausible, so all 9
  // untraced failures count, over all 500 probes.
  const Judgement j = Judged(AnRnic(6, 9), true);
  EXPECT_DOUBLE_EQ(j.counts.first, 15);
  EXPECT_DOUBLE_EQ(j.counts.second, 500);
  // One window alone is judged on the traced probes: a burst of untraced
  // failures is no proof.
  EXPECT_DOUBLE_EQ(j.alone.first, 6);
  EXPECT_DOUBLE_EQ(j.alone.second, 200);
}

TEST(Unexplained, UntracedFailuresBeyondWhatTheTracedMakePlausibleAreAmbiguous) {
  // 2 traced failures of 200 (P = 0.018 at the background) but 20 of 300
  // untraced: at most the 95% upper bound of 2 in 200 counts (9.4 of 300),
  // the rest and as many probes are ambiguous.
  const Judgement j = Judged(AnRnic(2, 20), true);
  const double plausible = PoissonUpperBound(2, 0.95) / 200 * 300;
  EXPECT_NEAR(plausible, 9.44, 0.01);
  EXPECT_NEAR(j.counts.first, 2 + plausible, 1e-9);
  EXPECT_NEAR(j.counts.second, 2 + plausible + 198 + 280, 1e-9);
}

TEST(Unexplained, AnRnicWhoseTracedProbesAreCleanIsJudgedOnThemAlone) {
  // 20 untraced failures with clean traced probes: a blackhole's ports or a
  // fault not blamed yet ate a few untraced 5-tuples.
  for (const std::uint32_t traced_bad : {0u, 1u}) {
    const Judgement j = Judged(AnRnic(traced_bad, 20), true);
    EXPECT_DOUBLE_EQ(j.counts.first, traced_bad) << traced_bad;
    EXPECT_DOUBLE_EQ(j.counts.second, 200) << traced_bad;
  }
}

TEST(Unexplained, TracedFailuresFewerThanAWindowNeedsCorroborateNothing) {
  // One or two traced failures are beyond chance at a low background for
  // some RNIC of a fleet in every window (a gray link's cut-short trace):
  // the sequential inference asks for as many as one window needs.
  const InferenceProblem p = AnRnic(2, 20);
  Unexplained left(p, {.min_traced = 50,
                       .ambiguous_above = 0.0015,
                       .corroborate = true,
                       .background = 1e-3,
                       .min_corroborating = 3});
  left.Recount();
  EXPECT_DOUBLE_EQ(left.Counts(kSrc).first, 2);
  EXPECT_DOUBLE_EQ(left.Counts(kSrc).second, 200);
}

TEST(Unexplained, TracedFailuresOfTheSequentialTestsRunCorroborateToo) {
  // 2 traced failures this window, 2 of 200 in the windows of the RNIC's
  // CUSUM run before it: 4 of 400 corroborate, and the untraced failures
  // count up to their 95% upper bound, like one window of 400 traced.
  const InferenceProblem p = AnRnic(2, 20);
  const std::vector<std::pair<double, double>> before = {{0, 0}, {2, 200}, {2, 200}};
  Unexplained left(p, {.min_traced = 50,
                       .ambiguous_above = 0.0015,
                       .corroborate = true,
                       .background = 1e-3,
                       .min_corroborating = 3,
                       .traced_before = &before});
  left.Recount();
  const double plausible = PoissonUpperBound(4, 0.95) / 400 * 300;
  EXPECT_NEAR(left.Counts(kSrc).first, 2 + plausible, 1e-9);
  EXPECT_NEAR(left.Counts(kSrc).second, 2 + plausible + 198 + 280, 1e-9);
  // One window alone is still judged on its own traced probes.
  EXPECT_DOUBLE_EQ(left.Alone(kSrc).first, 2);
  EXPECT_DOUBLE_EQ(left.Alone(kSrc).second, 200);
}

TEST(EvidenceBookEntry, TheRunsTracedCountsPoolWhileTheSumIsAboveZeroAndEndWithIt) {
  EvidenceBook::Entry e;
  e.s = 1.5;
  e.PoolRun(2, 80);
  e.PoolRun(1, 80);
  EXPECT_DOUBLE_EQ(e.run_bad, 3);
  EXPECT_DOUBLE_EQ(e.run_n, 160);
  e.s = 0;
  e.PoolRun(1, 80);
  EXPECT_DOUBLE_EQ(e.run_bad, 0);
  EXPECT_DOUBLE_EQ(e.run_n, 0);
}

TEST(Unexplained, WithoutCorroborationAnRnicWithTracedProbesIsJudgedOnThemAlone) {
  const Judgement j = Judged(AnRnic(6, 9), false);
  EXPECT_DOUBLE_EQ(j.counts.first, 6);
  EXPECT_DOUBLE_EQ(j.counts.second, 200);
}

bool RnicNamed(const WindowReport& r, HostId h, NicId n) {
  return std::any_of(r.loss.culprits.begin(), r.loss.culprits.end(), [&](const auto& c) {
    return c.component.kind == Component::Kind::kRnic && c.component.host == h &&
           c.component.nic == n;
  });
}

// 32 hosts under 32 spines.
class UntracedFleetTest : public ::testing::Test {
 protected:
  static constexpr std::int64_t kSecond = FleetTest::kSecond;
  static constexpr std::int64_t kT0 = FleetTest::kT0;
  UntracedFleetTest() : fleet_(FleetShape{.hosts = 32, .rails = 4, .spines = 32}) {}
  SyntheticFleet fleet_;
};

// An RNIC with 50 or more traced probes a window was judged on them alone:
// a 3% RNIC fault of 400 probes a window, 80 of them traced, showed 2.4
// traced failures a window, and was named 2.6 windows after the first on
// average over these 16 fleets (up to 5), whether or not a spine of 32 lost 1% on
// every link (it adds 0.06% to a group's probes, its expected share). Its
// untraced failures now count as far as its traced ones bear them out, over
// the windows of its CUSUM's run: a window's own 2.4 traced failures are
// fewer than min_failures more often than not (1.2 windows, up to 5, when
// only the window's own corroborated).
TEST(UntracedFleet, AnRnicFaultIsJudgedOnAllItsProbesWhereItsTracedOnesCorroborate) {
  const std::int64_t kSecond = FleetTest::kSecond;
  const HostId host = 5;
  const NicId nic = 2;
  constexpr int kFleets = 16, kWindows = 8;
  int sum_first = 0;
  for (int f = 0; f < kFleets; ++f) {
    SyntheticFleet fleet(FleetShape{.hosts = 128, .rails = 4, .spines = 32},
                         static_cast<std::uint64_t>(f / 2 + 1));
    Analysis analysis(AnalysisConfig{}, fleet.Map());
    fleet.TracePaths(analysis, FleetTest::kT0, 0.2);
    Faults faults{.nic_loss = {{{host, nic}, 0.03}}};
    for (std::uint32_t rail = 0; rail < 4 && f % 2 == 1; ++rail) {
      faults.link_loss[fleet.RailSpine(rail, 7)] = 0.01;
    }
    int first = -1;
    for (int w = 0; w < kWindows; ++w) {
      const std::int64_t start = FleetTest::kT0 + w * 20 * kSecond;
      fleet.ProbeInto(analysis, start, faults);
      const auto reports = analysis.Advance(start + 30 * kSecond);
      ASSERT_EQ(reports.size(), 1u);
      const WindowReport& r = reports.back();
      if (first < 0 && RnicNamed(r, host, nic)) first = w;
      if (first >= 0) {
        EXPECT_TRUE(RnicNamed(r, host, nic)) << "fleet " << f << " window " << w;
      }
      for (const auto& c : r.loss.culprits) {
        if (c.component.kind != Component::Kind::kRnic) continue;
        EXPECT_TRUE(c.component.host == host && c.component.nic == nic)
            << "fleet " << f << " window " << w << ": RNIC h" << c.component.host << " nic"
            << c.component.nic;
      }
    }
    ASSERT_GE(first, 0) << "fleet " << f << ": never named";
    EXPECT_LE(first, 2) << "fleet " << f;
    sum_first += first;
  }
  // 0.7 windows after the first, up to 2.
  EXPECT_LE(static_cast<double>(sum_first) / kFleets, 1.0);
}

// An RNIC without a route loses every probe, and none is ever traced; its
// peers' untraced failures are all with it. Peers judged on their untraced
// probes whatever their traced ones said were named beside it (the
// 1,000-host suite's scenario 7 named three); theirs are clean, so they are
// judged on those alone, and it explains the rest.
TEST_F(UntracedFleetTest, AnRnicWithoutARouteIsNamedAloneNotItsPeers) {
  const HostId host = 9;
  const NicId dead = 3;
  Analysis analysis(AnalysisConfig{}, fleet_.Map());
  using Traced = SyntheticFleet::Traced;
  fleet_.TracePathsAs(analysis, kT0, [&](HostId h, NicId a, NicId b, std::uint32_t i) {
    if (h == host && (a == dead || b == dead)) return Traced::kNot;
    return i % 2 == 0 ? Traced::kWhole : Traced::kNot;
  });
  const Faults faults{.nic_loss = {{{host, dead}, 1.0}}};
  for (int w = 0; w < 4; ++w) {
    const std::int64_t start = kT0 + w * 20 * kSecond;
    fleet_.ProbeInto(analysis, start, faults);
    for (const auto& r : analysis.Advance(start + 30 * kSecond)) {
      EXPECT_TRUE(RnicNamed(r, host, dead)) << "window " << w;
      for (const auto& c : r.loss.culprits) {
        EXPECT_TRUE(c.component.kind == Component::Kind::kRnic && c.component.host == host &&
                    c.component.nic == dead)
            << "window " << w << ": " << static_cast<int>(c.component.kind) << " h"
            << c.component.host << " nic" << c.component.nic << " link " << c.component.link;
      }
    }
  }
}

}  // namespace
}  // namespace hostmesh::analysis::testing
