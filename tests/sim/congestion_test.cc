// A congested port's queue (its wait's mean, tail and wandering level) and
// the ordinary congestion that moves around the fabric.

#include "sim/congestion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace hostmesh::sim {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(QueueWait, HasTheLevelForMeanSomePacketsWaitNothingAndTheTailIsLong) {
  const QueueModel m;  // busy 0.9, tail on
  const double level = 20'000;
  std::vector<double> waits;
  for (std::uint64_t k = 0; k < 200'000; ++k) {
    waits.push_back(static_cast<double>(QueueWait(m, level, k)));
  }
  double sum = 0;
  for (const double w : waits) sum += w;
  EXPECT_NEAR(sum / static_cast<double>(waits.size()), level, 0.02 * level);
  const auto none = std::count(waits.begin(), waits.end(), 0.0);
  EXPECT_NEAR(static_cast<double>(none) / static_cast<double>(waits.size()), 1 - m.busy, 0.005);
  std::sort(waits.begin(), waits.end());
  // An exponential wait behind 90% busy: median ln(1.8)/0.9 = 0.65 of the mean.
  EXPECT_NEAR(waits[waits.size() / 2], 0.653 * level, 0.02 * level);
  EXPECT_GT(waits[waits.size() * 99 / 100], 4 * level);
  EXPECT_EQ(QueueWait(m, level, 7), QueueWait(m, level, 7));  // from the key alone
}

TEST(QueueWait, WithoutATailEveryPacketWaitsTheLevel) {
  QueueModel m;
  m.tail = false;
  for (std::uint64_t k = 0; k < 100; ++k) EXPECT_EQ(QueueWait(m, 20'000, k), 20'000);
  EXPECT_EQ(QueueWait(QueueModel{}, 0, 3), 0);
}

TEST(WanderFactor, MeansOneMovesBetweenKnotsAndIsItsQueuesOwn) {
  const QueueModel m;  // sigma 0.4, knots 5 s apart
  double sum = 0, lowest = 1, highest = 1;
  const int n = 40'000;
  for (int i = 0; i < n; ++i) {
    const double f = WanderFactor(m, 3, i * (kSecond / 4));  // 20 points a knot
    sum += f;
    lowest = std::min(lowest, f);
    highest = std::max(highest, f);
  }
  EXPECT_NEAR(sum / n, 1.0, 0.03);
  EXPECT_LT(lowest, 0.5);  // it wanders both ways
  EXPECT_GT(highest, 2.0);
  // Smooth within a knot, independent across queues, fixed by queue and time.
  EXPECT_NEAR(WanderFactor(m, 3, 10 * kSecond), WanderFactor(m, 3, 10 * kSecond + kSecond / 100),
              0.05);
  EXPECT_NE(WanderFactor(m, 3, 12 * kSecond), WanderFactor(m, 4, 12 * kSecond));
  EXPECT_EQ(WanderFactor(m, 3, 12 * kSecond), WanderFactor(m, 3, 12 * kSecond));
  QueueModel steady;
  steady.sigma = 0;
  EXPECT_EQ(WanderFactor(steady, 3, 12 * kSecond), 1.0);
}

class MovingCongestionTest : public ::testing::Test {
 protected:
  const Fleet fleet_{{8, 4, 4, 1, 2, 0}};
};

TEST_F(MovingCongestionTest, CongestsItsShareOfLinksAtAnyTimeForAShortWhileEach) {
  MovingCongestionModel m;
  m.share = 0.05;
  const std::int64_t hour = 3600 * kSecond;
  const MovingCongestion c(fleet_, m, hour, 9);
  std::uint64_t congested = 0, looked = 0, lasting = 0;
  for (std::int64_t t = 0; t < hour; t += 30 * kSecond) {
    for (LinkId l = 0; l < fleet_.link_count(); ++l) {
      for (const bool up : {true, false}) {
        std::uint64_t queue = 0;
        const double level = c.LevelAt(l, up, t, &queue);
        ++looked;
        if (level <= 0) continue;
        ++congested;
        EXPECT_GE(level, static_cast<double>(m.min_added_ns));
        EXPECT_NE(queue, 0u);
        // Gone once the longest episode is over (unless a new one came).
        lasting += c.LevelAt(l, up, t + m.max_duration_ns, nullptr) > 0;
      }
    }
  }
  const double share = static_cast<double>(congested) / static_cast<double>(looked);
  EXPECT_NEAR(share, m.share, 0.01);
  // Still congested one longest episode later: only by a new episode (about share).
  EXPECT_LT(static_cast<double>(lasting), 0.2 * static_cast<double>(congested));
}

TEST_F(MovingCongestionTest, IsTheSeedsAndNoneWhenItsShareIsZero) {
  const MovingCongestionModel m;
  const std::int64_t run = 600 * kSecond;
  const MovingCongestion a(fleet_, m, run, 1), b(fleet_, m, run, 1), other(fleet_, m, run, 2);
  EXPECT_GT(a.episodes(), 0u);
  EXPECT_EQ(a.episodes(), b.episodes());
  int differ = 0;
  for (LinkId l = 0; l < fleet_.link_count(); ++l) {
    for (std::int64_t t = 0; t < run; t += 5 * kSecond) {
      EXPECT_EQ(a.LevelAt(l, true, t, nullptr), b.LevelAt(l, true, t, nullptr));
      differ += a.LevelAt(l, true, t, nullptr) != other.LevelAt(l, true, t, nullptr);
    }
  }
  EXPECT_GT(differ, 0);
  MovingCongestionModel off;
  off.share = 0;
  const MovingCongestion none(fleet_, off, run, 1);
  EXPECT_EQ(none.episodes(), 0u);
  EXPECT_EQ(none.LevelAt(0, true, kSecond, nullptr), 0);
}

}  // namespace
}  // namespace hostmesh::sim
