// The information limit (sim/information_limit.h): Wald's expected sample
// size against real sequential tests, and its conversion into windows.

#include "sim/information_limit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "agent/core/rng.h"
#include "sim/packet_model.h"

namespace hostmesh::sim {
namespace {

constexpr std::int64_t kWindow = 20'000'000'000;

TEST(InformationLimit, BernoulliDivergenceOfKnownRates) {
  // 0.5 ln(0.5/0.25) + 0.5 ln(0.5/0.75)
  EXPECT_NEAR(BernoulliDivergence(0.5, 0.25), 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0),
              1e-12);
  EXPECT_EQ(BernoulliDivergence(0.1, 0.1), 0.0);
  EXPECT_NEAR(BernoulliDivergence(1.0, 0.01), std::log(100.0), 1e-12);
}

// Runs Wald's test itself on Bernoulli draws under H1: the mean number of
// probes it takes to decide is what the formula says, less the overshoot of
// the last step past the bound (which the formula leaves out), and it names
// the fault about 1 - beta of the time.
TEST(InformationLimit, WaldsExpectedSampleSizeIsWhatARealSprtTakes) {
  const double q0 = 0.01, q1 = 0.05, alpha = 1e-4, beta = 0.05;
  const double up = std::log(q1 / q0), down = std::log((1 - q1) / (1 - q0));
  const double accept = std::log((1 - beta) / alpha), reject = std::log(beta / (1 - alpha));
  agent::Rng rng(7);
  const int runs = 4000;
  double probes = 0;
  int named = 0;
  for (int r = 0; r < runs; ++r) {
    double llr = 0;
    int n = 0;
    while (llr < accept && llr > reject) {
      llr += Uniform01(rng) < q1 ? up : down;
      ++n;
    }
    probes += n;
    named += llr >= accept;
  }
  const double mean = probes / runs;
  const double wald = SprtExpectedProbes(q0, q1, alpha, beta);
  EXPECT_GT(mean, wald);         // the overshoot: the formula is the floor
  EXPECT_LT(mean, 1.25 * wald);  // by at most a step of log(q1/q0) = 1.6 of about 9 nats
  EXPECT_GE(named, static_cast<int>(0.95 * runs) - 60);
}

TEST(InformationLimit, SmallerFaultsAndRarerFalseAlarmsNeedMoreProbes) {
  const double base = SprtExpectedProbes(1e-3, 0.011, 1e-8, 0.05);
  EXPECT_GT(SprtExpectedProbes(1e-3, 0.006, 1e-8, 0.05), base);
  EXPECT_GT(SprtExpectedProbes(1e-3, 0.011, 1e-10, 0.05), base);
  EXPECT_LT(SprtExpectedProbes(1e-3, 0.011, 1e-8, 0.2), base);
  // Without background one failure is proof: 1 / q1 probes on average.
  EXPECT_DOUBLE_EQ(SprtExpectedProbes(0, 0.02, 1e-8, 0.05), 50.0);
  EXPECT_EQ(SprtExpectedProbes(0.01, 0.01, 1e-8, 0.05), std::numeric_limits<double>::infinity());
}

Fault LinkLoss(double rate, std::int64_t start, std::int64_t end) {
  Fault f;
  f.kind = FaultKind::kLinkLoss;
  f.rate = rate;
  f.start_ns = start;
  f.end_ns = end;
  return f;
}

TEST(InformationLimit, EvidenceWindowsAreTheExpectedProbesOverTheProbesAWindow) {
  // 4,000 probes in 10 windows: 400 a window, at a background of 0.1%.
  const Fault f = LinkLoss(0.01, 0, 10 * kWindow);
  const FaultExposure e{4000, 4000 * 1e-3};
  LimitParams p;
  p.alpha = 1e-8;
  p.window_ns = kWindow;
  const double q1 = 1 - (1 - 1e-3) * (1 - 0.01);
  EXPECT_NEAR(EvidenceWindows(f, e, p), SprtExpectedProbes(1e-3, q1, 1e-8, 0.05) / 400, 1e-9);
  // No reference for kinds that are not a steady loss, or without probes.
  Fault down = f;
  down.kind = FaultKind::kLinkDown;
  EXPECT_LT(EvidenceWindows(down, e, p), 0);
  EXPECT_LT(EvidenceWindows(f, FaultExposure{}, p), 0);
  EXPECT_TRUE(HasLossLimit(FaultKind::kSwitchLoss));
  EXPECT_FALSE(HasLossLimit(FaultKind::kLinkLatency));
}

TEST(InformationLimit, TheLimitNamesAtTheEndOfTheWindowThatHoldsEnoughEvidence) {
  // Starting on a window's start, 2.3 windows of evidence: named at the end of the third.
  EXPECT_DOUBLE_EQ(LimitTimeToName(LinkLoss(0.01, 4 * kWindow, 20 * kWindow), 2.3, kWindow), 3.0);
  // Starting 3/4 into a window, a little evidence: the end of that window.
  const Fault late = LinkLoss(0.5, 4 * kWindow + 3 * kWindow / 4, 20 * kWindow);
  EXPECT_DOUBLE_EQ(LimitTimeToName(late, 0.01, kWindow), 0.25);
  // ...and 1.1 windows of it: the end of the window after the one it starts in.
  EXPECT_DOUBLE_EQ(LimitTimeToName(late, 1.1, kWindow), 1.25);
  EXPECT_LT(LimitTimeToName(late, -1, kWindow), 0);
  // AnalyzerAlpha spreads the fleet's false alarms over its components.
  EXPECT_DOUBLE_EQ(AnalyzerAlpha(1e-4, 1000), 1e-7);
}

}  // namespace
}  // namespace hostmesh::sim
