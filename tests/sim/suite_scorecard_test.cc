// The CI suite: the built-in suite at 64 hosts x 8 rails x 8 spines, 20
// scenarios of 2 simulated minutes each (seed 1, as `hostmesh-sim suite`
// draws them), scored for both methods on the same simulated data. The
// analyzer's method must not be worse than the paper's on any metric, and
// must stay above absolute floors (below).
//
// 2 minutes: the suite starts its faults after the first minute (when the
// tracer has mapped the paths) and at 2 minutes all at 60 s, for 30-60 s; so
// each scenario has 3 fault-free windows, then 2-3 judged windows of 1-5
// concurrent faults. CPU: 34-39 s (at 3 minutes 48 s), most of it the first
// minute's tracing; on the 2-core development machine 41 s wall at a load
// average of 3, 60-72 s at 5.5-7, 80-90 s at 12 (CMakeLists.txt: the ctest
// timeout leaves room for a loaded machine and only catches a hang).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "sim/report.h"
#include "sim/suite.h"

namespace hostmesh::sim {
namespace {

constexpr std::int64_t kMinute = 60'000'000'000;

enum class Better { kHigher, kLower };

// "precision: hostmesh 0.412 is worse than the paper's 0.530 (by 0.118)".
void ExpectNotWorse(const char* metric, double ours, double paper, Better better) {
  const bool worse = better == Better::kHigher ? ours < paper : ours > paper;
  if (!worse) return;
  char text[200];
  std::snprintf(text, sizeof text,
                "%s: hostmesh %.4f is worse than the paper's %.4f (by %.4f, %s is better)", metric,
                ours, paper, ours > paper ? ours - paper : paper - ours,
                better == Better::kHigher ? "higher" : "lower");
  ADD_FAILURE() << text;
}

TEST(SuiteScorecardTest, OursIsNotWorseThanThePapersOnAnyMetric) {
  const auto start = std::chrono::steady_clock::now();
  SuiteOptions options;
  options.shape = {64, 8, 8, 1, 2, 0};
  options.scenarios = 20;
  options.duration_ns = 2 * kMinute;
  options.seed = 1;
  options.threads = 2;
  Scorecard total;
  std::uint64_t probes = 0;
  for (const Scenario& s : BuildSuite(options)) {
    Simulation sim(s.config);
    const SimResult r = sim.Run();
    const Scorecard card = ScoreRun(sim.fleet(), s.config.faults, r.windows, r.incidents,
                                    s.config.analysis.window.count());
    total.ours += card.ours;
    total.paper += card.paper;
    probes += r.probes;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  PrintScorecard(std::cout, total,
                 "scorecard: 20 scenarios, 64 hosts x 8 rails x 8 spines, 2 min each, seed 1 (" +
                     std::to_string(seconds) + " s wall, " + std::to_string(probes) + " probes)");

  const MethodScore& o = total.ours;
  const MethodScore& p = total.paper;
  // The suite is what it claims: faults to find, and fault-free time to judge.
  ASSERT_GT(o.faults, 20u);
  ASSERT_EQ(o.faults, p.faults);
  ASSERT_GT(o.fault_free_host_hours, 10.0);
  // Every NIC probes 10 times a second (hosts that leave for a while aside).
  const double expected = 20.0 * 64 * 8 * 10 * static_cast<double>(options.duration_ns) / 1e9;
  ASSERT_GT(static_cast<double>(probes), 0.95 * expected);

  ExpectNotWorse("precision", o.precision(), p.precision(), Better::kHigher);
  ExpectNotWorse("recall", o.recall(), p.recall(), Better::kHigher);
  ExpectNotWorse("F1", o.f1(), p.f1(), Better::kHigher);
  ExpectNotWorse("top-1 accuracy", o.top1(), p.top1(), Better::kHigher);
  ExpectNotWorse("faults found", static_cast<double>(o.detected), static_cast<double>(p.detected),
                 Better::kHigher);
  // A mean over the faults each method found: with at least as many found
  // (above), a lower mean is faster on the whole.
  ExpectNotWorse("windows to first correct verdict", o.windows_to_detect(), p.windows_to_detect(),
                 Better::kLower);
  ExpectNotWorse("false incidents per 1000 host-hours (fault-free)", o.false_incidents_per_khh(),
                 p.false_incidents_per_khh(), Better::kLower);
  // At least 1 where defined (1: one fault, one incident); 0 means no fault got
  // an incident at all, which is no better.
  EXPECT_TRUE(o.faults_with_incident > 0 || p.faults_with_incident == 0)
      << "no fault got an incident of ours, " << p.faults_with_incident << " got the paper's";
  ExpectNotWorse("incidents per fault", o.incidents_per_fault(), p.incidents_per_fault(),
                 Better::kLower);

  // Absolute floors: the paper's method lives in this repository too, so a
  // change that makes both worse would pass the comparison above. On this
  // suite (seed 1, fixed) the analyzer scored, as of issue 28: precision,
  // recall and F1 0.919, top-1 0.982, 45 of 45 faults found, 0.18 windows to
  // the first correct verdict, 175.9 false incidents per 1000 host-hours (4 in
  // 22.7) and 1.00 incident per fault. The floors leave room for a change that
  // trades a little of one for another (3 points, one more false incident, two
  // faults missed), not for a method that is worse across the board.
  EXPECT_GE(o.precision(), 0.89) << "precision under its floor";
  EXPECT_GE(o.recall(), 0.89) << "recall under its floor";
  EXPECT_GE(o.f1(), 0.89) << "F1 under its floor";
  EXPECT_GE(o.top1(), 0.95) << "top-1 accuracy under its floor";
  EXPECT_GE(o.detected + 2, o.faults) << "more than two faults never found";
  EXPECT_LE(o.windows_to_detect(), 0.5) << "slower to name faults than the floor allows";
  EXPECT_LE(o.false_incidents_fault_free, 5u) << "more false incidents than the floor allows";
  EXPECT_LE(o.incidents_per_fault(), 1.1)
      << "faults split into more incidents than the floor allows";

  // Calibration (sim/README.md): a verdict's confidence is how often such
  // verdicts were right on the (longer) suites the default maps were fitted
  // on. On this short suite: over all verdicts, the mean confidence is within
  // 0.1 of the share right, and the calibrated confidence predicts better
  // (lower Brier score) than the raw score it comes from.
  std::uint64_t named = 0, right = 0;
  double confidence = 0;
  for (std::size_t i = 0; i < o.named_by_confidence.size(); ++i) {
    named += o.named_by_confidence[i];
    right += o.right_by_confidence[i];
    confidence += o.confidence_sum[i];
  }
  ASSERT_GT(named, 100u);
  EXPECT_NEAR(confidence / double(named), double(right) / double(named), 0.1);
  EXPECT_LT(o.brier(), o.raw_brier());
}

}  // namespace
}  // namespace hostmesh::sim
