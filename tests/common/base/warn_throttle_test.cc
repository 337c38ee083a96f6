// Warnings of degraded modes, at most one per period with a count: virtual time.
#include "common/base/warn_throttle.h"

#include <gtest/gtest.h>

namespace hostmesh {
namespace {

using namespace std::chrono_literals;

TEST(WarnThrottle, FirstEventWarnsThenCountsUntilThePeriodEnds) {
  WarnThrottle throttle(10s);
  const MonoTime t0{1000s};
  EXPECT_EQ(throttle.Note(t0), 1u);
  EXPECT_EQ(throttle.Note(t0 + 1s), std::nullopt);
  EXPECT_EQ(throttle.Note(t0 + 2s), std::nullopt);
  EXPECT_EQ(throttle.Flush(t0 + 9s), std::nullopt);
  EXPECT_EQ(throttle.Flush(t0 + 10s), 2u) << "the tail is flushed without a new event";
  EXPECT_EQ(throttle.Flush(t0 + 30s), std::nullopt) << "nothing pending";
  EXPECT_EQ(throttle.Note(t0 + 31s), 1u);
}

TEST(WarnThrottle, SeveralEventsAtOnceAreCountedAsSeveral) {
  WarnThrottle throttle(10s);
  const MonoTime t0{1000s};
  EXPECT_EQ(throttle.Note(t0, 3), 3u);
  EXPECT_EQ(throttle.Note(t0 + 1s, 4), std::nullopt);
  EXPECT_EQ(throttle.Note(t0 + 10s, 2), 6u);
}

}  // namespace
}  // namespace hostmesh
