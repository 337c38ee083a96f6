#include "agent/verbs/queue_sizing.h"

#include <gtest/gtest.h>

namespace hostmesh::agent::verbs {
namespace {

using namespace std::chrono_literals;

TEST(RecvQueueDepth, TheDefaultRateNeedsNoMoreThanTheFloor) {
  // 8 NICs every 100 ms, a 200 ms stall: at most 7 x 2 receives.
  EXPECT_EQ(RecvQueueDepthFor(100ms, 8, 200ms), 256u);
}

TEST(RecvQueueDepth, AThousandProbesPerSecondGetsRoomForTheStall) {
  // 8 NICs at 1 ms (1000 probes/s each), a 200 ms stall: 7 x 200 = 1400 -> 2048.
  // The old fixed 256 would have dropped most of what arrived in such a stall.
  EXPECT_EQ(RecvQueueDepthFor(1ms, 8, 200ms), 2048u);
  EXPECT_EQ(RecvQueueDepthFor(1ms, 2, 200ms), 256u);
}

TEST(RecvQueueDepth, BoundedAboveAndSaneForDegenerateInput) {
  EXPECT_EQ(RecvQueueDepthFor(1ms, 64, 10s), kMaxRecvQueueDepth);
  EXPECT_EQ(RecvQueueDepthFor(0ms, 8, 200ms), kMinRecvQueueDepth);
  EXPECT_EQ(RecvQueueDepthFor(1ms, 1, 200ms), kMinRecvQueueDepth);
}

TEST(ReceiveQueueLevel, CountsTheQueueRunningDryOncePerEpisode) {
  ReceiveQueueLevel level;
  level.Reset(3);
  EXPECT_FALSE(level.OnConsumed());
  level.OnPosted();  // reposted at once: the usual case never runs dry
  EXPECT_FALSE(level.OnConsumed());
  EXPECT_FALSE(level.OnConsumed());
  EXPECT_TRUE(level.OnConsumed());   // the last posted receive: empty
  EXPECT_FALSE(level.OnConsumed());  // a stray completion is not a second episode
  EXPECT_EQ(level.posted(), 0u);
  level.OnPosted();
  EXPECT_TRUE(level.OnConsumed());  // refilled by one, emptied again
}

}  // namespace
}  // namespace hostmesh::agent::verbs
