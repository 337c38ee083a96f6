// The back-off of a value whose read failed, and the rate limit of the
// warnings about failed reads: pure logic in virtual time.
#include "agent/telemetry/read_backoff.h"

#include <gtest/gtest.h>

#include "agent/telemetry/read_failure_log.h"

namespace hostmesh::agent::telemetry {
namespace {

using namespace std::chrono_literals;

constexpr MonoTime kStart = MonoTime{} + 1000h;

TEST(read_backoff, StartsAtTheInitialDelayDoublesAndCaps) {
  ReadBackoff backoff(10s, 60s);
  EXPECT_TRUE(backoff.Due(kStart));
  std::vector<std::chrono::nanoseconds> delays;
  MonoTime now = kStart;
  for (int i = 0; i < 6; ++i) {
    backoff.Failed(now);
    delays.push_back(backoff.delay());
    EXPECT_FALSE(backoff.Due(now + backoff.delay() - 1ns));
    EXPECT_TRUE(backoff.Due(now + backoff.delay()));
    now += backoff.delay();
  }
  EXPECT_EQ(delays, (std::vector<std::chrono::nanoseconds>{10s, 20s, 40s, 60s, 60s, 60s}));
  EXPECT_EQ(backoff.failures(), 6U);
}

TEST(read_backoff, AGoodReadResetsIt) {
  ReadBackoff backoff(10s, 1h);
  for (int i = 0; i < 5; ++i) backoff.Failed(kStart);
  EXPECT_EQ(backoff.delay(), 160s);
  backoff.Succeeded();
  EXPECT_TRUE(backoff.Due(kStart));
  EXPECT_EQ(backoff.failures(), 0U);
  backoff.Failed(kStart);
  EXPECT_EQ(backoff.delay(), 10s);
}

TEST(read_backoff, NeverOverflowsAndAMaxBelowTheInitialIsRaised) {
  ReadBackoff capped(10s, 1h);
  for (int i = 0; i < 1000; ++i) capped.Failed(kStart);
  EXPECT_EQ(capped.delay(), 1h);
  ReadBackoff raised(30s, 10s);
  raised.Failed(kStart);
  raised.Failed(kStart);
  EXPECT_EQ(raised.delay(), 30s);
}

TEST(read_failure_log, OneWarningPerDevicePerHourNamingWhatFailedSince) {
  ReadFailureLog log(1h);
  log.Failed("mlx5_0", "ports/1/hw_counters/out_of_sequence", "Input/output error", 10s);
  std::vector<DeviceWarning> due = log.Due(kStart);
  ASSERT_EQ(due.size(), 1U);
  EXPECT_EQ(due[0].device, "mlx5_0");
  ASSERT_EQ(due[0].values.size(), 1U);
  EXPECT_EQ(due[0].values[0].item, "ports/1/hw_counters/out_of_sequence");
  EXPECT_EQ(due[0].values[0].error, "Input/output error");
  EXPECT_EQ(due[0].values[0].failures, 1U);
  EXPECT_EQ(due[0].values[0].backoff, 10s);

  // A sample every 10 s for an hour, each failing: no line before the hour is up.
  for (auto t = 10s; t < 1h; t += 10s) {
    log.Failed("mlx5_0", "ports/1/hw_counters/out_of_sequence", "Input/output error", 20s);
    log.Failed("mlx5_0", "ports/1/counters/symbol_error", "Permission denied", 10s);
    EXPECT_TRUE(log.Due(kStart + t).empty()) << t.count();
  }
  due = log.Due(kStart + 1h);
  ASSERT_EQ(due.size(), 1U);
  ASSERT_EQ(due[0].values.size(), 2U);
  EXPECT_EQ(due[0].values[0].item, "ports/1/counters/symbol_error");  // by item
  EXPECT_EQ(due[0].values[0].failures, 359U);
  EXPECT_EQ(due[0].values[1].failures, 359U);
  EXPECT_EQ(due[0].values[1].backoff, 20s);
  // Nothing failed since: nothing to say, even hours later.
  EXPECT_TRUE(log.Due(kStart + 5h).empty());
}

TEST(read_failure_log, DevicesAreLimitedEachOnItsOwn) {
  ReadFailureLog log(1h);
  log.Failed("mlx5_0", "ports/1", "no such device or port", 10s);
  EXPECT_EQ(log.Due(kStart).size(), 1U);
  log.Failed("mlx5_0", "ports/1", "no such device or port", 20s);
  log.Failed("eth2", "ethtool statistics", "ETHTOOL_GSTATS: Operation not supported", 10s);
  const std::vector<DeviceWarning> due = log.Due(kStart + 1min);
  ASSERT_EQ(due.size(), 1U);
  EXPECT_EQ(due[0].device, "eth2");
  EXPECT_EQ(log.Due(kStart + 1h).size(), 1U);  // mlx5_0's second failure, an hour on
}

TEST(read_failure_log, ARecoveryIsWorthALineOnlyOnceAWarningNamedTheFailure) {
  ReadFailureLog log(1h);
  log.Failed("mlx5_0", "ports/1/state", "Input/output error", 10s);
  EXPECT_EQ(log.Due(kStart).size(), 1U);
  EXPECT_TRUE(log.Recovered("mlx5_0", "ports/1/state"));
  EXPECT_FALSE(log.Recovered("mlx5_0", "ports/1/state"));  // forgotten

  // Failed and recovered between two lines: counted elsewhere, never logged.
  log.Failed("mlx5_0", "ports/1/phys_state", "Input/output error", 10s);
  EXPECT_FALSE(log.Recovered("mlx5_0", "ports/1/phys_state"));
  EXPECT_TRUE(log.Due(kStart + 2h).empty());
  EXPECT_FALSE(log.Recovered("eth9", "operstate"));
}

}  // namespace
}  // namespace hostmesh::agent::telemetry
