// Suite names are lowercase so `ctest -R clock` selects them.
#include "common/base/clock.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

namespace hostmesh {
namespace {

using namespace std::chrono_literals;

TEST(clock, VirtualClockStartsWhereTold) {
  const MonoTime start{5s};
  const WallTime wall{1'700'000'000s};
  VirtualClock clock(start, wall);
  EXPECT_EQ(clock.MonotonicNow(), start);
  EXPECT_EQ(clock.RealtimeNow(), wall);
}

TEST(clock, VirtualClockDefaultsToFixedDate) {
  VirtualClock clock;
  EXPECT_EQ(clock.MonotonicNow().time_since_epoch(), 0ns);
  EXPECT_EQ(clock.RealtimeNow().time_since_epoch(), 1'704'067'200s);
}

TEST(clock, VirtualClockMovesOnlyWhenAdvanced) {
  VirtualClock clock;
  const MonoTime mono = clock.MonotonicNow();
  const WallTime wall = clock.RealtimeNow();
  EXPECT_EQ(clock.MonotonicNow(), mono);

  clock.Advance(150ms);
  EXPECT_EQ(clock.MonotonicNow() - mono, 150ms);
  EXPECT_EQ(clock.RealtimeNow() - wall, 150ms);

  clock.AdvanceTo(mono + 1s);
  EXPECT_EQ(clock.MonotonicNow() - mono, 1s);
  EXPECT_EQ(clock.RealtimeNow() - wall, 1s);

  clock.Advance(0ns);
  EXPECT_EQ(clock.MonotonicNow() - mono, 1s);
}

TEST(clock, VirtualClockRefusesToGoBack) {
  VirtualClock clock(MonoTime{10s});
  EXPECT_THROW(clock.Advance(-1ns), std::invalid_argument);
  EXPECT_THROW(clock.AdvanceTo(MonoTime{9s}), std::invalid_argument);
  EXPECT_EQ(clock.MonotonicNow(), MonoTime{10s});
  clock.AdvanceTo(MonoTime{10s});  // standing still is fine
  EXPECT_EQ(clock.MonotonicNow(), MonoTime{10s});
}

TEST(clock, VirtualWallClockStepsAloneAndKeepsAdvancing) {
  VirtualClock clock;
  const MonoTime mono = clock.MonotonicNow();
  const WallTime stepped{1'800'000'000s};
  clock.SetRealtime(stepped);
  EXPECT_EQ(clock.RealtimeNow(), stepped);
  EXPECT_EQ(clock.MonotonicNow(), mono);

  clock.SetRealtime(stepped - 1h);  // the wall clock may go back, as with NTP
  clock.Advance(2s);
  EXPECT_EQ(clock.RealtimeNow(), stepped - 1h + 2s);
  EXPECT_EQ(clock.MonotonicNow(), mono + 2s);
}

TEST(clock, VirtualClockCountsEveryAdvanceFromManyThreads) {
  VirtualClock clock;
  constexpr int kThreads = 8;
  constexpr int kSteps = 10'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&clock] {
      MonoTime last = clock.MonotonicNow();
      for (int i = 0; i < kSteps; ++i) {
        clock.Advance(1us);
        const MonoTime now = clock.MonotonicNow();
        EXPECT_GE(now, last);
        last = now;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(clock.MonotonicNow().time_since_epoch(), kThreads * kSteps * 1us);
}

TEST(clock, VirtualClockWorksThroughTheInterface) {
  VirtualClock virtual_clock;
  const Clock& clock = virtual_clock;
  const MonoTime before = clock.MonotonicNow();
  virtual_clock.Advance(3ms);
  EXPECT_EQ(clock.MonotonicNow() - before, 3ms);
}

TEST(clock, SystemClockIsMonotonic) {
  SystemClock clock;
  MonoTime last = clock.MonotonicNow();
  for (int i = 0; i < 10'000; ++i) {
    const MonoTime now = clock.MonotonicNow();
    ASSERT_GE(now, last);
    last = now;
  }
}

TEST(clock, SystemClockRealtimeIsUnixEpochNanoseconds) {
  SystemClock clock;
  const auto since_epoch = clock.RealtimeNow().time_since_epoch();
  // After 2024-01-01 and before 2100-01-01: seconds would be off by 1e9.
  EXPECT_GT(since_epoch, 1'704'067'200s);
  EXPECT_LT(since_epoch, 4'102'444'800s);
}

}  // namespace
}  // namespace hostmesh
