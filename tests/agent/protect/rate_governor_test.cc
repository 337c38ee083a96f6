// The governor's steps in injected time: down one step per step_down_every
// under pressure, never below the last step, held between the marks, and up
// one step per calm_for of calm. The targets with the defaults and a
// sample every 2 s: lowest step within 30 s of full pressure, back to the
// configured rate within 2 minutes of calm.
#include "agent/protect/rate_governor.h"

#include <gtest/gtest.h>

#include <chrono>

namespace hostmesh::agent::protect {
namespace {

using namespace std::chrono_literals;

MonoTime At(std::chrono::nanoseconds t) {
  return MonoTime{} + t;
}

PressureSample Throttled(double percent) {
  PressureSample s;
  s.cpu = 1.0;
  s.cgroup_throttled = percent;
  return s;
}

TEST(RateGovernor, StepsDownOncePerIntervalToTheLowestAndNeverToZero) {
  RateGovernor g{GovernorOptions{}};
  std::vector<double> fractions;
  for (auto t = 0s; t <= 60s; t += 2s) {
    if (const auto change = g.Observe(Throttled(95), At(t))) {
      EXPECT_EQ(change->to, change->from + 1);
      EXPECT_EQ(change->cause, "cgroup cpu throttled 95%");
      EXPECT_EQ(change->signal, "cgroup_throttled");
      fractions.push_back(g.fraction());
      if (g.step() == g.lowest_step()) {
        EXPECT_LE(t, 30s) << "lowest step too late";
      }
    }
  }
  EXPECT_EQ(fractions, (std::vector<double>{0.5, 0.25, 0.1}));
  EXPECT_DOUBLE_EQ(g.fraction(), 0.1);
}

TEST(RateGovernor, RecoversOneStepPerCalmPeriodWithinTwoMinutes) {
  RateGovernor g{GovernorOptions{}};
  auto t = 0s;
  for (; g.step() != g.lowest_step(); t += 2s) g.Observe(Throttled(100), At(t));
  const auto calm_from = t;
  std::vector<std::chrono::seconds> ups;
  for (; t <= calm_from + 200s; t += 2s) {
    if (g.Observe(Throttled(0), At(t))) ups.push_back(t - calm_from);
  }
  ASSERT_EQ(ups.size(), 3u);
  EXPECT_EQ(g.step(), 0u);
  EXPECT_LE(ups.back(), 120s);
  // Each step up waits its own calm period.
  EXPECT_GE(ups[1] - ups[0], 25s);
  EXPECT_GE(ups[2] - ups[1], 25s);
}

TEST(RateGovernor, PressureBetweenTheMarksHoldsTheStepAndRestartsTheCalm) {
  GovernorOptions o;
  RateGovernor g{o};
  g.Observe(Throttled(80), At(0s));
  ASSERT_EQ(g.step(), 1u);
  // 40% is under the high mark (50) but over the calm one (25): held for good.
  for (auto t = 2s; t <= 120s; t += 2s) EXPECT_FALSE(g.Observe(Throttled(40), At(t)));
  // Calm for 24 s, one sample in between, calm again: the 25 s start over.
  for (auto t = 122s; t <= 146s; t += 2s) EXPECT_FALSE(g.Observe(Throttled(0), At(t)));
  EXPECT_FALSE(g.Observe(Throttled(30), At(148s)));
  for (auto t = 150s; t < 175s; t += 2s) EXPECT_FALSE(g.Observe(Throttled(0), At(t)));
  EXPECT_TRUE(g.Observe(Throttled(0), At(176s)));
  EXPECT_EQ(g.step(), 0u);
}

TEST(RateGovernor, TheWorstSignalRelativeToItsOwnMarkDecides) {
  RateGovernor g{GovernorOptions{}};
  PressureSample s;
  s.cpu = 55;     // 0.92 of 60
  s.memory = 21;  // 1.05 of 20
  const auto change = g.Observe(s, At(0s));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->cause, "host memory pressure 21%");
  EXPECT_NEAR(g.last_share(), 1.05, 1e-9);
}

TEST(RateGovernor, NoSignalsNeverShedsAndRecoversFromAnEarlierStep) {
  RateGovernor g{GovernorOptions{}};
  g.Observe(Throttled(100), At(0s));
  ASSERT_EQ(g.step(), 1u);
  // The signals vanish (the agent left its cgroup, PSI turned off): calm.
  std::optional<StepChange> up;
  for (auto t = 2s; t <= 40s && !up; t += 2s) up = g.Observe(PressureSample{}, At(t));
  ASSERT_TRUE(up);
  EXPECT_EQ(up->cause, "no pressure signal");
  EXPECT_EQ(g.step(), 0u);
}

TEST(RateGovernor, OptionsThatCannotWorkAreRefused) {
  GovernorOptions o;
  o.steps = {0.5, 0.25};
  EXPECT_NE(CheckGovernorOptions(o), "");
  o.steps = {1, 0.5, 0.5};
  EXPECT_NE(CheckGovernorOptions(o), "");
  o.steps = {1, 0.5, 0};
  EXPECT_NE(CheckGovernorOptions(o), "");
  o = GovernorOptions{};
  o.calm_share = 1;
  EXPECT_NE(CheckGovernorOptions(o), "");
  EXPECT_THROW(RateGovernor{o}, std::invalid_argument);
  EXPECT_EQ(CheckGovernorOptions(GovernorOptions{}), "");
}

}  // namespace
}  // namespace hostmesh::agent::protect
