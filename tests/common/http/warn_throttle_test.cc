// Warnings of degraded modes, at most one per period with a count: virtual time.
#include "common/http/warn_throttle.h"

#include <gtest/gtest.h>

namespace hostmesh::http {
namespace {

using namespace std::chrono_literals;

TEST(HttpWarnThrottle, FirstEventWarnsThenCountsUntilThePeriodEnds) {
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

}  // namespace
}  // namespace hostmesh::http
