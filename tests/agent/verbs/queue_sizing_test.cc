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

}  // namespace
}  // namespace hostmesh::agent::verbs
