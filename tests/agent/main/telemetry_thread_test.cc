// The telemetry thread's step on a fake sysfs tree: readings to the board,
// deltas to the sink from the second sample on; Stop wakes a thread that
// waits for a long period at once.
#include "agent/main/telemetry_thread.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "tests/agent/telemetry/fake_sysfs.h"

namespace hostmesh::agent::app {
namespace {

using namespace std::chrono_literals;
using telemetry::NicCounter;
using telemetry::testing::AddMlx5;
using telemetry::testing::FakeSysfs;
using telemetry::testing::Mlx5Port;

struct Sunk {
  std::uint32_t nic;
  telemetry::NicDelta delta;
};

TEST(telemetry_thread, EachStepPublishesReadingsAndSinksDeltas) {
  FakeSysfs fs;
  Mlx5Port port;
  port.counters = {{"link_downed", 1}};
  AddMlx5(fs, "mlx5_0", "eth2", "0000:3b:00.0", port);
  AddMlx5(fs, "mlx5_1", "eth3", "0000:3c:00.0", port);
  VirtualClock clock;
  TelemetryBoard board;
  std::vector<Sunk> sunk;
  TelemetryThread thread(clock, 10s, nullptr,
                         std::make_unique<telemetry::TelemetryCollector>(
                             fs.root(),
                             std::vector<telemetry::TelemetryNic>{{"nic0", "eth2", "mlx5_0", 1},
                                                                  {"nic1", "eth3", "mlx5_1", 1}},
                             nullptr),
                         board, [&](std::uint32_t nic, const telemetry::NicDelta& d) {
                           sunk.push_back({nic, d});
                         });

  thread.SampleOnce();
  EXPECT_TRUE(sunk.empty());
  TelemetryView view = board.Read();
  ASSERT_EQ(view.readings.size(), 2U);
  EXPECT_EQ(view.readings[1][NicCounter::kLinkDowned], 1U);

  fs.Write("class/infiniband/mlx5_1/ports/1/counters/link_downed", "4\n");
  clock.Advance(10s);
  thread.SampleOnce();
  ASSERT_EQ(sunk.size(), 2U);
  EXPECT_EQ(sunk[1].nic, 1U);
  EXPECT_EQ(sunk[1].delta[NicCounter::kLinkDowned], 3U);
  EXPECT_EQ(sunk[1].delta.end_ns - sunk[1].delta.start_ns, 10'000'000'000);
  EXPECT_EQ(sunk[0].delta[NicCounter::kLinkDowned], 0U);
  view = board.Read();
  EXPECT_EQ(view.stats.samples, 2U);
  EXPECT_EQ(view.readings[1][NicCounter::kLinkDowned], 4U);
}

TEST(telemetry_thread, StopWakesTheThreadWithoutWaitingForThePeriod) {
  FakeSysfs fs;
  const SystemClock clock;
  TelemetryBoard board;
  TelemetryThread thread(clock, 1h, nullptr,
                         std::make_unique<telemetry::TelemetryCollector>(
                             fs.root(), std::vector<telemetry::TelemetryNic>{}, nullptr),
                         board, {});
  thread.Start();
  auto stopped = std::async(std::launch::async, [&] { thread.Stop(); });
  EXPECT_EQ(stopped.wait_for(30s), std::future_status::ready);
  EXPECT_LE(board.Read().stats.samples, 1U);
}

}  // namespace
}  // namespace hostmesh::agent::app
