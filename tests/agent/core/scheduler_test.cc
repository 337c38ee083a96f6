#include "agent/core/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

namespace hostmesh::agent {
namespace {

using namespace std::chrono_literals;

const MonoTime kStart{500s};

SchedulerOptions Options(std::uint32_t nics) {
  SchedulerOptions options;
  options.num_nics = nics;
  return options;
}

// Drives the scheduler the way the I/O loop does: sleep until NextDue, pop.
std::vector<ProbeOrder> RunUntil(Scheduler& scheduler, MonoTime end) {
  std::vector<ProbeOrder> all;
  for (MonoTime now = scheduler.NextDue(); now < end; now = scheduler.NextDue()) {
    const std::vector<ProbeOrder> due = scheduler.PopDue(now);
    EXPECT_FALSE(due.empty());
    EXPECT_TRUE(std::is_sorted(due.begin(), due.end(),
                               [](const auto& a, const auto& b) { return a.due < b.due; }));
    for (const ProbeOrder& order : due) {
      EXPECT_LE(order.due, now);
      // The port comes from the source's pool as it is when popped.
      const auto ports = scheduler.pool(order.src).ports();
      EXPECT_NE(std::find(ports.begin(), ports.end(), order.src_port), ports.end());
    }
    all.insert(all.end(), due.begin(), due.end());
  }
  return all;
}

TEST(agent_scheduler, EachNicSendsTenPerSecondForTenMinutes) {
  Scheduler scheduler(Options(8), kStart, 1);
  const std::vector<ProbeOrder> orders = RunUntil(scheduler, kStart + 10min);
  std::map<NicId, std::vector<ProbeOrder>> by_src;
  for (const ProbeOrder& order : orders) by_src[order.src].push_back(order);
  ASSERT_EQ(by_src.size(), 8U);
  for (const auto& [src, list] : by_src) {
    SCOPED_TRACE(src);
    EXPECT_NEAR(static_cast<double>(list.size()), 6000.0, 60.0);
    for (std::size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(list[i].sequence, i + 1);  // strictly increasing, no gaps
      EXPECT_NE(list[i].dst, src);
      EXPECT_LT(list[i].dst, 8U);
      EXPECT_EQ(list[i].dst_port, 4791);
    }
    EXPECT_EQ(scheduler.orders(src), list.size());
    EXPECT_EQ(scheduler.skipped_slots(src), 0U);
  }
}

// Self-protection: a tenth of the rate for a minute, then the full rate
// again at once (not after the long gaps already scheduled); no slot is
// counted as skipped, and sequences stay without gaps.
TEST(agent_scheduler, ARateFractionScalesEveryNicsRateBothWays) {
  Scheduler scheduler(Options(8), kStart, 3);
  RunUntil(scheduler, kStart + 10s);
  scheduler.SetRateFraction(0.1, kStart + 10s);
  EXPECT_EQ(scheduler.interval(), 1s);
  const std::vector<ProbeOrder> slow = RunUntil(scheduler, kStart + 70s);
  scheduler.SetRateFraction(1.0, kStart + 70s);
  EXPECT_EQ(scheduler.interval(), 100ms);
  EXPECT_LE(scheduler.NextDue(), kStart + 70s + 100ms);
  const std::vector<ProbeOrder> fast = RunUntil(scheduler, kStart + 130s);
  std::map<NicId, int> slow_by_src, fast_by_src;
  for (const ProbeOrder& o : slow) ++slow_by_src[o.src];
  for (const ProbeOrder& o : fast) ++fast_by_src[o.src];
  for (NicId nic = 0; nic < 8; ++nic) {
    SCOPED_TRACE(nic);
    EXPECT_NEAR(slow_by_src[nic], 60, 2);  // the first may still be on the old gap
    EXPECT_NEAR(fast_by_src[nic], 600, 6);
    EXPECT_EQ(scheduler.skipped_slots(nic), 0U);
  }
  EXPECT_DOUBLE_EQ(scheduler.rate_fraction(), 1.0);
  EXPECT_THROW(scheduler.SetRateFraction(0.0, kStart + 130s), std::invalid_argument);
  EXPECT_THROW(scheduler.SetRateFraction(1.5, kStart + 130s), std::invalid_argument);
}

TEST(agent_scheduler, GapsJitterWithinFivePercentAndAverageTheInterval) {
  Scheduler scheduler(Options(2), kStart, 2);
  const std::vector<ProbeOrder> orders = RunUntil(scheduler, kStart + 10min);
  std::vector<double> gaps_ms;
  MonoTime last{};
  for (const ProbeOrder& order : orders) {
    if (order.src != 0) continue;
    if (last != MonoTime{}) {
      const auto gap = order.due - last;
      EXPECT_GE(gap, 95ms);
      EXPECT_LE(gap, 105ms);
      gaps_ms.push_back(std::chrono::duration<double, std::milli>(gap).count());
    }
    last = order.due;
  }
  double mean = 0;
  for (const double gap : gaps_ms) mean += gap;
  mean /= static_cast<double>(gaps_ms.size());
  double variance = 0;
  for (const double gap : gaps_ms) variance += (gap - mean) * (gap - mean);
  const double stddev = std::sqrt(variance / static_cast<double>(gaps_ms.size()));
  EXPECT_NEAR(mean, 100.0, 0.2);
  EXPECT_NEAR(stddev, 10.0 / std::sqrt(12.0), 0.3);  // uniform over +-5 ms
}

TEST(agent_scheduler, WithoutJitterTheSpacingIsExact) {
  SchedulerOptions options = Options(3);
  options.jitter_fraction = 0;
  Scheduler scheduler(options, kStart, 3);
  const std::vector<ProbeOrder> orders = RunUntil(scheduler, kStart + 10s);
  std::map<NicId, MonoTime> last;
  for (const ProbeOrder& order : orders) {
    if (const auto it = last.find(order.src); it != last.end()) {
      EXPECT_EQ(order.due - it->second, 100ms);
    }
    last[order.src] = order.due;
  }
}

TEST(agent_scheduler, NicsStartAtDifferentPhases) {
  Scheduler scheduler(Options(8), kStart, 4);
  std::map<NicId, MonoTime> first;
  for (const ProbeOrder& order : RunUntil(scheduler, kStart + 100ms)) {
    first.emplace(order.src, order.due);  // keeps each NIC's first
  }
  ASSERT_EQ(first.size(), 8U);
  std::set<MonoTime> phases;
  for (const auto& [nic, due] : first) {
    EXPECT_LT(due, kStart + 100ms);
    phases.insert(due);
  }
  EXPECT_EQ(phases.size(), 8U);
}

TEST(agent_scheduler, DestinationsAreUniform) {
  for (const std::uint64_t seed : {5ULL, 6ULL, 7ULL}) {
    Scheduler scheduler(Options(8), kStart, seed);
    const std::vector<ProbeOrder> orders = RunUntil(scheduler, kStart + 10min);
    std::map<NicId, std::map<NicId, int>> counts;
    for (const ProbeOrder& order : orders) ++counts[order.src][order.dst];
    for (const auto& [src, by_dst] : counts) {
      ASSERT_EQ(by_dst.size(), 7U);
      int total = 0;
      for (const auto& [dst, count] : by_dst) total += count;
      const double expected = total / 7.0;
      double chi2 = 0;
      for (const auto& [dst, count] : by_dst) {
        chi2 += (count - expected) * (count - expected) / expected;
      }
      // 6 degrees of freedom: 22.5 is the 0.999 quantile.
      EXPECT_LT(chi2, 22.5) << "seed " << seed << " src " << src;
    }
  }
}

TEST(agent_scheduler, SourcePortsAreUniformOverThePool) {
  SchedulerOptions options = Options(2);
  options.ports.rotation_period = 24h;  // hold the pool still
  Scheduler scheduler(options, kStart, 8);
  const std::vector<ProbeOrder> orders = RunUntil(scheduler, kStart + 30min);
  std::map<std::uint16_t, int> counts;
  for (const ProbeOrder& order : orders) {
    if (order.src == 0) ++counts[order.src_port];
  }
  ASSERT_EQ(counts.size(), 16U);
  int total = 0;
  for (const auto& [port, count] : counts) total += count;
  const double expected = total / 16.0;
  double chi2 = 0;
  for (const auto& [port, count] : counts) {
    chi2 += (count - expected) * (count - expected) / expected;
  }
  EXPECT_LT(chi2, 37.7);  // 15 degrees of freedom, 0.999 quantile
}

TEST(agent_scheduler, DrivesPortRotationAndCountsPortsPerPair) {
  Scheduler scheduler(Options(8), kStart, 9);
  const MonoTime now = kStart + 10min + 50ms;
  const std::vector<ProbeOrder> orders = RunUntil(scheduler, now);
  std::map<std::pair<NicId, NicId>, std::set<std::uint16_t>> ports;
  for (const ProbeOrder& order : orders) {
    ports[{order.src, order.dst}].insert(order.src_port);
    EXPECT_LE(order.pool_generation, 10U);
  }
  for (NicId src = 0; src < 8; ++src) {
    EXPECT_EQ(scheduler.pool(src).generation(), 10U);
    for (NicId dst = 0; dst < 8; ++dst) {
      if (src == dst) continue;
      // 16 + 10 x 4 ports went through the pool; ~86 draws per generation hit
      // nearly all of them.
      const std::size_t used = scheduler.pool(src).DistinctPortsUsed(dst, now);
      EXPECT_EQ(used, (ports[{src, dst}].size()));
      EXPECT_GE(used, 50U);
      EXPECT_LE(used, 56U);
    }
  }
  // NICs rotate through different ports.
  EXPECT_FALSE(std::ranges::equal(scheduler.pool(0).ports(), scheduler.pool(1).ports()));
}

TEST(agent_scheduler, PoolChangesGrowWithEveryRotationAndNewPoolOnly) {
  Scheduler scheduler(Options(4), kStart, 12);
  const std::uint64_t at_start = scheduler.pool_changes();
  RunUntil(scheduler, kStart + 59s);
  EXPECT_EQ(scheduler.pool_changes(), at_start) << "no rotation in the first minute";
  RunUntil(scheduler, kStart + 3min + 50ms);
  std::uint64_t generations = 0;
  for (NicId nic = 0; nic < 4; ++nic) generations += scheduler.pool(nic).generation();
  ASSERT_EQ(generations, 12U);
  // At least one change per rotation (those a late loop applies at once count once).
  EXPECT_GE(scheduler.pool_changes() - at_start, 12U);
  const std::uint64_t before = scheduler.pool_changes();
  EXPECT_FALSE(scheduler.SetAllowedPorts(1, {}, kStart + 3min + 60ms));  // unchanged
  EXPECT_EQ(scheduler.pool_changes(), before);
  ASSERT_TRUE(scheduler.SetAllowedPorts(1, {50101, 50102, 50103}, kStart + 3min + 60ms));
  EXPECT_GT(scheduler.pool_changes(), before);
}

TEST(agent_scheduler, AStalledLoopGetsOneProbePerNicNotABurst) {
  Scheduler scheduler(Options(4), kStart, 10);
  RunUntil(scheduler, kStart + 1s);
  const MonoTime late = kStart + 11s;
  const std::vector<ProbeOrder> burst = scheduler.PopDue(late);
  EXPECT_EQ(burst.size(), 4U);
  for (NicId nic = 0; nic < 4; ++nic) {
    EXPECT_NEAR(static_cast<double>(scheduler.skipped_slots(nic)), 99.0, 2.0);
  }
  EXPECT_GT(scheduler.NextDue(), late);
  EXPECT_LE(scheduler.NextDue(), late + 105ms);
  EXPECT_TRUE(scheduler.PopDue(late).empty());
}

TEST(agent_scheduler, NothingIsDueWithoutAPeer) {
  Scheduler alone(Options(1), kStart, 11);
  EXPECT_EQ(alone.NextDue(), MonoTime::max());
  EXPECT_TRUE(alone.PopDue(kStart + 1h).empty());
  Scheduler none(Options(0), kStart, 11);
  EXPECT_EQ(none.NextDue(), MonoTime::max());
}

TEST(agent_scheduler, TwoNicsProbeEachOther) {
  Scheduler scheduler(Options(2), kStart, 12);
  for (const ProbeOrder& order : RunUntil(scheduler, kStart + 5s)) {
    EXPECT_EQ(order.dst, 1 - order.src);
  }
}

TEST(agent_scheduler, SameSeedSameSchedule) {
  Scheduler a(Options(4), kStart, 13);
  Scheduler b(Options(4), kStart, 13);
  Scheduler c(Options(4), kStart, 14);
  const auto orders_a = RunUntil(a, kStart + 20s);
  EXPECT_EQ(orders_a, RunUntil(b, kStart + 20s));
  EXPECT_NE(orders_a, RunUntil(c, kStart + 20s));
}

// A reopened per-QP NIC offers new ports: its pool moves to them at once,
// the other NICs' pools and draws stay as they were.
TEST(agent_scheduler, AReopenedNicsNewPortsReplaceItsPool) {
  SchedulerOptions options = Options(3);
  options.nic_allowed_ports = {{50001, 50002}, {50011, 50012}, {50021, 50022}};
  Scheduler scheduler(options, kStart, 21);
  Scheduler untouched(options, kStart, 21);
  RunUntil(scheduler, kStart + 1s);
  RunUntil(untouched, kStart + 1s);
  EXPECT_FALSE(scheduler.SetAllowedPorts(1, {50012, 50011, 50011}, kStart + 1s));  // same set
  ASSERT_TRUE(scheduler.SetAllowedPorts(1, {50101, 50102, 50103}, kStart + 1s));
  const auto ports = scheduler.pool(1).ports();
  EXPECT_EQ(std::set<std::uint16_t>(ports.begin(), ports.end()),
            (std::set<std::uint16_t>{50101, 50102, 50103}));
  EXPECT_EQ(scheduler.pool(1).DistinctPortsUsed(0, kStart + 1s), 0u);  // history starts over
  std::set<std::uint16_t> from_1;
  auto orders = RunUntil(scheduler, kStart + 3s);
  auto others = RunUntil(untouched, kStart + 3s);
  for (const ProbeOrder& o : orders) {
    if (o.src == 1) from_1.insert(o.src_port);
  }
  EXPECT_EQ(from_1, (std::set<std::uint16_t>{50101, 50102, 50103}));
  // NIC 0 and 2 draw exactly as they would have.
  const auto without_1 = [](std::vector<ProbeOrder> v) {
    std::erase_if(v, [](const ProbeOrder& o) { return o.src == 1; });
    return v;
  };
  EXPECT_EQ(without_1(orders), without_1(others));
  // Back to "any port": a pool over the configured range.
  ASSERT_TRUE(scheduler.SetAllowedPorts(1, {}, kStart + 3s));
  EXPECT_EQ(scheduler.pool(1).range_size(), 65535u - 49152u + 1u);
}

TEST(agent_scheduler, RejectsImpossibleOptions) {
  SchedulerOptions options = Options(2);
  options.interval = 0ns;
  EXPECT_THROW(Scheduler(options, kStart, 1), std::invalid_argument);
  options = Options(2);
  options.jitter_fraction = 0.6;
  EXPECT_THROW(Scheduler(options, kStart, 1), std::invalid_argument);
  options = Options(2);
  options.coalesce_window = options.interval + 1ns;
  EXPECT_THROW(Scheduler(options, kStart, 1), std::invalid_argument);
  options.coalesce_window = -1ns;
  EXPECT_THROW(Scheduler(options, kStart, 1), std::invalid_argument);
}

TEST(agent_scheduler, CoalescingWakesOncePerRoundAtTheSameRate) {
  SchedulerOptions options = Options(8);
  options.coalesce_window = options.interval;
  Scheduler scheduler(options, kStart, 3);
  std::map<NicId, std::vector<MonoTime>> sent_at;
  std::size_t turns = 0;
  for (MonoTime now = scheduler.NextDue(); now < kStart + 10min; now = scheduler.NextDue()) {
    ++turns;
    for (const ProbeOrder& order : scheduler.PopDue(now)) {
      EXPECT_LE(order.due, now + options.coalesce_window);  // never earlier than the window
      sent_at[order.src].push_back(now);
    }
  }
  ASSERT_EQ(sent_at.size(), 8U);
  for (const auto& [src, times] : sent_at) {
    SCOPED_TRACE(src);
    EXPECT_NEAR(static_cast<double>(times.size()), 6000.0, 60.0);
    EXPECT_EQ(scheduler.skipped_slots(src), 0U);
    for (std::size_t i = 1; i < times.size(); ++i) {
      EXPECT_GE(times[i] - times[i - 1], 50ms);  // early sends never bunch up one NIC
    }
  }
  // Without coalescing the loop wakes once per probe (48,000 times); with it,
  // about once per round.
  EXPECT_LT(turns, 6600U);
}

}  // namespace
}  // namespace hostmesh::agent
