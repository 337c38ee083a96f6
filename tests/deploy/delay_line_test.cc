// The delay fault's timer queue, on hand-made time points (no sleeping).
#include "deploy/testbed/delayq/delay_line.h"

#include <gtest/gtest.h>

namespace hostmesh::delayq {
namespace {

using namespace std::chrono_literals;

const Clock::time_point kT0{100s};

TEST(delay_line, ReleasesEachPacketOnceItsDelayHasPassed) {
  DelayLine line(2ms);
  line.Push(1, kT0);
  line.Push(2, kT0 + 500us);
  EXPECT_EQ(line.NextDeadline(), kT0 + 2ms);
  EXPECT_EQ(line.PopDue(kT0 + 1999us), std::nullopt);  // not a moment early
  EXPECT_EQ(line.PopDue(kT0 + 2ms), 1U);
  EXPECT_EQ(line.NextDeadline(), kT0 + 2500us);
  EXPECT_EQ(line.PopDue(kT0 + 3ms), 2U);
  EXPECT_EQ(line.size(), 0U);
  EXPECT_EQ(line.NextDeadline(), std::nullopt);
}

TEST(delay_line, ALateWakeReleasesEverythingDueAndReportsTheNewest) {
  DelayLine line(1ms);
  for (uint32_t id = 10; id < 15; ++id) line.Push(id, kT0 + (id - 10) * 100us);
  // Deadlines 1.0 .. 1.4 ms; at 1.25 ms ids 10-12 are due. One verdict for the
  // newest due id releases all older ones (NFQUEUE batch verdict).
  EXPECT_EQ(line.PopDue(kT0 + 1250us), 12U);
  EXPECT_EQ(line.size(), 2U);
  EXPECT_EQ(line.max_held(), 5U);
  // Released 250, 150 and 50 us after their deadlines: the timer's lateness.
  EXPECT_EQ(line.mean_lateness(), 150us);
}

TEST(delay_line, ShutdownReleasesRatherThanDrops) {
  DelayLine line(10ms);
  line.Push(7, kT0);
  line.Push(8, kT0 + 1ms);
  EXPECT_EQ(line.PopAll(), 8U);
  EXPECT_EQ(line.size(), 0U);
  EXPECT_EQ(line.PopAll(), std::nullopt);
}

}  // namespace
}  // namespace hostmesh::delayq
