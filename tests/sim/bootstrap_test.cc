// The suite's bootstrap intervals over scenarios (sim/bootstrap.h).

#include "sim/bootstrap.h"

#include <gtest/gtest.h>

#include <vector>

namespace hostmesh::sim {
namespace {

TEST(Bootstrap, ScenariosAllAlikeGiveAPoint) {
  const std::vector<Counts> same(10, Counts{8, 2, 0});
  const ScoreIntervals ci = BootstrapIntervals(same);
  EXPECT_EQ(ci.scenarios, 10u);
  EXPECT_DOUBLE_EQ(ci.precision.lo, 0.8);
  EXPECT_DOUBLE_EQ(ci.precision.hi, 0.8);
  EXPECT_DOUBLE_EQ(ci.recall.lo, 1.0);
  EXPECT_DOUBLE_EQ(ci.f1.hi, (Counts{8, 2, 0}.f1()));
}

TEST(Bootstrap, TheIntervalHoldsThePooledScoreAndNarrowsWithMoreScenarios) {
  // Half the scenarios perfect, half with one miss in four.
  std::vector<Counts> few;
  for (int i = 0; i < 4; ++i) few.push_back(i % 2 == 0 ? Counts{4, 0, 0} : Counts{3, 1, 1});
  std::vector<Counts> many;
  for (int i = 0; i < 25; ++i) many.insert(many.end(), few.begin(), few.end());
  Counts pooled;
  for (const Counts& c : few) pooled += c;
  const ScoreIntervals a = BootstrapIntervals(few), b = BootstrapIntervals(many);
  for (const ScoreIntervals* ci : {&a, &b}) {
    EXPECT_LE(ci->f1.lo, pooled.f1());
    EXPECT_GE(ci->f1.hi, pooled.f1());
    EXPECT_LT(ci->f1.lo, ci->f1.hi);
    EXPECT_LE(ci->precision.hi, 1.0);
  }
  EXPECT_LT(b.f1.hi - b.f1.lo, a.f1.hi - a.f1.lo);
}

TEST(Bootstrap, TheSameCountsGiveTheSameIntervals) {
  const std::vector<Counts> each{{5, 1, 0}, {2, 0, 3}, {7, 2, 1}, {0, 1, 0}, {9, 0, 0}};
  const ScoreIntervals a = BootstrapIntervals(each), b = BootstrapIntervals(each);
  EXPECT_EQ(a.f1.lo, b.f1.lo);
  EXPECT_EQ(a.f1.hi, b.f1.hi);
  EXPECT_EQ(a.recall.lo, b.recall.lo);
}

TEST(Bootstrap, NoScenariosScoreAsAnEmptyPool) {
  const ScoreIntervals ci = BootstrapIntervals({});
  EXPECT_EQ(ci.scenarios, 0u);
  EXPECT_DOUBLE_EQ(ci.f1.lo, 1.0);
  EXPECT_DOUBLE_EQ(ci.f1.hi, 1.0);
}

}  // namespace
}  // namespace hostmesh::sim
