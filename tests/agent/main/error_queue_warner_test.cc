// When the agent warns of error-queue messages, in virtual time.
#include "agent/main/error_queue_warner.h"

#include <gtest/gtest.h>

namespace hostmesh::agent::app {
namespace {

using namespace std::chrono_literals;

TEST(error_queue_warner, WarnsOfNewMessagesAtMostOncePerPeriodWithHowManySince) {
  ErrorQueueWarner warner(1min);
  const MonoTime t0{};
  EXPECT_FALSE(warner.Due({0, 0}, t0)) << "nothing to warn of";
  EXPECT_FALSE(warner.warned_before());

  auto due = warner.Due({5, 1}, t0 + 1s);
  ASSERT_TRUE(due);
  EXPECT_EQ(due->icmp_errors, 5u);
  EXPECT_EQ(due->other, 1u);
  EXPECT_TRUE(warner.warned_before());

  // More within the minute: held back, and counted in the next warning.
  EXPECT_FALSE(warner.Due({9, 1}, t0 + 30s));
  EXPECT_FALSE(warner.Due({12, 1}, t0 + 60s));
  due = warner.Due({12, 3}, t0 + 61s);
  ASSERT_TRUE(due);
  EXPECT_EQ(due->icmp_errors, 7u);
  EXPECT_EQ(due->other, 2u);

  // Long after, but nothing new: no warning.
  EXPECT_FALSE(warner.Due({12, 3}, t0 + 1h));
  due = warner.Due({13, 3}, t0 + 1h + 1s);
  ASSERT_TRUE(due);
  EXPECT_EQ(due->icmp_errors, 1u);
  EXPECT_EQ(due->other, 0u);
}

}  // namespace
}  // namespace hostmesh::agent::app
