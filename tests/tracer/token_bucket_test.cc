// Token buckets and the trace budget in virtual time.
#include "tracer/token_bucket.h"

#include <gtest/gtest.h>

#include "tracer/trace_budget.h"

namespace hostmesh::tracer {
namespace {

using namespace std::chrono_literals;

const MonoTime kT0{std::chrono::seconds{100}};

TEST(TokenBucket, StartsFullAndRefillsAtItsRate) {
  TokenBucket bucket(10, 5, kT0);
  EXPECT_DOUBLE_EQ(bucket.Tokens(kT0), 5);
  EXPECT_TRUE(bucket.TryTake(5, kT0));
  EXPECT_FALSE(bucket.TryTake(1, kT0));
  EXPECT_FALSE(bucket.TryTake(1, kT0 + 99ms));
  EXPECT_TRUE(bucket.TryTake(1, kT0 + 100ms));
  EXPECT_DOUBLE_EQ(bucket.Tokens(kT0 + 10s), 5);  // capped at the burst
}

TEST(TokenBucket, WhenAvailableIsExact) {
  TokenBucket bucket(4, 4, kT0);
  ASSERT_TRUE(bucket.TryTake(4, kT0));
  const MonoTime at = bucket.WhenAvailable(2, kT0);
  EXPECT_EQ(at, kT0 + 500ms);
  EXPECT_FALSE(bucket.TryTake(2, at - 1ms));
  EXPECT_TRUE(bucket.TryTake(2, at));
  EXPECT_EQ(bucket.WhenAvailable(100, at), at + 1s);  // more than the burst: the burst
}

TEST(TokenBucket, DebtIsWaitedOut) {
  TokenBucket bucket(1, 2, kT0);
  bucket.Charge(4, kT0);  // 2 - 4 = -2
  EXPECT_DOUBLE_EQ(bucket.Tokens(kT0), -2);
  EXPECT_EQ(bucket.WhenAvailable(1, kT0), kT0 + 3s);
  bucket.Charge(-10, kT0);  // refunds never exceed the burst
  EXPECT_DOUBLE_EQ(bucket.Tokens(kT0), 2);
}

TEST(TokenBucket, LongRunRateHoldsWhenTakenGreedily) {
  TokenBucket bucket(20, 8, kT0);
  int taken = 0;
  MonoTime now = kT0;
  while (now < kT0 + 60s) {
    if (bucket.TryTake(1, now)) {
      ++taken;
    } else {
      now = bucket.WhenAvailable(1, now);
    }
  }
  EXPECT_GE(taken, 20 * 60);
  EXPECT_LE(taken, 20 * 60 + 8 + 1);
}

TEST(TraceBudget, BothBucketsOrNeither) {
  TraceBudget budget({.probes_per_second = 100,
                      .burst = 8,
                      .per_first_hop_per_second = 1,
                      .per_first_hop_burst = 4},
                     kT0);
  const Ipv4 a{1}, b{2};
  EXPECT_EQ(budget.TryReserve(a, 4, kT0), 4);
  EXPECT_EQ(budget.TryReserve(a, 4, kT0), 0);  // a's first hop is spent...
  EXPECT_EQ(budget.TryReserve(b, 4, kT0), 4);  // ...b's is not, and the global had 8
  EXPECT_EQ(budget.TryReserve(b, 1, kT0 + 10ms), 0);
  EXPECT_EQ(budget.WhenAvailable(a, 4, kT0), kT0 + 4s);
  EXPECT_EQ(budget.TryReserve(a, 4, kT0 + 4s), 4);
}

TEST(TraceBudget, SettleChargesExtraProbesAndRefundsUnused) {
  TraceBudget budget(
      {.probes_per_second = 1, .burst = 4, .per_first_hop_per_second = 1, .per_first_hop_burst = 4},
      kT0);
  const Ipv4 a{1};
  ASSERT_EQ(budget.TryReserve(a, 4, kT0), 4);
  budget.Settle(a, 4, 6, kT0);  // two more than reserved: debt of 2
  EXPECT_EQ(budget.WhenAvailable(a, 4, kT0), kT0 + 6s);
  ASSERT_EQ(budget.TryReserve(a, 4, kT0 + 6s), 4);
  budget.Settle(a, 4, 1, kT0 + 6s);  // three unused
  EXPECT_EQ(budget.WhenAvailable(a, 4, kT0 + 6s), kT0 + 7s);
}

TEST(TraceBudget, AReservationLargerThanTheBurstIsCapped) {
  TraceBudget budget({.probes_per_second = 10,
                      .burst = 8,
                      .per_first_hop_per_second = 5,
                      .per_first_hop_burst = 4},
                     kT0);
  EXPECT_EQ(budget.TryReserve(Ipv4{1}, 12, kT0), 4);
}

}  // namespace
}  // namespace hostmesh::tracer
